"""Regular joins and semi/anti joins: logical rewrites and physical conversion (the `Join`
operator's params, changelog mode and EXPLAIN line are in runtime/operators/join.py).

The binder produces `LogicalJoin(kind=INNER|LEFT|RIGHT|FULL|CROSS|SEMI|ANTI)`; SEMI/ANTI
come from IN / EXISTS subqueries (planner.binder.subqueries) and output only the left
columns. The condition is over the left columns then the right columns.

Logical rule `push_join_conditions` (predicate-pushdown phase): a WHERE filter directly
above an inner/cross join becomes part of the join condition (so `FROM a, b WHERE a.k = b.k`
is an equi-join), and conjuncts that only read one input move below the join where that
keeps the semantics (Flink's FlinkFilterJoinRule): both sides for INNER, the right side for
LEFT/SEMI/ANTI, the left side for RIGHT/SEMI, nothing for FULL.

Physical: `Join` with the equality conjuncts between a left and a right column as keys
(hash exchanges on both inputs; no keys → single exchanges) and the rest as the residual
`condition`; EXPLAIN shows Flink's
`Join(joinType=[InnerJoin], where=[...], select=[...], leftInputSpec=[...], rightInputSpec=[...])`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.binder.scope import uniquify
from planner.binder.types import common_type, plain
from planner.exprs import conjunction, is_deterministic
from planner.logical import LogicalFilter, LogicalJoin, LogicalNode, transform_up
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Call, Expr, InputRef, input_refs, remap_refs
from runtime.operators.calc import CALC, CalcParams
from runtime.operators.group_agg import GROUP_AGGREGATE, GroupAggregateParams
from runtime.operators.join import JoinParams
from runtime.operators.union import EXCHANGE
from runtime.operators.watermark import WATERMARK_ASSIGNER
from runtime.types import Field


@dataclass(frozen=True)
class LogicalScalarJoin(LogicalJoin):
    """A LEFT join with a scalar subquery's result (planner.binder.subqueries):
    `single_row` makes the runtime fail when the subquery returns more than one row."""

    single_row: bool = False


def conjuncts(e: Expr | None) -> list[Expr]:
    """The AND-ed parts of `e` (flattened)."""
    if e is None:
        return []
    if isinstance(e, Call) and e.name == "and":
        out: list[Expr] = []
        for a in e.args:
            out.extend(conjuncts(a))
        return out
    return [e]


def _and(parts: list[Expr]) -> Expr | None:
    out: Expr | None = None
    for p in parts:
        out = conjunction(out, p)
    return out


def join_kind(kind: str) -> str:
    """Normalize the binder's join kind (CROSS and plain JOIN are INNER)."""
    k = kind.upper()
    return "INNER" if k in ("CROSS", "INNER", "", "JOIN") else k


# ---------------------------------------------------------------------- logical rule
def _push_down(join: LogicalJoin) -> LogicalNode:
    """Move single-input conjuncts of the join condition below the join."""
    kind = join_kind(join.kind)
    nl = len(join.left.fields)
    push_left = kind in ("INNER", "RIGHT", "SEMI")
    push_right = kind in ("INNER", "LEFT", "SEMI", "ANTI")
    left_parts: list[Expr] = []
    right_parts: list[Expr] = []
    keep: list[Expr] = []
    for c in conjuncts(join.condition):
        refs = input_refs(c)
        if not refs or not is_deterministic(c):
            keep.append(c)
        elif push_left and max(refs) < nl:
            left_parts.append(c)
        elif push_right and min(refs) >= nl:
            right_parts.append(remap_refs(c, {i: i - nl for i in refs}))
        else:
            keep.append(c)
    if not left_parts and not right_parts:
        return join
    left, right = join.left, join.right
    if left_parts:
        left = LogicalFilter(fields=left.fields, input=left, condition=_and(left_parts))  # type: ignore[arg-type]
    if right_parts:
        right = LogicalFilter(fields=right.fields, input=right, condition=_and(right_parts))  # type: ignore[arg-type]
    return replace(join, left=left, right=right, condition=_and(keep))


