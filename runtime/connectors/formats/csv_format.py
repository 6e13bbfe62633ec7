"""The 'csv' format: Flink's CSV (Jackson CsvMapper) semantics over pyarrow.csv.

Reading: pyarrow parses the file (quotes, doubled quotes, escapes, quoted newlines) with
every column as a string; `convert.convert_strings` then types whole columns with Java's
parsing rules. `csv.null-literal` maps that exact text (quoted or not) to NULL; without it
no field is NULL, so an empty numeric field fails the job (naming file and line), an
empty BOOLEAN is FALSE and an empty STRING ''. With `csv.ignore-parse-errors` a field that
does not parse becomes NULL (as in Flink) and a malformed row is skipped and counted.

NULL and empty fields: Flink writes NULL as the null literal, '' when none is set, and
reads '' back as text: Jackson hands an empty field to the INT converter, whose
`Integer.parseInt("")` fails. So a NULL INT written without 'csv.null-literal' cannot be
read back, in Flink as here; `'csv.null-literal' = ''` makes every empty field NULL (the
read error says so).

Writing follows Jackson's CsvGenerator: strings (and DATE/TIME/TIMESTAMP/BINARY/DECIMAL
text) are quoted by its "loose" check, other numbers and booleans never; DECIMAL is written plain at the
column's scale unless 'csv.write-bigdecimal-in-scientific-notation' is set to 'true'
(Flink's factory reads that option with `getOptional`, so its declared default 'true'
never takes effect: only an explicit 'true' writes `stripTrailingZeros().toString()`).

Offsets are `{"records": n}`: the number of CSV records already consumed from the file.
"""

from __future__ import annotations

import csv as pycsv
import io
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from runtime.connectors.base import ConfigOption, SourceContext
from runtime.connectors.formats import (
    FileFormat,
    FileReader,
    FileWriter,
    MessageDecoder,
    MessageEncoder,
    opt_bool,
    opt_char,
    register_format,
)
from runtime.connectors.formats.convert import CSV, convert_strings, first_bad
from runtime.connectors.formats.text import format_text_column
from runtime.errors import ConnectorError, DataError
from runtime.types import DataType, Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "csv.field-delimiter",
        default=",",
        description="Field delimiter character (a single character; Java escapes such as '\\t' are allowed).",
    ),
    ConfigOption("csv.quote-character", default='"', description="Quote character enclosing field values."),
    ConfigOption(
        "csv.disable-quote-character",
        type="boolean",
        default="false",
        description="Disable the quote character: fields are never quoted.",
    ),
    ConfigOption("csv.allow-comments", type="boolean", default="false", description="Skip lines that start with '#'."),
    ConfigOption(
        "csv.ignore-parse-errors",
        type="boolean",
        default="false",
        description=(
            "Instead of failing, read a field that cannot be parsed as NULL and skip malformed rows "
            "(wrong field count, or bytes that are not UTF-8); skipped rows are counted."
        ),
    ),
    ConfigOption(
        "csv.array-element-delimiter", default=";", description="Delimiter between the elements of an ARRAY field."
    ),
    ConfigOption(
        "csv.escape-character", description="Escape character for quoting inside fields (disabled by default)."
    ),
    ConfigOption(
        "csv.null-literal",
        description=(
            "Text read as (and written for) NULL, e.g. '' or 'NULL'. Without it no field is NULL: NULL is "
            "written as an empty field, which reads back as '' for strings, FALSE for BOOLEAN and fails for "
            "numbers and dates (as in Flink); set it to '' to read empty fields as NULL."
        ),
    ),
    ConfigOption(
        "csv.write-bigdecimal-in-scientific-notation",
        type="boolean",
        default="true",
        description=(
            "Set to 'true', DECIMAL values are written as Java's `BigDecimal.stripTrailingZeros().toString()` "
            "(100000.00 as '1E+5', 1.50 as '1.5'). Unset or 'false': plain notation at the column's scale "
            "('100000.00'); Flink's factory only honours an explicitly set value, so the declared default "
            "'true' does not apply when the option is absent, here as in Flink."
        ),
    ),
)


# Arrow's CSV block size; a block must hold the longest record, so it grows (x4) on a
# record longer than that, up to _MAX_BLOCK_SIZE.
_BLOCK_SIZE = 1 << 22
_MAX_BLOCK_SIZE = 1 << 30


