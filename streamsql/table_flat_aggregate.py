"""`Table.flat_aggregate` / `GroupedTable.flat_aggregate`: a Python table aggregate
function (`streamsql.udf.udtaf`) over groups, emitting any number of rows per group.

There is no Flink SQL for it: the aggregation's input is written as SQL (`SELECT keys...,
args... FROM <table>`) and registered as a `planner.rules.table_aggregate` view whose plan
puts a LogicalTableAggregate on top; the returned Table is a scan of that view, so
`select`, `where`, `explain()` and inserts continue as SQL.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from planner.errors import SqlValidationError
from streamsql.expressions import Expression, quote
from streamsql.table_lowering import SelectSpec, render_all

if TYPE_CHECKING:
    from streamsql.table import Table

_views = itertools.count(1)


def _unpack(func: Any) -> tuple[Any, list[Expression] | None, tuple[str, ...]]:
    """(udtaf wrapper, argument expressions or None for the whole row, aliases)."""
    from runtime.udf_registry import spec_of

    names: tuple[str, ...] = ()
    if isinstance(func, Expression):
        if func._names and func._inner is not None:
            names = tuple(func._names)
            func = func._inner
        if func._udf is None:
            raise SqlValidationError("flat_aggregate takes a table aggregate function (streamsql.udf.udtaf) call")
        wrapper, args = func._udf
        return wrapper, list(args), names
    if spec_of(func) is None:
        raise SqlValidationError("flat_aggregate takes a table aggregate function (streamsql.udf.udtaf)")
    return func, None, tuple(getattr(func, "_alias_names", ()))  # `udtaf(...).alias('b')`, as PyFlink names it


def flat_aggregate(table: Table, keys: list[Expression], func: Any) -> Table:
    """The Table of `keys` + the rows `func` emits per group (see the module docstring)."""
    from planner.rules.table_aggregate import create_table_aggregate_view
    from runtime.udf_registry import spec_of

    wrapper, args, names = _unpack(func)
    spec = spec_of(wrapper)
    if spec is None or spec.kind != "table_aggregate":
        raise SqlValidationError(
            "flat_aggregate takes a table aggregate function: wrap a TableAggregateFunction with streamsql.udf.udtaf"
        )
    ctx = table._ctx()
    items: list[str] = []
    for i, k in enumerate(keys):
        text = k._render(ctx)
        items.append(text if k._output_name() is not None else f"{text} AS {quote(f'_k{i}')}")
    row_names: tuple[str, ...] = ()
    if args is None:
        row_names = tuple(table._names())
        items += [f"{quote(n)} AS {quote(f'_a{j}')}" for j, n in enumerate(row_names)]
    else:
        items += [f"{text} AS {quote(f'_a{j}')}" for j, text in enumerate(render_all(args, ctx))]
    input_sql = table._spec.with_select(items).sql()
    env = table._env
    name = f"__flat_aggregate${next(_views)}"
    create_table_aggregate_view(
        env.catalog, name, input_sql, len(keys), wrapper, spec, args is None, env._planner().mode, names, row_names
    )
    return table._derive(SelectSpec.scan(name))
