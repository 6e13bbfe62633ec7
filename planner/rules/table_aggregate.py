"""Table aggregation: the Table API's `flat_aggregate` with a Python table aggregate
function (`streamsql.udf.udtaf`), Flink's LogicalTableAggregate → GroupTableAggregate.

Flink SQL has no syntax for it, so the Table API reaches the planner through a catalog
view: `TableAggregateView` holds the SQL of the aggregation's input (`SELECT keys...,
args... FROM <table>`, so keys and arguments are bound by the binder like any SELECT
list) and wraps the bound input in a `LogicalTableAggregate` (the binder calls
`wrap_plan` when it expands the view). Everything downstream (select, where, EXPLAIN,
INSERT) is then plain SQL over that view.

JobGraph operator "GroupTableAggregate" (runtime.operators.group_table_agg): params
`grouping`, `args`, `row_arg`, `input_names`, `function` = {"udf": reference, "name"}.
Changelog: retract (-D of the rows a key emitted before, +I of its new rows).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.binder import bind_query
from planner.catalog import Catalog
from planner.catalog_objects import CatalogView, full_path
from planner.errors import SqlValidationError
from planner.functions_catalog import _type
from planner.logical import LogicalNode
from planner.parse import parse_statement
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from planner.statements import Query
from runtime.frozen import frozen_dataclass
from runtime.operators.group_table_agg import GroupTableAggregateParams, TableAggregateFunction, call_text
from runtime.types import DataType, Field
from runtime.udf_registry import UdfSpec, make_reference, register


@frozen_dataclass(eq=False)
class LogicalTableAggregate(LogicalNode):
    input: LogicalNode
    grouping: tuple[int, ...]
    args: tuple[int, ...]
    function: dict[str, Any]
    row_arg: bool = False

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def explain_line(self) -> str:
        group = ", ".join(str(i) for i in self.grouping)
        call = call_text(_function(self.function), self.args, self.row_arg, [f.name for f in self.input.fields])
        return f"LogicalTableAggregate(group=[{{{group}}}], tableAggregate=[[{call}]])"


def _function(function: dict[str, Any]) -> TableAggregateFunction:
    return TableAggregateFunction(function["udf"], function.get("name") or "table aggregate")


@register_physical(LogicalTableAggregate)
def _to_physical(planner: PhysicalPlanner, node: LogicalTableAggregate) -> PhysicalNode:
    child = planner.convert(node.input)
    params = GroupTableAggregateParams(
        grouping=tuple(node.grouping),
        args=tuple(node.args),
        function=_function(node.function),
        row_arg=node.row_arg,
        input_names=tuple(node.function.get("row_names") or ()),
        arg_types=tuple(node.input.fields[i].type for i in node.args),
    )
    return PhysicalNode.distributed(params, (child,), node.fields)


# ---------------------------------------------------------------------- the catalog view
@frozen_dataclass
class TableAggregateView(CatalogView):
    """A view whose plan is its query's plan under a LogicalTableAggregate."""

    num_keys: int = 0
    function: dict[str, Any] | None = None
    row_arg: bool = False

    def wrap_plan(self, plan: LogicalNode) -> LogicalNode:
        assert self.function is not None
        keys = tuple(range(self.num_keys))
        args = tuple(range(self.num_keys, len(plan.fields)))
        out = tuple(plan.fields[i] for i in keys) + self.fields[self.num_keys :]
        return LogicalTableAggregate(out, plan, keys, args, self.function, self.row_arg)


def result_fields(spec: UdfSpec, names: tuple[str, ...] = ()) -> tuple[Field, ...]:
    """The columns a table aggregate function emits: a ROW result's fields, else one
    column `f0`; `names` (from `.alias(...)`) renames them."""

    raw = spec.result_type
    if raw is None:
        raise SqlValidationError(f"Table aggregate function '{spec.name}' must declare a result_type")
    rt: DataType = _type(raw)
    if rt.name == "ROW" and rt.field_names:
        fields = [Field(n, t.with_nullable(True)) for n, t in zip(rt.field_names, rt.children, strict=True)]
    else:
        fields = [Field("f0", rt.with_nullable(True))]
    if names:
        if len(names) != len(fields):
            raise SqlValidationError(
                f"Table aggregate function '{spec.name}' emits {len(fields)} columns but {len(names)} aliases were given"
            )
        fields = [Field(n, f.type) for n, f in zip(names, fields, strict=True)]
    return tuple(fields)


def create_table_aggregate_view(
    catalog: Catalog,
    name: str,
    input_sql: str,
    num_keys: int,
    wrapper: Any,
    spec: UdfSpec,
    row_arg: bool,
    mode: str,
    names: tuple[str, ...] = (),
    row_names: tuple[str, ...] = (),
) -> TableAggregateView:
    """Register temporary view `name`: `wrapper` (a udtaf) flat-aggregating `input_sql`
    (its first `num_keys` columns are the key, the rest the arguments)."""

    if not hasattr(spec.func, "emit_value"):
        raise SqlValidationError(
            f"'{spec.name}' is not a table aggregate function (create_accumulator/accumulate/emit_value): "
            "wrap a TableAggregateFunction with streamsql.udf.udtaf"
        )
    stmt = parse_statement(input_sql)
    assert isinstance(stmt, Query)
    plan = bind_query(stmt.query, catalog, stmt.sql, mode)
    keys = tuple(plan.fields[:num_keys])
    function: dict[str, Any] = {"udf": make_reference(spec, wrapper, register(spec)), "name": spec.name or "table_agg"}
    if row_arg:
        function["row_names"] = list(row_names)
    path = full_path(name)
    view = TableAggregateView(
        path,
        stmt.query,
        keys + result_fields(spec, names),
        stmt.sql,
        None,
        True,
        num_keys=num_keys,
        function=function,
        row_arg=row_arg,
    )
    catalog._store(path, view, True, False, None)  # noqa: SLF001 - a view with its own plan
    return view