class CsvDialect:
    """The parse settings shared by the Arrow reader, the writer and the line locator."""

    def __init__(self, options: dict[str, str]) -> None:
        self.delimiter = opt_char(options, "csv.field-delimiter", ",") or ","
        self.quote: str | None = opt_char(options, "csv.quote-character", '"')
        if opt_bool(options, "csv.disable-quote-character"):
            self.quote = None
        self.escape = opt_char(options, "csv.escape-character", None)
        self.comments = opt_bool(options, "csv.allow-comments")
        self.ignore_errors = opt_bool(options, "csv.ignore-parse-errors")
        self.array_delimiter = options.get("csv.array-element-delimiter", ";")
        self.null_literal = options.get("csv.null-literal")
        # only an explicit 'true' (Flink reads the option with getOptional)
        self.scientific_decimals = opt_bool(options, "csv.write-bigdecimal-in-scientific-notation")


def _strip_comment_lines(data: bytes) -> bytes:
    """Drop lines starting with '#' (Jackson's allow-comments), vectorized over the bytes."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if len(buf) == 0:
        return data
    newline = buf == 10
    line_id = np.concatenate(([0], np.cumsum(newline)[:-1]))
    starts = np.concatenate(([0], np.flatnonzero(newline) + 1))
    starts = starts[starts < len(buf)]
    is_comment = np.zeros(int(line_id[-1]) + 1, dtype=bool)
    is_comment[line_id[starts]] = buf[starts] == ord("#")
    return buf[~is_comment[line_id]].tobytes()


class CsvFileReader(FileReader):
    def __init__(
        self,
        path: str,
        fields: tuple[Field, ...],
        projection: list[int] | None,
        options: dict[str, str],
        ctx: SourceContext,
    ) -> None:
        self.path = path
        self.fields = fields
        self.projection = list(range(len(fields))) if projection is None else list(projection)
        self.dialect = CsvDialect(options)
        for i in self.projection:
            _check_supported(fields[i])
        self.skipped_rows = 0
        self._records = 0  # valid records consumed (what `offset` reports)
        self._pending: list[pa.RecordBatch] = []
        self._invalid: list[tuple[int | None, int]] = []  # (record number, actual columns) of the first bad row
        self._invalid_text = False  # a malformed row was not UTF-8 either (`_quiet_invalid_row_text`)
        self._short_row = False  # a row with too few fields under 'csv.ignore-parse-errors'
        self._text_skipped = 0  # rows skipped as not UTF-8 (of `skipped_rows`)
        self._fallback: Iterator[pa.RecordBatch] | None = None  # `_python_batches`, once Arrow cannot go on
        self._reader: Any = None
        self._done = False
        self._block_size = _BLOCK_SIZE
        self._raw_rows = 0  # rows the Arrow reader returned since it was opened
        self._open()

    # ------------------------------------------------------------------ arrow reader
    def _open(self) -> None:
        d = self.dialect
        self._fallback = None
        self._invalid_text = False
        self._short_row = False
        names = [f"f{i}" for i in range(len(self.fields))]
        read_opts = pacsv.ReadOptions(column_names=names, use_threads=False, block_size=self._block_size)
        parse_opts = pacsv.ParseOptions(
            delimiter=d.delimiter,
            quote_char=d.quote if d.quote is not None else False,
            double_quote=d.quote is not None,
            escape_char=d.escape if d.escape is not None else False,
            newlines_in_values=True,
            ignore_empty_lines=True,
            invalid_row_handler=self._on_invalid_row,
        )
        nulls = [d.null_literal] if d.null_literal is not None else []
        convert_opts = pacsv.ConvertOptions(
            # bytes first: text is checked to be UTF-8 per row (`_text_columns`), so an
            # invalid byte is a parse error of its row, as in Flink, not of the whole block
            column_types={n: pa.binary() for n in names},
            include_columns=[names[i] for i in self.projection],
            null_values=nulls,
            strings_can_be_null=d.null_literal is not None,
            quoted_strings_can_be_null=d.null_literal is not None,
        )
        source: Any = self.path
        if d.comments:
            source = pa.BufferReader(self._source_bytes())
        try:
            self._reader = pacsv.open_csv(
                source, read_options=read_opts, parse_options=parse_opts, convert_options=convert_opts
            )
        except StopIteration:  # pragma: no cover - empty input
            self._reader = None
        except pa.ArrowInvalid as e:
            self._reader = None
            if "Empty CSV file" not in str(e):
                self._raise_invalid(e)

    def _source_bytes(self) -> bytes:
        """The file's bytes as the parser sees them (comment lines dropped when allowed)."""
        with open(self.path, "rb") as f:
            data = f.read()
        return _strip_comment_lines(data) if self.dialect.comments else data

    def _on_invalid_row(self, row: Any) -> str:
        if self.dialect.ignore_errors:
            if row.actual_columns < len(self.fields):
                # Flink reads a short row's missing fields as NULL: Arrow cannot pad a row, so
                # the rest of the file is read by `_python_batches`
                self._short_row = True
                return "error"
            self.skipped_rows += 1
            return "skip"
        self._invalid.append((row.number, row.actual_columns))
        return "error"

    def _raise_invalid(self, error: Exception) -> None:
        """Fail the read for a malformed row, naming the file and line; with
        `csv.ignore-parse-errors`, a malformed row that is not UTF-8 either (Arrow cannot
        hand it to `_on_invalid_row`), or a row with too few fields (to be padded with NULLs),
        switches to `_python_batches` instead."""
        if (self._invalid_text or self._short_row) and self.dialect.ignore_errors:
            self._fallback = self._python_batches(self._raw_rows)
            return
        if self._invalid_text:
            raise DataError(
                "Failed to deserialize CSV row: a row with the wrong number of fields holds bytes that are not UTF-8",
                self.path,
            ) from None
        if self._invalid:
            number, actual = self._invalid[0]
            line = self._line_of_record(number - 1) if number is not None else None
            raise DataError(
                f"Failed to deserialize CSV row: Row length mismatch. {len(self.fields)} fields expected but was "
                f"{actual} (fields split at 'csv.field-delimiter' = {_option_literal(self.dialect.delimiter)}; "
                "with 'csv.ignore-parse-errors' = 'true' a longer row is skipped and a shorter one's missing "
                "fields are NULL).",
                self.path,
                line,
            ) from None
        raise DataError(f"Failed to deserialize CSV: {error}", self.path) from None

    def _next_raw(self) -> pa.RecordBatch | None:
        if self._fallback is not None:
            batch = next(self._fallback, None)
        elif self._reader is None:
            return None
        else:
            try:
                batch = self._reader.read_next_batch()
            except StopIteration:
                return None
            except pa.ArrowInvalid as e:
                if "straddl" in str(e) and self._block_size < _MAX_BLOCK_SIZE:
                    return self._reopen_with_larger_blocks()
                self._reader = None
                self._raise_invalid(e)
                return self._next_raw()  # `_raise_invalid` switched to the fallback
        if batch is not None:
            self._raw_rows += batch.num_rows
        return batch

    def _python_batches(self, skip: int) -> Iterator[pa.RecordBatch]:
        """What the Arrow reader would have returned after its first `skip` rows, parsed
        with Python's csv module: the rows as byte columns (`_text_columns` then skips those
        that are not UTF-8), a row with too few fields padded with NULLs, a row with too many
        skipped and counted. Only used with `csv.ignore-parse-errors` once a row with too few
        fields, or one both malformed and not UTF-8, stopped Arrow (an error path: per-row
        Python is acceptable)."""
        d = self.dialect
        text = self._source_bytes().decode("utf-8", "surrogateescape")  # bytes kept as they are
        self.skipped_rows = self._text_skipped  # malformed rows are recounted from the start
        width = len(self.fields)
        names = [f"f{i}" for i in self.projection]
        columns: list[list[bytes | None]] = [[] for _ in self.projection]
        for row in pycsv.reader(io.StringIO(text, newline=""), **_python_csv_args(d)):
            if not row or row == [""]:
                continue  # a blank line: Arrow ignores it too
            if len(row) > width:
                self.skipped_rows += 1
                continue
            # Flink: a short row's missing fields are NULL ('csv.ignore-parse-errors')
            values: list[str | None] = [*row, *([None] * (width - len(row)))]
            if skip:
                skip -= 1
                continue
            for out, i in zip(columns, self.projection, strict=True):
                value = values[i]
                out.append(
                    None if value is None or value == d.null_literal else value.encode("utf-8", "surrogateescape")
                )
            if len(columns[0]) >= _FALLBACK_BATCH_ROWS:
                yield pa.RecordBatch.from_arrays([pa.array(c, pa.binary()) for c in columns], names=names)
                columns = [[] for _ in self.projection]
        if columns and columns[0]:
            yield pa.RecordBatch.from_arrays([pa.array(c, pa.binary()) for c in columns], names=names)

    def _reopen_with_larger_blocks(self) -> pa.RecordBatch | None:
        """A field longer than Arrow's block (a CSV value of many MB): read again with a
        block four times as large, past the rows already returned (Flink reads fields of
        any length)."""
        done, skipped = self._raw_rows, self.skipped_rows
        self._block_size *= 4
        self._open()
        self._raw_rows = 0
        skip = done
        while True:
            raw = self._next_raw()
            if raw is None or raw.num_rows > skip:
                # rows skipped as invalid before the reopen are counted again while skipping
                self.skipped_rows = max(self.skipped_rows, skipped)
                return None if raw is None else raw.slice(skip)
            skip -= raw.num_rows

    # ------------------------------------------------------------------ reading
    def read(self, max_rows: int) -> pa.RecordBatch | None:
        if self._done:
            return None
        pieces: list[pa.RecordBatch] = []
        have = 0
        while have < max_rows:
            if not self._pending:
                raw = self._next_raw()
                if raw is None:
                    break
                if raw.num_rows:
                    self._pending.append(raw)
                continue
            head = self._pending[0]
            take = min(max_rows - have, head.num_rows)
            pieces.append(head.slice(0, take))
            if take == head.num_rows:
                self._pending.pop(0)
            else:
                self._pending[0] = head.slice(take)
            have += take
        if not pieces:
            self._done = True
            return None
        raw = pa.Table.from_batches(pieces).combine_chunks().to_batches()[0] if len(pieces) > 1 else pieces[0]
        text = self._text_columns(raw)
        batch = self._convert(text)
        self._records += raw.num_rows
        return batch

    def _text_columns(self, raw: pa.RecordBatch) -> pa.RecordBatch:
        """The raw byte columns as strings. A row holding bytes that are not UTF-8 is a
        parse error, as Flink's CSV reader (Jackson) fails on them: the job fails naming the
        file and line, or, with `csv.ignore-parse-errors`, the row is skipped and counted."""
        try:
            return pa.RecordBatch.from_arrays([c.cast(pa.string()) for c in raw.columns], names=raw.schema.names)
        except pa.ArrowInvalid:
            pass
        bad = np.zeros(raw.num_rows, dtype=bool)
        reason = ""
        for col in raw.columns:  # error path only: find the rows that are not UTF-8
            for i, value in enumerate(col.to_pylist()):
                if value is None or bad[i]:
                    continue
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError as e:
                    bad[i] = True
                    reason = reason or _utf8_reason(e)
        if not self.dialect.ignore_errors:
            row = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"Failed to deserialize CSV row: {reason} (the file is not UTF-8 text; "
                "'csv.ignore-parse-errors' = 'true' skips such rows)",
                self.path,
                self._line_of_record(self._records + row),
            )
        self.skipped_rows += int(bad.sum())
        self._text_skipped += int(bad.sum())
        kept = raw.filter(pa.array(~bad))
        return pa.RecordBatch.from_arrays([c.cast(pa.string()) for c in kept.columns], names=kept.schema.names)

    def _convert(self, raw: pa.RecordBatch) -> pa.RecordBatch:
        arrays = []
        for pos, i in enumerate(self.projection):
            field = self.fields[i]
            col = raw.column(pos)
            values, bad = self._convert_column(col, field.type)
            row = first_bad(bad)
            if row is not None and not self.dialect.ignore_errors:
                text = col[row].as_py()
                raise DataError(
                    f"Failed to deserialize CSV row: cannot read field '{field.name}' of type {field.type} "
                    f"from {_java_quote(text)}: {_java_reason(field.type, text)}{_empty_hint(text, self.dialect)}",
                    self.path,
                    self._line_of_record(self._records + row),
                )
            arrays.append(values)
        schema = pa.schema([pa.field(self.fields[i].name, self.fields[i].type.to_arrow()) for i in self.projection])
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _convert_column(self, col: pa.Array, dtype: DataType) -> tuple[pa.Array, np.ndarray]:
        return convert_csv_column(col, dtype, self.dialect)

    # ------------------------------------------------------------------ positions
    def offset(self) -> Any:
        return {"records": self._records}

    def seek(self, offset: Any) -> None:
        target = int(offset.get("records", 0)) if isinstance(offset, dict) else int(offset)
        self.close()
        self._records = 0
        self._pending = []
        self._done = False
        self.skipped_rows = self._text_skipped = 0
        self._raw_rows = 0
        self._open()
        skip = target
        while skip > 0:
            raw = self._next_raw()
            if raw is None:
                break
            if raw.num_rows > skip:
                self._pending.append(raw.slice(skip))
                skip = 0
            else:
                skip -= raw.num_rows
        self._records = target

    def close(self) -> None:
        self._reader = None

    def _line_of_record(self, record: int) -> int | None:
        """Physical line (1-based) where CSV record number `record` (0-based, blank and
        comment lines not counted) starts. Only used to report errors, so it re-reads the
        file with Python's csv module."""
        d = self.dialect
        with open(self.path, encoding="utf-8", errors="replace", newline="") as f:
            reader = pycsv.reader(f, **_python_csv_args(d))
            count = 0
            start = 1
            for row in reader:
                line = start
                start = reader.line_num + 1
                if not row or (len(row) == 1 and row[0] == ""):
                    continue
                if d.comments and row[0].startswith("#"):
                    continue
                if count == record:
                    return line
                count += 1
        return None


