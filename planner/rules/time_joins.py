"""Time-bounded joins: recognise a `LogicalJoin` whose condition bounds time and plan it to
its own operator, before the regular join sees it (`PhysicalPlanner.convert` calls
`planner.rules.temporal_joins.convert_time_join` first; it returns None for joins it
does not own).

- Interval join: both sides' rowtime attributes bounded on both ends
  (`r.ts BETWEEN l.ts - a AND l.ts + b`, `>`/`>=`/`<`/`<=` pairs, or `l.ts = r.ts`) → `IntervalJoin`;
  the same bounds on both sides' PROCTIME attributes → `IntervalJoin` in processing time
  (streaming only: in BATCH a proctime is a plain timestamp and the join a regular one, as
  in Flink). A comparison between a rowtime and a proctime is no time bound (Flink's
  IntervalJoinUtil treats it as a plain predicate).
- Window join: `L.window_start = R.window_start AND L.window_end = R.window_end` where
  both columns come from window TVFs (or window aggregates) of the same window →
  `WindowJoin` (also SEMI/ANTI, e.g. IN/EXISTS rewritten by the regular-join rules).
- `FOR SYSTEM_TIME AS OF l.rowtime` (a `LogicalSnapshot` right input) → `TemporalJoin`;
  `AS OF l.proctime` against a lookup source → `LookupJoin` (planner.rules.lookup_join).

Conditions are IR over the join's concatenated row (left columns first).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from planner.binder.scope import uniquify
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.exprs import conjunction, substitute
from planner.logical import (
    LogicalCalc,
    LogicalFilter,
    LogicalJoin,
    LogicalNode,
    LogicalProject,
    LogicalWatermarkAssigner,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
    WindowSpec,
    _Single,
)
from planner.physical import PhysicalNode, PhysicalPlanner
from planner.rules.joins import JoinKeys, conjuncts, drop_computed_keys, join_keys, widen
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.graph import BATCH
from runtime.operators.interval_join import IntervalJoinParams
from runtime.operators.window_join import WindowJoinParams
from runtime.plan_params import WindowParams
from runtime.types import BOOLEAN, Field

if TYPE_CHECKING:
    from planner.physical import PhysicalPlanner


@frozen_dataclass
class LogicalSnapshot(_Single):
    """`right FOR SYSTEM_TIME AS OF period`: `period` is an InputRef to a time attribute of
    the enclosing join's left side; `primary_key` indexes this node's fields."""

    period: InputRef
    primary_key: tuple[int, ...] | None = None
    table_name: str = ""
    line_col: tuple[int | None, int | None] = (None, None)

    def explain_line(self) -> str:
        return f"LogicalSnapshot(period=[$cor0.${self.period.index}])"


def snapshot_below(node: LogicalNode) -> tuple[LogicalSnapshot, list[LogicalNode]] | None:
    """The snapshot under a chain of projections/filters (e.g. conditions the join rules
    pushed to the right input), with that chain (top first)."""
    chain: list[LogicalNode] = []
    while isinstance(node, (LogicalCalc, LogicalProject, LogicalFilter)):
        chain.append(node)
        node = node.input
    return (node, chain) if isinstance(node, LogicalSnapshot) else None


def rebuild_chain(chain: list[LogicalNode], bottom: LogicalNode) -> LogicalNode:
    node = bottom
    for n in reversed(chain):
        node = n.with_inputs((node,))
    return node


def compose_chain(chain: list[LogicalNode], width: int, types: list) -> tuple[list[Expr], Expr | None]:  # noqa: ANN001
    """The chain as one projection + condition over its bottom input's columns."""

    exprs: list[Expr] = [InputRef(i, t) for i, t in zip(range(width), types, strict=True)]
    cond: Expr | None = None
    for n in reversed(chain):
        if isinstance(n, LogicalFilter):
            cond = conjunction(cond, substitute(n.condition, exprs))
        elif isinstance(n, (LogicalCalc, LogicalProject)):
            if isinstance(n, LogicalCalc) and n.condition is not None:
                cond = conjunction(cond, substitute(n.condition, exprs))
            exprs = [substitute(e, exprs) for e in n.exprs]
    return exprs, cond


# ---------------------------------------------------------------------- conditions
def and_all(parts: list[Expr]) -> Expr | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return Call("and", tuple(parts), BOOLEAN(nullable=any(p.type.nullable for p in parts)))


