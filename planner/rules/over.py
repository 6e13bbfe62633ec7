"""OVER windows: the logical node the binder produces (`LogicalOverAggregate`), its
physical form (`OverAggregate`, one per window group, as Flink plans it), the streaming
checks Flink applies, the changelog mode and the EXPLAIN line.

A window group is one distinct (PARTITION BY, ORDER BY, frame) triple; all OVER calls
sharing it are computed by one OverAggregate, whose output is its input columns followed
by one column per call (`w<g>$o<i>`, Flink's names). Several groups stack (BATCH; Flink
rejects them in STREAMING).

OverAggregate params (JobGraph):
  `partition`: [input idx], `order`: [[idx, ascending, nulls_first]], `frame`: OverFrame
  param, `calls`: [OverCall param], `time_kind`: "ROWTIME" | "PROCTIME" | null (the
  order key's time attribute, STREAMING), `updating`: whether the operator recomputes
  (non-time ORDER BY or an updating input; beyond Flink, see runtime/operators/over.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.changelog import register_changelog
from planner.errors import UnsupportedSqlError
from planner.explain import format_literal, register_physical_line
from planner.logical import _Single
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Literal
from runtime.graph import STREAMING
from runtime.operators.union import ExchangeParams
from runtime.types import DataType

RANKING_FUNCTIONS = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile")
OFFSET_FUNCTIONS = ("lag", "lead")


@dataclass(frozen=True)
class OverFrame:
    """ROWS or RANGE frame. Bounds are offsets from the current row (negative = PRECEDING,
    0 = CURRENT ROW, positive = FOLLOWING; in ms for a RANGE over a time column, in order-key
    units otherwise); None = UNBOUNDED (PRECEDING for `lower`, FOLLOWING for `upper`)."""

    kind: str  # ROWS | RANGE
    lower: int | None
    upper: int | None

    def to_param(self) -> dict[str, Any]:
        return {"kind": self.kind, "lower": self.lower, "upper": self.upper}

    def text(self) -> str:
        """Flink's rendering (`RANG` for unbounded RANGE frames is Flink's own spelling)."""

        def bound(v: int | None, unbounded: str) -> str:
            if v is None:
                return f"UNBOUNDED {unbounded}"
            if v == 0:
                return "CURRENT ROW"
            return f"{abs(v)} {'PRECEDING' if v < 0 else 'FOLLOWING'}"

        kind = self.kind
        if kind == "RANGE" and self.lower is None:
            kind = "RANG"
        return f"{kind} BETWEEN {bound(self.lower, 'PRECEDING')} AND {bound(self.upper, 'FOLLOWING')}"


@dataclass(frozen=True)
class OverCall:
    """One OVER function call: an aggregate (as AggCall), a ranking function or LAG/LEAD
    (`params`: offset, default Literal). `args` index the OverAggregate's input columns."""

    name: str
    args: tuple[int, ...]
    type: DataType
    distinct: bool = False
    params: tuple[tuple[str, Any], ...] = ()

    def to_param(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": list(self.args),
            "distinct": self.distinct,
            "filter": None,
            "type": self.type,
            "params": dict(self.params),
        }


@dataclass(frozen=True)
class OverGroup:
    partition: tuple[int, ...]
    order: tuple[tuple[int, bool, bool], ...]  # (input idx, ascending, nulls first)
    frame: OverFrame
    calls: tuple[OverCall, ...]


@dataclass(frozen=True)
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
                parts.append(f"{self.fields[n].name}=[{_call_text(c, refs)} OVER ({_spec(g)})]")
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


def _call_text(c: OverCall | dict[str, Any], names: list[str]) -> str:
    d = c.to_param() if isinstance(c, OverCall) else c
    args = [names[i] for i in d["args"]]
    params = d.get("params") or {}
    if d["name"] in OFFSET_FUNCTIONS:
        if params.get("offset") is not None and (params["offset"] != 1 or params.get("default") is not None):
            args.append(str(params["offset"]))
        default = params.get("default")
        if default is not None:
            args.append(format_literal(default) if isinstance(default, Literal) else str(default))
    if d["name"] == "ntile" and params.get("buckets") is not None:
        args = [str(params["buckets"])]
    inner = ", ".join(args) if args else ("*" if d["name"] == "count" else "")
    if d.get("distinct"):
        inner = "DISTINCT " + inner
    return f"{d['name'].upper()}({inner})"


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
        ex = PhysicalNode.of(ExchangeParams.on(keys), (child,), child.fields)
        width = len(child.fields) + len(g.calls)
        child = PhysicalNode(
            "OverAggregate",
            (ex,),
            node.fields[:width],
            {
                "partition": keys,
                "order": [list(o) for o in g.order],
                "frame": g.frame.to_param(),
                "calls": [c.to_param() for c in g.calls],
                "time_kind": time_kind,
                "updating": updating,
            },
            info={"group": g},
        )
    assert len(child.fields) == len(node.fields) and n <= len(child.fields)
    return child


@register_changelog("OverAggregate")
def _over_mode(node: PhysicalNode, in_modes: list[str]) -> str:
    if in_modes[0] == "I" and not node.params.get("updating"):
        return "I"
    return "I,UB,UA,D"


@register_physical_line("OverAggregate")
def _over_line(node: PhysicalNode) -> list[str]:
    p = node.params
    names = [f.name for f in node.inputs[0].fields]
    parts = []
    if p["partition"]:
        parts.append(f"partitionBy=[{', '.join(names[i] for i in p['partition'])}]")
    order = [f"{names[i]} {'ASC' if asc else 'DESC'}" for i, asc, _ in p["order"]]
    parts.append(f"orderBy=[{', '.join(order)}]")
    f = p["frame"]
    parts.append(f"window=[ {OverFrame(f['kind'], f['lower'], f['upper']).text()}]")
    width = len(names)
    calls = [f"{_call_text(c, names)} AS {node.fields[width + i].name}" for i, c in enumerate(p["calls"])]
    parts.append(f"select=[{', '.join(names + calls)}]")
    return parts
