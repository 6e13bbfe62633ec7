"""The catalog manager (Flink's CatalogManager): catalogs → databases → tables (from
CREATE TABLE, with LIKE merging) and views, resolved as Flink resolves identifiers.

A table is resolved when it is created: computed column types are inferred, the
WATERMARK column becomes a rowtime attribute, PROCTIME() columns proctime attributes,
primary key columns NOT NULL. Temporary objects (session-scoped, held here) shadow
permanent ones of the same path; permanent ones live in the catalogs
(`planner.catalog_store`: in memory, or persistent in a SQLite file). `show_create`
prints an object as Flink's SHOW CREATE TABLE / VIEW does; persistent catalogs store
that text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from planner.binder import bind_query
from planner.binder.expressions import ExprBinder
from planner.binder.scope import Scope, error, node_position
from planner.binder.types import plain
from planner.catalog_objects import (
    DEFAULT_CATALOG,
    DEFAULT_DATABASE,
    CatalogObject,
    CatalogTable,
    CatalogView,
    MaterializedDefinition,
    Path,
    ResolvedColumn,
    quoted,
)
from planner.catalog_store import CatalogError, CatalogStore, InMemoryCatalogStore
from planner.errors import SqlValidationError, did_you_mean
from planner.expanded_sql import expanded_query
from planner.parse import parse_statement
from planner.statements import ColumnDef, CreateTable, CreateView, Distribution, Drop, LikeClause, WatermarkDef
from runtime.types import DataType, Field

if TYPE_CHECKING:
    from planner.statements_materialized import CreateMaterializedTable, Freshness


def expr_sql(node: exp.Expression) -> str:
    """An expression as Flink's DESCRIBE shows it (identifiers in backticks)."""
    return node.sql(dialect="spark", identify=True)


def type_text(t: DataType) -> str:
    """A column type as DESCRIBE shows it (no NOT NULL: the `null` column says that)."""
    return str(t.with_nullable(True))


def serializable_type(t: DataType) -> str:
    """A type as SHOW CREATE TABLE prints it (Flink's asSerializableString)."""
    n = t.name
    if n == "VARCHAR" or n == "VARBINARY":
        text = f"{n}({t.precision})"
    elif n == "TIMESTAMP_LTZ":
        text = f"TIMESTAMP({t.precision}) WITH LOCAL TIME ZONE"
    elif n in ("ARRAY", "MULTISET"):
        text = f"{n}<{serializable_type(t.children[0])}>"
    elif n == "MAP":
        text = f"MAP<{serializable_type(t.children[0])}, {serializable_type(t.children[1])}>"
    elif n == "ROW":
        inner = ", ".join(f"`{fn}` {serializable_type(ft)}" for fn, ft in zip(t.field_names, t.children, strict=True))
        text = f"ROW<{inner}>"
    else:
        text = str(t.with_nullable(True).as_time_attr(None))
    return text + ("" if t.nullable else " NOT NULL")


def _string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _options_text(options: dict[str, str]) -> str:
    return ",\n".join(f"  {_string(k)} = {_string(v)}" for k, v in sorted(options.items()))


def show_create(obj: CatalogObject, catalog: Catalog | None = None) -> str:
    """SHOW CREATE TABLE / VIEW text (also what a persistent catalog stores). With the
    catalog, a view's or materialized table's query is printed in Flink's expanded form."""
    if isinstance(obj, CatalogView):
        head = f"CREATE {'TEMPORARY ' if obj.temporary else ''}VIEW {quoted(obj.path)} (\n"
        head += ",\n".join(f"  `{f.name}`" for f in obj.fields) + "\n)\n"
        if obj.comment:
            head += f"COMMENT {_string(obj.comment)}\n"
        return (
            head + f"AS {expanded_query(obj.query, catalog)}\n"
            if catalog is not None
            else head + f"AS {query_text(obj.query)}\n"
        )
    if obj.materialized is not None:
        return _show_create_materialized(obj, obj.materialized, catalog)
    lines = _schema_lines(obj)
    # Flink 2.x's ShowCreateUtil: `)` on its own line, then each clause on its own (Flink
    # 1.x printed `) WITH (`).
    text = f"CREATE {'TEMPORARY ' if obj.temporary else ''}TABLE {quoted(obj.path)} (\n" + ",\n".join(lines) + "\n)\n"
    if obj.comment:
        text += f"COMMENT {_string(obj.comment)}\n"
    if obj.distribution is not None:
        text += obj.distribution.sql() + "\n"
    if obj.partitioned_by:
        text += "PARTITIONED BY (" + ", ".join(f"`{p}`" for p in obj.partitioned_by) + ")\n"
    if obj.options:
        text += "WITH (\n" + _options_text(obj.options) + "\n)\n"
    return text


