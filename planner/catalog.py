"""The in-memory catalog: tables (from CREATE TABLE, with LIKE merging) and views.

A table is resolved when it is created: computed column types are inferred, the
WATERMARK column becomes a rowtime attribute, PROCTIME() columns proctime attributes,
primary key columns NOT NULL. Temporary objects shadow permanent ones of the same path;
both live in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from planner.binder.expressions import ExprBinder
from planner.binder.scope import Scope, error
from planner.binder.types import plain
from planner.errors import SqlValidationError, UnsupportedSqlError, did_you_mean
from planner.logical import TableInfo
from planner.statements import ColumnDef, CreateTable, CreateView, Drop, LikeClause, WatermarkDef
from runtime.expr.ir import Expr
from runtime.types import DataType, Field

DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"
Path = tuple[str, str, str]


def full_path(name: tuple[str, ...] | list[str] | str) -> Path:
    """`t` → (default_catalog, default_database, t); `db.t` and `cat.db.t` likewise."""
    parts = (name,) if isinstance(name, str) else tuple(name)
    if len(parts) == 1:
        return (DEFAULT_CATALOG, DEFAULT_DATABASE, parts[0])
    if len(parts) == 2:
        return (DEFAULT_CATALOG, parts[0], parts[1])
    return (parts[-3], parts[-2], parts[-1])


def expr_sql(node: exp.Expression) -> str:
    """An expression as Flink's DESCRIBE shows it (identifiers in backticks)."""
    return node.sql(dialect="spark", identify=True)


@dataclass(frozen=True)
class ResolvedColumn:
    name: str
    type: DataType
    kind: str  # physical | computed | metadata
    definition: ColumnDef
    # Computed columns: the expression bound over the physical columns.
    expr: Expr | None = None


@dataclass(frozen=True)
class CatalogTable:
    path: Path
    columns: tuple[ResolvedColumn, ...]
    options: dict[str, str] = field(hash=False, compare=False)
    watermark: WatermarkDef | None = None
    # The watermark expression bound over the full row (all columns), and the rowtime column.
    watermark_expr: Expr | None = None
    rowtime_index: int | None = None
    primary_key: tuple[str, ...] | None = None
    temporary: bool = False
    comment: str | None = None
    partitioned_by: tuple[str, ...] = ()
    statement: CreateTable | None = field(default=None, hash=False, compare=False)

    kind = "TABLE"

    @property
    def fields(self) -> tuple[Field, ...]:
        """All columns in declared order (what a query over the table sees)."""
        return tuple(Field(c.name, c.type) for c in self.columns)

    @property
    def physical_fields(self) -> tuple[Field, ...]:
        return tuple(Field(c.name, plain(c.type)) for c in self.columns if c.kind == "physical")

    @property
    def persisted_fields(self) -> tuple[Field, ...]:
        """Columns an INSERT writes: physical (and non-virtual metadata) columns."""
        return tuple(
            Field(c.name, plain(c.type))
            for c in self.columns
            if c.kind == "physical" or (c.kind == "metadata" and not c.definition.virtual)
        )

    @property
    def connector(self) -> str:
        return self.options.get("connector", "")

    def table_info(self) -> TableInfo:
        return TableInfo(
            self.path,
            self.connector,
            tuple(sorted(self.options.items())),
            self.physical_fields,
            tuple(self.primary_key or ()),
            tuple(self.partitioned_by),
        )


@dataclass(frozen=True)
class CatalogView:
    path: Path
    query: exp.Expression
    fields: tuple[Field, ...]
    sql: str = ""
    column_names: tuple[str, ...] | None = None
    temporary: bool = False

    kind = "VIEW"


CatalogObject = CatalogTable | CatalogView


