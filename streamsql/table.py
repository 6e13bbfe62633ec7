"""Table: an immutable query built with the Table API (PyFlink's `pyflink.table.Table`).

Every operation returns a new Table holding the Flink SQL query it stands for
(`streamsql.table_lowering`); running, EXPLAIN and errors go through the one planner as for
a SQL string. Operations are validated when they are called (the query is bound), so a
misspelled `col('x')` raises the binder's SqlValidationError, closest name included, at the
line that made the mistake, as PyFlink does.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from planner.errors import SqlValidationError, did_you_mean
from planner.statements import Explain, Query
from runtime.operators.source import TableSourceScanParams
from streamsql.descriptors import TableDescriptor, TableSchema
from streamsql.expressions import (
    WINDOW_PROPERTY_COLUMNS,
    Expression,
    RenderCtx,
    col,
    quote,
    to_expressions,
    type_sql,
    udf_call,
    with_default_names,
)
from streamsql.table_lowering import SelectSpec, fresh_alias, render_all, render_ctx

if TYPE_CHECKING:
    import pyarrow as pa

    from streamsql.environment import TableEnvironment
    from streamsql.pipeline import TablePipeline
    from streamsql.result import TableResult
    from streamsql.window import GroupWindow, OverWindow

_unnamed = itertools.count(0)
_sinks = itertools.count(1)
PREVIEW_ROWS = 20


class Table:
    """A query: build it with operations, run it with `execute()` / `to_pandas()`."""

    def __init__(self, env: TableEnvironment, query: Query | None = None, *, spec: SelectSpec | None = None) -> None:
        self._env = env
        if spec is None:
            assert query is not None
            spec = SelectSpec.of_query(query.sql)
        self._spec = spec
        self._query_cache = query
        self._fields_cache: tuple[Any, ...] | None = None

    # ------------------------------------------------------------------ the query
    @property
    def _query(self) -> Query:
        if self._query_cache is None:
            from planner.parse import parse_statement

            stmt = parse_statement(self._spec.sql())
            assert isinstance(stmt, Query)
            self._query_cache = stmt
        return self._query_cache

    def _sql_for(self, ctx: RenderCtx | None = None) -> str:
        return self._spec.sql()

    def to_sql(self) -> str:
        """The Flink SQL query this Table stands for."""
        return self._spec.sql()

    def _ctx(self, **kw: Any) -> RenderCtx:
        return render_ctx(self._env, **kw)

    def _derive(self, spec: SelectSpec) -> Table:
        """A new Table over `spec`, validated now (the binder's errors surface here)."""
        t = Table(self._env, spec=spec)
        t._fields()
        return t

    def _fields(self) -> tuple[Any, ...]:
        if self._fields_cache is None:
            q = self._query
            plan = self._env._with_source(q, lambda: self._env._planner().bind(q))
            self._fields_cache = tuple(plan.fields)
        return self._fields_cache

    def _names(self) -> list[str]:
        return [f.name for f in self._fields()]

    def __getattr__(self, name: str) -> Expression:
        """`table.a` is `col('a')` when the table has a column `a` (as in PyFlink)."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._names():
            return col(name)
        raise AttributeError(f"'Table' object has no attribute or column '{name}'")

    def __str__(self) -> str:
        """Registers this Table as a temporary view `UnnamedTable$N` and returns the name, so
        f"SELECT * FROM {table}" works in sql_query (PyFlink's behaviour)."""
        name = self.__dict__.get("_registered_name")
        if name is None:
            name = f"UnnamedTable${next(_unnamed)}"
            self._env.create_temporary_view(name, self)
            self.__dict__["_registered_name"] = name
        return name

    # ------------------------------------------------------------------ relational operations
    def select(self, *fields: Any) -> Table:
        exprs = with_default_names(to_expressions(fields, self._names))
        ctx = self._ctx()
        return self._derive(self._spec.with_select(render_all(exprs, ctx)))

    def add_columns(self, *fields: Any) -> Table:
        exprs = to_expressions(fields, self._names)
        return self._derive(self._spec.with_select(["*", *render_all(exprs, self._ctx())]))

    def add_or_replace_columns(self, *fields: Any) -> Table:
        exprs = to_expressions(fields, self._names)
        ctx = self._ctx()
        names = self._names()
        replaced: dict[str, str] = {}
        added: list[str] = []
        for e in exprs:
            out = e._output_name()
            text = e._render(ctx)
            if out is not None and out in names:
                replaced[out] = text if e._names else f"{text} AS {quote(out)}"
            else:
                added.append(text)
        items = [replaced.get(n, quote(n)) for n in names] + added
        return self._derive(self._spec.with_select(items))

    def rename_columns(self, *fields: Any) -> Table:
        exprs = to_expressions(fields, self._names)
        names = self._names()
        renames: dict[str, str] = {}
        for e in exprs:
            if not e._names or e._inner is None or e._inner._column is None:
                raise SqlValidationError("rename_columns takes column aliases, e.g. col('a').alias('b')")
            self._check_columns([e._inner._column], names)
            renames[e._inner._column] = e._names[0]
        items = [f"{quote(n)} AS {quote(renames[n])}" if n in renames else quote(n) for n in names]
        return self._derive(self._spec.with_select(items))

    def drop_columns(self, *fields: Any) -> Table:
        exprs = to_expressions(fields, self._names)
        names = self._names()
        dropped = [e._column for e in exprs]
        if any(d is None for d in dropped):
            raise SqlValidationError("drop_columns takes column references, e.g. col('a')")
        self._check_columns([d for d in dropped if d], names)
        keep = [quote(n) for n in names if n not in dropped]
        return self._derive(self._spec.with_select(keep))

    def _check_columns(self, wanted: list[str], names: list[str]) -> None:
        for w in wanted:
            if w not in names:
                err = SqlValidationError(f"Column '{w}' not found in any table")
                err.hint = did_you_mean(w, names)
                raise err

    def where(self, predicate: Expression | str) -> Table:
        (e,) = to_expressions((predicate,))
        return self._derive(self._spec.with_where(e._render(self._ctx())))

    filter = where

    def distinct(self) -> Table:
        return self._derive(self._spec.with_distinct())

    def group_by(self, *fields: Any) -> GroupedTable:
        return GroupedTable(self, to_expressions(fields, self._names))

    def window(self, window: GroupWindow | OverWindow) -> GroupWindowedTable:
        from streamsql.window import GroupWindow  # the window classes: only with windows

        if not isinstance(window, GroupWindow):
            raise TypeError("window() takes Tumble / Slide / Session windows; use over_window() for Over")
        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows: OverWindow) -> OverWindowedTable:
        return OverWindowedTable(self, list(over_windows))

    def order_by(self, *fields: Any) -> Table:
        return self._derive(self._spec.with_order(render_all(to_expressions(fields, self._names), self._ctx())))

    def offset(self, offset: int) -> Table:
        return self._derive(self._spec.with_offset(int(offset)))

    def fetch(self, fetch: int) -> Table:
        return self._derive(self._spec.with_fetch(int(fetch)))

    def limit(self, fetch: int, offset: int = 0) -> Table:
        t = self.offset(offset) if offset else self
        return t.fetch(fetch)

    # ------------------------------------------------------------------ joins
    def _join(self, right: Table, kind: str, condition: Any) -> Table:
        if right._env is not self._env:
            raise SqlValidationError("Only tables from the same TableEnvironment can be joined.")
        ambiguous = sorted(set(self._names()) & set(right._names()))
        if ambiguous:
            raise SqlValidationError(f"join relations with ambiguous names: {', '.join(ambiguous)}")
        left_rel, right_rel = self._spec.relation(), right._spec.relation()
        if condition is None:
            on = " ON TRUE" if kind != "CROSS JOIN" else ""
        else:
            (e,) = to_expressions((condition,))
            on = f" ON {e._render(self._ctx())}"
        return self._derive(SelectSpec(from_=f"{left_rel} {kind} {right_rel}{on}"))

    def join(self, right: Table, join_predicate: Any = None) -> Table:
        return self._join(right, "CROSS JOIN" if join_predicate is None else "JOIN", join_predicate)

    def left_outer_join(self, right: Table, join_predicate: Any = None) -> Table:
        return self._join(right, "LEFT JOIN", join_predicate)

    def right_outer_join(self, right: Table, join_predicate: Any) -> Table:
        return self._join(right, "RIGHT JOIN", join_predicate)

    def full_outer_join(self, right: Table, join_predicate: Any) -> Table:
        return self._join(right, "FULL JOIN", join_predicate)

    def _lateral(self, call: Expression, left: bool, condition: Any) -> Table:
        call = self._whole_row_call(call)
        inner = call._inner if call._names and call._inner is not None else call
        fn = inner._render(self._ctx())
        alias = f" AS {quote(fresh_alias())}({', '.join(quote(n) for n in call._names)})" if call._names else ""
        lateral = f"LATERAL TABLE({fn}){alias}"
        if left:
            cond = "TRUE" if condition is None else to_expressions((condition,))[0]._render(self._ctx())
            from_ = f"{self._spec.relation()} LEFT JOIN {lateral} ON {cond}"
            return self._derive(SelectSpec(from_=from_))
        t = self._derive(SelectSpec(from_=f"{self._spec.relation()}, {lateral}"))
        return t.where(condition) if condition is not None else t

    def join_lateral(self, table_function_call: Expression, join_predicate: Any = None) -> Table:
        return self._lateral(table_function_call, False, join_predicate)

    def left_outer_join_lateral(self, table_function_call: Expression, join_predicate: Any = None) -> Table:
        return self._lateral(table_function_call, True, join_predicate)

    # ------------------------------------------------------------------ set operations
    def _setop(self, right: Table, op: str) -> Table:
        def side(t: Table) -> str:
            s = t._spec
            return s.sql() if s.raw is None and s.sortable else f"SELECT * FROM {s.relation()}"

        return self._derive(SelectSpec.of_query(f"{side(self)} {op} {side(right)}"))

    def union(self, right: Table) -> Table:
        return self._setop(right, "UNION")

    def union_all(self, right: Table) -> Table:
        return self._setop(right, "UNION ALL")

    def intersect(self, right: Table) -> Table:
        return self._setop(right, "INTERSECT")

    def intersect_all(self, right: Table) -> Table:
        return self._setop(right, "INTERSECT ALL")

    def minus(self, right: Table) -> Table:
        return self._setop(right, "EXCEPT")

    def minus_all(self, right: Table) -> Table:
        return self._setop(right, "EXCEPT ALL")

    def alias(self, field: str, *fields: str) -> Table:
        """Renames the columns, in order (`table.alias('a', 'b')`)."""
        names = self._names()
        new = [field, *fields]
        if len(new) > len(names):
            raise SqlValidationError(
                f"Aliasing more fields than we actually have: {len(new)} names for the {len(names)} columns "
                f"{', '.join(names)}"
            )
        items = [f"{quote(o)} AS {quote(n)}" for o, n in zip(names, new, strict=False)] + [
            quote(o) for o in names[len(new) :]
        ]
        return self._derive(self._spec.wrapped().with_select(items))

    def _row_argument(self, flatten_rows: bool = False) -> Expression:
        """All columns as one named ROW value: what a bare UDF given to map / flat_map /
        join_lateral / aggregate takes (PyFlink passes the whole row). `flatten_rows`: a
        ROW column's fields take its place, as PyFlink's pandas functions see the row (one
        DataFrame column per field: `x.c` of a column `b ROW<c, d>`)."""
        items: list[tuple[str, str, Any]] = []
        for f in self._fields():
            if flatten_rows and f.type.name == "ROW":
                items += [
                    (f"{quote(f.name)}.{quote(n)}", n, t)
                    for n, t in zip(f.type.field_names, f.type.children, strict=True)
                ]
            else:
                items.append((quote(f.name), f.name, f.type))
        ctor = ", ".join(text for text, _, _ in items)
        typ = ", ".join(f"{quote(n)} {type_sql(t)}" for _, n, t in items)
        text = f"CAST(ROW({ctor}) AS ROW<{typ}>)"
        return Expression(lambda c: text)

    def _whole_row_call(self, func: Any) -> Any:
        """A bare UDF (not called) as PyFlink's row-based operations take it: called with
        the whole input row (a `Row`, or one pandas DataFrame for a pandas function) and
        named by the wrapper's `alias(...)`. Anything else is returned as it is."""
        from runtime.udf_registry import spec_of

        if isinstance(func, Expression):
            return func
        spec = spec_of(func)
        if spec is None:
            return func
        call = udf_call(func, (self._row_argument(flatten_rows=spec.func_type == "pandas"),))
        names = tuple(getattr(func, "_alias_names", ()))
        return call.alias(*names) if names else call

    # ------------------------------------------------------------------ Python functions
    def map(self, func: Any) -> Table:
        """A scalar function applied to each row; a ROW result becomes the columns. A bare
        UDF (not called) receives the whole row as a `Row`."""
        func = self._whole_row_call(func)
        return _flatten(self, self.select(func.alias("_r") if not func._names else func), func)

    def flat_map(self, func: Any) -> Table:
        """A table function applied to each row; its rows (only) form the result. A bare
        UDTF (not called) receives the whole row as a `Row`."""
        func = self._whole_row_call(func)
        names = list(func._names) or _udtf_names(func)
        alias = fresh_alias()
        inner = func._inner if func._names and func._inner is not None else func
        fn = inner._render(self._ctx())
        cols = ", ".join(quote(n) for n in names)
        from_ = f"{self._spec.relation()}, LATERAL TABLE({fn}) AS {quote(alias)}({cols})"
        return self._derive(SelectSpec(from_=from_, select=tuple(f"{quote(alias)}.{quote(n)}" for n in names)))

    def aggregate(self, func: Expression) -> AggregatedTable:
        """An aggregate function over the whole table; finish with `select(...)`. A bare
        UDAF receives the whole row (a pandas one a DataFrame)."""
        return AggregatedTable(self, [], self._whole_row_call(func))

    def flat_aggregate(self, func: Any) -> Table:
        """A Python table aggregate function (udtaf) over the whole table: its rows."""
        from streamsql.table_flat_aggregate import flat_aggregate

        return flat_aggregate(self, [], func)

    # ------------------------------------------------------------------ running
    def execute(self) -> TableResult:
        return self._env.execute_statement(self._query)

    def execute_insert(self, table_path_or_descriptor: str | TableDescriptor, overwrite: bool = False) -> TableResult:
        """INSERT this Table's rows into a table (by path, or a descriptor's anonymous table)."""
        if isinstance(table_path_or_descriptor, TableDescriptor):
            path = f"__sink${next(_sinks)}"
            self._env.create_temporary_table(path, table_path_or_descriptor)
        else:
            path = table_path_or_descriptor
        return self._env.execute_statement(self._insert_statement(path, overwrite))

    def _insert_statement(self, path: str, overwrite: bool = False) -> Any:
        from planner.parse import parse_statement

        target = ".".join(quote(p) for p in path.split("."))
        return parse_statement(f"INSERT {'OVERWRITE' if overwrite else 'INTO'} {target} {self._spec.sql()}")

    def insert_into(self, table_path_or_descriptor: str | TableDescriptor, overwrite: bool = False) -> TablePipeline:
        """A pipeline writing this Table into a table (by path or descriptor); run it with
        `execute()`, or add it to a StatementSet."""
        from streamsql.pipeline import TablePipeline

        if isinstance(table_path_or_descriptor, TableDescriptor):
            path = f"__sink${next(_sinks)}"
            self._env.create_temporary_table(path, table_path_or_descriptor)
        else:
            path = table_path_or_descriptor
        return TablePipeline(self._env, self._insert_statement(path, overwrite), path)

    def print_explain(self, *extra_details: Any) -> None:
        print(self.explain(*extra_details))

    def to_changelog(self, *arguments: Expression) -> Table:
        """This table as an append-only table with an op column (Flink 2.3's TO_CHANGELOG
        process table function). `arguments`: `descriptor("op_code").as_argument("op")`,
        `map_("INSERT", "I", "DELETE", "D").as_argument("op_mapping")`, or the same
        positionally (docs/sql.md)."""
        from runtime.operators.process_table_function import TO_CHANGELOG  # start-up

        return self._changelog_function(TO_CHANGELOG, arguments)

    def from_changelog(self, *arguments: Expression) -> Table:
        """This append-only table with an op column as a changelog (Flink 2.3's
        FROM_CHANGELOG process table function); arguments as for `to_changelog`."""
        from runtime.operators.process_table_function import FROM_CHANGELOG  # start-up

        return self._changelog_function(FROM_CHANGELOG, arguments)

    def _changelog_function(self, function: str, arguments: tuple[Expression, ...]) -> Table:
        ctx = self._ctx()
        args = [f"TABLE ({self._spec.sql()})", *render_all(to_expressions(arguments), ctx)]
        return self._derive(SelectSpec(from_=f"{function}({', '.join(args)})"))

    def explain(self, *extra_details: Any) -> str:
        details = tuple(str(getattr(d, "name", d)).upper() for d in extra_details)
        stmt = Explain(self._query, details, sql=self._query.sql)
        return self._env._with_source(stmt, lambda: self._env._planner().explain(stmt))

    def get_schema(self) -> TableSchema:
        return TableSchema(self._fields())

    def get_resolved_schema(self) -> TableSchema:
        return self.get_schema().resolved()

    def print_schema(self) -> None:
        print(str(self.get_resolved_schema()))

    def to_pandas(self) -> Any:
        return self.execute().to_pandas()

    def to_arrow(self) -> pa.Table:
        return self.execute().to_arrow()

    def to_polars(self) -> Any:
        try:
            import polars
        except ImportError as e:
            raise ImportError("to_polars() needs polars: pip install polars") from e
        return polars.from_arrow(self.to_arrow())

    def is_bounded(self) -> bool:
        """Whether every source of the query is bounded (the query ends by itself)."""
        q = self._query
        planned = self._env._with_source(q, lambda: self._env._planner().plan_query(q))
        return all(n.params.bounded for n in planned.graph.nodes if isinstance(n.params, TableSourceScanParams))

    def _repr_html_(self) -> str:
        """Jupyter: the first rows of a bounded table; an unbounded one is not run."""
        import html

        names = self._names()
        head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
        if not self.is_bounded():
            note = "unbounded table: not run for the preview (use execute().collect() to stream it)"
            return f"<table><thead><tr>{head}</tr></thead></table><p><i>{note}</i></p>"
        data = self.execute().to_arrow()
        rows = data.slice(0, PREVIEW_ROWS).to_pylist()
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(r[n]))}</td>" for n in data.column_names) + "</tr>" for r in rows
        )
        more = f"<p>showing {PREVIEW_ROWS} of {data.num_rows} rows</p>" if data.num_rows > PREVIEW_ROWS else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _udtf_names(func: Expression) -> list[str]:
    from runtime.udf_registry import SPEC_ATTR

    wrapper = func._udf[0] if func._udf else None
    spec = getattr(wrapper, SPEC_ATTR, None)
    n = len(getattr(spec, "result_types", ()) or ()) or 1
    return [f"f{i}" for i in range(n)]