def _schema_lines(obj: CatalogTable) -> list[str]:
    """The column, watermark and primary key lines of SHOW CREATE TABLE."""
    lines = []
    for c in obj.columns:
        d = c.definition
        if c.kind == "computed":
            line = f"  `{c.name}` AS {expr_sql(d.expr) if d.expr is not None else ''}"
        else:
            line = f"  `{c.name}` {serializable_type(c.type)}"
            if c.kind == "metadata":
                line += " METADATA" + (f" FROM {_string(d.metadata_key)}" if d.metadata_key else "")
                line += " VIRTUAL" if d.virtual else ""
        if d.comment:
            line += f" COMMENT {_string(d.comment)}"
        lines.append(line)
    if obj.watermark is not None:
        lines.append(f"  WATERMARK FOR `{obj.watermark.column}` AS {expr_sql(obj.watermark.expr)}")
    if obj.primary_key:
        name = obj.constraint_name or "PK_" + "_".join(obj.primary_key)
        cols = ", ".join(f"`{k}`" for k in obj.primary_key)
        lines.append(f"  CONSTRAINT `{name}` PRIMARY KEY ({cols}) NOT ENFORCED")
    return lines


def _show_create_materialized(obj: CatalogTable, m: MaterializedDefinition, catalog: Catalog | None) -> str:
    """SHOW CREATE MATERIALIZED TABLE (with `catalog`): Flink 2.3 prints the schema
    (columns, watermark, primary key; FLINK-38683), then the enriched freshness and
    refresh mode. The text a persistent catalog stores (no `catalog`) keeps the columns
    only when they were stated or changed beyond the query's (`explicit_schema`), so a
    reloaded table is defined as it was created."""
    text = f"CREATE MATERIALIZED TABLE {quoted(obj.path)}"
    if m.explicit_schema or catalog is not None:
        text += " (\n" + ",\n".join(_schema_lines(obj)) + "\n)\n"
    elif obj.primary_key:
        name = obj.constraint_name or "PK_" + "_".join(obj.primary_key)
        cols = ", ".join(f"`{k}`" for k in obj.primary_key)
        text += f"\n(\n  CONSTRAINT `{name}` PRIMARY KEY ({cols}) NOT ENFORCED\n)\n"
    else:
        text += "\n"
    if obj.comment:
        text += f"COMMENT {_string(obj.comment)}\n"
    if obj.partitioned_by:
        text += "PARTITIONED BY (" + ", ".join(f"`{p}`" for p in obj.partitioned_by) + ")\n"
    if obj.options:
        text += "WITH (\n" + _options_text(obj.options) + "\n)\n"
    text += f"FRESHNESS = {m.freshness.sql()}\nREFRESH_MODE = {m.refresh_mode}\n"
    query = expanded_query(m.query, catalog) if catalog is not None else query_text(m.query)
    return text + f"AS {query}\n"


def query_text(query: exp.Expression) -> str:
    """A stored query as SHOW CREATE prints it (identifiers in backticks)."""
    return query.sql(dialect="flink", identify=True)


def like_pattern(pattern: str, ilike: bool = False) -> re.Pattern[str]:
    """A SQL LIKE pattern (`%`, `_`) as a regular expression (ILIKE: case-insensitive)."""
    rx = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.compile(rx, re.DOTALL | (re.IGNORECASE if ilike else 0))


