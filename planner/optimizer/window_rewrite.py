"""Window aggregation: `GROUP BY window_start, window_end, ...` over a window TVF becomes
one WindowAggregate over the TVF's input (Flink's window aggregate rule). The window
columns leave the grouping keys and come back as window properties; a projection on top
restores the aggregate's column order."""

from __future__ import annotations

from planner.binder.scope import uniquify
from planner.logical import (
    LogicalAggregate,
    LogicalFilter,
    LogicalNode,
    LogicalProject,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
    WindowSpec,
    transform_up,
)
from runtime.expr.ir import Expr, InputRef, input_refs
from runtime.types import Field

_PROPS = ("window_start", "window_end", "window_time")


def fuse_window_aggregate(plan: LogicalNode) -> LogicalNode:
    return transform_up(plan, _rule)


def _rule(node: LogicalNode) -> LogicalNode:
    if not isinstance(node, LogicalAggregate) or not isinstance(node.input, LogicalProject):
        return node
    pre = node.input
    filters: list[LogicalFilter] = []
    below = pre.input
    while isinstance(below, LogicalFilter):
        filters.append(below)
        below = below.input
    if not isinstance(below, LogicalWindowTableFunction):
        return node
    tvf = below
    n_in = len(tvf.input.fields)
    window_cols = {n_in + j: _PROPS[j] for j in range(3)}
    # Which grouping keys are window columns?
    key_prop: dict[int, str] = {}
    for g in node.grouping:
        e = pre.exprs[g]
        if isinstance(e, InputRef) and e.index in window_cols:
            key_prop[g] = window_cols[e.index]
    if not {"window_start", "window_end"} <= set(key_prop.values()):
        return node
    for i, e in enumerate(pre.exprs):
        if i not in key_prop and any(r >= n_in for r in input_refs(e)):
            return node
    for f in filters:
        if any(r >= n_in for r in input_refs(f.condition)):
            return node
    # New pre-projection over the TVF's input: every non-window expression.
    new_exprs: list[Expr] = []
    mapping: dict[int, int] = {}
    for i, e in enumerate(pre.exprs):
        if i in key_prop:
            continue
        mapping[i] = len(new_exprs)
        new_exprs.append(e)

    def ref_of(idx: int) -> int:
        target = InputRef(idx, tvf.input.fields[idx].type)
        for j, e in enumerate(new_exprs):
            if e == target:
                return j
        new_exprs.append(target)
        return len(new_exprs) - 1

    time_index = ref_of(tvf.time_index)
    spec = tvf.window
    if spec.partition_keys:
        spec = WindowSpec(**{**spec.__dict__, "partition_keys": tuple(ref_of(k) for k in spec.partition_keys)})
    base: LogicalNode = tvf.input
    for f in reversed(filters):
        base = LogicalFilter(fields=tvf.input.fields, input=base, condition=f.condition)
    olds = _positions(mapping, len(new_exprs))
    pre_names = [
        pre.fields[i].name if i >= 0 else (tvf.input.fields[e.index].name if isinstance(e, InputRef) else f"$f{j}")
        for j, (i, e) in enumerate(zip(olds, new_exprs, strict=True))
    ]
    pre_fields = tuple(Field(n, e.type) for n, e in zip(uniquify(pre_names), new_exprs, strict=True))
    new_pre = LogicalProject(fields=pre_fields, input=base, exprs=tuple(new_exprs))
    grouping = tuple(mapping[g] for g in node.grouping if g not in key_prop)
    aggs = tuple(
        type(a)(
            **{
                **a.__dict__,
                "args": tuple(mapping[x] for x in a.args),
                "filter": mapping.get(a.filter) if a.filter is not None else None,
            }
        )
        for a in node.aggs
    )
    props = tuple(p for p in _PROPS if p in key_prop.values())
    key_pos = {g: k for k, g in enumerate(node.grouping)}
    group_fields = tuple(node.fields[key_pos[g]] for g in node.grouping if g not in key_prop)
    agg_fields = node.fields[len(node.grouping) :]
    prop_fields = tuple(Field(p, tvf.fields[n_in + _PROPS.index(p)].type) for p in props)
    wagg = LogicalWindowAggregate(
        fields=group_fields + agg_fields + prop_fields,
        input=new_pre,
        window=spec,
        time_index=time_index,
        grouping=grouping,
        aggs=aggs,
        window_props=props,
    )
    # Restore the aggregate's output order.
    out: list[Expr] = []
    non_window_seen = 0
    for g in node.grouping:
        if g in key_prop:
            pos = len(group_fields) + len(agg_fields) + props.index(key_prop[g])
        else:
            pos = non_window_seen
            non_window_seen += 1
        out.append(InputRef(pos, wagg.fields[pos].type))
    for j in range(len(agg_fields)):
        pos = len(group_fields) + j
        out.append(InputRef(pos, wagg.fields[pos].type))
    fields = tuple(Field(f.name, e.type) for f, e in zip(node.fields, out, strict=True))
    return LogicalProject(fields=fields, input=wagg, exprs=tuple(out))


def _positions(mapping: dict[int, int], n: int) -> list[int]:
    """For each new pre-projection position, the old index (or -1 for appended refs)."""
    inv = {v: k for k, v in mapping.items()}
    return [inv.get(j, -1) for j in range(n)]