_FALLBACK_BATCH_ROWS = 65_536


def _python_csv_args(d: CsvDialect) -> dict[str, Any]:
    """Python csv module settings that parse as the Arrow reader does with `d`."""
    kwargs: dict[str, Any] = {"delimiter": d.delimiter, "strict": False}
    if d.quote is None:
        kwargs["quoting"] = pycsv.QUOTE_NONE
    else:
        kwargs["quotechar"] = d.quote
        kwargs["doublequote"] = True
    if d.escape is not None:
        kwargs["escapechar"] = d.escape
    return kwargs


def _quiet_invalid_row_text(unraisable: Any) -> None:
    """Arrow decodes a malformed row's text as UTF-8 before it calls the invalid-row handler;
    when that fails it reports the exception as "unraisable" (a traceback on stderr) and
    fails the read. Such a row is a parse error of the file (`_raise_invalid`), not a
    traceback: this hook marks the reader and keeps quiet; every other report goes on."""
    target = getattr(unraisable.object, "__self__", None)
    if isinstance(target, CsvFileReader) and isinstance(unraisable.exc_value, UnicodeDecodeError):
        target._invalid_text = True  # noqa: SLF001 - the reader's own flag, set for it
        return
    _PREVIOUS_UNRAISABLE_HOOK(unraisable)


