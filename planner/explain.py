"""EXPLAIN text, deterministic and Flink-shaped:

    == Abstract Syntax Tree ==        logical plan as bound (LogicalProject(k=[$0]) ...)
    == Optimized Physical Plan ==     physical nodes (Calc(select=[k, v]) ...)
    == Optimized Execution Plan ==    the same, as the JobGraph will run it

With the CHANGELOG_MODE detail each physical node ends with `changelogMode=[...]`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from planner.logical import (
    LogicalAggregate,
    LogicalCalc,
    LogicalFilter,
    LogicalJoin,
    LogicalNode,
    LogicalProject,
    LogicalSink,
    LogicalTableScan,
    LogicalUnion,
    LogicalValues,
    LogicalWatermarkAssigner,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
)
from planner.physical import PhysicalNode
from runtime.operators.spec import explain_line
from runtime.plan_text import format_agg, format_expr, format_literal, format_window, type_name
from runtime.types import Field

__all__ = ["format_agg", "format_expr", "format_literal", "format_window", "explain_text", "physical_line"]


def _names(fields: tuple[Field, ...]) -> list[str]:
    return [f.name for f in fields]


# ---------------------------------------------------------------------- logical
def logical_line(n: LogicalNode) -> str:
    own = getattr(n, "explain_line", None)
    if own is not None:
        return str(own())
    if isinstance(n, LogicalTableScan):
        return f"LogicalTableScan(table=[[{', '.join(n.table.path)}]])"
    if isinstance(n, LogicalProject):
        return (
            "LogicalProject("
            + ", ".join(f"{f.name}=[{format_expr(e, None)}]" for f, e in zip(n.fields, n.exprs, strict=True))
            + ")"
        )
    if isinstance(n, LogicalCalc):
        parts = [f"{f.name}=[{format_expr(e, None)}]" for f, e in zip(n.fields, n.exprs, strict=True)]
        if n.condition is not None:
            parts.append(f"condition=[{format_expr(n.condition, None)}]")
        return "LogicalCalc(" + ", ".join(parts) + ")"
    if isinstance(n, LogicalFilter):
        return f"LogicalFilter(condition=[{format_expr(n.condition, None)}])"
    if isinstance(n, LogicalWatermarkAssigner):
        return (
            f"LogicalWatermarkAssigner(rowtime=[{n.fields[n.rowtime_index].name}], "
            f"watermark=[{format_expr(n.watermark, None)}])"
        )
    if isinstance(n, LogicalAggregate):
        group = "{" + ", ".join(str(g) for g in n.grouping) + "}"
        aggs = [
            f"{f.name}=[{format_agg(a, [f'${i}' for i in range(len(n.input.fields))], None)}]"
            for f, a in zip(n.fields[len(n.grouping) :], n.aggs, strict=True)
        ]
        return "LogicalAggregate(" + ", ".join([f"group=[{group}]"] + aggs) + ")"
    if isinstance(n, LogicalWindowAggregate):
        group = "{" + ", ".join(str(g) for g in n.grouping) + "}"
        names = [f"${i}" for i in range(len(n.input.fields))]
        aggs = [
            f"{f.name}=[{format_agg(a, names, None)}]"
            for f, a in zip(n.fields[len(n.grouping) : len(n.grouping) + len(n.aggs)], n.aggs, strict=True)
        ]
        window = format_window(n.window, n.input.fields[n.time_index].name)
        props = ", ".join(n.window_props)
        return (
            "LogicalWindowAggregate("
            + ", ".join([f"group=[{group}]"] + aggs + [f"window=[{window}]", f"properties=[{props}]"])
            + ")"
        )
    if isinstance(n, LogicalWindowTableFunction):
        w = n.window
        args = [f"DESCRIPTOR(${n.time_index})"]
        for v in (w.slide_ms, w.step_ms, w.size_ms, w.gap_ms, w.offset_ms):
            if v is not None:
                args.append(f"{v}:INTERVAL SECOND")
        # Flink's RecordType names a time attribute's kind: `TIMESTAMP(3) *ROWTIME* ts`.
        rt = ", ".join(
            f"{type_name(f.type)}{f' *{f.type.time_attr}*' if f.type.time_attr else ''} {f.name}" for f in n.fields
        )
        return (
            f"LogicalTableFunctionScan(invocation=[{w.kind}(TABLE(#0), {', '.join(args)})], rowType=[RecordType({rt})])"
        )
    if isinstance(n, LogicalValues):
        return (
            "LogicalValues(tuples=[["
            + ", ".join("{ " + ", ".join(format_literal(v) for v in r) + " }" for r in n.rows)
            + "]])"
        )
    if isinstance(n, LogicalUnion):
        return f"LogicalUnion(all=[{'true' if n.all else 'false'}])"
    if isinstance(n, LogicalJoin):
        cond = format_expr(n.condition, None) if n.condition is not None else "true"
        return f"LogicalJoin(condition=[{cond}], joinType=[{n.kind.lower()}])"
    if isinstance(n, LogicalSink):
        return f"LogicalSink(table=[{n.table.name}], fields=[{', '.join(f.name for f in n.schema)}])"
    return type(n).__name__


# ---------------------------------------------------------------------- physical
def physical_line(n: PhysicalNode, changelog: bool = False) -> str:
    """The node's EXPLAIN line, as its operator spec renders it (runtime/operators/spec.py)."""
    return explain_line(n, changelog)


# ---------------------------------------------------------------------- trees
_N = TypeVar("_N")


def render_tree(root: _N, line: Callable[[_N], str], children: Callable[[_N], Sequence[_N]]) -> str:
    """Flink's tree layout: `+- ` for the last child, `:- ` for the others.

    Generic over the node type so logical and physical trees share one renderer."""
    out: list[str] = []

    def visit(n: _N, first: str, rest: str) -> None:
        out.append(first + line(n))
        kids = children(n)
        for i, k in enumerate(kids):
            last = i == len(kids) - 1
            visit(k, rest + ("+- " if last else ":- "), rest + ("   " if last else ":  "))

    visit(root, "", "")
    return "\n".join(out)


def _logical_inputs(n: LogicalNode) -> tuple[LogicalNode, ...]:
    return n.inputs


def _physical_inputs(n: PhysicalNode) -> tuple[PhysicalNode, ...]:
    return n.inputs


def explain_text(
    logical: list[LogicalNode],
    physical: list[PhysicalNode],
    changelog: bool = False,
    advice: Mapping[int, int] | None = None,
) -> str:
    """The three plan sections of EXPLAIN. `advice` maps a physical node's id() to the number
    of the PLAN_ADVICE note about it, shown first in its line (`GroupAggregate(advice=[1], ...)`)."""

    def advised_line(x: PhysicalNode) -> str:
        text = physical_line(x, changelog)
        number = advice.get(id(x)) if advice else None
        name, paren, rest = text.partition("(")
        return f"{name}(advice=[{number}], {rest}" if number is not None and paren else text

    ast = "\n\n".join(render_tree(n, logical_line, _logical_inputs) for n in logical)
    phys = "\n\n".join(render_tree(n, advised_line, _physical_inputs) for n in physical)
    exe = "\n\n".join(render_tree(n, lambda x: physical_line(x, False), _physical_inputs) for n in physical)
    return (
        "== Abstract Syntax Tree ==\n"
        + ast
        + "\n\n== Optimized Physical Plan ==\n"
        + phys
        + "\n\n== Optimized Execution Plan ==\n"
        + exe
        + "\n"
    )
