"""Split-distinct aggregation (Flink's `table.optimizer.distinct-agg.split.enabled` and
`.bucket-num`, default 1024), STREAMING only:

    GroupAggregate(k; COUNT(DISTINCT x) [FILTER f], SUM(y), ...)
becomes
    GroupAggregate(k; $SUM0(c), SUM(s), ...)                        -- final
    <- Exchange(hash[k])
    <- GroupAggregate(k, $b; COUNT(DISTINCT x) [FILTER f] AS c, SUM(y) AS s, ...)  -- partial
    <- Exchange(hash[k, $b])
    <- Calc(..., MOD(HASH_CODE(x), bucket-num) AS $b)

A hot key's distinct state is spread over `bucket-num` partial keys (parallel subtasks),
and since every distinct value of `x` lands in exactly one bucket, the partial results
simply add up. Several FILTER clauses over one distinct column share its bucketing (and
the partial key). With several distinct columns (Nexmark q15/q16) an `Expand` first makes
one copy of each row per distinct column, with `$e` = the column's position and the bucket
from that column (plus a copy for the non-distinct calls), and each partial call counts
only its own copy (`$e = i AND filter`). COUNT, SUM, $SUM0, MIN and MAX are split; any
other call (AVG, LISTAGG, ...) or a multi-argument DISTINCT leaves the aggregate as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.exprs import is_deterministic, substitute
from planner.optimizer.util import rewrite_keyed
from planner.physical import PhysicalNode
from runtime.config.options import key
from runtime.expr.ir import Call, InputRef, Literal
from runtime.operators.calc import CALC, CalcParams
from runtime.plan_params import AggCallParams
from runtime.types import BIGINT, BOOLEAN, INT, Field

ENABLED = (
    key("table.optimizer.distinct-agg.split.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "STREAMING: split a GroupAggregate with COUNT/SUM(DISTINCT x) into a partial aggregate per "
        "(key, MOD(HASH_CODE(x), bucket-num)) and a final one that adds the partials up, spreading a "
        "hot key's distinct state; several distinct columns use an Expand. The final table is unchanged. "
        "EXPLAIN marks the two aggregates `partialFinalType=[PARTIAL]` / `[FINAL]` and the final COUNT "
        "as `$SUM0`, as Flink prints them."
    )
)
BUCKET_NUM = (
    key("table.optimizer.distinct-agg.split.bucket-num")
    .int_type()
    .default_value(1024)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Number of buckets split-distinct aggregation spreads each key's distinct values over.")
)
_FINAL = {"count": "sum0", "sum": "sum", "sum0": "sum0", "min": "min", "max": "max"}


def split_distinct_aggregates(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Rewrite every splittable streaming GroupAggregate with DISTINCT calls (see above)."""
    if mode != "STREAMING" or not ENABLED.get(config):
        return plan
    buckets = BUCKET_NUM.get(config)
    from runtime.operators.group_agg import GROUP_AGGREGATE  # once the rule applies (start-up)

    return rewrite_keyed(plan, GROUP_AGGREGATE.name, lambda n: _split(n, buckets))


def _distinct_columns(calls: tuple[AggCallParams, ...]) -> list[int] | None:
    """The argument column of the DISTINCT calls, in first-use order, or None when the
    aggregate cannot be split (no DISTINCT, a multi-argument DISTINCT, an unsplittable call)."""
    cols: list[int] = []
    for c in calls:
        if c.name.lower() not in _FINAL or c.params.get("udf"):
            return None
        if c.distinct:
            if len(c.args) != 1:
                return None
            if c.args[0] not in cols:
                cols.append(c.args[0])
    return cols or None


def _bucket(x: InputRef, buckets: int) -> Call:
    hashed = Call("hash_code", (x,), INT(x.type.nullable))
    return Call("mod", (hashed, Literal(buckets, INT(False))), INT(x.type.nullable))


