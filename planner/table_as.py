"""CREATE TABLE ... AS query (CTAS) and [CREATE OR] REPLACE TABLE ... AS query (RTAS): the
new table's columns from the statement's declared part and the query's schema.

Why in the planner: it is schema resolution, as Flink's planner does it (MergeTableAsUtil),
and its errors are validation errors of the statement. The session (streamsql/environment.py)
then creates the table and runs the INSERT that fills it.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.binder.types import plain
from planner.errors import SqlValidationError
from planner.statements import ColumnDef, CreateTable
from runtime.types import Field

__all__ = ["merge_table_as"]


def merge_table_as(stmt: CreateTable, fields: Sequence[Field]) -> tuple[ColumnDef, ...]:
    """The table's columns, as Flink's MergeTableAsUtil merges the two parts: columns declared
    only in the CREATE part come first (in their order), then the query's columns in the
    query's order (a declared type overrides the query's; the value is cast on insert). A
    list of names alone reorders the query's columns. A primary key on a query column needs
    the query to produce it NOT NULL."""
    names = [f.name for f in fields]
    query_columns = [ColumnDef(f.name, "physical", type=plain(f.type)) for f in fields]
    declared = {c.name: c for c in stmt.columns}
    if stmt.columns and all(c.kind == "physical" and c.type is None for c in stmt.columns):
        if len(stmt.columns) != len(names):
            raise _error(
                stmt,
                "The number of columns in the column list must match the number of columns in the source "
                f"schema. Expected {len(names)} but got {len(stmt.columns)}.",
            )
        for c in stmt.columns:
            if c.name not in names:
                raise _error(
                    stmt,
                    f"Column '{c.name}' not found in the source schema.",
                    hint=f"the query's columns: {', '.join(names)}",
                )
        columns = [query_columns[names.index(c.name)] for c in stmt.columns]
    else:
        for c in stmt.columns:
            if c.name in names and c.kind != "physical":
                raise _error(
                    stmt,
                    f"A column named '{c.name}' already exists in the source schema. Computed and metadata "
                    "columns cannot overwrite columns from the source schema.",
                )
        columns = [c for c in stmt.columns if c.name not in names] + [declared.get(c.name) or c for c in query_columns]
    # The CREATE part cannot declare NOT NULL for a query column, so the query must produce it
    # (Flink's schema resolution refuses a nullable primary key column).
    types = {f.name: f.type for f in fields}
    for k in stmt.primary_key or ():
        if k in types and k not in declared and types[k].nullable:
            shown = stmt.constraint_name or "PK_" + "_".join(stmt.primary_key or ())
            raise _error(
                stmt,
                f"Invalid primary key '{shown}'. Column '{k}' is nullable.",
                hint=f"the query must produce '{k}' as NOT NULL, e.g. COALESCE({k}, ...) AS {k}",
            )
    return tuple(columns)


def _error(stmt: CreateTable, message: str, hint: str | None = None) -> SqlValidationError:
    return SqlValidationError(message, sql=stmt.sql, line=1, column=1, hint=hint)
