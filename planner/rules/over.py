"""OVER windows: the logical node the binder produces (`LogicalOverAggregate`), its
physical form (`OverAggregate`, one per window group, as Flink plans it) and the streaming
checks Flink applies (the operator's params, changelog mode and EXPLAIN line are in
runtime/operators/over.py).

A window group is one distinct (PARTITION BY, ORDER BY, frame) triple; all OVER calls
sharing it are computed by one OverAggregate, whose output is its input columns followed
by one column per call (`w<g>$o<i>`, Flink's names). Several groups stack (BATCH; Flink
rejects them in STREAMING).

"""

from __future__ import annotations

from typing import Any

from planner.errors import UnsupportedSqlError
from planner.logical import _Single
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.frozen import frozen_dataclass
from runtime.graph import STREAMING
from runtime.operators.over import OFFSET_FUNCTIONS, RANKING_FUNCTIONS, OverAggregateParams, over_call_text
from runtime.operators.over_frames import OverFrame
from runtime.operators.rank_common import SortKey
from runtime.plan_params import AggCallParams
from runtime.types import DataType

__all__ = ["OFFSET_FUNCTIONS", "RANKING_FUNCTIONS", "OverFrame"]  # the binder builds the logical node


@frozen_dataclass
class OverCall:
    """One OVER function call: an aggregate (as AggCall), a ranking function or LAG/LEAD
    (`params`: offset, default Literal). `args` index the OverAggregate's input columns."""

    name: str
    args: tuple[int, ...]
    type: DataType
    distinct: bool = False
    params: tuple[tuple[str, Any], ...] = ()

    def to_params(self) -> AggCallParams:
        return AggCallParams(self.name, self.args, self.type, self.distinct, None, dict(self.params))


@frozen_dataclass
class OverGroup:
    partition: tuple[int, ...]
    order: tuple[tuple[int, bool, bool], ...]  # (input idx, ascending, nulls first)
    frame: OverFrame
    calls: tuple[OverCall, ...]


@frozen_dataclass
class LogicalOverAggregate(_Single):
    """Input columns, then the calls of every group in order."""

    groups: tuple[OverGroup, ...]

    def explain_line(self) -> str:
        parts = []
        width = len(self.input.fields)
        refs = [f"${i}" for i in range(width)]
        n = width
        for g in self.groups:
            for c in g.calls:
                parts.append(f"{self.fields[n].name}=[{over_call_text(c.to_params(), refs)} OVER ({_spec(g)})]")
                n += 1
        keep = ", ".join(f"{f.name}=[${i}]" for i, f in enumerate(self.input.fields))
        return f"LogicalOverAggregate({keep}, {', '.join(parts)})"


def _spec(g: OverGroup) -> str:
    parts = []
    if g.partition:
        parts.append("PARTITION BY " + ", ".join(f"${i}" for i in g.partition))
    if g.order:
        parts.append("ORDER BY " + ", ".join(f"${i}{'' if asc else ' DESC'}" for i, asc, _ in g.order))
    parts.append(g.frame.text().replace("RANG ", "RANGE "))
    return " ".join(parts)


# ---------------------------------------------------------------------- physical
def _check_streaming(node: LogicalOverAggregate) -> tuple[str | None, bool]:
    """Flink's streaming restrictions; returns (time attribute kind, updating mode)."""
    if len(node.groups) > 1:
        raise UnsupportedSqlError(
            "Over Agg: Unsupported use of OVER windows. All aggregates must be computed on the same window. "
            "please re-check the over window statement."
        )
    g = node.groups[0]
    for c in g.calls:
        if c.name == "lead":
            raise UnsupportedSqlError("LEAD Function is not supported in stream mode.")
    if g.frame.upper is None or g.frame.upper > 0:
        raise UnsupportedSqlError(f"OVER {g.frame.kind} FOLLOWING windows are not supported yet.")
    fields = node.input.fields
    if len(g.order) != 1:
        raise UnsupportedSqlError("OVER windows' ordering in stream mode must be defined on a time attribute.")
    idx, asc, _ = g.order[0]
    kind = fields[idx].type.time_attr
    if kind is None:
        # Beyond Flink: a non-time ORDER BY is computed by recomputing the touched
        # partitions (retract changelog), see runtime/operators/over.py.
        return None, True
    if not asc:
        raise UnsupportedSqlError("OVER windows' ordering in stream mode must be ascending on a time attribute.")
    return kind, False


@register_physical(LogicalOverAggregate)
def _convert(planner: PhysicalPlanner, node: LogicalOverAggregate) -> PhysicalNode:
    time_kind: str | None = None
    updating = False
    if planner.mode == STREAMING:
        time_kind, updating = _check_streaming(node)
    child = planner.convert(node.input)
    n = len(node.input.fields)
    for g in node.groups:
        keys = list(g.partition)
        width = len(child.fields) + len(g.calls)
        params = OverAggregateParams(
            partition=tuple(keys),
            order=tuple(SortKey(i, not asc, nulls_first) for i, asc, nulls_first in g.order),
            frame=g.frame,
            calls=tuple(c.to_params() for c in g.calls),
            time_kind=time_kind,
            updating=updating,
        )
        child = PhysicalNode.distributed(params, (child,), node.fields[:width], info={"group": g})
    assert len(child.fields) == len(node.fields) and n <= len(child.fields)
    return child
