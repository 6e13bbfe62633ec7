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

from runtime.errors import EvaluationError, JobError

NOT_NULL_ENFORCER = "table.exec.sink.not-null-enforcer"
TYPE_LENGTH_ENFORCER = "table.exec.sink.type-length-enforcer"
NOT_NULL_ACTIONS = ("ERROR", "DROP")
TYPE_LENGTH_ACTIONS = ("IGNORE", "TRIM_PAD")


def _choice(config: Mapping[str, str] | None, key: str, values: tuple[str, ...]) -> str:
    raw = (config or {}).get(key)
    if raw is None or not str(raw).strip():
        return values[0]
    v = str(raw).strip().upper()
    if v not in values:
        raise JobError(f"Could not parse value '{raw}' for key '{key}' (expected one of {', '.join(values)})")
    return v


def not_null_action(config: Mapping[str, str] | None) -> str:
    """ERROR or DROP (the configured `table.exec.sink.not-null-enforcer`)."""
    return _choice(config, NOT_NULL_ENFORCER, NOT_NULL_ACTIONS)


def type_length_action(config: Mapping[str, str] | None) -> str:
    """IGNORE or TRIM_PAD (the configured `table.exec.sink.type-length-enforcer`)."""
    return _choice(config, TYPE_LENGTH_ENFORCER, TYPE_LENGTH_ACTIONS)


def not_null_violation(column: str) -> EvaluationError:
    """Flink's EnforcerException for a NULL written into a NOT NULL column."""
    return EvaluationError(
        f"Column '{column}' is NOT NULL, however, a null value is being written into it. "
        f"You can set job configuration '{NOT_NULL_ENFORCER}'='DROP' to suppress this exception "
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
