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

from dataclasses import replace
from typing import Any

from planner.binder.scope import uniquify
from planner.binder.types import common_type, plain
from planner.exprs import conjunction, is_deterministic
from planner.logical import LogicalFilter, LogicalJoin, LogicalNode, transform_up
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Call, Expr, InputRef, input_refs, remap_refs
from runtime.frozen import frozen_dataclass
from runtime.operators.calc import CALC, CalcParams
from runtime.operators.group_agg import GROUP_AGGREGATE, GroupAggregateParams
from runtime.operators.join import JoinParams
from runtime.operators.union import EXCHANGE
from runtime.operators.watermark import WATERMARK_ASSIGNER
from runtime.types import Field


@frozen_dataclass
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
def key_pair(c: Expr, nl: int, null_safe: bool = True) -> tuple[Expr, Expr, bool] | None:
    """(left expression, right expression over the right row, null-safe) when conjunct `c`
    is an equality between a deterministic expression of the left input and one of the
    right input (`l.x = r.y`, `MOD(l.x, 10) = r.y`, `l.a + l.b = r.c`); `IS NOT DISTINCT
    FROM` only when `null_safe` (the time-bounded joins match NULL keys with nothing)."""
    names = ("equals", "is_not_distinct_from") if null_safe else ("equals",)
    if not (isinstance(c, Call) and c.name in names and len(c.args) == 2):
        return None
    for a, b in (c.args, c.args[::-1]):
        ra, rb = input_refs(a), input_refs(b)
        if ra and rb and max(ra) < nl <= min(rb) and is_deterministic(a) and is_deterministic(b):
            return a, remap_refs(b, {i: i - nl for i in rb}), c.name == "is_not_distinct_from"
    return None


@frozen_dataclass
class JoinKeys:
    """A join condition split for a hash join. Key sides that are expressions, not columns,
    are computed by a Calc appended to their input (`left_exprs` / `right_exprs`, after the
    input's columns), as Flink's planner does: `MOD(b.auction, 10000) = s.key` is a key on
    the new column instead of a residual condition checked over all pairs. `left` / `right`
    index the widened inputs; `rest` and `condition` (all conjuncts, for EXPLAIN) are over
    the widened left then the widened right columns."""

    left: tuple[int, ...]
    right: tuple[int, ...]
    null_safe: tuple[bool, ...]
    left_exprs: tuple[Expr, ...]
    right_exprs: tuple[Expr, ...]
    rest: tuple[Expr, ...]
    condition: Expr | None


def join_keys(cond: Expr | None, nl: int, nr: int, null_safe: bool = True) -> JoinKeys:
    """Split `cond` (over nl left then nr right columns) into equi-join keys, computed
    where a side is an expression, and the residual conjuncts (`null_safe`: whether
    `IS NOT DISTINCT FROM` may be a key)."""
    parts = conjuncts(cond)
    pairs = [key_pair(c, nl, null_safe) for c in parts]
    left_exprs: list[Expr] = []
    right_exprs: list[Expr] = []

    def column(e: Expr, width: int, computed: list[Expr]) -> int:
        if isinstance(e, InputRef):
            return e.index
        if e not in computed:
            computed.append(e)
        return width + computed.index(e)

    keyed = [(column(p[0], nl, left_exprs), column(p[1], nr, right_exprs), p[2]) if p else None for p in pairs]
    shift = len(left_exprs)
    widened = {i: (i if i < nl else i + shift) for i in range(nl + nr)}
    lk: list[int] = []
    rk: list[int] = []
    ns: list[bool] = []
    rest: list[Expr] = []
    whole: list[Expr] = []
    for c, k in zip(parts, keyed, strict=True):
        if k is None:
            r = remap_refs(c, {i: widened[i] for i in input_refs(c)})
            rest.append(r)
            whole.append(r)
            continue
        li, ri, safe = k
        lk.append(li)
        rk.append(ri)
        ns.append(safe)
        pair = key_pair(c, nl, null_safe)
        assert isinstance(c, Call) and pair is not None
        if isinstance(pair[0], InputRef) and isinstance(pair[1], InputRef):
            whole.append(remap_refs(c, {i: widened[i] for i in input_refs(c)}))
            continue
        # `=($f5, key)`: the computed sides replaced by their new columns, in the written order
        sides = [InputRef(li, pair[0].type), InputRef(nl + shift + ri, pair[1].type)]
        if max(input_refs(c.args[0])) >= nl:
            sides.reverse()
        whole.append(Call(c.name, tuple(sides), c.type))
    return JoinKeys(tuple(lk), tuple(rk), tuple(ns), tuple(left_exprs), tuple(right_exprs), tuple(rest), _and(whole))


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