def _split(agg: PhysicalNode, buckets: int) -> PhysicalNode | None:
    from runtime.operators.expand import ExpandParams
    from runtime.operators.group_agg import GroupAggregateParams

    p = GroupAggregateParams.of(agg)
    calls = p.aggs
    dcols = _distinct_columns(calls)
    if dcols is None:
        return None
    child = agg.inputs[0].inputs[0]
    grouping = list(p.grouping)
    n = len(child.fields)
    names = {f.name for f in child.fields}
    bucket_name = f"$f{n}"
    while bucket_name in names:
        bucket_name = "$" + bucket_name
    idents: list[Any] = [InputRef(i, f.type) for i, f in enumerate(child.fields)]
    refs = {c: InputRef(c, child.fields[c].type) for c in dcols}
    pre: PhysicalNode
    if len(dcols) == 1:
        # One distinct column: bucket it; the other calls are computed per bucket too.
        bucket = _bucket(refs[dcols[0]], buckets)
        fields = (*child.fields, Field(bucket_name, bucket.type))
        if child.is_kind(CALC) and all(is_deterministic(e) for e in CalcParams.of(child).projections):
            # one Calc computes the input's projections and the bucket, as Flink's merged Calc
            below = CalcParams.of(child)
            over_input = substitute(bucket, below.projections)
            pre = PhysicalNode.of(CalcParams((*below.projections, over_input), below.condition), child.inputs, fields)
        else:
            pre = PhysicalNode.of(CalcParams((*idents, bucket)), (child,), fields)
        p_keys = [*grouping, n]
        partial_calls: list[AggCallParams] = list(calls)
    else:
        # Several distinct columns (Nexmark q15): Flink's Expand, one copy of each row per
        # distinct column (bucketed by it; $e = its position) plus one for the plain calls;
        # every call then only counts the copy of its own group.
        groups: list[int | None] = [*dcols, None] if any(not c.distinct for c in calls) else [*dcols]
        bucket_t = INT(True)
        e_name = "$e"
        while e_name in names:
            e_name = "$" + e_name
        projects = []
        for gi, col in enumerate(groups):
            b = _bucket(refs[col if col is not None else dcols[0]], buckets)
            projects.append([*idents, b, Literal(gi, BIGINT(False))])
        ex_fields = (*child.fields, Field(bucket_name, bucket_t), Field(e_name, BIGINT(False)))
        expand = PhysicalNode.of(ExpandParams(tuple(tuple(p) for p in projects), n + 1), (child,), ex_fields)
        e_ref = InputRef(n + 1, BIGINT(False))
        conds: list[Any] = []
        partial_calls = []
        for j, c in enumerate(calls):
            gi = groups.index(c.args[0] if c.distinct else None)
            cond: Any = Call("equals", (e_ref, Literal(gi, BIGINT(False))), BOOLEAN(False))
            if c.filter is not None:
                f = InputRef(c.filter, child.fields[c.filter].type)
                cond = Call("and", (cond, f), BOOLEAN(True))
            conds.append(cond)
            partial_calls.append(replace(c, filter=n + 2 + j))
        cond_fields = tuple(Field(f"$g{j}", cd.type) for j, cd in enumerate(conds))
        ex_idents = [InputRef(i, f.type) for i, f in enumerate(ex_fields)]
        pre = PhysicalNode.of(CalcParams((*ex_idents, *conds)), (expand,), (*ex_fields, *cond_fields))
        p_keys = [*grouping, n, n + 1]
    key_fields = [pre.fields[k] for k in p_keys]
    partial_fields = [Field(f"{bucket_name}_{j}", c.type) for j, c in enumerate(calls)]
    partial = PhysicalNode.distributed(
        GroupAggregateParams(tuple(p_keys), tuple(partial_calls)),
        (pre,),
        (*key_fields, *partial_fields),
        info={"split": "PARTIAL"},
    )
    g = len(grouping)
    width = len(p_keys)
    f_keys = list(range(g))
    final_calls = tuple(AggCallParams(_FINAL[c.name.lower()], (width + j,), c.type) for j, c in enumerate(calls))
    return PhysicalNode.distributed(
        GroupAggregateParams(tuple(f_keys), final_calls), (partial,), agg.fields, info={"split": "FINAL"}
    )