def equi_pair(e: Expr, nl: int) -> tuple[int, int] | None:
    """(left index, right index within the right side) when `e` is `l.x = r.y`."""
    if not (isinstance(e, Call) and e.name == "equals" and len(e.args) == 2):
        return None
    a, b = e.args
    if not (isinstance(a, InputRef) and isinstance(b, InputRef)):
        return None
    if a.index < nl <= b.index:
        return a.index, b.index - nl
    if b.index < nl <= a.index:
        return b.index, a.index - nl
    return None


_FLIP = {
    "equals": "equals",  # `l.ts = r.ts (+ INTERVAL)`: both bounds at once (Flink: `ltime = rtime`)
    "greater_than": "less_than",
    "greater_than_or_equal": "less_than_or_equal",
    "less_than": "greater_than",
    "less_than_or_equal": "greater_than_or_equal",
}


def _time_operand(e: Expr) -> tuple[int, int, str] | None:
    """(column, offset ms, "ROWTIME" | "PROCTIME") for `ts`, `ts + INTERVAL`, `INTERVAL + ts`,
    `ts - INTERVAL` where `ts` is a time attribute."""
    if isinstance(e, InputRef):
        attr = e.type.time_attr
        return (e.index, 0, attr) if attr in ("ROWTIME", "PROCTIME") else None
    if isinstance(e, Call) and e.name in ("plus", "minus") and len(e.args) == 2:
        a, b = e.args
        if isinstance(b, Literal) and b.type.name == "INTERVAL_DAY_TIME" and b.value is not None:
            inner = _time_operand(a)
            if inner is not None:
                sign = 1 if e.name == "plus" else -1
                return inner[0], inner[1] + sign * int(b.value), inner[2]
        if e.name == "plus" and isinstance(a, Literal) and a.type.name == "INTERVAL_DAY_TIME" and a.value is not None:
            inner = _time_operand(b)
            if inner is not None:
                return inner[0], inner[1] + int(a.value), inner[2]
    return None


@mutable_dataclass
class IntervalBounds:
    """`lower <= r.ts - l.ts <= upper` (ms, inclusive) on left column `left_time` and
    right column `right_time` (index within the right side)."""

    left_time: int
    right_time: int
    proctime: bool = False
    lower: int | None = None
    upper: int | None = None


def time_bound(e: Expr, nl: int) -> tuple[int, int, str, int, bool] | None:
    """(left time col, right time col, op on d = r - l, constant, proctime) for a comparison
    between the two sides' time attributes of one kind (both rowtimes or both proctimes,
    each with an optional interval offset)."""
    if not (isinstance(e, Call) and e.name in _FLIP and len(e.args) == 2):
        return None
    x, y = _time_operand(e.args[0]), _time_operand(e.args[1])
    if x is None or y is None or x[2] != y[2]:
        return None
    (i, cx, attr), (j, cy, _) = x, y
    if i >= nl > j:  # r + cx OP l + cy  →  d OP cy - cx
        return j, i - nl, e.name, cy - cx, attr == "PROCTIME"
    if i < nl <= j:  # l + cx OP r + cy  →  d FLIP(OP) cx - cy
        return i, j - nl, _FLIP[e.name], cx - cy, attr == "PROCTIME"
    return None


def interval_bounds(parts: list[Expr], nl: int) -> tuple[IntervalBounds | None, list[Expr]]:
    """The interval (when both ends are bounded on one pair of time columns) and the
    conjuncts that are not part of it."""
    bounds: IntervalBounds | None = None
    rest: list[Expr] = []
    for p in parts:
        tb = time_bound(p, nl)
        if tb is None:
            rest.append(p)
            continue
        lt, rt, op, c, proctime = tb
        if bounds is None:
            bounds = IntervalBounds(lt, rt, proctime)
        elif (bounds.left_time, bounds.right_time, bounds.proctime) != (lt, rt, proctime):
            rest.append(p)
            continue
        if op == "equals":
            bounds.lower = c if bounds.lower is None else max(bounds.lower, c)
            bounds.upper = c if bounds.upper is None else min(bounds.upper, c)
        elif op == "greater_than_or_equal":
            bounds.lower = c if bounds.lower is None else max(bounds.lower, c)
        elif op == "greater_than":
            bounds.lower = c + 1 if bounds.lower is None else max(bounds.lower, c + 1)
        elif op == "less_than_or_equal":
            bounds.upper = c if bounds.upper is None else min(bounds.upper, c)
        else:
            bounds.upper = c - 1 if bounds.upper is None else min(bounds.upper, c - 1)
    if bounds is None or bounds.lower is None or bounds.upper is None:
        return None, parts
    return bounds, rest


