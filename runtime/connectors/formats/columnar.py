"""What the readers and writers of columnar files (Parquet, ORC) share. Reading: the file yields Arrow batches (a
row group or stripe at a time), `read` cuts them to the batch size the source asks for, and
each column is cast to the table's declared type (a column the file lacks reads as NULL).
The offset a checkpoint records is the number of rows read; each format seeks to it its own
way (row-group or stripe metadata). Writing: MAP columns go out in their external layout
(`external_columns`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.formats import FileReader
from runtime.errors import DataError
from runtime.map_values import has_map, to_external
from runtime.types import Field


class ColumnarFileReader(FileReader):
    """A format's reader sets `format_name` and implements `_next` (and `seek`); `_stored`
    adapts a column as stored before the cast (Parquet's instants in a time zone)."""

    format_name = ""

    def __init__(self, path: str, fields: tuple[Field, ...], projection: list[int] | None) -> None:
        self.path = path
        self.fields = [fields[i] for i in (range(len(fields)) if projection is None else projection)]
        self.schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.fields])
        self._rows = 0
        self._pending: pa.RecordBatch | None = None
        self.skipped_rows = 0

    def _next(self) -> pa.RecordBatch | None:
        """The file's next batch as stored, None at its end."""
        raise NotImplementedError

    def _stored(self, column: pa.Array) -> pa.Array:
        return column

    def _cast(self, raw: pa.RecordBatch) -> pa.RecordBatch:
        arrays = []
        for f in self.fields:
            target = f.type.to_arrow()
            idx = raw.schema.get_field_index(f.name)
            if idx < 0:
                arrays.append(pa.nulls(raw.num_rows, target))
                continue
            col = self._stored(raw.column(idx))
            try:
                arrays.append(col if col.type == target else pc.cast(col, target))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise DataError(
                    f"Cannot read {self.format_name} column '{f.name}' of type {col.type} as {f.type}: {e}", self.path
                ) from None
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        while self._pending is None or self._pending.num_rows == 0:
            self._pending = self._next()
            if self._pending is None:
                return None
        head = self._pending.slice(0, max_rows)
        self._pending = self._pending.slice(head.num_rows)
        self._rows += head.num_rows
        return self._cast(head)

    def offset(self) -> Any:
        return {"rows": self._rows}


def external_columns(batch: pa.RecordBatch, fields: Sequence[Field], where: str) -> list[pa.Array]:
    """The batch's first `len(fields)` columns as a columnar file stores them: a column
    holding a MAP in its external layout (`where` names the file in a conversion error)."""
    return [
        to_external(c, f.type, f"{where}, column '{f.name}'") if has_map(f.type) else c
        for c, f in zip(batch.columns[: len(fields)], fields, strict=True)
    ]
