"""How results look to a user: the Flink SQL client's tableau form and JSON lines.

Values are rendered by `runtime.render` exactly as the Flink SQL client renders them, so a
result printed here reads the same as Flink's.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Iterator
from typing import TextIO

import pyarrow as pa

from runtime.batch import ROW_KIND_NAMES, data_columns, row_kinds
from runtime.config.options import key
from runtime.types import Field

NULL_TEXT = "<NULL>"

MAX_COLUMN_WIDTH = (
    key("table.display.max-column-width")
    .int_type()
    .default_value(30)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Widest column the tableau output prints before cutting a value.")
)


def render_rows(batch: pa.RecordBatch, fields: tuple[Field, ...], time_zone: str) -> list[list[str | None]]:
    """Row-major rendered values of a batch's data columns."""
    from runtime.render import render_column

    data = data_columns(batch)
    cols = [render_column(data.column(i), f.type, time_zone) for i, f in enumerate(fields)]
    return [list(r) for r in zip(*cols, strict=True)] if cols else [[] for _ in range(batch.num_rows)]


def jsonl_lines(batches: Iterable[pa.RecordBatch], fields: tuple[Field, ...], time_zone: str) -> Iterator[str]:
    """`{"op": "+I", "row": [...]}` per changelog row, values as the SQL client renders them."""
    for batch in batches:
        kinds = row_kinds(batch)
        for kind, row in zip(kinds, render_rows(batch, fields, time_zone), strict=True):
            yield json.dumps({"op": ROW_KIND_NAMES[kind], "row": row}, ensure_ascii=False)


def display_width(text: str) -> int:
    """Terminal columns a string takes (East Asian wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _fit(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    out, used = "", 0
    for ch in text:
        w = display_width(ch)
        if used + w > width - 3:
            break
        out += ch
        used += w
    return out + "..."


class TableauPrinter:
    """Prints rows as boxed columns. Streaming mode prints rows as they come, with an `op`
    column, so column widths come from names and types; batch mode sizes columns to the data."""

    def __init__(self, fields: tuple[Field, ...], out: TextIO, streaming: bool, max_width: int = 30) -> None:
        self.fields = fields
        self.out = out
        self.streaming = streaming
        self.max_width = max_width
        self.count = 0
        self.widths: list[int] = []

    def _border(self) -> str:
        return "+" + "+".join("-" * (w + 2) for w in self.widths) + "+"

    def _line(self, cells: list[str], right: list[bool]) -> str:
        parts = []
        for cell, w, r in zip(cells, self.widths, right, strict=True):
            cell = _fit(cell, w)
            pad = " " * (w - display_width(cell))
            parts.append(" " + (pad + cell if r else cell + pad) + " ")
        return "|" + "|".join(parts) + "|"

    def _headers(self) -> list[str]:
        names = [f.name for f in self.fields]
        return (["op"] if self.streaming else []) + names

    def print_all(self, batches: Iterable[pa.RecordBatch], time_zone: str) -> int:
        if self.streaming:
            return self._print_streaming(batches, time_zone)
        return self._print_batch(batches, time_zone)

    def _print_streaming(self, batches: Iterable[pa.RecordBatch], time_zone: str) -> int:
        heads = self._headers()
        self.widths = [2] + [min(max(len(f.name), _type_width(f)), self.max_width) for f in self.fields]
        right = [False] + [True] * len(self.fields)
        header_written = False
        for batch in batches:
            if not header_written:
                self.out.write(self._border() + "\n" + self._line(heads, right) + "\n" + self._border() + "\n")
                header_written = True
            kinds = row_kinds(batch)
            for kind, row in zip(kinds, render_rows(batch, self.fields, time_zone), strict=True):
                cells = [ROW_KIND_NAMES[kind]] + [NULL_TEXT if v is None else v for v in row]
                self.out.write(self._line(cells, right) + "\n")
                self.count += 1
            self.out.flush()
        if header_written:
            self.out.write(self._border() + "\n")
            self.out.write(f"Received a total of {self.count} row{'s' if self.count != 1 else ''}\n")
        else:
            self.out.write("Empty set\n")
        return self.count

    def _print_batch(self, batches: Iterable[pa.RecordBatch], time_zone: str) -> int:
        rows: list[list[str]] = []
        for batch in batches:
            for row in render_rows(batch, self.fields, time_zone):
                rows.append([NULL_TEXT if v is None else v for v in row])
        self.count = len(rows)
        if not rows:
            self.out.write("Empty set\n")
            return 0
        heads = self._headers()
        self.widths = [
            min(max([display_width(h)] + [display_width(r[i]) for r in rows]), self.max_width)
            for i, h in enumerate(heads)
        ]
        right = [f.type.is_numeric for f in self.fields]
        self.out.write(self._border() + "\n" + self._line(heads, [False] * len(heads)) + "\n" + self._border() + "\n")
        for r in rows:
            self.out.write(self._line(r, right) + "\n")
        self.out.write(self._border() + "\n")
        self.out.write(f"{self.count} row{'s' if self.count != 1 else ''} in set\n")
        return self.count


def _type_width(f: Field) -> int:
    t = f.type
    if t.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return 19 + (1 + (t.precision or 0) if t.precision else 0)
    if t.name == "DATE":
        return 10
    if t.name == "BOOLEAN":
        return 6
    if t.name in ("INT", "BIGINT", "DECIMAL", "DOUBLE", "FLOAT", "SMALLINT", "TINYINT"):
        return 11
    return 12