def _flatten(source: Table, projected: Table, func: Expression) -> Table:
    """map(): a ROW-typed result column expands into its fields."""
    fields = projected._fields()
    if len(fields) == 1 and fields[0].type.name == "ROW":
        r = quote(fields[0].name)
        items = [f"{r}.{quote(n)} AS {quote(n)}" for n in fields[0].type.field_names]
        return projected._derive(projected._spec.wrapped().with_select(items))
    return projected


def _aggregate_column(func: Expression) -> tuple[Expression, tuple[str, ...]]:
    """The aggregate call of `aggregate(...)` under one column name, and the names its
    result takes: the aliases (`agg.alias('c', 'd')`), else `f0` / a ROW type's field names."""
    names = tuple(func._names)
    inner = func._inner if names and func._inner is not None else func
    return inner.alias("_agg$"), names


def _flatten_last(table: Table, names: tuple[str, ...]) -> Table:
    """Flink flattens the result of a row-based `aggregate`: a ROW value becomes one column
    per field (named by the aliases, else the fields' names); a scalar keeps one column."""
    fields = table._fields()
    last = fields[-1]
    keep = [quote(f.name) for f in fields[:-1]]
    r = quote(last.name)
    if last.type.name == "ROW":
        out = names or tuple(last.type.field_names)
        if len(out) != len(last.type.field_names):
            raise SqlValidationError(
                "List of column aliases must have same degree as table; the aggregate function returns "
                f"{len(last.type.field_names)} columns, whereas the alias list has {len(out)} columns"
            )
        items = [f"{r}.{quote(f)} AS {quote(n)}" for f, n in zip(last.type.field_names, out, strict=True)]
    else:
        if len(names) > 1:
            raise SqlValidationError(
                f"List of column aliases must have same degree as table; the aggregate function returns 1 column, "
                f"whereas the alias list has {len(names)} columns"
            )
        items = [f"{r} AS {quote(names[0] if names else 'f0')}"]
    return table._derive(table._spec.wrapped().with_select([*keep, *items]))


