"""Fuse projections and filters into Calc nodes (Flink's Calc = project + filter), merging
stacked ones, so each chain of row-wise work is one operator."""

from __future__ import annotations

from planner.exprs import conjunction, is_deterministic, substitute
from planner.logical import LogicalCalc, LogicalFilter, LogicalNode, LogicalProject, transform_up
from runtime.expr.ir import InputRef


def merge_calcs(plan: LogicalNode) -> LogicalNode:
    def rule(node: LogicalNode) -> LogicalNode:
        if isinstance(node, LogicalProject):
            calc = LogicalCalc(fields=node.fields, input=node.input, exprs=node.exprs, condition=None)
        elif isinstance(node, LogicalFilter):
            ident = tuple(InputRef(i, f.type) for i, f in enumerate(node.input.fields))
            calc = LogicalCalc(fields=node.fields, input=node.input, exprs=ident, condition=node.condition)
        elif isinstance(node, LogicalCalc):
            calc = node
        else:
            return node
        child = calc.input
        if isinstance(child, LogicalCalc) and all(is_deterministic(e) for e in child.exprs):
            exprs = tuple(substitute(e, child.exprs) for e in calc.exprs)
            cond = substitute(calc.condition, child.exprs) if calc.condition is not None else None
            return LogicalCalc(
                fields=calc.fields, input=child.input, exprs=exprs, condition=conjunction(child.condition, cond)
            )
        return calc

    return transform_up(plan, rule)