_PREVIOUS_UNRAISABLE_HOOK = sys.unraisablehook
sys.unraisablehook = _quiet_invalid_row_text


def _utf8_reason(e: UnicodeDecodeError) -> str:
    """Jackson's words for an invalid UTF-8 sequence (what Flink's CSV reader reports)."""
    if e.reason == "invalid start byte":
        return f"Invalid UTF-8 start byte 0x{e.object[e.start]:02X}"
    if e.reason == "invalid continuation byte" and e.end < len(e.object):
        return f"Invalid UTF-8 middle byte 0x{e.object[e.end]:02X}"
    return "Unexpected end of input in a UTF-8 sequence"


def convert_csv_column(col: pa.Array, dtype: DataType, dialect: CsvDialect) -> tuple[pa.Array, np.ndarray]:
    """A column of field texts → values of `dtype` and the mask of fields that did not parse."""
    if dtype.name == "ROW":
        return _convert_row(col, dtype, dialect)
    if dtype.name not in ("ARRAY", "MULTISET"):
        return convert_strings(col, dtype, CSV)
    # ARRAY: elements split by the array delimiter, each converted like a field.
    parts = pc.split_pattern(col, dialect.array_delimiter)
    flat = pc.list_flatten(parts)
    elem_type = dtype.children[0]
    if dialect.null_literal is not None:
        flat = pc.if_else(pc.equal(flat, dialect.null_literal), pa.nulls(len(flat), pa.string()), flat)
    values, bad_elems = convert_strings(flat, elem_type, CSV)
    bad = np.zeros(len(col), dtype=bool)
    if bad_elems.any():
        parent = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
        bad[parent[bad_elems]] = True
    offsets = parts.offsets
    out = pa.ListArray.from_arrays(offsets, values, type=dtype.to_arrow(), mask=parts.is_null())
    return out, bad