class GroupedTable:
    """`table.group_by(keys)`: finish with `select(...)` or `aggregate(udaf(...))`."""

    def __init__(self, table: Table, keys: list[Expression]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *fields: Any) -> Table:
        t = self._table
        ctx = t._ctx()
        items = render_all(with_default_names(to_expressions(fields, t._names)), ctx)
        return t._derive(t._spec.with_group(render_all(self._keys, ctx), items))

    def aggregate(self, func: Expression) -> AggregatedTable:
        """An aggregate function per group; a bare UDAF receives the whole row, grouping
        keys included, as PyFlink passes it."""
        return AggregatedTable(self._table, self._keys, self._table._whole_row_call(func))

    def flat_aggregate(self, func: Any) -> Table:
        """A Python table aggregate function (udtaf) per group: the keys and its rows."""
        from streamsql.table_flat_aggregate import flat_aggregate

        return flat_aggregate(self._table, self._keys, func)


class AggregatedTable:
    """`group_by(...).aggregate(f(...).alias('x'))`: finish with `select(...)`."""

    def __init__(self, table: Table, keys: list[Expression], func: Expression) -> None:
        self._table, self._keys, self._func = table, keys, func

    def select(self, *fields: Any) -> Table:
        func, names = _aggregate_column(self._func)
        grouped = GroupedTable(self._table, self._keys).select(*self._keys, func) if self._keys else None
        if grouped is None:
            grouped = self._table.select(func)
        return _flatten_last(grouped, names).select(*fields)


