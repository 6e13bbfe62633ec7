"""Projection pushdown: every node keeps only the columns someone above reads, down to
the TableSourceScan, whose `projection` then names the physical columns the connector
must produce."""

from __future__ import annotations

from dataclasses import replace

from planner.logical import (
    AggCall,
    LogicalAggregate,
    LogicalCalc,
    LogicalFilter,
    LogicalJoin,
    LogicalNode,
    LogicalProject,
    LogicalTableScan,
    LogicalWatermarkAssigner,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
    WindowSpec,
)
from runtime.expr.ir import Expr, InputRef, input_refs, remap_refs

Mapping = dict[int, int]


def push_projection(plan: LogicalNode) -> LogicalNode:
    new, _ = _prune(plan, set(range(len(plan.fields))))
    return new


def _all(node: LogicalNode) -> tuple[LogicalNode, Mapping]:
    """Keep every column of `node`, pruning below it."""
    inputs = []
    for i in node.inputs:
        child, m = _prune(i, set(range(len(i.fields))))
        assert all(k == v for k, v in m.items())
        inputs.append(child)
    if inputs:
        node = node.with_inputs(tuple(inputs))
    return node, {i: i for i in range(len(node.fields))}


def _prune(node: LogicalNode, required: set[int]) -> tuple[LogicalNode, Mapping]:
    if isinstance(node, LogicalTableScan):
        cols = sorted(required) or [0]
        base = node.projection if node.projection is not None else tuple(range(len(node.table.physical_schema)))
        proj = tuple(base[c] for c in cols)
        fields = tuple(node.fields[c] for c in cols)
        full = proj == tuple(range(len(node.table.physical_schema)))
        return replace(node, fields=fields, projection=None if full else proj), {c: i for i, c in enumerate(cols)}
    if isinstance(node, (LogicalCalc, LogicalProject, LogicalFilter)):
        if isinstance(node, LogicalFilter):
            exprs: tuple[Expr, ...] = tuple(InputRef(i, f.type) for i, f in enumerate(node.input.fields))
            cond: Expr | None = node.condition
        else:
            exprs = node.exprs
            cond = node.condition if isinstance(node, LogicalCalc) else None
        # Keep one column when nothing is read (COUNT(*)): a batch without columns has no rows.
        node_fields = node.fields
        if not exprs and node.input.fields:
            exprs, node_fields = (InputRef(0, node.input.fields[0].type),), (node.input.fields[0],)
        kept = sorted(required) or [0]
        need: set[int] = set()
        for k in kept:
            need |= input_refs(exprs[k])
        if cond is not None:
            need |= input_refs(cond)
        child, m = _prune(node.input, need)
        new_exprs = tuple(remap_refs(exprs[k], m) for k in kept)
        new_cond = remap_refs(cond, m) if cond is not None else None
        fields = tuple(node_fields[k] for k in kept)
        return LogicalCalc(fields=fields, input=child, exprs=new_exprs, condition=new_cond), {
            k: i for i, k in enumerate(kept)
        }
    if isinstance(node, LogicalWatermarkAssigner):
        need = set(required) | {node.rowtime_index} | input_refs(node.watermark)
        child, m = _prune(node.input, need)
        order = sorted(m, key=m.get)  # type: ignore[arg-type]
        fields = tuple(node.fields[i] for i in order)
        return (
            replace(
                node,
                fields=fields,
                input=child,
                rowtime_index=m[node.rowtime_index],
                watermark=remap_refs(node.watermark, m),
            ),
            m,
        )
    if isinstance(node, (LogicalAggregate, LogicalWindowAggregate)):
        need = set(node.grouping)
        for a in node.aggs:
            need |= set(a.args)
            if a.filter is not None:
                need.add(a.filter)
        if isinstance(node, LogicalWindowAggregate):
            need.add(node.time_index)
            need |= set(node.window.partition_keys)
        child, m = _prune(node.input, need)
        aggs = tuple(_remap_agg(a, m) for a in node.aggs)
        grouping = tuple(m[g] for g in node.grouping)
        new: LogicalNode
        if isinstance(node, LogicalWindowAggregate):
            new = replace(
                node,
                input=child,
                grouping=grouping,
                aggs=aggs,
                time_index=m[node.time_index],
                window=_remap_window(node.window, m),
            )
        else:
            new = replace(node, input=child, grouping=grouping, aggs=aggs)
        return new, {i: i for i in range(len(node.fields))}
    if isinstance(node, LogicalWindowTableFunction):
        n = len(node.input.fields)
        need = {i for i in required if i < n} | {node.time_index} | set(node.window.partition_keys)
        child, m = _prune(node.input, need)
        n_new = len(child.fields)
        out = dict(m)
        for j in range(3):
            out[n + j] = n_new + j
        order = sorted(out, key=out.get)  # type: ignore[arg-type]
        fields = tuple(node.fields[i] for i in order)
        return (
            replace(
                node, fields=fields, input=child, time_index=m[node.time_index], window=_remap_window(node.window, m)
            ),
            out,
        )
    if isinstance(node, LogicalJoin):
        from planner.rules.joins import prune_join

        return prune_join(node, required, _prune)
    prune_columns = getattr(node, "prune_columns", None)
    if prune_columns is not None:  # nodes of planner.rules modules prune themselves
        return prune_columns(required, _prune)
    return _all(node)


def _remap_agg(a: AggCall, m: Mapping) -> AggCall:
    return replace(a, args=tuple(m[x] for x in a.args), filter=m[a.filter] if a.filter is not None else None)


def _remap_window(w: WindowSpec, m: Mapping) -> WindowSpec:
    return replace(w, partition_keys=tuple(m[k] for k in w.partition_keys))
