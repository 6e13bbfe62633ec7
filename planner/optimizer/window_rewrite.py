"""Window aggregation: `GROUP BY window_start, window_end, ...` over a window TVF becomes
one WindowAggregate over the TVF's input (Flink's window aggregate rule). The window
columns leave the grouping keys and come back as window properties; a projection on top
restores the aggregate's column order."""

from __future__ import annotations

import sys

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


def _is_expand(node: LogicalNode) -> bool:
    """`node` is a LogicalExpand (GROUPING SETS). Its module, planner.rules.grouping_sets, loads
    with the first GROUPING SETS query (start-up), and no LogicalExpand exists before."""
    grouping_sets = sys.modules.get("planner.rules.grouping_sets")
    return grouping_sets is not None and isinstance(node, grouping_sets.LogicalExpand)


def _rule(node: LogicalNode) -> LogicalNode:
    if isinstance(node, LogicalAggregate) and _is_expand(node.input):
        node = _expand_before_window(node)
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


def _expand_before_window(node: LogicalAggregate) -> LogicalNode:
    """GROUPING SETS over a window TVF (`GROUP BY window_start, window_end, GROUPING
    SETS (...)`): the Expand only replicates rows and NULLs keys, so it can run before the
    window is assigned. Aggregate(Expand(Project(TVF(x)))) becomes
    Aggregate(Project(TVF(Expand(Project(x))))), which the rule above turns into one
    WindowAggregate keyed by the grouping-set keys and `$e`, as Flink plans it (insert-only
    results at the watermark, late rows dropped) instead of an updating GroupAggregate."""
    from planner.rules.grouping_sets import LogicalExpand  # start-up

    expand = node.input
    assert isinstance(expand, LogicalExpand)
    pre = expand.input
    if not isinstance(pre, LogicalProject) or not isinstance(pre.input, LogicalWindowTableFunction):
        return node
    tvf = pre.input
    if tvf.window.partition_keys:
        return node
    n_in = len(tvf.input.fields)
    window_pre = {i: e.index - n_in for i, e in enumerate(pre.exprs) if isinstance(e, InputRef) and e.index >= n_in}
    if any(any(r >= n_in for r in input_refs(e)) for i, e in enumerate(pre.exprs) if i not in window_pre):
        return node
    # output columns of the Expand that are window columns: the same pass-through in every set
    window_out: dict[int, int] = {}
    for j in range(len(expand.fields)):
        refs = {p[j] for p in expand.projects}
        if len(refs) == 1:
            (e,) = refs
            if isinstance(e, InputRef) and e.index in window_pre:
                window_out[j] = window_pre[e.index]
        elif any(isinstance(e, InputRef) and e.index in window_pre for e in (p[j] for p in expand.projects)):
            return node  # a window column NULLed by some grouping set
    if {0, 1} - set(window_out.values()):
        return node
    # Project the TVF's input: the non-window expressions plus the time column.
    keep = [i for i in range(len(pre.exprs)) if i not in window_pre]
    exprs2 = [pre.exprs[i] for i in keep] + [InputRef(tvf.time_index, tvf.input.fields[tvf.time_index].type)]
    names2 = uniquify([pre.fields[i].name for i in keep] + [tvf.input.fields[tvf.time_index].name])
    pre2 = LogicalProject(
        fields=tuple(Field(n, e.type) for n, e in zip(names2, exprs2, strict=True)),
        input=tvf.input,
        exprs=tuple(exprs2),
    )
    remap = {old: new for new, old in enumerate(keep)}
    time_pos = len(keep)

    def moved(e: Expr) -> Expr:
        return InputRef(remap[e.index], e.type) if isinstance(e, InputRef) else e

    out_cols = [j for j in range(len(expand.fields)) if j not in window_out]
    projects2 = tuple(
        tuple(moved(p[j]) for j in out_cols) + (InputRef(time_pos, pre2.fields[time_pos].type),)
        for p in expand.projects
    )
    exp_fields = tuple(expand.fields[j] for j in out_cols) + (pre2.fields[time_pos],)
    expand2 = LogicalExpand(
        fields=exp_fields, input=pre2, projects=projects2, expand_id_index=out_cols.index(expand.expand_id_index)
    )
    window_fields = tvf.fields[n_in:]
    tvf2 = LogicalWindowTableFunction(
        fields=exp_fields + window_fields, input=expand2, window=tvf.window, time_index=len(out_cols)
    )
    n2 = len(exp_fields)
    back = [
        InputRef(n2 + window_out[j], window_fields[window_out[j]].type)
        if j in window_out
        else InputRef(out_cols.index(j), exp_fields[out_cols.index(j)].type)
        for j in range(len(expand.fields))
    ]
    pre3 = LogicalProject(fields=expand.fields, input=tvf2, exprs=tuple(back))
    return LogicalAggregate(**{**node.__dict__, "input": pre3})


def _positions(mapping: dict[int, int], n: int) -> list[int]:
    """For each new pre-projection position, the old index (or -1 for appended refs)."""
    inv = {v: k for k, v in mapping.items()}
    return [inv.get(j, -1) for j in range(n)]