class GroupWindowedTable:
    """`table.window(Tumble...alias('w'))`: continue with `group_by(col('w'), ...)`."""

    def __init__(self, table: Table, window: GroupWindow) -> None:
        self._table = table
        self._window = window

    def group_by(self, *fields: Any) -> WindowGroupedTable:
        return WindowGroupedTable(self._table, self._window, to_expressions(fields, self._table._names))


class WindowGroupedTable:
    def __init__(self, table: Table, window: GroupWindow, keys: list[Expression]) -> None:
        self._table, self._window, self._keys = table, window, keys

    def aggregate(self, func: Expression) -> WindowAggregatedTable:
        """An aggregate function (udaf) per window and key: finish with `select(...)`."""
        return WindowAggregatedTable(self, self._table._whole_row_call(func))

    def select(self, *fields: Any) -> Table:
        t = self._table
        base = t._ctx()
        ctx = t._ctx(group_windows={self._window.name or "": self._window.render(base)})
        if not any(k._column == self._window.name for k in self._keys):
            raise SqlValidationError(
                f"A group window aggregation must group by the window alias: group_by(col('{self._window.name}'), ...)"
            )
        keys = render_all(self._keys, ctx)
        return t._derive(
            t._spec.with_group(keys, render_all(with_default_names(to_expressions(fields, t._names)), ctx))
        )


