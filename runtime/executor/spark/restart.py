"""Restarting a Spark STREAMING job on its checkpoint location (docs/spark.md).

A Spark streaming query resumes from whatever its checkpoint location holds, and Spark maps
the state there to the query's stateful operators by their position in the query. So the
location must be the job's own (`<execution.checkpointing.dir>/spark/<job id>/`, the job id
the local runner keeps its checkpoints under, `$internal.pipeline.job-id`), and a restart
must be refused, not silently started over or resumed into the wrong state, when the plan
no longer matches what the checkpoint holds.

The plan a checkpoint was written by is recorded next to it (`PLAN_FILE`): per Spark query
(one per sink, `sink-<hash of its table>`, and `result` for a collected query), the operators whose
progress or state Spark keeps (sources, watermarks, streamsql operators run as processors),
each with the stable operator id and state fingerprint the local runner's restore matches by
(runtime/checkpoint/uid.py: a changed filter or projection keeps them). A restart is
accepted when every query that has a checkpoint keeps exactly its operators with the same
fingerprints; a new query starts from the beginning of its input. Anything else fails with
a report of what differs and a hint, as the local runner's restore does (`match_report`).
"""

from __future__ import annotations

import hashlib
import json
import os

from runtime.checkpoint.restore import RestoreError
from runtime.checkpoint.uid import fingerprint, operator_uids
from runtime.frozen import frozen_dataclass
from runtime.graph import JobGraph
from runtime.operators.sink import SINK, SinkParams

# What a checkpoint of this runner holds beside Spark's own files: bumped when the state a
# processor writes changes layout (a checkpoint of another layout cannot be restored).
STATE_LAYOUT = 2
PLAN_FILE = "_streamsql_plan.json"
RESULT_QUERY = "result"


@frozen_dataclass
class Entry:
    """One operator whose progress or state a Spark query keeps."""

    operator: str
    uid: str
    fingerprint: str

    def text(self) -> str:
        return f"{self.operator} (uid {self.uid})"


def query_names(graph: JobGraph) -> dict[int, str]:
    """The name (and checkpoint subdirectory) of each Spark query, by the node it ends in:
    `sink-<hash of the sink table>` (an ordinal apart for two INSERTs into one table), so a
    changed query into the same table meets its checkpoint; `result` for the collected one."""
    out: dict[int, str] = {}
    seen: dict[str, int] = {}
    for node in sorted(graph.nodes, key=lambda n: n.id):
        if node.is_kind(SINK):
            p = SinkParams.of(node)
            h = hashlib.sha1(f"{p.connector}\0{p.table}".encode()).hexdigest()[:16]
            k = seen[h] = seen.get(h, 0) + 1
            out[node.id] = f"sink-{h}" if k == 1 else f"sink-{h}-{k}"
    if graph.result_node is not None:
        out[graph.result_node] = RESULT_QUERY
    return out


def plan_record(graph: JobGraph, keeps_state: set[int]) -> dict[str, list[Entry]]:
    """Per query (query_names): the operators among its ancestors whose progress or state
    Spark keeps (`keeps_state`: node ids), sorted by uid."""
    uids = operator_uids(graph)
    out: dict[str, list[Entry]] = {}
    for end_id, name in query_names(graph).items():
        end = graph.node(end_id)
        seen: set[int] = set()
        todo = [end.id]
        entries = []
        while todo:
            nid = todo.pop()
            if nid in seen:
                continue
            seen.add(nid)
            node = graph.node(nid)
            todo.extend(node.inputs)
            if nid in keeps_state:
                entries.append(Entry(node.operator, uids[nid], fingerprint(graph, node)))
        out[name] = sorted(entries, key=lambda e: (e.uid, e.operator))
    return out


def _encode(record: dict[str, list[Entry]]) -> str:
    queries = {q: [[e.operator, e.uid, e.fingerprint] for e in es] for q, es in record.items()}
    return json.dumps({"layout": STATE_LAYOUT, "queries": queries}, indent=1, sort_keys=True)


def _started(root: str, query: str) -> bool:
    """Whether Spark has started query `query` on its checkpoint location (planned a batch)."""
    d = os.path.join(root, query)
    return os.path.isdir(d) and any(not n.startswith(".") for n in os.listdir(d))


def check_and_record(root: str, record: dict[str, list[Entry]], ignore_unclaimed: bool = False) -> None:
    """Refuse (RestoreError) a restart on checkpoint location `root` whose plan does not
    match what the checkpoint holds; then record the plan there. `ignore_unclaimed`
    ('execution.savepoint.ignore-unclaimed-state'): a query the job no longer has is left
    behind instead of refused."""
    path = os.path.join(root, PLAN_FILE)
    started = sorted(n for n in (os.listdir(root) if os.path.isdir(root) else []) if _started(root, n))
    started = [n for n in started if n == RESULT_QUERY or n.startswith("sink-")]
    if started:
        problems = _differences(path, record, started, ignore_unclaimed)
        if problems:
            lines = [
                f"Cannot restart the Spark job on its checkpoint location '{root}': the checkpoint was written "
                "by a different plan, and Spark cannot move a query's state to a changed plan."
            ]
            lines += [f"  - {p}" for p in problems]
            lines.append(
                "Restart the job as it was; or start the changed job on a new checkpoint location (another "
                f"'execution.checkpointing.dir', or delete '{root}') and, for a file sink, a new output directory "
                "(Spark's file sink skips the micro-batches its '_spark_metadata' log already lists): the changed "
                "job then writes its output from the start of the input."
            )
            raise RestoreError("\n".join(lines))
    os.makedirs(root, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_encode(record))
    os.replace(tmp, path)


def _differences(path: str, record: dict[str, list[Entry]], started: list[str], ignore_unclaimed: bool) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        layout = int(old["layout"])
        before = {q: [Entry(*e) for e in es] for q, es in old["queries"].items()}
    except FileNotFoundError:
        return [f"it has no {PLAN_FILE}: it was written by an older version of the Spark runner"]
    except (ValueError, KeyError, TypeError) as e:
        return [f"its {PLAN_FILE} cannot be read ({e})"]
    if layout != STATE_LAYOUT:
        return [
            f"it was written by another version of the Spark runner (state layout {layout}; this one writes "
            f"{STATE_LAYOUT})"
        ]
    problems = []
    for q in started:
        if q not in record:
            if not ignore_unclaimed:
                ops = ", ".join(e.text() for e in before.get(q, [])) or "no operators"
                problems.append(
                    f"query {q} ({ops}) is no longer in the job (set 'execution.savepoint.ignore-unclaimed-state' "
                    "= 'true' to leave its checkpoint behind)"
                )
            continue
        old_ops = {e.uid: e for e in before.get(q, [])}
        new_ops = {e.uid: e for e in record[q]}
        gone = [old_ops[u].text() for u in old_ops if u not in new_ops]
        added = [new_ops[u].text() for u in new_ops if u not in old_ops]
        changed = [
            new_ops[u].text() for u in new_ops if u in old_ops and old_ops[u].fingerprint != new_ops[u].fingerprint
        ]
        if gone:
            problems.append(f"query {q}: operators no longer in the job: {', '.join(gone)}")
        if added:
            problems.append(f"query {q}: operators new to the job: {', '.join(added)}")
        if changed:
            problems.append(f"query {q}: operators whose input or output schema changed: {', '.join(changed)}")
    return problems
