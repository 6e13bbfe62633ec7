"""sqlglot `exp.DataType` → `DataType` for the binder, with a positioned error.

`planner.dialect.types.to_data_type` is the one conversion; this wrapper only turns its
`UnknownTypeError` into a `SqlValidationError` at the type (or at `at`, the expression the
type belongs to, when the type node carries no position), as Calcite reports an unknown
type name: "Unknown identifier 'NOSUCHTYPE'".
"""

from __future__ import annotations

from sqlglot import exp

from planner.binder.scope import error, node_position
from planner.dialect.types import UnknownTypeError
from planner.dialect.types import to_data_type as _convert
from planner.errors import SqlValidationError
from runtime.types import DataType


def to_data_type(dt: exp.DataType, at: exp.Expression | None = None, sql: str | None = None) -> DataType:
    """The Flink type a parsed type stands for; an unknown or malformed type is a
    SqlValidationError located at the type name."""
    try:
        return _convert(dt)
    except UnknownTypeError as e:
        if node_position(dt)[0] is None and at is not None and sql is not None:
            line, col = _find_type_name(dt, at, sql)
            if line is not None:
                raise SqlValidationError(str(e), sql=sql, line=line, column=col) from None
        where: exp.Expression | None = dt if node_position(dt)[0] is not None else at
        raise error(SqlValidationError, str(e), where, sql) from None


def _find_type_name(dt: exp.DataType, at: exp.Expression, sql: str) -> tuple[int | None, int | None]:
    """Where the type's name is written: its first occurrence at or after `at` (sqlglot
    keeps no position on type nodes)."""
    line, col = node_position(at)
    if line is None or col is None:
        return None, None
    name = str(dt.args.get("kind") or dt.this.name if hasattr(dt.this, "name") else dt.this).split("(")[0]
    lines = sql.split("\n")
    start = sum(len(x) + 1 for x in lines[: line - 1]) + col - 1
    found = sql.upper().find(name.upper(), start)
    if found < 0:
        return None, None
    before = sql[:found]
    return before.count("\n") + 1, found - (before.rfind("\n") + 1) + 1