class OverWindowedTable:
    """`table.over_window(Over...alias('w'))`: `select(col('v').sum.over(col('w')), ...)`."""

    def __init__(self, table: Table, windows: list[OverWindow]) -> None:
        self._table = table
        self._windows = windows

    def select(self, *fields: Any) -> Table:
        t = self._table
        base = t._ctx()
        ctx = t._ctx(over_windows={w.name or "": w.render(base) for w in self._windows})
        return t._derive(t._spec.with_select(render_all(with_default_names(to_expressions(fields, t._names)), ctx)))


class WindowAggregatedTable:
    """`window(...).group_by(...).aggregate(f(...).alias('x'))`: finish with `select(...)`."""

    def __init__(self, grouped: WindowGroupedTable, func: Expression) -> None:
        self._grouped, self._func = grouped, func

    def select(self, *fields: Any) -> Table:
        """The window's keys and the aggregate's columns; `col('w').start` / `end` /
        `rowtime` / `proctime` of the window may be selected too (Flink's row-based window
        aggregate): they are computed with the aggregate and read from there."""
        func, names = _aggregate_column(self._func)
        window = self._grouped._window.name or ""
        keys = [k for k in self._grouped._keys if k._column != window]
        exprs = with_default_names(to_expressions(fields, self._grouped._table._names))
        prefix = f"_{window}$"
        t = self._grouped._table
        probe = t._ctx(group_windows={window: (WINDOW_PROPERTY_COLUMNS, prefix, [])})
        used = {
            p for e in exprs for p in ("start", "end", "rowtime", "proctime") if quote(prefix + p) in e._render(probe)
        }
        props = [
            getattr(col(window), p).alias(prefix + p) for p in ("start", "end", "rowtime", "proctime") if p in used
        ]
        flat = _flatten_last(self._grouped.select(*keys, *props, func), names)
        return flat._derive(
            flat._spec.wrapped().with_select(render_all(exprs, flat._ctx(group_windows=probe.group_windows)))
        )