# ---------------------------------------------------------------------- windows
def window_origin(node: LogicalNode, index: int) -> tuple[str, WindowSpec, int] | None:
    """Which window property (window_start / window_end / window_time) column `index` of
    `node` is, following projections down to the window TVF or window aggregate, with the
    window and the TVF's time column type flag (1 = TIMESTAMP_LTZ)."""
    while True:
        if isinstance(node, (LogicalProject, LogicalCalc)):
            e = node.exprs[index]
            if not isinstance(e, InputRef):
                return None
            node, index = node.input, e.index
        elif isinstance(node, (LogicalFilter, LogicalWatermarkAssigner)):
            node = node.input
        elif isinstance(node, LogicalWindowTableFunction):
            n = len(node.input.fields)
            if index < n:
                node = node.input
                continue
            ltz = int(node.input.fields[node.time_index].type.name == "TIMESTAMP_LTZ")
            return ("window_start", "window_end", "window_time")[index - n], node.window, ltz
        elif isinstance(node, LogicalWindowAggregate):
            base = len(node.grouping) + len(node.aggs)
            if index < base:
                return None
            ltz = int(node.input.fields[node.time_index].type.name == "TIMESTAMP_LTZ")
            return node.window_props[index - base], node.window, ltz
        else:
            return None


@mutable_dataclass
class WindowJoinShape:
    left_window: tuple[int, int]  # (window_start, window_end) columns of the left side
    right_window: tuple[int, int]
    window: WindowSpec
    ltz: bool
    rest: list[Expr]  # the other conjuncts: equi-keys (planner.rules.joins.join_keys) and residual


def window_join_shape(node: LogicalJoin) -> WindowJoinShape | None:
    nl = len(node.left.fields)
    found: dict[str, tuple[int, int]] = {}
    windows: list[tuple[WindowSpec, WindowSpec, int]] = []
    rest: list[Expr] = []
    for p in conjuncts(node.condition):
        pair = equi_pair(p, nl)
        if pair is not None:
            lo = window_origin(node.left, pair[0])
            ro = window_origin(node.right, pair[1])
            if lo is not None and ro is not None and lo[0] == ro[0] and lo[0] in ("window_start", "window_end"):
                if lo[0] not in found:
                    found[lo[0]] = pair
                    windows.append((lo[1], ro[1], lo[2]))
                    continue
        rest.append(p)
    if set(found) != {"window_start", "window_end"}:
        return None
    lw, rw, ltz = windows[0]
    if replace(lw, partition_keys=()) != replace(rw, partition_keys=()):
        raise UnsupportedSqlError(
            "Currently, window join doesn't support different window table function of left and right inputs.\n"
            f"The left window table function is {lw.kind}, the right window table function is {rw.kind}."
        )
    return WindowJoinShape(
        (found["window_start"][0], found["window_end"][0]),
        (found["window_start"][1], found["window_end"][1]),
        lw,
        bool(ltz),
        rest,
    )


# ---------------------------------------------------------------------- conversion
@frozen_dataclass
class KeyedInputs:
    """A time-bounded join's inputs keyed as a regular join's are (planner.rules.joins):
    equalities between an expression of each side are keys, a side that is an expression
    (`CAST(l.id AS BIGINT) = r.id`) computed by a Calc appended to its input (`$f2`, the
    input's columns and time attributes kept in place), so the join is hash-partitioned on
    the keys instead of comparing every pair on one subtask. `keys.rest` (the residual) and
    `fields` (the join's row) are over the widened inputs; `condition` is for EXPLAIN."""

    left: PhysicalNode
    right: PhysicalNode
    keys: JoinKeys
    fields: tuple[Field, ...]
    condition: Expr | None


def keyed_inputs(
    planner: PhysicalPlanner, node: LogicalJoin, others: list[Expr], kind: str, materialize_rowtime: bool = False
) -> KeyedInputs:
    """Key the join on the equalities among `others` (the conjuncts that are not the time
    bounds). NULL-safe equalities stay residual: these operators match NULL keys with nothing.
    `materialize_rowtime`: see `output_fields`."""
    nl, nr = len(node.left.fields), len(node.right.fields)
    keys = join_keys(and_all(others), nl, nr, null_safe=False)
    left = widen(planner.convert(node.left), keys.left_exprs)
    right = widen(planner.convert(node.right), keys.right_exprs)
    base = output_fields(node, materialize_rowtime)
    if not keys.left_exprs and not keys.right_exprs:
        return KeyedInputs(left, right, keys, base, node.condition)
    padded = (kind in ("RIGHT", "FULL"), kind in ("LEFT", "FULL"))
    types = [f.type for f in base[:nl]] + [e.type.with_nullable(True) if padded[0] else e.type for e in keys.left_exprs]
    if kind not in ("SEMI", "ANTI"):
        types += [f.type for f in base[nl:]]
        types += [e.type.with_nullable(True) if padded[1] else e.type for e in keys.right_exprs]
    names = uniquify([f.name for f in left.fields] + [f.name for f in right.fields])
    fields = tuple(Field(n, t) for n, t in zip(names, types, strict=False))
    # the whole condition with the computed sides replaced by their columns, as Flink shows it
    whole = join_keys(node.condition, nl, nr, null_safe=False).condition
    return KeyedInputs(left, right, keys, fields, whole)


