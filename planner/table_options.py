"""A catalog table's `WITH` options checked when a query reads or writes the table (as
Flink checks them: `CREATE TABLE` only records them). The check itself is the runtime's
(runtime/connectors/validation.py, from the connector's and format's declarations); here
its error gets the position of the offending option in the `CREATE TABLE` statement."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from planner.errors import SqlValidationError
from runtime.connectors.validation import ConnectorOptionError, validate_table_options

if TYPE_CHECKING:
    from planner.catalog_objects import CatalogTable


def check_table_options(table: CatalogTable, sink: bool = False) -> None:
    """Raise a positioned SqlValidationError when the table's options are wrong."""
    try:
        validate_table_options(table.options, table.description(sink))
    except ConnectorOptionError as e:
        raise _positioned(e, table, sink) from None


def _positioned(e: ConnectorOptionError, table: CatalogTable, sink: bool) -> SqlValidationError:
    stmt = table.statement
    sql = stmt.sql if stmt is not None else None
    line = column = None
    if sql and e.option is not None:
        at = option_offset(sql, e.option, e.on_value)
        if at is not None:
            line = sql.count("\n", 0, at) + 1
            column = at - (sql.rfind("\n", 0, at) + 1) + 1
    return SqlValidationError(
        f"Unable to create a {'sink for writing' if sink else 'source for reading'} table "
        f"'{'.'.join(table.path)}'.\n\n{e.message}",
        sql if line is not None else None,
        line,
        column,
        hint=e.hint,
        statement_line=stmt.line if stmt is not None and line is not None else None,
    )


def option_offset(sql: str, option: str, on_value: bool = False) -> int | None:
    """Offset of `'option'` (or of its value) in a WITH clause, or None."""
    quoted = "'" + option.replace("'", "''") + "'"
    # The last one: a repeated option is overridden by the later one.
    found = list(re.finditer(re.escape(quoted) + r"\s*=\s*", sql))
    if not found:
        return None
    return found[-1].end() if on_value else found[-1].start()
