"""Query binding: WITH, VALUES and FROM relations (tables, views, subqueries, joins), and
the dispatch to the query forms and FROM items other modules own.

Binding is recursive across modules: a SELECT (`planner.binder.select`) binds its FROM
here, whose subqueries, window TVFs (`windows`) and LATERAL items (`lateral`) bind queries
again. The modules that own a form register it in the tables below when they are imported
(`planner/binder/__init__.py` imports them all), so this module dispatches to them without
importing them and they call back into `bind_query_node` / `bind_relation`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from planner.binder.expressions import ExprBinder
from planner.binder.hints import with_options_hint
from planner.binder.scope import Scope, ScopeColumn, error, uniquify
from planner.binder.time_joins import bind_snapshot
from planner.binder.types import common_type, convert_literal, plain
from planner.catalog_objects import CatalogView, quoted
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import (
    LogicalJoin,
    LogicalNode,
    LogicalProject,
    LogicalTableScan,
    LogicalUnion,
    LogicalValues,
    LogicalWatermarkAssigner,
)
from planner.table_options import check_table_options
from runtime.connectors.base import get_connector
from runtime.errors import ConnectorError
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.frozen import mutable_dataclass
from runtime.types import INT, Field

if TYPE_CHECKING:
    from planner.catalog import Catalog
    from planner.catalog_objects import CatalogTable


@mutable_dataclass
class BindContext:
    """What binding one statement needs besides the query: the catalog, the text for
    positions in errors, the runtime mode, WITH clauses in scope and the views being expanded."""

    catalog: Catalog
    sql: str | None
    mode: str = "STREAMING"  # STREAMING | BATCH
    ctes: list[dict[str, LogicalNode]] = field(default_factory=list)
    # Views being expanded (to detect cycles).
    expanding: tuple[str, ...] = ()

    def cte(self, name: str) -> LogicalNode | None:
        for frame in reversed(self.ctes):
            if name in frame:
                return frame[name]
        return None


# (context, the AST node of the form) -> plan; (context, plan so far, its scope, the exp.Join)
# -> joined plan and scope.
QueryForm = Callable[[BindContext, Any], LogicalNode]
JoinForm = Callable[[BindContext, LogicalNode, Scope, Any], tuple[LogicalNode, Scope]]

# AST class -> the function binding it, registered by the module owning the form.
_QUERY_FORMS: dict[type[exp.Expression], QueryForm] = {}  # SELECT, set operations
_RELATION_FORMS: dict[type[exp.Expression], QueryForm] = {}  # window TVFs, UNNEST, LATERAL
_JOIN_FORMS: dict[type[exp.Expression], JoinForm] = {}  # `JOIN UNNEST`, `JOIN LATERAL`


def query_form(*classes: type[exp.Expression]) -> Callable[[QueryForm], QueryForm]:
    """Register the decorated function as the binder of queries of these AST classes."""

    def register(fn: QueryForm) -> QueryForm:
        _QUERY_FORMS.update(dict.fromkeys(classes, fn))
        return fn

    return register


def relation_form(*classes: type[exp.Expression]) -> Callable[[QueryForm], QueryForm]:
    """Register the decorated function as the binder of FROM items of these AST classes."""

    def register(fn: QueryForm) -> QueryForm:
        _RELATION_FORMS.update(dict.fromkeys(classes, fn))
        return fn

    return register


def join_form(*classes: type[exp.Expression]) -> Callable[[JoinForm], JoinForm]:
    """Register the decorated function as the binder of join items (`JOIN x`) whose
    relation is of these AST classes; it returns the joined plan and scope."""

    def register(fn: JoinForm) -> JoinForm:
        _JOIN_FORMS.update(dict.fromkeys(classes, fn))
        return fn

    return register


def _form(table: dict[type[exp.Expression], Callable], node: exp.Expression) -> Callable | None:  # type: ignore[type-arg]
    """The registered binder of `node`'s class or of its nearest registered base class."""
    for cls in type(node).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    return None