def _convert_row(col: pa.Array, dtype: DataType, dialect: CsvDialect) -> tuple[pa.Array, np.ndarray]:
    """A ROW field: its fields' texts separated by 'csv.array-element-delimiter', converted by
    position as top-level fields are. A field with another number of parts than the ROW has
    fields does not parse (Flink's "Row length mismatch")."""
    parts = pc.split_pattern(col, dialect.array_delimiter)
    arity = len(dtype.children)
    lengths = np.asarray(pc.fill_null(pc.list_value_length(parts), 0).to_numpy(zero_copy_only=False), np.int64)
    present = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), bool)
    bad = present & (lengths != arity)
    flat = pc.list_flatten(parts)
    starts = np.asarray(parts.offsets.to_numpy(zero_copy_only=False), np.int64)[:-1]
    children = []
    for i, child in enumerate(dtype.children):
        has = lengths > i
        texts = flat.take(pa.array(np.where(has, starts + i, 0))) if len(flat) else pa.nulls(len(col), pa.string())
        texts = pc.if_else(pa.array(has), texts, pa.nulls(len(col), pa.string()))
        if dialect.null_literal is not None:
            texts = pc.if_else(pc.equal(texts, dialect.null_literal), pa.nulls(len(texts), pa.string()), texts)
        values, wrong = convert_strings(texts, child, CSV)
        bad |= present & wrong
        children.append(values)
    arrow = dtype.to_arrow()
    out = pa.StructArray.from_arrays(children, fields=list(arrow), mask=pa.array(~present | bad))
    return out, bad


