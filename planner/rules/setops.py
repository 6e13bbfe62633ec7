"""Set operations other than UNION ALL: UNION, INTERSECT [ALL], EXCEPT [ALL].

Planned the way Flink's rewrite rules plan them (Calcite's union-to-distinct and Flink's
RewriteIntersectAllRule / RewriteMinusAllRule), so they run on the existing keyed
GroupAggregate with its retractions:

- UNION: `Union(all) → Exchange(hash all columns) → GroupAggregate(groupBy all, no aggs)`
  (a distinct; insert-only when the inputs are).
- INTERSECT / EXCEPT [ALL]: each branch gets two marker columns (left: `true, null`;
  right: `null, true`), then `Union(all) → Exchange → GroupAggregate(groupBy all,
  COUNT(vcol_left_marker), COUNT(vcol_right_marker))`, then a Calc keeping the rows the
  operation keeps: EXCEPT `left > 0 AND right = 0`, INTERSECT `left > 0 AND right > 0`.
  The ALL forms compute the multiplicity (EXCEPT ALL `left - right`, INTERSECT ALL
  `IF(left > right, right, left)`), keep it when > 0 and hand it to `ReplicateRows`
  (Flink: a Correlate with the `$REPLICATE_ROWS$` table function), which repeats each row
  that many times; a -U/+U of the count becomes that many -U/+U rows, so the final table
  stays right while the counts change.

Deviation from Flink: Flink plans the distinct INTERSECT/EXCEPT as a semi/anti join
followed by a distinct aggregate; here they share the counting plan above (same result).
"""

from __future__ import annotations

from dataclasses import replace

from planner.logical import AggCall, LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.frozen import frozen_dataclass
from runtime.operators.calc import CalcParams
from runtime.operators.group_agg import GroupAggregateParams
from runtime.operators.setops import ReplicateRowsParams
from runtime.operators.union import UnionParams
from runtime.types import BIGINT, BOOLEAN, INT, Field

_LOGICAL_NAMES = {"UNION": "LogicalUnion", "INTERSECT": "LogicalIntersect", "EXCEPT": "LogicalMinus"}


@frozen_dataclass
class LogicalSetOp(LogicalNode):
    """`left <kind> [ALL] right`; both children already cast to `fields`' types."""

    children: tuple[LogicalNode, ...]
    kind: str  # UNION | INTERSECT | EXCEPT
    all: bool = False

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return self.children

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, children=inputs)

    def explain_line(self) -> str:
        return f"{_LOGICAL_NAMES[self.kind]}(all=[{'true' if self.all else 'false'}])"


def _calc(child: PhysicalNode, fields: tuple[Field, ...], exprs: list[Expr], cond: Expr | None) -> PhysicalNode:
    return PhysicalNode.of(CalcParams(tuple(exprs), cond), (child,), fields)


def _call(name: str, args: list[Expr], t: object) -> Call:
    return Call(name, tuple(args), t)  # type: ignore[arg-type]


@register_physical(LogicalSetOp)
def _convert(planner: PhysicalPlanner, node: LogicalSetOp) -> PhysicalNode:
    width = len(node.fields)
    keys = list(range(width))
    children = [planner.convert(c) for c in node.children]
    if node.kind == "UNION":
        union = PhysicalNode.of(UnionParams(), children, node.fields)
        return PhysicalNode.distributed(GroupAggregateParams(tuple(keys), ()), (union,), node.fields, info={"aggs": ()})

    # INTERSECT / EXCEPT: mark each side, count per distinct row.
    marker_t = BOOLEAN(nullable=True)
    marked_fields = node.fields + (Field("vcol_left_marker", marker_t), Field("vcol_right_marker", marker_t))
    marked = []
    for side, child in enumerate(children):
        refs: list[Expr] = [InputRef(i, f.type) for i, f in enumerate(child.fields)]
        yes, no = Literal(True, marker_t), Literal(None, marker_t)
        marked.append(_calc(child, marked_fields, refs + ([yes, no] if side == 0 else [no, yes]), None))
    union = PhysicalNode.of(UnionParams(), marked, marked_fields)
    cnt_t = BIGINT(nullable=False)
    aggs = (
        AggCall("count", (width,), cnt_t, display="COUNT(vcol_left_marker)"),
        AggCall("count", (width + 1,), cnt_t, display="COUNT(vcol_right_marker)"),
    )
    agg_fields = node.fields + (Field("vcol_left_cnt", cnt_t), Field("vcol_right_cnt", cnt_t))
    params = GroupAggregateParams(tuple(keys), tuple(a.as_params() for a in aggs))
    agg = PhysicalNode.distributed(params, (union,), agg_fields, info={"aggs": aggs})
    left_cnt, right_cnt = InputRef(width, cnt_t), InputRef(width + 1, cnt_t)
    zero = Literal(0, INT(nullable=False))
    boolean = BOOLEAN(nullable=False)
    cols: list[Expr] = [InputRef(i, f.type) for i, f in enumerate(node.fields)]
    if not node.all:
        right_test = "equals" if node.kind == "EXCEPT" else "greater_than"
        cond = _call(
            "and",
            [_call("greater_than", [left_cnt, zero], boolean), _call(right_test, [right_cnt, zero], boolean)],
            boolean,
        )
        return _calc(agg, node.fields, cols, cond)
    if node.kind == "EXCEPT":
        count: Expr = _call("minus", [left_cnt, right_cnt], cnt_t)
    else:
        count = _call("if", [_call("greater_than", [left_cnt, right_cnt], boolean), right_cnt, left_cnt], cnt_t)
    counted_fields = (Field("vcol_count", cnt_t),) + node.fields
    calc = _calc(agg, counted_fields, [count] + cols, _call("greater_than", [count, zero], boolean))
    return PhysicalNode.of(ReplicateRowsParams(0, tuple(range(1, width + 1))), (calc,), node.fields)