def output_fields(node: LogicalJoin, materialize_rowtime: bool = False) -> tuple[Field, ...]:
    """The join's fields, keeping the inputs' types (so rowtime attributes survive).

    `materialize_rowtime` (a processing-time interval join): rowtime columns leave as plain
    timestamps. That join forwards watermarks without holding them back, so a rowtime behind
    it would be wrong; Flink refuses rowtime attributes in its row ("Interval join with
    proctime attribute requires no event-time attributes are in the join inputs") after its
    projection pushdown dropped the unused ones, which this planner does not do above a
    watermark assigner, so it materializes them instead (a later event-time operation on such
    a column is refused as on any non-time-attribute)."""
    if node.kind.upper() in ("SEMI", "ANTI"):
        fields = tuple(node.left.fields)
    else:
        both = tuple(node.left.fields) + tuple(node.right.fields)
        if len(both) != len(node.fields):
            fields = tuple(node.fields)
        else:
            fields = tuple(Field(f.name, g.type) for f, g in zip(node.fields, both, strict=True))
    if materialize_rowtime:
        fields = tuple(Field(f.name, f.type.as_time_attr(None)) if f.type.time_attr == "ROWTIME" else f for f in fields)
    return fields


def convert_interval_join(
    planner: PhysicalPlanner, node: LogicalJoin, b: IntervalBounds, rest: list[Expr], kind: str
) -> PhysicalNode:
    nl, nr = len(node.left.fields), len(node.right.fields)
    assert b.lower is not None and b.upper is not None
    k = keyed_inputs(planner, node, rest, kind, materialize_rowtime=b.proctime)
    params = IntervalJoinParams(
        kind=kind,
        left_keys=k.keys.left,
        right_keys=k.keys.right,
        left_time=b.left_time,
        right_time=b.right_time,  # computed key columns go after each side's own columns
        lower_ms=b.lower,
        upper_ms=b.upper,
        condition=and_all(list(k.keys.rest)),
        left_width=len(k.left.fields),
        proctime=b.proctime,
    )
    joined = PhysicalNode.distributed(params, (k.left, k.right), k.fields, info={"condition": k.condition})
    return drop_computed_keys(joined, k.keys, nl, nr, output_fields(node, materialize_rowtime=b.proctime))


def convert_window_join(planner: PhysicalPlanner, node: LogicalJoin, s: WindowJoinShape, kind: str) -> PhysicalNode:
    nl, nr = len(node.left.fields), len(node.right.fields)
    if planner.mode != BATCH and s.window.kind == "SESSION":
        raise UnsupportedSqlError("Window join on SESSION windows is not supported yet")
    k = keyed_inputs(planner, node, s.rest, kind)
    w = s.window
    params = WindowJoinParams(
        kind=kind,
        left_keys=k.keys.left,
        right_keys=k.keys.right,
        left_window=s.left_window,
        right_window=s.right_window,  # computed key columns go after each side's own columns
        window=WindowParams(w.kind, w.size_ms, w.slide_ms, w.step_ms, w.offset_ms, w.gap_ms, tuple(w.partition_keys)),
        ltz=s.ltz,
        condition=and_all(list(k.keys.rest)),
        left_width=len(k.left.fields),
    )
    joined = PhysicalNode.distributed(params, (k.left, k.right), k.fields, info={"condition": k.condition})
    return drop_computed_keys(joined, k.keys, nl, nr, output_fields(node))


def snapshot_error(cls: type[SqlValidationError] | type[UnsupportedSqlError], message: str, snap: LogicalSnapshot):
    """An error located at the snapshot's `FOR SYSTEM_TIME AS OF` clause."""
    line, col = snap.line_col
    return cls(message, line=line, column=col)