class Catalog:
    """Tables and views by full path; temporary objects shadow permanent ones."""

    def __init__(self) -> None:
        self._permanent: dict[Path, CatalogObject] = {}
        self._temporary: dict[Path, CatalogObject] = {}

    # ------------------------------------------------------------------ lookup
    def get(self, name: tuple[str, ...] | str) -> CatalogObject | None:
        p = full_path(name)
        return self._temporary.get(p) or self._permanent.get(p)

    def lookup(
        self, name: tuple[str, ...] | str, node: exp.Expression | None = None, sql: str | None = None
    ) -> CatalogObject:
        """The table or view, or a validation error ("Object 't' not found", with a hint)."""
        obj = self.get(name)
        if obj is not None:
            return obj
        shown = ".".join(name) if not isinstance(name, str) else name
        err = error(SqlValidationError, f"Object '{shown}' not found", node, sql)
        err.hint = did_you_mean(full_path(name)[2], [p[2] for p in self._all_paths()])
        raise err

    def _all_paths(self) -> list[Path]:
        return sorted(set(self._permanent) | set(self._temporary))

    def list_tables(self) -> list[str]:
        """Names of tables and views (as Flink's SHOW TABLES lists both)."""
        return sorted({p[2] for p in self._all_paths()})

    def list_views(self) -> list[str]:
        return sorted({p[2] for p, o in {**self._permanent, **self._temporary}.items() if isinstance(o, CatalogView)})

    # ------------------------------------------------------------------ DDL
    def _store(self, path: Path, obj: CatalogObject, temporary: bool, if_not_exists: bool, stmt: Any) -> bool:
        target = self._temporary if temporary else self._permanent
        if path in target:
            if if_not_exists:
                return False
            what = "Temporary table" if temporary else "Table"
            if isinstance(obj, CatalogView):
                what = "Temporary view" if temporary else "View"
            raise SqlValidationError(
                f"{what} '{'.'.join(path)}' already exists", sql=getattr(stmt, "sql", None), line=1, column=1
            )
        target[path] = obj
        return True

    def create_table(self, stmt: CreateTable) -> bool:
        """Register a CREATE TABLE. Returns False when IF NOT EXISTS skipped it."""
        path = full_path(stmt.name)
        target = self._temporary if stmt.temporary else self._permanent
        if path in target and stmt.if_not_exists:
            return False
        table = self.resolve_table(stmt, path)
        return self._store(path, table, stmt.temporary, stmt.if_not_exists, stmt)

    def create_view(self, stmt: CreateView, mode: str = "STREAMING") -> bool:
        path = full_path(stmt.name)
        target = self._temporary if stmt.temporary else self._permanent
        if path in target and stmt.if_not_exists:
            return False
        from planner.binder import bind_query  # local: the binder looks views up here

        plan = bind_query(stmt.query, self, sql=stmt.sql, mode=mode)
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
        view = CatalogView(path, stmt.query, fields, stmt.sql, stmt.column_names, stmt.temporary)
        return self._store(path, view, stmt.temporary, stmt.if_not_exists, stmt)

    def drop(self, stmt: Drop) -> bool:
        """DROP [TEMPORARY] TABLE|VIEW [IF EXISTS]. Returns False when nothing was dropped."""
        path = full_path(stmt.name)
        target = self._temporary if stmt.temporary else self._permanent
        obj = target.get(path)
        if obj is None and not stmt.temporary:
            # Flink drops a temporary object with plain DROP TABLE too.
            obj = self._temporary.get(path)
            target = self._temporary if obj is not None else target
        want = CatalogView if stmt.kind.upper() == "VIEW" else CatalogTable
        if obj is None or not isinstance(obj, want):
            if stmt.if_exists:
                return False
            noun = "View" if want is CatalogView else "Table"
            if stmt.temporary:
                noun = "Temporary " + noun.lower()
            raise SqlValidationError(
                f"{noun} with identifier '{'.'.join(path)}' does not exist.", sql=stmt.sql, line=1, column=1
            )
        del target[path]
        return True

    # ------------------------------------------------------------------ DESCRIBE
    def describe(self, name: tuple[str, ...] | str) -> list[tuple[str, str, bool, str | None, str | None, str | None]]:
        """Rows of Flink's DESCRIBE: (name, type, null, key, extras, watermark)."""
        obj = self.lookup(name)
        if isinstance(obj, CatalogView):
            return [(f.name, str(f.type.with_nullable(True)), f.type.nullable, None, None, None) for f in obj.fields]
        pk = obj.primary_key or ()
        rows = []
        for c in obj.columns:
            key = f"PRI({', '.join(pk)})" if c.name in pk else None
            extras = None
            d = c.definition
            if c.kind == "computed" and d.expr is not None:
                extras = f"AS {expr_sql(d.expr)}"
            elif c.kind == "metadata":
                extras = (
                    "METADATA"
                    + (f" FROM '{d.metadata_key}'" if d.metadata_key else "")
                    + (" VIRTUAL" if d.virtual else "")
                )
            wm = None
            if obj.watermark is not None and obj.watermark.column == c.name:
                wm = expr_sql(obj.watermark.expr)
            rows.append((c.name, str(c.type.with_nullable(True)), c.type.nullable, key, extras, wm))
        return rows

    # ------------------------------------------------------------------ resolution
    def resolve_table(self, stmt: CreateTable, path: Path | None = None) -> CatalogTable:
        """Merge LIKE, infer computed column types, mark time attributes, validate."""
        columns, watermark, pk, options, partitioned = self._merge_like(stmt)
        sql = stmt.sql
        seen: set[str] = set()
        for c in columns:
            if c.name in seen:
                raise SqlValidationError(f"A column named '{c.name}' already exists in the table.", sql=sql)
            seen.add(c.name)
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
            path=path or full_path(stmt.name),
            columns=tuple(resolved),
            options=dict(options),
            watermark=watermark,
            watermark_expr=wm_expr,
            rowtime_index=rowtime_index,
            primary_key=pk,
            temporary=stmt.temporary,
            comment=stmt.comment,
            partitioned_by=partitioned,
            statement=stmt,
        )

    def _merge_like(
        self, stmt: CreateTable
    ) -> tuple[list[ColumnDef], WatermarkDef | None, tuple[str, ...] | None, dict[str, str], tuple[str, ...]]:
        """Flink's CREATE TABLE ... LIKE merging (INCLUDING / EXCLUDING / OVERWRITING)."""
        like: LikeClause | None = stmt.like
        if like is None:
            return list(stmt.columns), stmt.watermark, stmt.primary_key, dict(stmt.options), stmt.partitioned_by
        src = self.lookup(like.source, None, stmt.sql)
        if not isinstance(src, CatalogTable) or src.statement is None:
            raise SqlValidationError(
                f"Source table '{'.'.join(like.source)}' of the LIKE clause must be a table", sql=stmt.sql
            )
        features = ("CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS")
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
        return columns, watermark, pk, options, partitioned


def _pk_type(t: DataType, is_pk: bool) -> DataType:
    return t.with_nullable(False) if is_pk else t


def check_scannable(table: CatalogTable, node: exp.Expression | None, sql: str | None) -> None:
    """Metadata columns need connector support that does not exist yet."""
    if any(c.kind == "metadata" for c in table.columns):
        raise error(UnsupportedSqlError, "Metadata columns are not supported yet", node, sql)