class CsvDecoder(MessageDecoder):
    """Kafka record payloads, one CSV row each: parsed together by Arrow (the payloads
    joined by newlines), then typed column by column as in files. A payload that is not
    exactly one row of the right width fails naming its record (or, with
    'csv.ignore-parse-errors', is skipped and counted; a row with too few fields is read
    with the missing ones NULL, as in Flink)."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.fields = fields
        self.dialect = CsvDialect(options)
        for f in fields:
            _check_supported(f)
        self.skipped_rows = 0
        self.schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in fields])

    def _parse(self, data: bytes) -> pa.Table:
        d = self.dialect
        names = [f"f{i}" for i in range(len(self.fields))]
        nulls = [d.null_literal] if d.null_literal is not None else []
        return pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(
                column_names=names, use_threads=False, block_size=max(1 << 20, len(data) + 1)
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=d.delimiter,
                quote_char=d.quote if d.quote is not None else False,
                double_quote=d.quote is not None,
                escape_char=d.escape if d.escape is not None else False,
                newlines_in_values=True,
                ignore_empty_lines=False,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                null_values=nulls,
                strings_can_be_null=d.null_literal is not None,
                quoted_strings_can_be_null=d.null_literal is not None,
            ),
        )

    def _rows(self, texts: pa.Array) -> tuple[pa.Table | None, np.ndarray]:
        """All payloads parsed at once, or one by one (which ones are bad) when that fails."""
        joined = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(texts)], pa.int32()), texts), "\n")
        data = joined[0].as_py().encode("utf-8") + b"\n"
        try:
            table = self._parse(data)
            if table.num_rows == len(texts):
                return table, np.zeros(len(texts), bool)
        except pa.ArrowInvalid:
            pass
        bad = np.zeros(len(texts), bool)
        tables = []
        for i, t in enumerate(texts.to_pylist()):  # error path only: find the bad payloads
            try:
                one = self._parse(t.encode("utf-8") + b"\n")
                if one.num_rows != 1:
                    raise pa.ArrowInvalid("not one row")
                tables.append(one)
            except pa.ArrowInvalid:
                short = self._short_row(t)
                if short is None:
                    bad[i] = True
                else:
                    tables.append(short)
        return (pa.concat_tables(tables) if tables else None), bad

    def _short_row(self, text: str) -> pa.Table | None:
        """With 'csv.ignore-parse-errors', a payload of one row with too few fields: its
        missing fields are NULL, as in Flink (None: not such a payload)."""
        d = self.dialect
        if not d.ignore_errors:
            return None
        rows = list(pycsv.reader(io.StringIO(text, newline=""), **_python_csv_args(d)))
        width = len(self.fields)
        if len(rows) != 1 or not 0 < len(rows[0]) < width:
            return None
        values = [None if v == d.null_literal else v for v in rows[0]]
        values += [None] * (width - len(values))
        return pa.table({f"f{i}": pa.array([v], pa.string()) for i, v in enumerate(values)})

    def decode(self, payloads: pa.Array, locate: Callable[[int], str]) -> tuple[pa.RecordBatch, np.ndarray]:
        present = np.flatnonzero(np.asarray(payloads.is_valid().to_numpy(zero_copy_only=False), bool))
        texts = pc.utf8_rtrim(payloads.take(pa.array(present)).cast(pa.string()), characters="\r\n")
        table, bad = self._rows(texts)
        if bad.any():
            if not self.dialect.ignore_errors:
                i = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"Failed to deserialize CSV row '{texts[i].as_py()}': not one row of {len(self.fields)} fields "
                    f"({locate(int(present[i]))})."
                )
            self.skipped_rows += int(bad.sum())
            present = present[~bad]
        if table is None or table.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=self.schema), present[:0]
        arrays = []
        keep = np.ones(table.num_rows, bool)
        for i, f in enumerate(self.fields):
            col = table.column(i).combine_chunks()
            values, wrong = convert_csv_column(col, f.type, self.dialect)
            row = first_bad(wrong)
            if row is not None and not self.dialect.ignore_errors:
                text = col[row].as_py()
                raise DataError(
                    f"Failed to deserialize CSV row: cannot read field '{f.name}' of type {f.type} "
                    f"from {_java_quote(text)}: {_java_reason(f.type, text)}{_empty_hint(text, self.dialect)} "
                    f"({locate(int(present[row]))})."
                )
            arrays.append(values)
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        return (batch if keep.all() else batch.filter(pa.array(keep))), present[keep]


def _option_literal(char: str) -> str:
    """A one-character option value as the user writes it in `WITH` (SQL quotes doubled,
    control characters as Java escapes)."""
    escaped = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "'": "''"}.get(char, char)
    return f"'{escaped}'"


def _java_quote(text: str | None) -> str:
    return '""' if text is None else '"' + text + '"'


def _empty_hint(text: str | None, dialect: CsvDialect) -> str:
    """For an empty field: how to read it as NULL (Flink writes NULL as '' when no null
    literal is set, and reads '' as text, so such a field cannot be read back as a number)."""
    if text or dialect.null_literal is not None:
        return ""
    return (
        ". An empty field is not NULL unless 'csv.null-literal' = '' is set (NULL is written as an empty "
        "field without a null literal)"
    )


def _java_reason(dtype: DataType, text: str | None) -> str:
    if dtype.is_integer or dtype.name == "DECIMAL":
        return f'NumberFormatException: For input string: "{text}"'
    if dtype.name in ("FLOAT", "DOUBLE"):
        return (
            "NumberFormatException: empty String"
            if not (text or "").strip()
            else f'NumberFormatException: For input string: "{text}"'
        )
    if dtype.is_timestamp:
        return "IllegalArgumentException: Timestamp format must be yyyy-mm-dd hh:mm:ss[.fffffffff]"
    return f"IllegalArgumentException: invalid {dtype.name} value"


_NESTED = ("ARRAY", "MAP", "ROW", "MULTISET")


def _check_supported(field: Field) -> None:
    """MAP and MULTISET are not CSV types; ARRAY and ROW hold scalars only (their parts are
    separated by the one 'csv.array-element-delimiter'), as Flink's CSV schema converter."""
    name = field.type.name
    if name in ("MAP", "MULTISET") or (
        name in ("ARRAY", "ROW") and any(c.name in _NESTED for c in field.type.children)
    ):
        raise ConnectorError(f"The 'csv' format does not support the type {field.type} (column '{field.name}').")


