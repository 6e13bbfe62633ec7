"""Changelog-mode inference (the optimizer's last phase): which row kinds each physical
node emits, as Flink's EXPLAIN CHANGELOG_MODE prints them ("I", "I,UB,UA", "I,UB,UA,D",
"I,UA,D"). In BATCH mode every node is insert-only (final results), except that a CDC
source is a bounded changelog that row-wise operators forward and a GroupAggregate applies."""

from __future__ import annotations

from planner.errors import UnsupportedSqlError
from planner.physical import PhysicalNode
from runtime.graph import BATCH
from runtime.operators.source import TableSourceScanParams
from runtime.operators.spec import PlanRefusedError, spec_for

_ORDER = ("I", "UB", "UA", "D")


def _flags(mode: str) -> set[str]:
    return set(mode.split(","))


def _mode(flags: set[str]) -> str:
    return ",".join(k for k in _ORDER if k in flags)


def is_insert_only(mode: str) -> bool:
    return mode == "I"


def infer_changelog_modes(node: PhysicalNode, mode: str) -> PhysicalNode:
    """`node` (and its inputs) with `changelog_mode` set."""
    memo: dict[int, PhysicalNode] = {}

    def visit(n: PhysicalNode) -> PhysicalNode:
        if id(n) in memo:
            return memo[id(n)]
        inputs = tuple(visit(i) for i in n.inputs)
        out = n.with_mode(_infer(n, inputs, mode), inputs)
        memo[id(n)] = out
        return out

    return visit(node)


def _infer_batch(n: PhysicalNode, inputs: tuple[PhysicalNode, ...]) -> str:
    """BATCH: a CDC source is read as a bounded changelog (a GroupAggregate applies it and
    emits final, insert-only rows); row-wise operators forward it; any other operator
    refuses it as Flink does."""
    op = n.operator
    in_modes = [i.changelog_mode for i in inputs]
    spec = spec_for(op)
    if spec is not None:
        try:
            out = spec.batch_changelog_mode(n, inputs)
        except PlanRefusedError as e:
            raise UnsupportedSqlError(str(e)) from None
        if out is not None:
            return out
    if all(is_insert_only(m) for m in in_modes):
        return "I"
    scan = inputs[0]
    while scan.inputs:
        scan = scan.inputs[0]
    table = scan.params.table if isinstance(scan.params, TableSourceScanParams) else "?"
    raise UnsupportedSqlError(
        "Querying a table in batch mode is currently only possible for INSERT-only table sources. But the source "
        f"for table '{table}' produces other changelog messages than just INSERT."
    )


def _infer(n: PhysicalNode, inputs: tuple[PhysicalNode, ...], mode: str) -> str:
    if mode == BATCH:
        return _infer_batch(n, inputs)
    op = n.operator
    in_modes = [i.changelog_mode for i in inputs]
    spec = spec_for(op)
    if spec is not None:
        try:
            return spec.changelog_mode(n, inputs)
        except PlanRefusedError as e:
            raise UnsupportedSqlError(str(e)) from None
    return in_modes[0] if in_modes else "I"