class Catalog:
    """Flink's CatalogManager: catalogs → databases → tables and views, a current catalog
    and database, and temporary objects (session-scoped) that shadow permanent ones of the
    same path. Identifiers resolve as Flink resolves them: `t` in the current catalog and
    database, `db.t` in the current catalog, `cat.db.t` as written; names are
    case-sensitive. The catalogs themselves are `planner.catalog_store.CatalogStore`s."""

    def __init__(self, builtin_catalog: str = DEFAULT_CATALOG, builtin_database: str = DEFAULT_DATABASE) -> None:
        self.catalogs: dict[str, CatalogStore] = {}
        self._temporary: dict[Path, CatalogObject] = {}
        # Temporary models (CREATE TEMPORARY MODEL), as the JSON values catalogs keep.
        self.temporary_models: dict[Path, dict[str, Any]] = {}
        self.current_catalog = builtin_catalog
        self.current_database = builtin_database
        self.add_catalog(
            InMemoryCatalogStore(builtin_catalog, {"type": "generic_in_memory", "default-database": builtin_database})
        )

    # ------------------------------------------------------------------ catalogs
    def add_catalog(self, store: CatalogStore) -> None:
        loader = getattr(store, "loader", "absent")
        if loader is None:
            store.loader = self._load_object  # type: ignore[attr-defined]
        self.catalogs[store.name] = store

    def catalog(self, name: str, sql: str | None = None) -> CatalogStore:
        store = self.catalogs.get(name)
        if store is None:
            raise SqlValidationError(f"Catalog {name} does not exist", sql=sql, line=1, column=1)
        return store

    @contextmanager
    def in_namespace(self, catalog: str, database: str) -> Iterator[None]:
        """Resolve names against another current catalog/database for a while."""
        old = (self.current_catalog, self.current_database)
        self.current_catalog, self.current_database = catalog, database
        try:
            yield
        finally:
            self.current_catalog, self.current_database = old

    # ------------------------------------------------------------------ lookup
    def qualify(self, name: tuple[str, ...] | list[str] | str, sql: str | None = None) -> Path:
        """`t` → (current catalog, current database, t); `db.t` → (current catalog, db, t)."""
        parts = (name,) if isinstance(name, str) else tuple(name)
        if len(parts) == 1:
            return (self.current_catalog, self.current_database, parts[0])
        if len(parts) == 2:
            return (self.current_catalog, parts[0], parts[1])
        if len(parts) == 3:
            return (parts[0], parts[1], parts[2])
        raise SqlValidationError(
            f"Object identifier can have 1 to 3 parts, got {len(parts)}: {'.'.join(parts)}", sql=sql, line=1, column=1
        )

    def get_path(self, path: Path) -> CatalogObject | None:
        temp = self._temporary.get(path)
        if temp is not None:
            return temp
        store = self.catalogs.get(path[0])
        return store.get(path[1], path[2]) if store is not None else None

    def get(self, name: tuple[str, ...] | str) -> CatalogObject | None:
        return self.get_path(self.qualify(name))

    def lookup(
        self, name: tuple[str, ...] | str, node: exp.Expression | None = None, sql: str | None = None
    ) -> CatalogObject:
        """The table or view, or a validation error ("Object 't' not found", with a hint).
        A catalog's own error reading the object (e.g. the jdbc catalog's unmapped column
        type) points at the name too."""
        try:
            obj = self.get(name)
        except CatalogError as e:
            if e.line is None and node is not None:
                e.line, e.column = node_position(node)
                e.sql = e.sql or sql
            raise
        if obj is not None:
            return obj
        parts = (name,) if isinstance(name, str) else tuple(name)
        shown = f"Object '{parts[-1]}' not found"
        if len(parts) > 1:
            shown += f" within '{'.'.join(parts[:-1])}'"
        err = error(SqlValidationError, shown, node, sql)
        path = self.qualify(parts)
        err.hint = did_you_mean(path[2], self.object_names(path[0], path[1]))
        raise err

    def object_names(self, catalog: str, database: str, kind: str | None = None) -> list[str]:
        """Tables and views (or only `kind`) of a database, temporary ones included, sorted."""
        names: set[str] = set()
        store = self.catalogs.get(catalog)
        if store is not None and store.get_database(database) is not None:
            names |= {n for n, k in store.list_objects(database) if kind is None or k == kind}
        names |= {
            p[2]
            for p, o in self._temporary.items()
            if p[:2] == (catalog, database) and (kind is None or o.kind == kind)
        }
        return sorted(names)

    def list_tables(self) -> list[str]:
        """Names of tables and views of the current database (SHOW TABLES lists both)."""
        return self.object_names(self.current_catalog, self.current_database)

    def list_views(self) -> list[str]:
        return self.object_names(self.current_catalog, self.current_database, "VIEW")

    def temporary_objects(self) -> dict[Path, CatalogObject]:
        return dict(self._temporary)

    # ------------------------------------------------------------------ DDL
    def _database_store(self, path: Path, sql: str | None) -> CatalogStore:
        store = self.catalog(path[0], sql)
        if store.get_database(path[1]) is None:
            raise CatalogError(
                f"Database {path[1]} does not exist in Catalog {path[0]}.",
                "org.apache.flink.table.catalog.exceptions.DatabaseNotExistException",
                sql=sql,
                line=1,
                column=1,
            )
        return store

    def _store(self, path: Path, obj: CatalogObject, temporary: bool, if_not_exists: bool, stmt: Any) -> bool:
        sql = getattr(stmt, "sql", None)
        if temporary:
            self.catalog(path[0], sql)
            if path in self._temporary:
                if if_not_exists:
                    return False
                raise SqlValidationError(f"Temporary table '{quoted(path)}' already exists", sql=sql, line=1, column=1)
            self._temporary[path] = obj
            return True
        store = self._database_store(path, sql)
        if store.get(path[1], path[2]) is not None:
            if if_not_exists:
                return False
            raise CatalogError(
                f"Table (or view) {path[1]}.{path[2]} already exists in Catalog {path[0]}.",
                "org.apache.flink.table.catalog.exceptions.TableAlreadyExistException",
                sql=sql,
                line=1,
                column=1,
            )
        store.put(path[1], path[2], obj, show_create(obj))
        return True

    def _exists_in_target(self, path: Path, temporary: bool) -> bool:
        if temporary:
            return path in self._temporary
        store = self.catalogs.get(path[0])
        return store is not None and store.get_database(path[1]) is not None and store.get(path[1], path[2]) is not None

    def create_table(self, stmt: CreateTable) -> bool:
        """Register a CREATE TABLE. Returns False when IF NOT EXISTS skipped it."""
        path = self.qualify(stmt.name, stmt.sql)
        if stmt.if_not_exists and self._exists_in_target(path, stmt.temporary):
            return False
        table = self.resolve_table(stmt, path)
        return self._store(path, table, stmt.temporary, stmt.if_not_exists, stmt)

    def create_view(self, stmt: CreateView, mode: str = "STREAMING", replace_existing: bool = False) -> bool:
        path = self.qualify(stmt.name, stmt.sql)
        if stmt.if_not_exists and self._exists_in_target(path, stmt.temporary):
            return False
        view = self.resolve_view(stmt, path, mode)
        if replace_existing:
            self._replace(path, view, stmt.temporary)
            return True
        return self._store(path, view, stmt.temporary, stmt.if_not_exists, stmt)

    def resolve_view(self, stmt: CreateView, path: Path, mode: str = "STREAMING") -> CatalogView:
        """Bind a view's query (now, to type it) with its table names qualified, so the view
        means the same whatever the current catalog/database is when it is used."""

        query = self.qualify_query(stmt.query)
        plan = bind_query(query, self, sql=stmt.sql, mode=mode)
        fields = plan.fields
        if stmt.column_names:
            if len(stmt.column_names) != len(fields):
                raise SqlValidationError(
                    "List of column aliases must have same degree as table; the query has "
                    f"{len(fields)} columns, the alias list {len(stmt.column_names)}",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            fields = tuple(Field(n, f.type) for n, f in zip(stmt.column_names, fields, strict=True))
        return CatalogView(path, query, fields, stmt.sql, stmt.column_names, stmt.temporary, stmt.comment)

    def qualify_query(self, query: exp.Expression) -> exp.Expression:
        """A copy of `query` whose catalog table references are fully qualified (CTE names
        and unknown names stay as written: binding reports those)."""
        query = query.copy()
        ctes = {c.alias_or_name for c in query.find_all(exp.CTE)}
        for table in list(query.find_all(exp.Table)):
            if not isinstance(table.this, exp.Identifier):
                continue
            parts = tuple(p for p in (table.catalog, table.db, table.name) if p)
            if len(parts) == 1 and parts[0] in ctes:
                continue
            try:
                path = self.qualify(parts)
            except SqlValidationError:
                continue
            if self.get_path(path) is None:
                continue
            table.set("catalog", exp.to_identifier(path[0], quoted=True))
            table.set("db", exp.to_identifier(path[1], quoted=True))
            table.set("this", exp.to_identifier(path[2], quoted=True))
        return query

    def _replace(self, path: Path, obj: CatalogObject, temporary: bool) -> None:
        if temporary:
            self._temporary[path] = obj
        else:
            self._database_store(path, None).put(path[1], path[2], obj, show_create(obj))

    def drop(self, stmt: Drop) -> bool:
        """DROP [TEMPORARY] TABLE|VIEW [IF EXISTS]. Returns False when nothing was dropped.

        As in Flink, a plain DROP of a permanent object shadowed by a temporary one fails
        (drop the temporary one first); a plain DROP of an object that is only temporary
        drops it."""
        path = self.qualify(stmt.name, stmt.sql)
        is_view = stmt.kind.upper() == "VIEW"
        want = CatalogView if is_view else CatalogTable
        noun = "view" if is_view else "table"
        temp = self._temporary.get(path)
        if stmt.temporary:
            if not isinstance(temp, want):
                if stmt.if_exists:
                    return False
                raise SqlValidationError(
                    f"Temporary {noun} with identifier '{'.'.join(path)}' does not exist.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            del self._temporary[path]
            return True
        store = self.catalogs.get(path[0])
        perm = None
        if store is not None and store.get_database(path[1]) is not None:
            perm = store.get(path[1], path[2])
        if not is_view and isinstance(perm, CatalogTable) and perm.materialized is not None:
            if stmt.if_exists:  # DROP TABLE finds no table there (Flink's gateway answers so too)
                return False
            raise SqlValidationError(
                f"Table with identifier '{'.'.join(path)}' does not exist.",
                sql=stmt.sql,
                line=1,
                column=1,
                hint="It is a materialized table: drop it with DROP MATERIALIZED TABLE.",
            )
        if isinstance(temp, want):
            if isinstance(perm, want):
                raise SqlValidationError(
                    f"Temporary {noun} with identifier '{quoted(path)}' exists. "
                    f"Drop it first before removing the permanent {noun}.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            del self._temporary[path]
            return True
        if not isinstance(perm, want) or store is None:
            if stmt.if_exists:
                return False
            raise SqlValidationError(
                f"{noun.capitalize()} with identifier '{'.'.join(path)}' does not exist.",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        store.remove(path[1], path[2])
        return True

    def rename(self, path: Path, new_path: Path, sql: str | None = None) -> None:
        """ALTER TABLE/VIEW ... RENAME TO: within one catalog, of a permanent object."""
        obj = self.catalogs[path[0]].get(path[1], path[2])
        assert obj is not None
        if new_path[0] != path[0]:
            raise SqlValidationError(
                "The catalog name of the new table name must be the same as the old one", sql=sql, line=1, column=1
            )
        store = self._database_store(new_path, sql)
        if store.get(new_path[1], new_path[2]) is not None:
            raise CatalogError(
                f"Table (or view) {new_path[1]}.{new_path[2]} already exists in Catalog {new_path[0]}.",
                "org.apache.flink.table.catalog.exceptions.TableAlreadyExistException",
                sql=sql,
                line=1,
                column=1,
            )
        moved = replace(obj, path=new_path)
        store.put(new_path[1], new_path[2], moved, show_create(moved))
        store.move_statistics(path[1], path[2], new_path[1], new_path[2])
        store.remove(path[1], path[2])

    def replace_permanent(self, obj: CatalogObject) -> None:
        """Store a changed permanent object under its path (ALTER TABLE / VIEW)."""
        path = obj.path
        self.catalogs[path[0]].put(path[1], path[2], obj, show_create(obj))

    def _load_object(self, ddl: str, kind: str, database: str, name: str) -> CatalogObject:
        """Rebuild an object a persistent catalog stored as DDL."""

        from planner.statements_materialized import CreateMaterializedTable  # start-up (loaded by parsing DDL)

        stmt = parse_statement(ddl)
        path = self.qualify(stmt.name)  # type: ignore[attr-defined]
        if isinstance(stmt, CreateMaterializedTable):
            return self.resolve_materialized_table(stmt, path)
        if isinstance(stmt, CreateTable):
            return self.resolve_table(stmt, path)
        assert isinstance(stmt, CreateView)
        return self.resolve_view(stmt, path)

    # ------------------------------------------------------------------ DESCRIBE
    def describe(self, name: tuple[str, ...] | str) -> list[tuple[Any, ...]]:
        """Rows of Flink's DESCRIBE: (name, type, null, key, extras, watermark[, comment]);
        the comment column only when a column has a comment, as Flink shows it."""
        obj = self.get(name)
        if obj is None:
            raise SqlValidationError(
                f"Tables or views with the identifier '{'.'.join(self.qualify(name))}' doesn't exist."
            )
        if isinstance(obj, CatalogView):
            return [(f.name, type_text(f.type), f.type.nullable, "", "", "") for f in obj.fields]
        pk = obj.primary_key or ()
        rows: list[tuple[Any, ...]] = []
        with_comment = any(c.definition.comment for c in obj.columns)
        for c in obj.columns:
            key = f"PRI({', '.join(pk)})" if c.name in pk else ""
            extras = ""
            d = c.definition
            if c.kind == "computed" and d.expr is not None:
                extras = f"AS {expr_sql(d.expr)}"
            elif c.kind == "metadata":
                extras = (
                    "METADATA"
                    + (f" FROM '{d.metadata_key}'" if d.metadata_key else "")
                    + (" VIRTUAL" if d.virtual else "")
                )
            wm = ""
            if obj.watermark is not None and obj.watermark.column == c.name:
                wm = expr_sql(obj.watermark.expr)
            row: tuple[Any, ...] = (c.name, type_text(c.type), c.type.nullable, key, extras, wm)
            if with_comment:
                row += (d.comment or "",)
            rows.append(row)
        return rows

    # ------------------------------------------------------------------ resolution
    def resolve_table(self, stmt: CreateTable, path: Path | None = None) -> CatalogTable:
        """Merge LIKE, infer computed column types, mark time attributes, validate."""
        columns, watermark, pk, options, partitioned, distribution = self._merge_like(stmt)
        sql = stmt.sql
        seen: set[str] = set()
        for c in columns:
            if c.name in seen:
                raise SqlValidationError(f"A column named '{c.name}' already exists in the table.", sql=sql)
            seen.add(c.name)
        names = [c.name for c in columns]
        for p in partitioned:
            if p not in names:
                raise SqlValidationError(
                    f"Partition column '{p}' not defined in the table schema. Available columns: "
                    f"[{', '.join(repr(n) for n in names)}]",
                    sql=sql,
                    hint=did_you_mean(p, names),
                )
        physical_names = [c.name for c in columns if c.kind == "physical"]
        for k in distribution.keys if distribution is not None else ():
            if k not in physical_names:
                raise SqlValidationError(
                    f"Invalid bucket key '{k}'. A bucket key for a distribution must reference a physical "
                    f"column in the schema. Available columns are: [{', '.join(physical_names)}]",
                    sql=sql,
                    hint=did_you_mean(k, physical_names),
                )
        pk_set = set(pk or ())
        for k in pk or ():
            if k not in seen:
                raise SqlValidationError(
                    f"Could not create a PRIMARY KEY with column '{k}'. Column '{k}' does not exist in the table.",
                    sql=sql,
                )
        physical = [c for c in columns if c.kind in ("physical", "metadata")]
        phys_fields = [Field(c.name, _pk_type(c.type, c.name in pk_set)) for c in physical]  # type: ignore[arg-type]
        phys_scope = Scope.of(phys_fields, None, sql)
        resolved: list[ResolvedColumn] = []
        for c in columns:
            if c.kind == "computed":
                bound = ExprBinder(phys_scope, sql, clause="computed column").bind(c.expr)  # type: ignore[arg-type]
                t = bound.type if bound.type.time_attr == "PROCTIME" else plain(bound.type)
                # Computed columns reference physical columns by their index among physical ones.
                resolved.append(ResolvedColumn(c.name, _pk_type(t, c.name in pk_set), "computed", c, bound))
            else:
                assert c.type is not None
                resolved.append(ResolvedColumn(c.name, _pk_type(c.type, c.name in pk_set), c.kind, c))
        wm_expr = None
        rowtime_index = None
        if watermark is not None:
            names = [c.name for c in resolved]
            if watermark.column not in names:
                err = error(
                    SqlValidationError,
                    f"The rowtime attribute field '{watermark.column}' is not defined in the table schema, "
                    f"at line 1, column 1\nAvailable fields: [{', '.join(f'`{n}`' for n in names)}]",
                    watermark.expr,
                    sql,
                )
                err.hint = did_you_mean(watermark.column, names)
                raise err
            rowtime_index = names.index(watermark.column)
            col = resolved[rowtime_index]
            if col.type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ") or (col.type.precision or 0) > 3:
                raise error(
                    SqlValidationError,
                    "Invalid data type of time field for watermark definition. The field must be of type "
                    "TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but the time "
                    f"field type is {col.type}",
                    watermark.expr,
                    sql,
                )
            if col.type.time_attr == "PROCTIME":
                err = error(
                    SqlValidationError,
                    "A watermark can not be defined for a processing-time attribute.",
                    watermark.expr,
                    sql,
                )
                err.hint = "declare the WATERMARK on a TIMESTAMP(3) / TIMESTAMP_LTZ(3) column of the data"
                err.flink_class = "org.apache.flink.table.api.ValidationException"  # Flink's schema resolver
                raise err
            row_scope = Scope.of([Field(c.name, c.type) for c in resolved], None, sql)
            wm_expr = ExprBinder(row_scope, sql, clause="WATERMARK").bind(watermark.expr)
            if wm_expr.type.name not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
                raise error(
                    SqlValidationError,
                    f"Watermark strategy {expr_sql(watermark.expr)} must be of type TIMESTAMP or TIMESTAMP_LTZ "
                    f"but is of type '{wm_expr.type}'.",
                    watermark.expr,
                    sql,
                )
            resolved[rowtime_index] = replace(col, type=col.type.as_time_attr("ROWTIME"))
        return CatalogTable(
            path=path or self.qualify(stmt.name),
            columns=tuple(resolved),
            options=dict(options),
            watermark=watermark,
            watermark_expr=wm_expr,
            rowtime_index=rowtime_index,
            primary_key=pk,
            temporary=stmt.temporary,
            comment=stmt.comment,
            partitioned_by=partitioned,
            distribution=distribution,
            statement=stmt,
            constraint_name=stmt.constraint_name if stmt.primary_key and pk == stmt.primary_key else None,
        )

    def resolve_materialized_table(
        self,
        stmt: CreateMaterializedTable,
        path: Path,
        freshness: Freshness | None = None,
        refresh_mode: str | None = None,
    ) -> CatalogTable:
        """A materialized table: its columns are the definition query's (an explicit column
        list may reorder them or give types the query's values are cast to), its query is
        stored with fully qualified table names. `freshness` / `refresh_mode`: the resolved
        ones (the statement's, when it states them, e.g. a stored DDL)."""

        freshness = freshness or stmt.freshness
        refresh_mode = refresh_mode or stmt.refresh_mode
        assert freshness is not None and refresh_mode is not None
        sql = stmt.sql
        query = self.qualify_query(stmt.query)
        plan = bind_query(query, self, sql=sql, mode="BATCH" if refresh_mode == "FULL" else "STREAMING")
        fields = [Field(f.name, plain(f.type)) for f in plan.fields]
        names = [f.name for f in fields]
        # Computed and metadata columns (and a watermark) beside the query's columns: the
        # columns keep their declared order; query columns not declared come first.
        extras = [c for c in stmt.columns if c.kind != "physical"]
        physical = [c for c in stmt.columns if c.kind == "physical"]
        explicit = bool(extras) or stmt.watermark is not None or any(c.comment for c in stmt.columns)
        if physical:
            declared = [c.name for c in physical]
            missing = [n for n in declared if n not in names]
            if missing:
                raise SqlValidationError(
                    f"Column '{missing[0]}' of the materialized table is not produced by its query. "
                    f"Available columns: [{', '.join(repr(n) for n in names)}].",
                    sql=sql,
                )
            if all(c.type is None for c in physical):  # names only: their order
                if sorted(declared) != sorted(names):
                    raise SqlValidationError(
                        "The column list of the materialized table must name every column of its query: "
                        f"[{', '.join(repr(n) for n in names)}].",
                        sql=sql,
                    )
                fields = [fields[names.index(n)] for n in declared]
            else:  # with types: the declared types; the declared order when every column is named
                types = {c.name: c.type for c in physical if c.type is not None}
                fields = [Field(f.name, types.get(f.name) or f.type) for f in fields]
                if sorted(declared) == sorted(names):
                    fields = [fields[names.index(n)] for n in declared]
        names = [f.name for f in fields]
        for p in stmt.partitioned_by:
            if p not in names:
                raise SqlValidationError(
                    f"Partition column '{p}' not defined in the query's schema. "
                    f"Available columns: [{', '.join(repr(n) for n in names)}].",
                    sql=sql,
                )
        pk = stmt.primary_key
        constraint = stmt.constraint_name
        for k in pk or ():
            if k not in names:
                raise SqlValidationError(
                    f"Primary key column '{k}' not defined in the query schema. "
                    f"Available columns: [{', '.join(repr(n) for n in names)}].",
                    sql=sql,
                )
            if fields[names.index(k)].type.nullable:
                shown = constraint or "PK_" + "_".join(pk or ())
                raise SqlValidationError(f"Invalid primary key '{shown}'. Column '{k}' is nullable.", sql=sql)
        comments = {c.name: c.comment for c in physical if c.comment}
        columns = [ColumnDef(f.name, "physical", type=f.type, comment=comments.get(f.name)) for f in fields]
        if extras:
            by_name = {c.name: c for c in columns}
            order = [n for n in names if n not in declared] if physical else list(names)
            order += [c.name for c in stmt.columns if c.kind != "physical" or c.name in by_name]
            extra_defs = {c.name: c for c in extras}
            columns = [by_name.get(n) or extra_defs[n] for n in dict.fromkeys(order)]
        table_stmt = CreateTable(
            name=path,
            columns=tuple(columns),
            watermark=stmt.watermark,
            primary_key=pk,
            options=dict(stmt.options),
            comment=stmt.comment,
            partitioned_by=stmt.partitioned_by,
            constraint_name=constraint,
            sql=sql,
        )
        table = self.resolve_table(table_stmt, path)
        return replace(table, materialized=MaterializedDefinition(query, freshness, refresh_mode, explicit))

    def store_object(self, obj: CatalogObject, if_not_exists: bool = False, stmt: Any = None) -> bool:
        """Register a resolved permanent object under its path (False: IF NOT EXISTS skipped)."""
        return self._store(obj.path, obj, False, if_not_exists, stmt)

    def _merge_like(
        self, stmt: CreateTable
    ) -> tuple[
        list[ColumnDef],
        WatermarkDef | None,
        tuple[str, ...] | None,
        dict[str, str],
        tuple[str, ...],
        Distribution | None,
    ]:
        """Flink's CREATE TABLE ... LIKE merging (INCLUDING / EXCLUDING / OVERWRITING)."""
        like: LikeClause | None = stmt.like
        if like is None:
            return (
                list(stmt.columns),
                stmt.watermark,
                stmt.primary_key,
                dict(stmt.options),
                stmt.partitioned_by,
                stmt.distribution,
            )
        src = self.lookup(like.source, None, stmt.sql)
        if not isinstance(src, CatalogTable) or src.statement is None:
            raise SqlValidationError(
                f"Source table '{'.'.join(like.source)}' of the LIKE clause must be a table", sql=stmt.sql
            )
        features = ("CONSTRAINTS", "DISTRIBUTION", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS")
        strategy = {f: "INCLUDING" for f in features}
        strategy["OPTIONS"] = "OVERWRITING"
        for strat, feat in like.options:
            strat, feat = strat.upper(), feat.upper()
            if feat == "ALL":
                for f in features:
                    strategy[f] = strat
            else:
                strategy[feat] = strat
        base = src.statement
        new_names = {c.name for c in stmt.columns}
        columns: list[ColumnDef] = []
        for c in [rc.definition for rc in src.columns]:
            if c.kind == "physical":
                if c.name in new_names:
                    raise SqlValidationError(
                        f"A column named '{c.name}' already exists in the base table.", sql=stmt.sql, line=1, column=1
                    )
                columns.append(c)
                continue
            feat = "GENERATED" if c.kind == "computed" else "METADATA"
            if strategy[feat] == "EXCLUDING":
                continue
            if c.name in new_names:
                if strategy[feat] == "INCLUDING":
                    raise SqlValidationError(
                        f"A column named '{c.name}' already exists in the base table.", sql=stmt.sql, line=1, column=1
                    )
                continue  # OVERWRITING: the new definition wins
            columns.append(c)
        columns += list(stmt.columns)
        watermark = stmt.watermark
        if strategy["WATERMARKS"] != "EXCLUDING" and base.watermark is not None:
            if (
                watermark is not None
                and watermark.column == base.watermark.column
                and strategy["WATERMARKS"] == "INCLUDING"
            ):
                raise SqlValidationError(
                    f"There already exists a watermark spec for column '{watermark.column}' in the base table. You "
                    "might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            if watermark is None:
                watermark = base.watermark
        pk = stmt.primary_key
        if strategy["CONSTRAINTS"] != "EXCLUDING" and base.primary_key:
            if pk:
                raise SqlValidationError(
                    "The base table already has a primary key. You might want to specify EXCLUDING CONSTRAINTS.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            pk = base.primary_key
        options: dict[str, str] = {}
        if strategy["OPTIONS"] != "EXCLUDING":
            options.update(src.options)
        for k, v in stmt.options.items():
            if k in options and strategy["OPTIONS"] == "INCLUDING":
                raise SqlValidationError(
                    f"There already exists an option ['{k}' -> '{options[k]}'] in the base table. You might want "
                    "to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            options[k] = v
        partitioned = stmt.partitioned_by
        if strategy["PARTITIONS"] != "EXCLUDING" and base.partitioned_by:
            if partitioned:
                raise SqlValidationError(
                    "The base table already has partitions defined. You might want to specify EXCLUDING PARTITIONS.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            partitioned = base.partitioned_by
        distribution = stmt.distribution
        if strategy["DISTRIBUTION"] != "EXCLUDING" and src.distribution is not None:
            if distribution is not None:
                raise SqlValidationError(
                    "The base table already has a distribution defined. You might want to specify "
                    "EXCLUDING DISTRIBUTION.",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            distribution = src.distribution
        return columns, watermark, pk, options, partitioned, distribution


def _pk_type(t: DataType, is_pk: bool) -> DataType:
    return t.with_nullable(False) if is_pk else t
