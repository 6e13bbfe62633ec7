"""How results look to a user: the Flink SQL client's tableau form and JSON lines.

Values are rendered by `runtime.render` exactly as the Flink SQL client renders them, so a
result printed here reads the same as Flink's.
"""

from __future__ import annotations

import json
import time
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
    if text.isascii():
        return len(text)
    import unicodedata  # only for text that is not ASCII (~1.3 ms of every start otherwise)

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
    """Prints rows as the Flink SQL client's tableau result mode does: every cell (and
    header) right-aligned, `<NULL>` for nulls.

    - streaming (`streaming=True`): rows print as they come, after an `op` column, so the
      column widths come from names and types (Flink's fixed widths: INT 11, BIGINT 20,
      TIMESTAMP(3) 23, ...; strings and other variable-width types `max_width`), and the
      footer is "Received a total of N rows";
    - batch: the widths come from the data, capped at `max_width` ("N rows in set");
      `max_width=None` never cuts (SHOW / DESCRIBE / EXPLAIN results).
    A cell wider than its column is cut with "..."; numbers never are: their column is
    as wide as their type (streaming) or their widest value (batch)."""

    def __init__(
        self,
        fields: tuple[Field, ...],
        out: TextIO,
        streaming: bool,
        max_width: int | None = 30,
        started: float | None = None,
    ) -> None:
        self.fields = fields
        # time.monotonic() when the query started: the footer then says how long it took
        # (`sql-client.display.print-time-cost`); None: no time.
        self.started = started
        self.out = out
        self.streaming = streaming
        self.max_width = max_width
        self.count = 0
        self.widths: list[int] = []

    def _border(self) -> str:
        return "+" + "+".join("-" * (w + 2) for w in self.widths) + "+"

    def _line(self, cells: list[str]) -> str:
        parts = []
        for cell, w in zip(cells, self.widths, strict=True):
            cell = _fit(cell, w)
            parts.append(" " + " " * (w - display_width(cell)) + cell + " ")
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
        limit = self.max_width if self.max_width is not None else 30
        self.widths = [2] + [max(display_width(f.name), type_width(f, limit)) for f in self.fields]
        header_written = False
        for batch in batches:
            if not header_written:
                self.out.write(self._border() + "\n" + self._line(heads) + "\n" + self._border() + "\n")
                header_written = True
            kinds = row_kinds(batch)
            for kind, row in zip(kinds, render_rows(batch, self.fields, time_zone), strict=True):
                cells = [ROW_KIND_NAMES[kind]] + [NULL_TEXT if v is None else v for v in row]
                self.out.write(self._line(cells) + "\n")
                self.count += 1
            self.out.flush()
        if header_written:
            self.out.write(self._border() + "\n")
            self.out.write(f"Received a total of {self.count} row{'s' if self.count != 1 else ''}{self._cost()}\n")
        else:
            self.out.write(f"Empty set{self._cost()}\n")
        self.out.flush()
        return self.count

    def _cost(self) -> str:
        """` (0.05 seconds)` after the footer when timing (Flink's `%.2f seconds`)."""
        if self.started is None:
            return ""
        return f" ({time.monotonic() - self.started:.2f} seconds)"

    def _print_batch(self, batches: Iterable[pa.RecordBatch], time_zone: str) -> int:
        rows: list[list[str]] = []
        for batch in batches:
            for row in render_rows(batch, self.fields, time_zone):
                rows.append([NULL_TEXT if v is None else v for v in row])
        self.count = len(rows)
        if not rows:
            self.out.write(f"Empty set{self._cost()}\n")
            self.out.flush()
            return 0
        heads = self._headers()
        self.widths = []
        for i, (h, f) in enumerate(zip(heads, self.fields, strict=True)):
            w = max([display_width(h)] + [display_width(r[i]) for r in rows])
            if self.max_width is not None and f.type.name not in _FIXED_WIDTH_TYPES:
                w = min(w, max(self.max_width, display_width(h)))
            self.widths.append(w)
        self.out.write(self._border() + "\n" + self._line(heads) + "\n" + self._border() + "\n")
        for r in rows:
            self.out.write(self._line(r) + "\n")
        self.out.write(self._border() + "\n")
        self.out.write(f"{self.count} row{'s' if self.count != 1 else ''} in set{self._cost()}\n")
        self.out.flush()
        return self.count


# Widths of fixed-width types in streaming tableau results, as Flink's client sizes them:
# the longest value of the type, sign included.
_FIXED_WIDTHS = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}


# Types whose values have a bounded width: never cut (only strings, binaries and nested
# values are cut at the maximum column width).
_FIXED_WIDTH_TYPES = frozenset(
    {*_FIXED_WIDTHS, "FLOAT", "DOUBLE", "DECIMAL", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "INTERVAL_DAY_TIME"}
    | {"INTERVAL_YEAR_MONTH"}
)


def type_width(f: Field, max_width: int) -> int:
    """A streaming column's width from its type (never less than `<NULL>`)."""
    t = f.type
    width = _FIXED_WIDTHS.get(t.name)
    if width is None:
        if t.name == "DECIMAL":
            width = (t.precision or 10) + 2
        elif t.name == "TIME":
            width = 8 if not t.precision else t.precision + 9
        elif t.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            width = 19 if not t.precision else 20 + t.precision
        else:
            width = max_width
    return max(width, len(NULL_TEXT))
