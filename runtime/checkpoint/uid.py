"""Stable operator ids derived from the plan, so a savepoint can be matched to a changed
query (Flink's operator uid hashes play the same role).

An operator's uid hashes its kind, the parameters that shape its state (keys, grouping,
aggregate calls, window, join kind, table name) and the uids of its inputs; it does not
depend on node numbering or on stateless details (a changed filter or projection
elsewhere keeps the ids of the stateful operators). The fingerprint (input and output
schemas) detects a uid whose state no longer fits.
"""

from __future__ import annotations

import json
from typing import Any

try:  # CPython's built-in SHA-1: hashlib's is OpenSSL's, whose loading is ~4 ms of every job's start
    from _sha1 import sha1
except ImportError:  # an interpreter built without it
    from hashlib import sha1

from runtime.graph import JobGraph, Node
from runtime.operators.spec import plain_params

_STATE_PARAMS = (
    "table",
    "connector",
    "grouping",
    "window",
    "kind",
    "partition_keys",
    "partition",
    "left_keys",
    "right_keys",
    "rank_type",
    "rank_start",
    "rank_end",
    "frame",
    "keep_last",
)


def _signature(node: Node) -> Any:
    p = plain_params(node.params) or {}
    sig: dict[str, Any] = {k: p[k] for k in _STATE_PARAMS if k in p}
    if "aggs" in p:
        sig["aggs"] = [(a.get("name"), a.get("args"), bool(a.get("distinct"))) for a in p["aggs"] or []]
    if "calls" in p:
        sig["calls"] = [(c.get("name"), c.get("args")) for c in p["calls"] or []]
    return sig


def operator_uids(graph: JobGraph) -> dict[int, str]:
    """node id -> uid (16 hex digits). Nodes with the same signature and inputs get
    an ordinal so that the ids stay unique."""
    nodes = {n.id: n for n in graph.nodes}
    out: dict[int, str] = {}
    seen: dict[str, int] = {}

    def uid(nid: int) -> str:
        if nid in out:
            return out[nid]
        n = nodes[nid]
        ins = [uid(i) for i in n.inputs]
        text = json.dumps([n.operator, _signature(n), ins], sort_keys=True, default=str)
        h = sha1(text.encode("utf-8")).hexdigest()[:16]
        k = seen.get(h, 0)
        seen[h] = k + 1
        if k:
            h = sha1(f"{h}#{k}".encode()).hexdigest()[:16]
        out[nid] = h
        return h

    for n in sorted(graph.nodes, key=lambda n: n.id):
        uid(n.id)
    return out


def fingerprint(graph: JobGraph, node: Node) -> str:
    """The shape of an operator's state: its input schemas and its output schema."""
    parts = [[str(f.type) for f in graph.node(i).schema] for i in node.inputs]
    parts.append([str(f.type) for f in node.schema])
    return sha1(json.dumps(parts).encode("utf-8")).hexdigest()[:16]