def widen(node: PhysicalNode, exprs: tuple[Expr, ...]) -> PhysicalNode:
    """`node` with the computed key columns `exprs` appended by a Calc (named `$f<i>` as
    Flink names them)."""
    if not exprs:
        return node
    idents: list[Expr] = [InputRef(i, f.type) for i, f in enumerate(node.fields)]
    width = len(node.fields)
    names = uniquify([f.name for f in node.fields] + [f"$f{width + j}" for j in range(len(exprs))])
    fields = node.fields + tuple(Field(names[width + j], e.type) for j, e in enumerate(exprs))
    return PhysicalNode.of(CalcParams(tuple(idents + list(exprs))), (node,), fields)


@register_physical(LogicalScalarJoin)
def convert_join(planner: PhysicalPlanner, node: LogicalJoin) -> PhysicalNode:
    kind = join_kind(node.kind)
    nl, nr = len(node.left.fields), len(node.right.fields)
    keys = join_keys(node.condition, nl, nr)
    left = widen(planner.convert(node.left), keys.left_exprs)
    right = widen(planner.convert(node.right), keys.right_exprs)
    wl = len(left.fields)
    key_types = []
    for li, ri in zip(keys.left, keys.right, strict=True):
        lt, rt = plain(left.fields[li].type), plain(right.fields[ri].type)
        key_types.append(common_type([lt, rt]) or lt)
    names = uniquify([f.name for f in left.fields] + [f.name for f in right.fields])
    # the binder's types (outer joins: a padded side is nullable), computed keys after each side
    padded = (kind in ("RIGHT", "FULL"), kind in ("LEFT", "FULL"))
    bound = [f.type for f in node.fields]
    types = bound[:nl] + [e.type.with_nullable(True) if padded[0] else e.type for e in keys.left_exprs]
    if kind not in ("SEMI", "ANTI"):
        types += bound[nl:] + [e.type.with_nullable(True) if padded[1] else e.type for e in keys.right_exprs]
    width = len(types)
    fields = tuple(Field(n, t) for n, t in zip(names[:width], types, strict=True))
    ttl = node.state_ttl_ms  # STATE_TTL hint per side
    params = JoinParams(
        join_type=kind,
        left_keys=keys.left,
        right_keys=keys.right,
        key_types=tuple(key_types),
        null_safe=keys.null_safe,
        condition=_and(list(keys.rest)),
        left_width=wl,
        right_types=tuple(f.type for f in right.fields),
        single_row_right=isinstance(node, LogicalScalarJoin) and node.single_row,
        state_ttl_ms=ttl if ttl is not None and any(t is not None for t in ttl) else None,
    )
    info: dict[str, Any] = {
        "condition": keys.condition,
        "names": names,
        "left_spec": _input_spec(left, list(keys.left)),
        "right_spec": _input_spec(right, list(keys.right)),
    }
    if params.state_ttl_ms is not None and node.state_ttl_text is not None:
        info["state_ttl_text"] = node.state_ttl_text
    joined = PhysicalNode.distributed(params, (left, right), fields, info=info)
    out = uniquify([f.name for f in node.left.fields] + [f.name for f in node.right.fields])
    out_fields = tuple(Field(n, f.type) for n, f in zip(out, node.fields, strict=False))
    return drop_computed_keys(joined, keys, nl, nr, out_fields)


def drop_computed_keys(
    joined: PhysicalNode, keys: JoinKeys, nl: int, nr: int, fields: tuple[Field, ...]
) -> PhysicalNode:
    """`joined` (over the widened inputs) with the computed key columns projected away, so
    the join's row is the binder's again (`fields`, named and typed as the caller wants)."""
    if not keys.left_exprs and not keys.right_exprs:
        return joined
    wl = nl + len(keys.left_exprs)
    keep = [i for i in range(len(joined.fields)) if not (nl <= i < wl or i >= wl + nr)]
    project = CalcParams(tuple(InputRef(i, joined.fields[i].type) for i in keep))
    # a Calc above reads the join directly (planner.physical._calc)
    return PhysicalNode.of(project, (joined,), fields, info={"drops_columns": True})


# ---------------------------------------------------------------------- projection pushdown
