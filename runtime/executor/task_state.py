"""A task's state in a snapshot: what is recorded per operator, and restoring a task.

Shared by the local executor (runtime/executor/checkpoints.py), the parallel workers'
barrier handler and the parallel parent: the state names `_metadata` lists for an
operator, the check that a snapshot's operators fit the job (uids and fingerprints), and
restoring a task's operators from a snapshot of any parallelism (re-split by key group,
runtime/checkpoint/rescale.py) with the runner's watermark bookkeeping. How state files
are encoded is runtime.checkpoint's business, not this module's.
"""

from __future__ import annotations

from typing import Any

from runtime.checkpoint.rescale import merge_executor_state, rescale_operator_states
from runtime.checkpoint.restore import LoadedSnapshot, RestoreError, match_report
from runtime.checkpoint.uid import fingerprint
from runtime.executor.task import TaskRunner
from runtime.graph import JobGraph, Node
from runtime.operators.base import Operator, checkpointing_mode
from runtime.operators.sink import SINK
from runtime.operators.source import TABLE_SOURCE_SCAN
from runtime.state.keygroups import key_group_range


def state_names(op: Operator, snap: Any) -> list[str]:
    """The state names `_metadata` lists for an operator's snapshot (savepoint inspect)."""
    if isinstance(snap, dict):
        return [str(k) for k in snap]
    if checkpointing_mode(op) == "generic":
        attrs = list(type(op).state_attributes)
        return ["keyed", *attrs] if op.state is not None else attrs
    return [] if snap is None else ["state"]


def check_claims(snap: LoadedSnapshot, mine: dict[str, Node], graph: JobGraph, ignore_unclaimed: bool) -> set[str]:
    """The uids of `snap` whose state this job cannot take (its schema changed): raises
    RestoreError with the match report unless `execution.savepoint.ignore-unclaimed-state`
    (then state of removed operators is dropped and changed ones start empty). `mine`: the
    job's nodes by uid (the parallel executor checks all of them before forking)."""
    meta = snap.metadata
    has_state = {o.uid for o in meta.operators if o.file is not None or any(st.file for st in o.subtasks)}
    unclaimed = [
        f"{o.operator} (uid {o.uid}, {o.label})" for o in meta.operators if o.uid in has_state and o.uid not in mine
    ]
    mismatched = []
    for o in meta.operators:
        node = mine.get(o.uid)
        if node is None or o.uid not in has_state or node.is_kind(TABLE_SOURCE_SCAN) or node.is_kind(SINK):
            continue
        if o.fingerprint and o.fingerprint != fingerprint(graph, node):
            mismatched.append(f"{o.operator} (uid {o.uid}, {o.label})")
    if (unclaimed or mismatched) and not ignore_unclaimed:
        raise RestoreError(match_report(unclaimed, mismatched, snap.location))
    return {m.split(" (uid ")[1].split(",")[0] for m in mismatched}


def restore_task(task: TaskRunner, snap: LoadedSnapshot, index: int, parallelism: int, ignore_unclaimed: bool) -> None:
    """Restore the (open) operators of `task` as subtask `index` of `parallelism` from a
    snapshot of any parallelism: the uid/fingerprint match report first, then every
    operator's state re-split to the subtask's key-group range and the runner's watermark
    bookkeeping (the minimum over the old subtasks). A watermark restored as MAX_WATERMARK
    (a drained savepoint) is forgotten, as Flink does: the restored run's count."""
    meta = snap.metadata
    mine = {task.uids[n.id]: n for n in task.graph.nodes}  # a worker runs a part of them
    bad = check_claims(snap, mine, task.graph, ignore_unclaimed)
    groups = key_group_range(index, parallelism, meta.max_parallelism)
    for o in meta.operators:
        node = mine.get(o.uid)
        if node is None or node.id not in task.operators or o.uid in bad:
            continue
        if o.file is not None or any(st.file for st in o.subtasks):  # any parallelism: re-split
            op = task.operators[node.id]
            op.restore_state(rescale_operator_states(op, snap.subtask_states(o.uid), groups, index, parallelism))
            op.forget_drained_watermark()
        ex = o.executor or {}
        if isinstance(ex.get("subtasks"), list):  # per-subtask bookkeeping: the minimum
            ex = merge_executor_state(ex["subtasks"])
        task.restore_executor_state(node.id, ex)
