"""Window table functions in FROM: `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))`,
HOP (slide, size [, offset]), CUMULATE (step, size [, offset]) and
SESSION (`TABLE t PARTITION BY k`, gap). The output is the input's columns plus
window_start, window_end (TIMESTAMP(3)) and window_time (a rowtime attribute).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.changelog_ptf import bind_changelog_function, is_changelog_function
from planner.binder.expressions import interval_ms
from planner.binder.query import bind_relation, relation_form
from planner.binder.scope import error
from planner.binder.types import plain
from planner.dialect.ast import Descriptor, TableArgument, TableFunction
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalNode, LogicalWindowTableFunction, WindowSpec
from runtime.types import DataType, Field

if TYPE_CHECKING:
    from planner.binder.query import BindContext

# Positional parameter names of each window TVF (after DATA and TIMECOL).
_PARAMS = {
    "TUMBLE": ("SIZE", "OFFSET"),
    "HOP": ("SLIDE", "SIZE", "OFFSET"),
    "CUMULATE": ("STEP", "SIZE", "OFFSET"),
    "SESSION": ("GAP",),
}


def window_fields(input_fields: tuple[Field, ...], time_type: DataType) -> tuple[Field, ...]:
    """The TVF's output fields: input + window_start, window_end, window_time."""
    wt = plain(time_type).with_nullable(False).with_nullable(False)
    if time_type.time_attr == "ROWTIME":
        wt = wt.as_time_attr("ROWTIME")
    return input_fields + (
        Field("window_start", DataType("TIMESTAMP", False, precision=3)),
        Field("window_end", DataType("TIMESTAMP", False, precision=3)),
        Field("window_time", DataType(wt.name, False, precision=3, time_attr=wt.time_attr)),
    )


@relation_form(TableFunction)
def bind_window_tvf(ctx: BindContext, node: TableFunction) -> LogicalNode:
    """The logical plan of a table function call in FROM: a window TVF, or one of the
    built-in changelog process table functions (planner/binder/changelog_ptf.py)."""

    name = node.name.upper()
    sql = ctx.sql
    if is_changelog_function(name):  # the built-in process table functions
        return bind_changelog_function(ctx, node)
    if name not in _PARAMS:
        raise error(UnsupportedSqlError, f"Table function {name} is not supported", node, sql)
    positional: list[exp.Expression] = []
    named: dict[str, exp.Expression] = {}
    for a in node.expressions:
        if isinstance(a, exp.Kwarg):
            named[a.this.name.upper()] = a.expression
        else:
            positional.append(a)
    order = ("DATA", "TIMECOL") + _PARAMS[name]
    args: dict[str, exp.Expression] = {}
    for key, value in zip(order, positional, strict=False):
        args[key] = value
    args.update(named)
    data = args.get("DATA")
    if not isinstance(data, TableArgument):
        raise error(SqlValidationError, f"The first argument of {name} must be a TABLE argument", node, sql)
    input_plan = bind_relation(ctx, data.this)
    fields = input_plan.fields
    names = [f.name for f in fields]
    timecol = args.get("TIMECOL")
    if not isinstance(timecol, Descriptor) or len(timecol.expressions) != 1:
        raise error(SqlValidationError, f"The second argument of {name} must be DESCRIPTOR(time column)", node, sql)
    col = timecol.expressions[0]
    col_name = col.name
    if col_name not in names:
        raise error(SqlValidationError, f"Unknown identifier '{col_name}'", col, sql)
    time_index = names.index(col_name)
    time_type = fields[time_index].type
    if time_type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        raise error(
            SqlValidationError,
            f"The window function requires the timecol is a time attribute type, but is {time_type}.",
            col,
            sql,
        )
    if ctx.mode == "STREAMING" and time_type.time_attr is None:
        raise error(
            SqlValidationError,
            f"The window function requires the timecol is a time attribute type, but is {time_type}.",
            col,
            sql,
        )
    ms: dict[str, int] = {}
    for key in _PARAMS[name]:
        v = args.get(key)
        if v is None:
            continue
        if not isinstance(v, exp.Interval):
            raise error(SqlValidationError, f"Parameter {key} of {name} must be an interval literal", v, sql)
        ms[key] = int(interval_ms(v, sql).value)
    partition: list[int] = []
    for p in data.args.get("partition_by") or []:
        if p.name not in names:
            raise error(SqlValidationError, f"Column '{p.name}' not found in table", p, sql)
        partition.append(names.index(p.name))
    if name == "TUMBLE":
        spec = WindowSpec("TUMBLE", size_ms=_need(ms, "SIZE", node, sql), offset_ms=ms.get("OFFSET"))
    elif name == "HOP":
        spec = WindowSpec(
            "HOP",
            size_ms=_need(ms, "SIZE", node, sql),
            slide_ms=_need(ms, "SLIDE", node, sql),
            offset_ms=ms.get("OFFSET"),
        )
    elif name == "CUMULATE":
        spec = WindowSpec(
            "CUMULATE",
            size_ms=_need(ms, "SIZE", node, sql),
            step_ms=_need(ms, "STEP", node, sql),
            offset_ms=ms.get("OFFSET"),
        )
    else:
        # Flink rejects SESSION in batch mode ("Unaligned windows like session are not supported
        # in batch mode yet"); streamsql runs it (the same windows as streaming, no late rows).
        spec = WindowSpec("SESSION", gap_ms=_need(ms, "GAP", node, sql), partition_keys=tuple(partition))
    if partition and name != "SESSION":
        raise error(SqlValidationError, f"{name} does not support PARTITION BY", data, sql)
    check_window_spec(spec, node, sql)
    return LogicalWindowTableFunction(
        fields=window_fields(fields, time_type), input=input_plan, window=spec, time_index=time_index
    )


def check_window_spec(spec: WindowSpec, node: exp.Expression, sql: str | None) -> None:
    """Window sizes, slides, steps and gaps must be positive (Flink's WindowSpec checks),
    for window TVFs and legacy GROUP BY windows alike."""
    size, slide, step, gap = spec.size_ms, spec.slide_ms, spec.step_ms, spec.gap_ms
    if spec.kind == "TUMBLE" and (size or 0) <= 0:
        msg = f"Tumbling Window parameters must satisfy size > 0, but got size {size}ms."
    elif spec.kind == "HOP" and ((slide or 0) <= 0 or (size or 0) <= 0):
        msg = f"Hopping Window must satisfy slide > 0 and size > 0, but got slide {slide}ms and size {size}ms."
    elif spec.kind == "CUMULATE" and ((step or 0) <= 0 or (size or 0) <= 0):
        msg = (
            f"Cumulative Window parameters must satisfy step > 0 and size > 0, but got step {step}ms and size {size}ms."
        )
    elif spec.kind == "SESSION" and (gap or 0) <= 0:
        msg = f"Session Window parameters must satisfy gap > 0, but got gap {gap}ms."
    else:
        return
    raise error(SqlValidationError, msg, node, sql)


def _need(ms: dict[str, int], key: str, node: exp.Expression, sql: str | None) -> int:
    if key not in ms:
        raise error(SqlValidationError, f"Missing parameter {key}", node, sql)
    return ms[key]