def push_join_conditions(plan: LogicalNode) -> LogicalNode:
    """Filter above an inner join → join condition; single-input conjuncts → below."""

    def rule(node: LogicalNode) -> LogicalNode:
        if isinstance(node, LogicalFilter) and isinstance(node.input, LogicalJoin):
            j = node.input
            if join_kind(j.kind) == "INNER" and is_deterministic(node.condition):
                merged = replace(j, kind="INNER", condition=conjunction(j.condition, node.condition))
                return _push_down(merged)
        if isinstance(node, LogicalJoin):
            return _push_down(node)
        return node

    return transform_up(plan, rule)


# ---------------------------------------------------------------------- physical
def split_condition(cond: Expr | None, nl: int) -> tuple[list[int], list[int], list[bool], list[Expr]]:
    """(left keys, right keys, null-safe flags, residual conjuncts) of a join condition."""
    lk: list[int] = []
    rk: list[int] = []
    ns: list[bool] = []
    rest: list[Expr] = []
    for c in conjuncts(cond):
        if (
            isinstance(c, Call)
            and c.name in ("equals", "is_not_distinct_from")
            and len(c.args) == 2
            and all(isinstance(a, InputRef) for a in c.args)
        ):
            a, b = c.args
            assert isinstance(a, InputRef) and isinstance(b, InputRef)
            if a.index >= nl > b.index:
                a, b = b, a
            if a.index < nl <= b.index:
                lk.append(a.index)
                rk.append(b.index - nl)
                ns.append(c.name == "is_not_distinct_from")
                continue
        rest.append(c)
    return lk, rk, ns, rest


def unique_key(node: PhysicalNode) -> frozenset[int] | None:
    """A set of output columns that is unique per row, when known (Flink's upsert keys,
    simplified: from a GroupAggregate through Exchanges and projecting Calcs)."""
    if node.is_kind(GROUP_AGGREGATE):
        return frozenset(GroupAggregateParams.of(node).grouping)
    if node.is_kind(EXCHANGE) or node.is_kind(WATERMARK_ASSIGNER):
        return unique_key(node.inputs[0])
    if node.is_kind(CALC):
        below = unique_key(node.inputs[0])
        if below is None:
            return None
        out: set[int] = set()
        for k in below:
            hits = [
                j for j, e in enumerate(CalcParams.of(node).projections) if isinstance(e, InputRef) and e.index == k
            ]
            if not hits:
                return None
            out.add(hits[0])
        return frozenset(out)
    return None


def _input_spec(node: PhysicalNode, keys: list[int]) -> str:
    uk = unique_key(node)
    if uk is None:
        return "NoUniqueKey"
    return "JoinKeyContainsUniqueKey" if uk <= set(keys) else "HasUniqueKey"


@register_physical(LogicalScalarJoin)
def convert_join(planner: PhysicalPlanner, node: LogicalJoin) -> PhysicalNode:
    kind = join_kind(node.kind)
    left = planner.convert(node.left)
    right = planner.convert(node.right)
    nl = len(node.left.fields)
    lk, rk, ns, rest = split_condition(node.condition, nl)
    key_types = []
    for li, ri in zip(lk, rk, strict=True):
        lt, rt = plain(node.left.fields[li].type), plain(node.right.fields[ri].type)
        key_types.append(common_type([lt, rt]) or lt)
    names = uniquify([f.name for f in node.left.fields] + [f.name for f in node.right.fields])
    if kind in ("SEMI", "ANTI"):
        fields = tuple(Field(n, f.type) for n, f in zip(names[:nl], node.left.fields, strict=True))
    else:
        fields = tuple(Field(n, f.type) for n, f in zip(names, node.fields, strict=True))
    ttl = node.state_ttl_ms  # STATE_TTL hint per side
    params = JoinParams(
        join_type=kind,
        left_keys=tuple(lk),
        right_keys=tuple(rk),
        key_types=tuple(key_types),
        null_safe=tuple(ns),
        condition=_and(rest),
        left_width=nl,
        right_types=tuple(f.type for f in node.right.fields),
        single_row_right=isinstance(node, LogicalScalarJoin) and node.single_row,
        state_ttl_ms=ttl if ttl is not None and any(t is not None for t in ttl) else None,
    )
    info = {
        "condition": node.condition,
        "names": names,
        "left_spec": _input_spec(left, lk),
        "right_spec": _input_spec(right, rk),
    }
    return PhysicalNode.distributed(params, (left, right), fields, info=info)


# ---------------------------------------------------------------------- projection pushdown
