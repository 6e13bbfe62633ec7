"""The JobGraph: the only thing that crosses from planner to runtime.

Plain data: every node names its operator, its inputs, its output schema, its changelog
mode and its parameters. Parameters are JSON values, except that they may hold
`Expr`, `DataType` and `Field` objects, which `to_json` tags and `from_json` restores, so
a saved graph can be run, inspected and diffed on its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from runtime.expr.ir import Call, InputRef, Literal, expr_from_json, expr_to_json
from runtime.types import DataType, Field

STREAMING = "STREAMING"
BATCH = "BATCH"


@dataclass(frozen=True)
class Node:
    """One operator of the job. `id`s are unique and inputs refer to earlier ids."""

    id: int
    operator: str
    inputs: tuple[int, ...]
    schema: tuple[Field, ...]
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # Changelog mode of the output edge: "I" (insert-only), "I,UB,UA" / "I,UB,UA,D"
    # (retract) or "I,UA,D" (upsert), as Flink's EXPLAIN CHANGELOG_MODE prints them.
    changelog_mode: str = "I"
    parallelism: int = 1
    # A short human label (EXPLAIN-style) for logs, metrics and the dashboard.
    label: str = ""


@dataclass(frozen=True)
class JobGraph:
    nodes: tuple[Node, ...]
    mode: str = STREAMING
    config: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    # Id of the node whose output goes back to the caller (a query's result), if any.
    result_node: int | None = None
    name: str = "job"

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def consumers(self, node_id: int) -> list[Node]:
        return [n for n in self.nodes if node_id in n.inputs]

    def to_json(self) -> str:
        return json.dumps(
            {
                "name": self.name,
                "mode": self.mode,
                "config": self.config,
                "result_node": self.result_node,
                "nodes": [
                    {
                        "id": n.id,
                        "operator": n.operator,
                        "inputs": list(n.inputs),
                        "schema": [f.to_json() for f in n.schema],
                        "params": _encode(n.params),
                        "changelog_mode": n.changelog_mode,
                        "parallelism": n.parallelism,
                        "label": n.label,
                    }
                    for n in self.nodes
                ],
            },
            indent=1,
            sort_keys=True,
        )

    @staticmethod
    def from_json(text: str) -> JobGraph:
        d = json.loads(text)
        return JobGraph(
            nodes=tuple(
                Node(
                    id=n["id"],
                    operator=n["operator"],
                    inputs=tuple(n["inputs"]),
                    schema=tuple(Field.from_json(f) for f in n["schema"]),
                    params=_decode(n["params"]),
                    changelog_mode=n["changelog_mode"],
                    parallelism=n["parallelism"],
                    label=n.get("label", ""),
                )
                for n in d["nodes"]
            ),
            mode=d["mode"],
            config=d["config"],
            result_node=d["result_node"],
            name=d.get("name", "job"),
        )


def _encode(v: Any) -> Any:
    if isinstance(v, (InputRef, Literal, Call)):
        return {"@expr": expr_to_json(v)}
    if isinstance(v, DataType):
        return {"@type": v.to_json()}
    if isinstance(v, Field):
        return {"@field": v.to_json()}
    if isinstance(v, dict):
        return {k: _encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    return v


def _decode(v: Any) -> Any:
    if isinstance(v, dict):
        if "@expr" in v and len(v) == 1:
            return expr_from_json(v["@expr"])
        if "@type" in v and len(v) == 1:
            return DataType.from_json(v["@type"])
        if "@field" in v and len(v) == 1:
            return Field.from_json(v["@field"])
        return {k: _decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v