def bind_query_node(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """Bind a query expression (SELECT, UNION ALL, VALUES, a parenthesized query)."""
    with_ = node.args.get("with_") or node.args.get("with")
    pushed = False
    if with_ is not None:
        frame: dict[str, LogicalNode] = {}
        ctx.ctes.append(frame)
        pushed = True
        for cte in with_.expressions:
            if with_.args.get("recursive"):
                raise error(UnsupportedSqlError, "WITH RECURSIVE is not supported", cte, ctx.sql)
            plan = bind_query_node(ctx, cte.this)
            alias = cte.args.get("alias")
            cols = [c.name for c in alias.columns] if alias is not None and alias.columns else None
            frame[cte.alias] = _rename(plan, cols, cte, ctx)
    try:
        if isinstance(node, exp.Subquery):
            return bind_query_node(ctx, node.this)
        if isinstance(node, exp.Paren):
            return bind_query_node(ctx, node.this)
        if isinstance(node, exp.Values):
            return bind_values(ctx, node)
        form = _form(_QUERY_FORMS, node)
        if form is not None:
            return form(ctx, node)
        raise error(UnsupportedSqlError, f"Unsupported query: {node.sql()[:60]}", node, ctx.sql)
    finally:
        if pushed:
            ctx.ctes.pop()


def _cast_to(plan: LogicalNode, fields: tuple[Field, ...], time_attrs: bool = False) -> LogicalNode:
    """`plan` with a projection casting its columns to `fields`' types where they differ.
    `time_attrs`: a column whose time attribute differs is cast too (a UNION ALL input,
    cast to the union's type as Flink's CoerceInputsRule does: to a rowtime, or from one)."""
    exprs: list[Expr] = []
    changed = False
    for i, (have, want) in enumerate(zip(plan.fields, fields, strict=True)):
        ref = InputRef(i, have.type)
        if time_attrs and have.type.time_attr != want.type.time_attr:
            exprs.append(Call("cast", (ref,), want.type))
            changed = True
        elif plain(have.type) == want.type or (
            plain(have.type).with_nullable(True) == want.type and want.type.nullable
        ):
            exprs.append(ref)
            changed = changed or have.name != want.name
        else:
            exprs.append(Call("cast", (ref,), want.type))
            changed = True
    if not changed:
        return plan
    return LogicalProject(
        fields=tuple(Field(f.name, e.type) for f, e in zip(fields, exprs, strict=True)), input=plan, exprs=tuple(exprs)
    )


def bind_values(ctx: BindContext, node: exp.Values) -> LogicalNode:
    """VALUES rows: each column's type is the least restrictive type of its cells (Flink's
    common type). Rows of literals become one LogicalValues; a row holding any other
    expression (TIMESTAMP '...', CURRENT_TIMESTAMP, 1 + 2, ...) is a projection over a
    one-row Values, and the rows a UNION ALL, as Calcite plans them."""
    rows_nodes = [r.expressions if isinstance(r, exp.Tuple) else [r] for r in node.expressions]
    width = len(rows_nodes[0])
    binder = ExprBinder(Scope(), ctx.sql, clause="VALUES")
    rows: list[list[Expr]] = []
    for rn in rows_nodes:
        if len(rn) != width:
            raise error(
                SqlValidationError, "Values passed to VALUES operator must have compatible types", node, ctx.sql
            )
        row = []
        for cell in rn:
            if isinstance(cell, exp.Null):
                raise error(SqlValidationError, "Illegal use of 'NULL'", cell, ctx.sql)
            row.append(binder.bind(cell))
        rows.append(row)
    types = []
    for i in range(width):
        t = common_type([r[i].type for r in rows])
        if t is None:
            raise error(
                SqlValidationError, "Values passed to VALUES operator must have compatible types", node, ctx.sql
            )
        types.append(t)
    alias = node.args.get("alias")
    names = [f"EXPR${i}" for i in range(width)]
    if alias is not None and alias.columns:
        names = [c.name for c in alias.columns]
        if len(names) != width:
            raise error(SqlValidationError, "List of column aliases must have same degree as table", alias, ctx.sql)
    fields = tuple(Field(n, t) for n, t in zip(names, types, strict=True))
    if all(isinstance(e, Literal) for r in rows for e in r):
        literal_rows = tuple(
            tuple(convert_literal(v, t) for v, t in zip(r, types, strict=True))  # type: ignore[arg-type]
            for r in rows
        )
        return LogicalValues(fields=fields, rows=literal_rows)
    one_row = LogicalValues(fields=(Field("ZERO", INT().not_null()),), rows=((Literal(0, INT().not_null()),),))
    projects: list[LogicalNode] = []
    for r in rows:
        exprs = tuple(e if plain(e.type) == plain(t) else Call("cast", (e,), t) for e, t in zip(r, types, strict=True))
        projects.append(LogicalProject(fields=fields, input=one_row, exprs=exprs))
    return projects[0] if len(projects) == 1 else LogicalUnion(fields=fields, children=tuple(projects))


def _rename(plan: LogicalNode, names: list[str] | None, node: exp.Expression, ctx: BindContext) -> LogicalNode:
    if not names:
        return plan
    if len(names) != len(plan.fields):
        raise error(SqlValidationError, "List of column aliases must have same degree as table", node, ctx.sql)
    fields = tuple(Field(n, f.type) for n, f in zip(names, plan.fields, strict=True))
    exprs = tuple(InputRef(i, f.type) for i, f in enumerate(plan.fields))
    return LogicalProject(fields=fields, input=plan, exprs=exprs)


# ---------------------------------------------------------------------- relations
def scan_table(ctx: BindContext, table: CatalogTable, node: exp.Expression | None) -> LogicalNode:
    """TableScan of the physical columns, then computed columns, then the watermark."""
    check_scannable(table, node, ctx.sql)
    check_table_options(table)
    info = table.table_info()
    plan: LogicalNode = LogicalTableScan(fields=info.physical_schema, table=info)
    if any(c.kind == "computed" for c in table.columns):
        exprs: list[Expr] = []
        phys_i = 0
        for c in table.columns:
            if c.kind == "computed":
                assert c.expr is not None
                exprs.append(c.expr)
            else:
                exprs.append(InputRef(phys_i, plain(c.type)))
                phys_i += 1
        fields = tuple(Field(c.name, c.type if c.kind == "computed" else plain(c.type)) for c in table.columns)
        plan = LogicalProject(fields=fields, input=plan, exprs=tuple(exprs))
    if table.watermark_expr is not None and table.rowtime_index is not None:
        plan = LogicalWatermarkAssigner(
            fields=table.fields,
            input=plan,
            rowtime_index=table.rowtime_index,
            watermark=table.watermark_expr,
            idle_timeout_ms=None,
        )
    return plan


def check_scannable(table: CatalogTable, node: exp.Expression | None, sql: str | None) -> None:
    """Metadata columns need a connector that declares metadata keys (the keys themselves
    are checked with the table's options, planner/table_options.py)."""
    if any(c.kind == "metadata" for c in table.columns):
        try:
            offers = bool(get_connector(table.connector).metadata)
        except ConnectorError:
            return  # an unknown connector: the options check names it
        if not offers:
            raise error(
                UnsupportedSqlError,
                f"Metadata columns are not supported by the '{table.connector}' connector",
                node,
                sql,
            )


def _table_name(node: exp.Table) -> tuple[str, ...]:
    parts = [p for p in (node.catalog, node.db, node.name) if p]
    return tuple(parts)


def bind_relation(ctx: BindContext, node: exp.Expression) -> LogicalNode:
    """The plan of one FROM item (without its alias handling)."""
    form = _form(_RELATION_FORMS, node)
    if form is not None:
        return form(ctx, node)
    if isinstance(node, exp.Table):
        if isinstance(node.this, exp.Anonymous):
            raise error(UnsupportedSqlError, f"Unsupported FROM item: {node.sql()}", node, ctx.sql)
        if node.args.get("unnest") is not None:
            raise error(UnsupportedSqlError, "UNNEST is not supported yet", node, ctx.sql)
        name = _table_name(node)
        if len(name) == 1:
            cte = ctx.cte(name[0])
            if cte is not None:
                return cte
        obj = ctx.catalog.lookup(name, node, ctx.sql)
        if isinstance(obj, CatalogView):
            if any(re.match(r"\s*\+?\s*OPTIONS\s*\(", c, re.IGNORECASE) for c in node.comments or ()):
                err = error(
                    SqlValidationError,
                    f"View '{quoted(obj.path)}' cannot be enriched with new options. "
                    "Hints can only be applied to tables.",
                    node,
                    ctx.sql,
                )
                err.flink_class = "org.apache.flink.table.api.ValidationException"
                raise err
            key = ".".join(obj.path)
            if key in ctx.expanding:
                raise error(SqlValidationError, f"Cyclic definition of view '{key}'", node, ctx.sql)
            sub = BindContext(ctx.catalog, obj.sql, ctx.mode, [], ctx.expanding + (key,))
            plan = bind_query_node(sub, obj.query)
            wrap = getattr(obj, "wrap_plan", None)  # planner.rules.table_aggregate's views
            if wrap is not None:
                plan = wrap(plan)
            return _rename(plan, [f.name for f in obj.fields] if obj.column_names else None, node, ctx)
        return scan_table(ctx, with_options_hint(obj, node, ctx.sql), node)
    if isinstance(node, exp.Subquery):
        return bind_query_node(ctx, node.this)
    if isinstance(node, exp.Values):
        return bind_values(ctx, node)
    raise error(UnsupportedSqlError, f"Unsupported FROM item: {node.sql()[:60]}", node, ctx.sql)


def relation_with_scope(ctx: BindContext, node: exp.Expression) -> tuple[LogicalNode, Scope]:
    """A FROM item's plan and the scope its columns are visible in (alias applied)."""
    plan = bind_relation(ctx, node)
    alias = node.args.get("alias")
    qualifier = None
    if isinstance(alias, exp.TableAlias) and alias.name:
        qualifier = alias.name
        if alias.columns and [c.name for c in alias.columns] != [f.name for f in plan.fields]:
            plan = _rename(plan, [c.name for c in alias.columns], alias, ctx)
    elif isinstance(node, exp.Table):
        qualifier = node.name
    return plan, Scope.of(plan.fields, qualifier, ctx.sql)


def bind_from(ctx: BindContext, from_: exp.From | None, joins: list[exp.Join] | None) -> tuple[LogicalNode, Scope]:
    """FROM with its joins: one plan and the combined scope."""
    if from_ is None:
        # SELECT without FROM: Calcite's one-row `VALUES (0)` (column ZERO).
        zero = Literal(0, INT(nullable=False))
        return LogicalValues(fields=(Field("ZERO", zero.type),), rows=((zero,),)), Scope([], ctx.sql)
    if isinstance(from_.this, exp.Table) and from_.this.args.get("version") is not None:
        _refuse_time_travel(ctx, from_.this)
    plan, scope = relation_with_scope(ctx, from_.this)
    for j in joins or []:
        join = _form(_JOIN_FORMS, j.this)
        if join is not None:
            plan, scope = join(ctx, plan, scope, j)
            continue
        right, rscope = relation_with_scope(ctx, j.this)
        kind = j.args.get("side") or j.args.get("kind") or "INNER"
        kind = str(kind).upper()
        if j.args.get("using") or str(j.args.get("method") or "").upper() == "NATURAL":
            plan, scope = _bind_using_join(ctx, j, kind, plan, scope, right, rscope)
            continue
        scope = scope.concat(rscope)
        cond = None
        on = j.args.get("on")
        if on is not None:
            cond = ExprBinder(scope, ctx.sql, clause="ON").bind(on)
        version = j.this.args.get("version") if isinstance(j.this, exp.Table) else None
        if version is not None:
            right = bind_snapshot(ctx, j.this, version, right, scope, len(plan.fields))
        fields, scope = outer_join_fields(kind, plan.fields, right.fields, scope)
        plan = LogicalJoin(fields=fields, left=plan, right=right, kind=kind, condition=cond)
    names = uniquify([c.name for c in scope.columns])
    if names != [c.name for c in scope.columns] and joins:
        pass  # duplicate names across join sides stay addressable through their qualifiers
    return plan, scope


def _bind_using_join(
    ctx: BindContext,
    j: exp.Join,
    kind: str,
    left: LogicalNode,
    lscope: Scope,
    right: LogicalNode,
    rscope: Scope,
) -> tuple[LogicalNode, Scope]:
    """`l JOIN r USING (c, ...)` and `l NATURAL JOIN r` (the columns both sides name alike):
    a join on `l.c = r.c`, then, as in Calcite, each such column once, unqualified and first
    (`SELECT *` gives the USING columns, then the other columns of l, then those of r). Its
    value is l's for INNER / LEFT joins, r's for RIGHT, COALESCE(l.c, r.c) for FULL. The
    sides' own columns stay reachable qualified (`l.c`, `l.*`)."""
    if isinstance(j.this, exp.Table) and j.this.args.get("version") is not None:
        raise error(UnsupportedSqlError, "A temporal join takes ON, not USING or NATURAL", j, ctx.sql)
    visible_l = [c for c in lscope.columns if not c.qualified_only]
    visible_r = [c for c in rscope.columns if not c.qualified_only]
    if j.args.get("using"):
        names = [u.name for u in j.args["using"]]
    else:  # NATURAL: the common names, in the left side's order
        rnames = {c.name for c in visible_r}
        names = list(dict.fromkeys(c.name for c in visible_l if c.name in rnames))
    n_left = len(left.fields)
    pairs: list[tuple[ScopeColumn, ScopeColumn]] = []
    for name in names:
        found = []
        for cols in (visible_l, visible_r):
            match = [c for c in cols if c.name == name]
            if not match:
                raise error(SqlValidationError, f"Column '{name}' not found in any table", j, ctx.sql)
            if len(match) > 1:
                raise error(
                    SqlValidationError,
                    f"Column name '{name}' in USING clause is not unique on one side of join",
                    j,
                    ctx.sql,
                )
            found.append(match[0])
        pairs.append((found[0], replace(found[1], index=found[1].index + n_left)))
    joined_scope = lscope.concat(rscope)
    fields, joined_scope = outer_join_fields(kind, left.fields, right.fields, joined_scope)

    # `l.c = r.c AND ...` and `COALESCE(l.c, r.c)`, typed by the expression binder over a
    # scope naming each pair's columns `$l<i>` / `$r<i>`
    pair_scope = Scope(
        [
            ScopeColumn(None, f"${side}{i}", c.index, fields[c.index].type)
            for i, pair in enumerate(pairs)
            for side, c in zip("lr", pair, strict=True)
        ],
        ctx.sql,
    )

    def bind_text(text: str) -> Expr:
        return ExprBinder(pair_scope, ctx.sql, clause="ON").bind(exp.maybe_parse(text, dialect="flink"))

    cond = bind_text(" AND ".join(f"`$l{i}` = `$r{i}`" for i in range(len(pairs)))) if pairs else None
    plan: LogicalNode = LogicalJoin(fields=fields, left=left, right=right, kind=kind, condition=cond)
    if not pairs:
        return plan, joined_scope
    merged: list[Expr] = []
    for i, (lc, rc) in enumerate(pairs):
        if kind == "FULL":
            merged.append(bind_text(f"COALESCE(`$l{i}`, `$r{i}`)"))
        else:
            c = rc if kind == "RIGHT" else lc
            merged.append(InputRef(c.index, fields[c.index].type))
    k = len(merged)
    exprs = tuple(merged) + tuple(InputRef(i, f.type) for i, f in enumerate(fields))
    out_fields = tuple(Field(name, e.type) for name, e in zip(names, merged, strict=True)) + fields
    plan = LogicalProject(fields=out_fields, input=plan, exprs=exprs)
    hidden = {c.index for pair in pairs for c in pair}
    cols = [ScopeColumn(None, name, i, e.type) for i, (name, e) in enumerate(zip(names, merged, strict=True))]
    cols += [
        replace(c, index=c.index + k, qualified_only=c.qualified_only or c.index in hidden)
        for c in joined_scope.columns
    ]
    return plan, Scope(cols, ctx.sql)


def _refuse_time_travel(ctx: BindContext, table: exp.Table) -> None:
    """`FROM t FOR SYSTEM_TIME AS OF <timestamp>` outside a join is time travel: Flink asks
    the table's catalog for the table as of that time (`Catalog.getTable(ObjectPath, long)`),
    which its built-in catalogs do not implement. streamsql's catalogs keep no history
    either, so the query is refused (reading the current table would be a silently
    different result)."""
    version = table.args["version"]
    err = error(
        UnsupportedSqlError,
        f"Time travel is not supported: the catalog of table '{'.'.join(_table_name(table))}' keeps no table "
        "versions (Flink: getTable(ObjectPath, long) is not implemented for its catalog)",
        version,
        ctx.sql,
    )
    err.hint = (
        "Query the table without FOR SYSTEM_TIME AS OF, or join it as a versioned table: "
        "JOIN t FOR SYSTEM_TIME AS OF <left row time> ON ... (a temporal join)."
    )
    raise err


def outer_join_fields(
    kind: str, left: tuple[Field, ...], right: tuple[Field, ...], scope: Scope
) -> tuple[tuple[Field, ...], Scope]:
    """A join's output fields and scope: the columns of the side an outer join pads with
    NULLs become nullable (LEFT: right side, RIGHT: left side, FULL: both)."""
    null_left = kind in ("RIGHT", "FULL")
    null_right = kind in ("LEFT", "FULL")
    fields = tuple(Field(f.name, f.type.with_nullable(True)) if null_left else f for f in left) + tuple(
        Field(f.name, f.type.with_nullable(True)) if null_right else f for f in right
    )
    if not (null_left or null_right):
        return fields, scope
    cols = [replace(c, type=fields[c.index].type) if c.index < len(fields) else c for c in scope.columns]
    return fields, type(scope)(cols, scope.sql)
