"""ALTER TABLE and ALTER VIEW: a changed definition, resolved again and stored in place.

Every form rebuilds the table's CREATE TABLE (columns, watermark, primary key, options),
applies the change, and resolves the result as a new CREATE TABLE would be resolved, so
an ALTER can never leave a table that CREATE TABLE would have refused. Messages follow
Flink's ("Failed to execute ALTER TABLE statement.\\n..."; ALTER MATERIALIZED TABLE's schema
changes go through `changed_definition` too, with their own prefix).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from planner.binder.types import plain
from planner.catalog import Catalog
from planner.catalog_objects import CatalogTable, CatalogView, Path, quoted
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.statements import ColumnDef, CreateTable, CreateView, WatermarkDef
from planner.statements_catalog import AlterTable, AlterView


def _fail(stmt: AlterTable, message: str) -> SqlValidationError:
    return SqlValidationError(
        f"Failed to execute ALTER {stmt.target} statement.\n" + message, sql=stmt.sql, line=1, column=1
    )


def _permanent(catalog: Catalog, name: tuple[str, ...], sql: str, kind: type) -> tuple[Path, object | None]:
    path = catalog.qualify(name, sql)
    store = catalog.catalogs.get(path[0])
    if store is None or store.get_database(path[1]) is None:
        return path, None
    obj = store.get(path[1], path[2])
    return path, obj if isinstance(obj, kind) else None


def alter_table(catalog: Catalog, stmt: AlterTable) -> bool:
    """Apply one ALTER TABLE. False when IF EXISTS found no table."""
    path, found = _permanent(catalog, stmt.name, stmt.sql, CatalogTable)
    if found is None:
        if stmt.if_exists:
            return False
        raise SqlValidationError(
            f"Table {quoted(path)} doesn't exist or is a temporary table.", sql=stmt.sql, line=1, column=1
        )
    table: CatalogTable = found  # type: ignore[assignment]
    if stmt.action in ("ADD_PARTITION", "DROP_PARTITION"):
        _refuse_partition_change(table, stmt)
    if stmt.action == "RENAME":
        assert stmt.new_name is not None
        catalog.rename(path, catalog.qualify(stmt.new_name, stmt.sql), stmt.sql)
        return True
    catalog.replace_permanent(catalog.resolve_table(changed_definition(table, stmt), path))
    return True


def _refuse_partition_change(table: CatalogTable, stmt: AlterTable) -> None:
    """ALTER TABLE ... ADD / DROP PARTITION: Flink's catalogs keep partitions as metadata
    (Hive's mostly); streamsql's keep none. A filesystem table's partitions are its
    `k=v/` directories, made by the rows an INSERT writes (SHOW PARTITIONS lists them)."""
    what = "ADD" if stmt.action == "ADD_PARTITION" else "DROP"
    if not table.partitioned_by:
        raise SqlValidationError(f"Table {quoted(table.path)} is not partitioned.", sql=stmt.sql, line=1, column=1)
    for spec in stmt.partitions:
        for k, _ in spec:
            if k not in table.partitioned_by:
                raise SqlValidationError(
                    f"Partition column '{k}' is not a partition key of the table "
                    f"(PARTITIONED BY ({', '.join(table.partitioned_by)})).",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
    hint = (
        "a partition appears when an INSERT writes rows into it (INSERT INTO t PARTITION (k = 'v') ...)"
        if what == "ADD"
        else "remove a partition's rows with DELETE FROM t WHERE k = 'v', or replace them with "
        "INSERT OVERWRITE t PARTITION (k = 'v') ... (batch mode)"
    )
    raise UnsupportedSqlError(
        f"ALTER TABLE ... {what} PARTITION is not supported: streamsql's catalogs keep no partition metadata; "
        f"the partitions of table {quoted(table.path)} are the ones its connector stores (SHOW PARTITIONS).",
        sql=stmt.sql,
        line=1,
        column=1,
        hint=hint,
    )


def changed_definition(table: CatalogTable, stmt: AlterTable) -> CreateTable:
    """The table's CREATE TABLE with one ALTER TABLE change applied (not yet resolved)."""
    path = table.path
    columns = [_definition(c.definition, c.type, c.kind) for c in table.columns]
    watermark = table.watermark
    pk = table.primary_key
    constraint = table.constraint_name
    options = dict(table.options)
    distribution = table.distribution
    action = stmt.action
    if action == "ADD_DISTRIBUTION":
        if distribution is not None:
            raise _fail(
                stmt,
                f"The base table has already defined the distribution `{distribution.sql()}`. "
                "You can modify it or drop it before adding a new one.",
            )
        distribution = stmt.distribution
    elif action == "MODIFY_DISTRIBUTION":
        if distribution is None:
            raise _fail(stmt, "The base table does not define any distribution. You might want to add a new one.")
        distribution = stmt.distribution
    elif action == "DROP_DISTRIBUTION":
        if distribution is None:
            raise _fail(stmt, "The base table does not define any distribution.")
        distribution = None
    elif action == "SET":
        options.update(stmt.options)
    elif action == "RESET":
        if not stmt.keys:
            raise SqlValidationError("ALTER TABLE RESET does not support empty key", sql=stmt.sql, line=1, column=1)
        for k in stmt.keys:
            options.pop(k, None)
    elif action == "RENAME_COLUMN":
        if stmt.old_column in table.partitioned_by:
            raise _fail(stmt, f"The column `{stmt.old_column}` is used as the partition keys.")
        columns, watermark, pk = _rename_column(stmt, columns, watermark, pk)
    elif action in ("ADD", "MODIFY"):
        columns = _add_or_modify(stmt, columns)
        if stmt.watermark is not None:
            if action == "ADD" and watermark is not None:
                raise _fail(
                    stmt,
                    f"The base table has already defined the watermark strategy `{watermark.column}` AS "
                    f"{watermark.expr.sql(dialect='flink')}. You might want to drop it before adding a new one.",
                )
            if action == "MODIFY" and watermark is None:
                raise _fail(stmt, "The base table does not define any watermark. You might want to add a new one.")
            watermark = stmt.watermark
        if stmt.primary_key is not None:
            if action == "ADD" and pk:
                raise _fail(
                    stmt,
                    f"The base table has already defined the primary key constraint "
                    f"[`{constraint or 'PK_' + '_'.join(pk)}`]. You might want to drop it before adding a new one.",
                )
            if action == "MODIFY" and not pk:
                raise _fail(
                    stmt, "The base table does not define any primary key constraint. You might want to add a new one."
                )
            pk, constraint = stmt.primary_key, stmt.constraint_name
    elif action == "DROP_COLUMNS":
        for name in stmt.keys:
            if name in table.partitioned_by:
                raise _fail(stmt, f"The column `{name}` is used as the partition keys.")
        columns = _drop_columns(stmt, columns, watermark, pk)
    elif action == "DROP_PK":
        if not pk:
            raise _fail(stmt, "The base table does not define any primary key.")
        if stmt.constraint_name and stmt.constraint_name != (constraint or "PK_" + "_".join(pk)):
            raise _fail(
                stmt, f"The base table does not define a primary key constraint named '{stmt.constraint_name}'."
            )
        pk, constraint = None, None
    elif action == "DROP_WATERMARK":
        if watermark is None:
            raise _fail(stmt, "The base table does not define any watermark strategy.")
        watermark = None
    return CreateTable(
        name=path,
        columns=tuple(columns),
        watermark=watermark,
        primary_key=pk,
        options=options,
        comment=table.comment,
        partitioned_by=table.partitioned_by,
        constraint_name=constraint,
        distribution=distribution,
        sql=stmt.sql,
    )


def _definition(d: ColumnDef, resolved_type: object, kind: str) -> ColumnDef:
    """A column's definition with its resolved type (primary key columns are NOT NULL)."""
    if kind == "computed":
        return d
    return replace(d, type=plain(resolved_type))  # type: ignore[arg-type]


def _names(columns: list[ColumnDef]) -> list[str]:
    return [c.name for c in columns]


def _add_or_modify(stmt: AlterTable, columns: list[ColumnDef]) -> list[ColumnDef]:
    columns = list(columns)
    for item in stmt.columns:
        col = item.column
        names = _names(columns)
        if stmt.action == "ADD":
            if col.name in names:
                raise _fail(stmt, f"Try to add a column `{col.name}` which already exists in the table.")
        elif col.name not in names:
            raise _fail(stmt, f"Try to modify a column `{col.name}` which does not exist in the table.")
        if item.position == "AFTER" and item.after not in names:
            raise _fail(stmt, f"Referenced column `{item.after}` by 'AFTER' does not exist in the table.")
        if stmt.action == "MODIFY":
            index = names.index(col.name)
            if item.position is None:
                columns[index] = col
                continue
            del columns[index]
            names = _names(columns)
        if item.position == "FIRST":
            columns.insert(0, col)
        elif item.position == "AFTER":
            columns.insert(names.index(item.after) + 1, col)  # type: ignore[arg-type]
        else:
            columns.append(col)
    return columns


def _references(node: exp.Expression | None, name: str) -> bool:
    return node is not None and any(c.name == name for c in node.find_all(exp.Column))


def _drop_columns(
    stmt: AlterTable, columns: list[ColumnDef], watermark: WatermarkDef | None, pk: tuple[str, ...] | None
) -> list[ColumnDef]:
    names = _names(columns)
    for name in stmt.keys:
        if name not in names:
            raise _fail(stmt, f"The column `{name}` does not exist in the base table.")
        if pk and name in pk:
            raise _fail(stmt, f"The column `{name}` is used as the primary key.")
        if watermark is not None and (watermark.column == name or _references(watermark.expr, name)):
            raise _fail(stmt, f"The column `{name}` is referenced by watermark expression.")
        for c in columns:
            if c.kind == "computed" and c.name not in stmt.keys and _references(c.expr, name):
                raise _fail(stmt, f"The column `{name}` is referenced by computed column `{c.name}`.")
    return [c for c in columns if c.name not in stmt.keys]


def _rename_column(
    stmt: AlterTable, columns: list[ColumnDef], watermark: WatermarkDef | None, pk: tuple[str, ...] | None
) -> tuple[list[ColumnDef], WatermarkDef | None, tuple[str, ...] | None]:
    old, new = stmt.old_column, stmt.new_column
    assert old is not None and new is not None
    names = _names(columns)
    if old not in names:
        raise _fail(stmt, f"The column `{old}` does not exist in the base table.")
    if new in names:
        raise _fail(stmt, f"The column `{new}` already existed in table schema.")

    def rename(node: exp.Expression | None) -> exp.Expression | None:
        if node is None:
            return None
        return node.copy().transform(
            lambda n: exp.column(new, quoted=True) if isinstance(n, exp.Column) and n.name == old else n
        )

    out = []
    for c in columns:
        c = replace(c, name=new) if c.name == old else c
        if c.kind == "computed":
            c = replace(c, expr=rename(c.expr))
        out.append(c)
    if watermark is not None:
        expr = rename(watermark.expr)
        assert expr is not None
        watermark = WatermarkDef(new if watermark.column == old else watermark.column, expr)
    if pk:
        pk = tuple(new if k == old else k for k in pk)
    return out, watermark, pk


def alter_view(catalog: Catalog, stmt: AlterView, mode: str = "STREAMING") -> None:
    """ALTER VIEW v RENAME TO v2 | AS query (permanent views, as in Flink)."""
    path, found = _permanent(catalog, stmt.name, stmt.sql, CatalogView)
    if found is None:
        raise SqlValidationError(
            f"View {quoted(path)} doesn't exist or is a temporary view.", sql=stmt.sql, line=1, column=1
        )
    view: CatalogView = found  # type: ignore[assignment]
    if stmt.new_name is not None:
        catalog.rename(path, catalog.qualify(stmt.new_name, stmt.sql), stmt.sql)
        return
    assert stmt.query is not None
    create = CreateView(name=path, query=stmt.query, comment=view.comment, sql=stmt.sql)
    catalog.replace_permanent(catalog.resolve_view(create, path, mode))
