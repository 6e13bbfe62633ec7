"""Flink's sink constraint enforcers: what happens when a value does not fit its sink column.

- `table.exec.sink.not-null-enforcer` (ERROR default, or DROP): a NULL reaching a column
  declared NOT NULL fails the job naming the column, or drops the row. It applies to every
  sink, the query-result (collect) sink included: Flink checks the declared result type, so
  a function that returns NULL where its type says NOT NULL fails the query there.
- `table.exec.sink.type-length-enforcer` (IGNORE default, or TRIM_PAD): a CHAR/VARCHAR/
  BINARY/VARBINARY value longer (or, for CHAR/BINARY, shorter) than its column is written
  as is, or cut and padded to the declared length.

The planner reads the settings when it binds an INSERT (`planner.binder`); the session
applies the not-null rule to a query's result batches (`streamsql.environment`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from runtime.config.options import key
from runtime.errors import EvaluationError

NOT_NULL_ENFORCER = (
    key("table.exec.sink.not-null-enforcer")
    .enum_type("ERROR", "DROP")
    .default_value("ERROR")
    .with_description(
        "A NULL written into a column declared NOT NULL (of an INSERT's sink, or of a query's result "
        "type): ERROR fails the job naming the column; DROP drops the row silently."
    )
)
TYPE_LENGTH_ENFORCER = (
    key("table.exec.sink.type-length-enforcer")
    .enum_type("IGNORE", "TRIM_PAD")
    .default_value("IGNORE")
    .with_description(
        "A CHAR/VARCHAR/BINARY/VARBINARY value whose length differs from its sink column's: IGNORE "
        "writes it as is; TRIM_PAD cuts it to the declared length and pads CHAR/BINARY up to it."
    )
)


def not_null_action(config: Mapping[str, str] | None) -> str:
    """ERROR or DROP (the configured `table.exec.sink.not-null-enforcer`)."""
    return NOT_NULL_ENFORCER.get(config)


def type_length_action(config: Mapping[str, str] | None) -> str:
    """IGNORE or TRIM_PAD (the configured `table.exec.sink.type-length-enforcer`)."""
    return TYPE_LENGTH_ENFORCER.get(config)


def not_null_violation(column: str) -> EvaluationError:
    """Flink's EnforcerException for a NULL written into a NOT NULL column."""
    return EvaluationError(
        f"Column '{column}' is NOT NULL, however, a null value is being written into it. "
        f"You can set job configuration '{NOT_NULL_ENFORCER.key}'='DROP' to suppress this exception "
        "and drop such records silently."
    )


def enforce_not_null(batch: pa.RecordBatch, columns: Mapping[int, str], action: str) -> pa.RecordBatch:
    """`batch` with its NOT NULL `columns` (batch column index → column name) checked:
    ERROR raises on the first column holding a NULL, DROP keeps only the rows without one."""
    bad: pa.Array | None = None
    for index, shown in columns.items():
        col = batch.column(index)
        if col.null_count == 0:
            continue
        if action == "ERROR":
            raise not_null_violation(shown)
        nulls = pc.is_null(col)
        bad = nulls if bad is None else pc.or_(bad, nulls)
    if bad is None:
        return batch
    return batch.filter(pc.invert(bad))