# ---------------------------------------------------------------------- writer
# Types whose text Jackson's CsvGenerator writes through its quoting check: strings, the
# text of dates, times and bytes, joined ARRAY/ROW fields, and BigDecimal (so a DECIMAL
# longer than 24 characters is quoted); integers, floats and booleans are written raw.
_TEXT_TYPES = frozenset(
    (
        "DECIMAL",
        "CHAR",
        "VARCHAR",
        "STRING",
        "DATE",
        "TIME",
        "TIMESTAMP",
        "TIMESTAMP_LTZ",
        "BINARY",
        "VARBINARY",
        "ARRAY",
        "ROW",
    )
)
# Jackson's CsvEncoder quotes any string longer than this without looking at it (MAX_QUOTE_CHECK).
_MAX_QUOTE_CHECK = 24


def decimal_plain_text(array: pa.Array) -> pa.Array:
    """DECIMAL values as Java's `BigDecimal.toPlainString()` at the column's scale
    ('0.0000000001', '0.0000000000'); Arrow's own cast writes tiny values and scaled zeros
    as '1E-10' / '0E-10'. Only such rows are rewritten (through Python's Decimal, whose
    fixed-point format is the plain form)."""
    text = pc.cast(array, pa.string())
    sci = pc.fill_null(pc.match_substring(text, "E"), False)
    if not pc.any(sci).as_py():
        return text
    rows = np.flatnonzero(np.asarray(sci.to_numpy(zero_copy_only=False), bool))
    fixed = text.to_pylist()
    for i in rows:  # only values below 1E-6 or zeros of a scale above 6
        fixed[i] = format(array[int(i)].as_py(), "f")
    return pa.array(fixed, pa.string())


def decimal_scientific_text(array: pa.Array) -> pa.Array:
    """DECIMAL values as Java's `BigDecimal.stripTrailingZeros().toString()`: trailing
    zeros dropped, and scientific notation where Java uses it (an integer with trailing
    zeros: 100000 → '1E+5', 120 → '1.2E+2'; an adjusted exponent below -6: '1.2E-7')."""
    text = decimal_plain_text(array)
    text = pc.replace_substring_regex(text, r"^(-?\d+)\.(\d*?)0*$", r"\1.\2")
    text = pc.replace_substring_regex(text, r"\.$", "")
    big = pc.extract_regex(text, r"^(?P<sign>-?)(?P<first>[1-9])(?P<mid>\d*?)(?P<zeros>0+)$")
    small = pc.extract_regex(text, r"^(?P<sign>-?)0\.(?P<zeros>0{6,})(?P<first>[1-9])(?P<mid>\d*)$")
    for parts, sign in ((big, "E+"), (small, "E-")):
        first, mid, zeros = (pc.struct_field(parts, n) for n in ("first", "mid", "zeros"))
        if sign == "E+":
            exponent = pc.add(pc.utf8_length(mid), pc.utf8_length(zeros))
        else:
            exponent = pc.add(pc.utf8_length(zeros), 1)
        point = pc.if_else(pc.equal(pc.utf8_length(mid), 0), "", ".")
        sci = pc.binary_join_element_wise(
            pc.struct_field(parts, "sign"), first, point, mid, sign, pc.cast(exponent, pa.string()), ""
        )
        text = pc.if_else(pc.is_valid(parts), sci, text)
    return text


