"""`TableResult.print()` as PyFlink prints it (Flink's TableauStyle with column widths taken
from the types), which differs from the SQL client's layout in `streamsql.printing`:

- every column's width comes from its type (INT 11, BIGINT 20, DECIMAL(p, s) p + 2, BOOLEAN
  5, DATE 10, TIME(p) 8 or p + 9, TIMESTAMP(p) 19 / 23 / 26 / 29, others the maximum column
  width `table.display.max-column-width`, 30), at least its name's and `<NULL>`'s width;
- every cell is right-aligned; a longer value is cut to the width with `...` at its end;
- STREAMING results have a leading `op` column with the row kind;
- the table ends with `N rows in set` (`1 row in set`), and no rows print `Empty set`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

import pyarrow as pa

from runtime.batch import ROW_KIND_NAMES, row_kinds
from runtime.types import DataType, Field
from streamsql.printing import NULL_TEXT, display_width, render_rows

MAX_COLUMN_WIDTH = 30


def _type_width(t: DataType, max_width: int) -> int:
    n, p = t.name, t.precision or 0
    fixed = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "BOOLEAN": 5, "DATE": 10}
    if n in fixed:
        return fixed[n]
    if n == "DECIMAL":
        return p + 2
    if n == "TIME":
        return 8 if p == 0 else p + 9
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return 19 if p == 0 else 23 if p <= 3 else 26 if p <= 6 else 29
    return max_width


def column_widths(fields: tuple[Field, ...], streaming: bool, max_width: int = MAX_COLUMN_WIDTH) -> list[int]:
    widths = [max(len(f.name), _type_width(f.type, max_width), len(NULL_TEXT)) for f in fields]
    return ([len("op")] if streaming else []) + widths


def _cut(cell: str, width: int) -> str:
    """A cell right-aligned to `width`; longer values keep their start and end in `...`."""
    w = display_width(cell)
    if w <= width:
        return " " * (width - w) + cell
    target, used, out = width - 3, 0, ""
    for ch in cell:
        cw = display_width(ch)
        if used + cw > target:
            break
        out += ch
        used += cw
    return " " * (target - used) + out + "..."


def print_tableau(
    fields: tuple[Field, ...],
    batches: Iterable[pa.RecordBatch],
    out: TextIO,
    *,
    streaming: bool,
    time_zone: str,
    max_width: int = MAX_COLUMN_WIDTH,
) -> int:
    """Print rows as they arrive (the widths need no look-ahead); returns the row count."""
    widths = column_widths(fields, streaming, max_width)
    border = "+" + "".join("-" * (w + 2) + "+" for w in widths)

    def line(cells: list[str]) -> str:
        return "|" + "".join(f" {_cut(c, w)} |" for c, w in zip(cells, widths, strict=True))

    count = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if count == 0:
            names = (["op"] if streaming else []) + [f.name for f in fields]
            out.write(f"{border}\n{line(names)}\n{border}\n")
        kinds = row_kinds(batch)
        for kind, row in zip(kinds, render_rows(batch, fields, time_zone), strict=True):
            cells = [NULL_TEXT if v is None else v for v in row]
            out.write(line(([ROW_KIND_NAMES[kind]] if streaming else []) + cells) + "\n")
            count += 1
        out.flush()
    if count == 0:
        out.write("Empty set\n")
    else:
        out.write(f"{border}\n{count} {'rows' if count > 1 else 'row'} in set\n")
    out.flush()
    return count