class CsvRowEncoder:
    """Rows as Flink's CSV serializer (Jackson's CsvGenerator) writes them: booleans
    'true'/'false', timestamps 'yyyy-MM-dd HH:mm:ss[.fraction]', DECIMAL plain at its scale
    (see 'csv.write-bigdecimal-in-scientific-notation'), NULL as the null literal (default:
    empty); one text per row, built column-wise with Arrow string kernels.

    Quoting is Jackson's default "loose" check, applied to values written as strings (and
    DECIMAL's text; never to integers, floats, booleans or the null literal):
    a value longer than 24 characters, or holding a character at or below the highest of
    the delimiter, the quote character and '\\n' (so a space, with ',' and '"'), or the
    escape character (a backslash when none is set), is quoted; inside quotes the quote
    character is doubled, and so is a configured escape character."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str]) -> None:
        self.fields = fields
        self.dialect = CsvDialect(options)
        for f in fields:
            _check_supported(f)
        d = self.dialect
        if d.quote is not None:
            highest = max(ord(d.delimiter), ord(d.quote), ord("\n"))
            escape = d.escape if d.escape is not None else "\\"
            self._unsafe: str | None = f"[\\x{{00}}-\\x{{{highest:x}}}" + _re_escape(escape) + "]"
        else:
            self._unsafe = None

    def _text(self, array: pa.Array, dtype: DataType) -> pa.Array:
        if dtype.name == "DECIMAL":
            if isinstance(array, pa.ChunkedArray):
                array = array.combine_chunks()
            scientific = self.dialect.scientific_decimals
            return decimal_scientific_text(array) if scientific else decimal_plain_text(array)
        return format_text_column(array, dtype, "csv")

    def _quote(self, text: pa.Array) -> pa.Array:
        d = self.dialect
        if d.quote is None or self._unsafe is None:
            return text
        needs = pc.or_(pc.greater(pc.utf8_length(text), _MAX_QUOTE_CHECK), pc.match_substring_regex(text, self._unsafe))
        inner = pc.replace_substring(text, d.quote, d.quote * 2)
        if d.escape is not None and d.escape != d.quote:
            inner = pc.replace_substring(inner, d.escape, d.escape * 2)
        quoted = pc.binary_join_element_wise(d.quote, inner, d.quote, "")
        return pc.if_else(pc.fill_null(needs, False), quoted, text)

    def lines(self, batch: pa.RecordBatch) -> pa.Array:
        d = self.dialect
        null_text = d.null_literal if d.null_literal is not None else ""
        cols = []
        for i, field in enumerate(self.fields):
            if field.type.name == "ARRAY":
                elem = self._text(pc.list_flatten(batch.column(i)), field.type.children[0])
                elem = pc.fill_null(elem, null_text)
                lists = pa.ListArray.from_arrays(batch.column(i).offsets, elem)
                text = pc.binary_join(lists, d.array_delimiter)
            elif field.type.name == "ROW":
                column = batch.column(i)
                parts = [
                    pc.fill_null(self._text(pc.struct_field(column, [k]), child), null_text)
                    for k, child in enumerate(field.type.children)
                ]
                joined = pc.binary_join_element_wise(*parts, d.array_delimiter)
                text = pc.if_else(column.is_null(), pa.nulls(len(column), pa.string()), joined)
            else:
                text = self._text(batch.column(i), field.type)
            if field.type.name in _TEXT_TYPES:
                text = self._quote(text)
            cols.append(pc.fill_null(text, null_text))
        return pc.binary_join_element_wise(*cols, d.delimiter) if len(cols) > 1 else cols[0]


class CsvFileWriter(FileWriter):
    """Writes rows as Flink's CSV serializer does (CsvRowEncoder): no header, '\\n' line ends."""

    def __init__(self, path: str, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.encoder = CsvRowEncoder(fields, options)
        self.time_zone = ctx.time_zone
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.bytes_written = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        line = self.encoder.lines(batch)
        whole = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(line)], pa.int32()), line), "\n")
        payload = whole[0].as_py().encode("utf-8") + b"\n"
        self._file.write(payload)
        self.bytes_written += len(payload)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


class CsvEncoder(MessageEncoder):
    """Kafka record payloads of the 'csv' format: one CSV row per record, no line end."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.rows = CsvRowEncoder(fields, options)

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        return self.rows.lines(batch).cast(pa.binary())


def _re_escape(chars: str) -> str:
    return "".join("\\" + c if c in "\\^]-[" else c for c in chars)


register_format(
    FileFormat(
        name="csv",
        extension="csv",
        description="Comma-separated values, one row per line, no header (RFC 4180 quoting).",
        options=OPTIONS,
        open_reader=CsvFileReader,
        open_writer=CsvFileWriter,
        open_encoder=CsvEncoder,
        open_decoder=CsvDecoder,
    )
)
