"""The 'json' and 'debezium-json' formats: one JSON object per line, Flink's semantics.

The file is cut into lines with numpy (so every row keeps its exact line number and byte
offset); DuckDB's JSON functions then pull each field's JSON type and text out of a
whole batch of lines, and `convert.convert_strings` applies Jackson/Java conversion rules
column-wise: missing fields and explicit nulls are NULL, extra fields are ignored, JSON
strings are parsed into numbers/booleans, numbers become STRING text, DECIMAL rounds
HALF_UP, ARRAY/MAP/ROW are converted recursively. A line that is not a JSON object fails
the job with a DataError naming the file and line (or, with 'json.ignore-parse-errors',
is skipped and counted; a field that does not convert is then NULL, as in Flink).

Batches whose values already have the column's JSON type are first read by Arrow's C++
parser (json_fast.py); that path gives up on anything needing the rules above, and the
batch is then read here, so rows and errors do not depend on which path ran.

A line (or record) holding a top-level JSON array gives one row per element, as Flink
reads it. Change events with a before/after envelope (Debezium's, and Ogg's for
changelog_json.py) share the `_debezium` path; their metadata ('source.table', ...) is read
by `read_event_metadata` in one DuckDB pass over a poll's payloads.

Offsets are `{"byte": b, "line": n}`: where the next unread line starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.base import ConfigOption, MetadataColumn, SourceContext
from runtime.connectors.formats import (
    DecoderFactory,
    EncoderFactory,
    FileFormat,
    FileReader,
    FileWriter,
    MessageDecoder,
    MessageEncoder,
    ReaderFactory,
    WriterFactory,
    opt_bool,
    register_format,
)
from runtime.connectors.formats.convert import ISO, ISO_OFFSET, SQL, convert_strings, parse_float
from runtime.connectors.formats.json_fast import FastJsonReader
from runtime.connectors.formats.text import format_text_column, format_timestamp
from runtime.errors import ConnectorError, DataError
from runtime.frozen import frozen_dataclass
from runtime.functions._text_common import join_skip
from runtime.map_values import from_arrow_map, map_array
from runtime.types import ARRAY, MAP, STRING, TIMESTAMP_LTZ, DataType, Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "json.fail-on-missing-field",
        type="boolean",
        default="false",
        description="Fail when a field of the table is missing from a JSON object (default: read it as NULL).",
    ),
    ConfigOption(
        "json.ignore-parse-errors",
        type="boolean",
        default="false",
        description="Skip lines that are not valid JSON objects and read fields that cannot be converted as NULL, instead of failing.",
    ),
    ConfigOption(
        "json.timestamp-format.standard",
        type="enum",
        default="SQL",
        values=("SQL", "ISO-8601", "ISO-8601-WITH-OFFSET"),
        description="Timestamp text: 'SQL' reads/writes 'yyyy-MM-dd HH:mm:ss.SSS', 'ISO-8601' reads/writes "
        "'yyyy-MM-ddTHH:mm:ss.SSS' (TIMESTAMP_LTZ with a trailing 'Z' in both), 'ISO-8601-WITH-OFFSET' reads "
        "'yyyy-MM-ddTHH:mm:ss.SSS+02:00' (or 'Z') normalized to UTC and writes 'yyyy-MM-ddTHH:mm:ss.SSSZ'.",
    ),
    ConfigOption(
        "json.map-null-key.mode",
        type="enum",
        default="FAIL",
        values=("FAIL", "DROP", "LITERAL"),
        description="Writing a MAP with a NULL key: FAIL the job, DROP the entry, or write the 'json.map-null-key.literal' text.",
    ),
    ConfigOption(
        "json.map-null-key.literal",
        default="null",
        description="Key text for NULL map keys when 'json.map-null-key.mode' is LITERAL.",
    ),
    ConfigOption(
        "json.encode.decimal-as-plain-number",
        type="boolean",
        default="false",
        description="Write DECIMAL values in plain notation (0.000000027); by default a value under 1e-6 is "
        "written in Java's scientific notation (2.7E-8), as Flink writes it.",
    ),
    ConfigOption(
        "json.encode.ignore-null-fields",
        type="boolean",
        default="false",
        description="Leave NULL fields out of written objects.",
    ),
    ConfigOption(
        "json.decode.json-parser.enabled",
        type="boolean",
        default="true",
        description="Flink's choice between Jackson's streaming parser and its tree parser (same rows either "
        "way); accepted for compatibility: streamsql reads JSON one way (Arrow's parser, DuckDB's JSON "
        "functions where Flink's conversion rules need them).",
    ),
)
DEBEZIUM_OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "debezium-json.ignore-parse-errors",
        type="boolean",
        default="false",
        description="Skip change events that cannot be parsed instead of failing.",
    ),
    ConfigOption(
        "debezium-json.schema-include",
        type="boolean",
        default="false",
        description='Events are wrapped in Debezium\'s {"schema": ..., "payload": ...} envelope.',
    ),
    ConfigOption(
        "debezium-json.timestamp-format.standard",
        type="enum",
        default="SQL",
        values=("SQL", "ISO-8601"),
        description="Timestamp text standard of the row fields (see 'json.timestamp-format.standard').",
    ),
    ConfigOption(
        "debezium-json.map-null-key.mode",
        type="enum",
        default="FAIL",
        values=("FAIL", "DROP", "LITERAL"),
        description="Writing a MAP with a NULL key: FAIL, DROP the entry, or write the literal.",
    ),
    ConfigOption(
        "debezium-json.map-null-key.literal",
        default="null",
        description="Key text for NULL map keys when the mode is LITERAL.",
    ),
    ConfigOption(
        "debezium-json.encode.decimal-as-plain-number",
        type="boolean",
        default="false",
        description="Write DECIMAL values in plain notation (0.000000027); by default a value under 1e-6 is "
        "written in Java's scientific notation (2.7E-8).",
    ),
)

_CHUNK = 8 << 20
_INT_NAMES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "INTERVAL_YEAR_MONTH")
_NUMERIC_JSON = ("DOUBLE", "BIGINT", "UBIGINT", "HUGEINT")


def _path(name: str) -> str:
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("'", "''")
    return f"'$.\"{escaped}\"'"


class _Converter:
    """JSON text → typed Arrow columns through DuckDB's JSON functions."""

    def __init__(self, style: str, ignore_errors: bool) -> None:
        self.style = style
        self.ignore_errors = ignore_errors
        import duckdb  # deferred: keeps start-up fast for jobs that read no JSON

        self.con = duckdb.connect()
        self.con.execute("SET threads TO 1")

    def query(self, table: pa.Table, sql: str) -> pa.Table:
        self.con.register("src", table)
        try:
            return self.con.sql(sql).to_arrow_table()
        finally:
            self.con.unregister("src")

    def scalar(self, types: pa.Array, texts: pa.Array, dtype: DataType) -> tuple[pa.Array, np.ndarray]:
        """A field's JSON type name and text (json_extract_string) → `dtype` values."""
        is_null = pc.fill_null(pc.equal(types, "NULL"), True)
        texts = pc.if_else(is_null, pa.nulls(len(texts), pa.string()), texts)
        if dtype.name in _INT_NAMES:
            # Jackson's canConvertToInt: a JSON float in range is truncated toward zero.
            values, bad = convert_strings(texts, dtype, self.style)
            is_float = np.asarray(pc.fill_null(pc.equal(types, "DOUBLE"), False).to_numpy(zero_copy_only=False), bool)
            if is_float.any():
                dbl, dbad = parse_float(texts, DataType("DOUBLE"))
                trunc = pc.trunc(pc.fill_null(dbl, 0.0)).to_numpy(zero_copy_only=False)
                lo, hi = _int_bounds(dtype)
                fits = is_float & ~dbad & (trunc >= lo) & (trunc <= hi)
                ints = pa.array(np.where(fits, trunc, 0).astype(np.int64)).cast(dtype.to_arrow())
                values = pc.if_else(pa.array(fits), ints, values)
                bad = np.where(is_float, ~fits, bad)
            return values, bad
        return convert_strings(texts, dtype, self.style)

    def nested(self, texts: pa.Array, dtype: DataType) -> tuple[pa.Array, np.ndarray]:
        """JSON texts (or NULL) → `dtype` values, recursing through ARRAY/MAP/ROW."""
        n = len(texts)
        table = pa.table({"j": texts})
        src = "(SELECT TRY_CAST(j AS JSON) AS j FROM src)"
        name = dtype.name
        if name in ("ARRAY", "MULTISET"):
            res = self.query(
                table,
                f"SELECT json_type(j) AS t, CASE WHEN json_type(j) = 'ARRAY' THEN json_extract(j, '$[*]')::VARCHAR[] END AS e FROM {src}",
            )
            t, lists = res.column("t").combine_chunks(), res.column("e").combine_chunks()
            elems, ebad = self.nested(pc.list_flatten(lists), dtype.children[0])
            bad = _wrong_type(t, "ARRAY")
            if ebad.any():
                bad[pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)[ebad]] = True
            out = pa.ListArray.from_arrays(lists.offsets, elems, type=dtype.to_arrow(), mask=lists.is_null())
            return out, bad
        if name == "MAP":
            if not dtype.children[0].is_string:
                raise ConnectorError(f"JSON format doesn't support non-string as key type of map. The type is: {dtype}")
            res = self.query(
                table,
                f"SELECT json_type(j) AS t, CASE WHEN json_type(j) = 'OBJECT' THEN CAST(j AS MAP(VARCHAR, JSON)) END AS m FROM {src}",
            )
            t, maps = res.column("t").combine_chunks(), res.column("m").combine_chunks()
            offsets = maps.offsets.to_numpy(zero_copy_only=False)
            offsets = offsets - offsets[0] if len(offsets) else offsets
            start = int(maps.offsets[0].as_py()) if len(maps) else 0
            flat_keys = maps.keys.slice(start, int(offsets[-1]) if len(offsets) else 0)
            flat_vals = maps.items.slice(start, len(flat_keys)).cast(pa.string())
            vals, vbad = self.nested(flat_vals, dtype.children[1])
            bad = _wrong_type(t, "OBJECT")
            if vbad.any():
                parents = np.repeat(np.arange(n), np.diff(offsets))
                bad[parents[vbad]] = True
            flat_keys = flat_keys.cast(dtype.children[0].to_arrow())
            out = map_array(pa.array(offsets, pa.int32()), flat_keys, vals, dtype.to_arrow())
            if maps.null_count:
                out = pc.if_else(maps.is_null(), pa.nulls(n, out.type), out)
            return out, bad
        if name == "ROW":
            cols = ", ".join(f"json_extract(j, {_path(f)})::VARCHAR AS c{i}" for i, f in enumerate(dtype.field_names))
            res = self.query(table, f"SELECT json_type(j) AS t{', ' + cols if cols else ''} FROM {src}")
            t = res.column("t").combine_chunks()
            bad = _wrong_type(t, "OBJECT")
            children = []
            for i, ct in enumerate(dtype.children):
                vals, cbad = self.nested(res.column(f"c{i}").combine_chunks(), ct)
                bad |= cbad
                children.append(vals)
            fields = [
                pa.field(fn, ct.to_arrow(), ct.nullable)
                for fn, ct in zip(dtype.field_names, dtype.children, strict=True)
            ]
            mask = pc.invert(pc.fill_null(pc.equal(t, "OBJECT"), False))
            return pa.StructArray.from_arrays(children, fields=fields, mask=mask), bad
        res = self.query(table, f"SELECT json_type(j) AS t, json_extract_string(j, '$') AS v FROM {src}")
        return self.scalar(res.column("t").combine_chunks(), res.column("v").combine_chunks(), dtype)

    def rows(self, objects: pa.Array, fields: list[Field]) -> tuple[list[pa.Array], np.ndarray, np.ndarray, list[int]]:
        """Objects (JSON text per row) → one array per field, plus per-row masks: `invalid`
        (not a JSON object), `bad` (some field did not convert); `missing` lists, per
        field, the first row where it is absent (for 'fail-on-missing-field').

        Each line is parsed a handful of times only: all fields' types and texts come
        from one multi-path `json_type` / `json_extract_string` call each."""
        n = len(objects)
        paths = "[" + ", ".join(_path(f.name) for f in fields) + "]"
        sql = (
            f"SELECT json_type(j) AS __t, json_type(j, {paths}) AS t, json_extract_string(j, {paths}) AS v "
            "FROM (SELECT TRY_CAST(j AS JSON) AS j FROM src)"
        )
        res = self.query(pa.table({"j": objects}), sql) if fields else None
        if res is None:
            res = self.query(pa.table({"j": objects}), "SELECT json_type(TRY_CAST(j AS JSON)) AS __t FROM src")
        invalid = _wrong_type(res.column("__t").combine_chunks(), "OBJECT", null_is_bad=True)
        arrays: list[pa.Array] = []
        missing: list[int] = []
        bad = np.zeros(n, dtype=bool)
        if not fields:
            return arrays, invalid, bad, missing
        t_lists = res.column("t").combine_chunks()
        v_lists = res.column("v").combine_chunks()
        has = pc.invert(pc.fill_null(pc.equal(res.column("__t").combine_chunks(), "OBJECT"), False))
        starts = pc.fill_null(pc.list_value_length(t_lists), 0).to_numpy(zero_copy_only=False)
        starts = np.concatenate(([0], np.cumsum(starts)[:-1])).astype(np.int64)
        t_flat, v_flat = pc.list_flatten(t_lists), pc.list_flatten(v_lists)
        for i, f in enumerate(fields):
            idx = pa.array(starts + i, mask=has.to_numpy(zero_copy_only=False))
            t = pc.take(t_flat, idx) if len(t_flat) else pa.nulls(n, pa.string())
            v = pc.take(v_flat, idx) if len(v_flat) else pa.nulls(n, pa.string())
            absent = np.asarray(t.is_null().to_numpy(zero_copy_only=False), bool) & ~invalid
            first = np.flatnonzero(absent)
            missing.append(int(first[0]) if len(first) else -1)
            if _is_nested(f.type):
                v = pc.if_else(pc.fill_null(pc.equal(t, "NULL"), True), pa.nulls(n, pa.string()), v)
                vals, fbad = self.nested(v, f.type)
            else:
                vals, fbad = self.scalar(t, v, f.type)
            bad |= fbad & ~invalid
            arrays.append(vals)
        return arrays, invalid, bad, missing


def _is_nested(dtype: DataType) -> bool:
    return dtype.name in ("ARRAY", "MULTISET", "MAP", "ROW")


def _int_bounds(dtype: DataType) -> tuple[int, int]:
    bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "INTERVAL_YEAR_MONTH": 32, "BIGINT": 64}[dtype.name]
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def _wrong_type(types: pa.Array, expected: str, null_is_bad: bool = False) -> np.ndarray:
    """Rows whose JSON type is neither NULL nor `expected` (or SQL NULL, if `null_is_bad`)."""
    ok = pc.or_(pc.equal(types, expected), pc.equal(types, "NULL"))
    ok = pc.fill_null(ok, not null_is_bad)
    if null_is_bad:
        ok = pc.and_(ok, pc.not_equal(pc.fill_null(types, "NULL"), "NULL"))
    return ~np.asarray(ok.to_numpy(zero_copy_only=False), dtype=bool)


def _drop_blank(lines: pa.Array, numbers: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The lines (and their numbers) that hold more than whitespace: blank and null lines carry
    no event or row."""
    present = np.asarray(
        pc.fill_null(pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(lines)), 0), False).to_numpy(
            zero_copy_only=False
        ),
        bool,
    )
    if present.all():
        return lines, numbers
    return lines.filter(pa.array(present)), numbers[present]


class _LineFile:
    """A text file cut into lines in chunks, remembering each line's number and offset."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f = open(path, "rb")  # noqa: SIM115 - closed in close()
        self.pos = 0  # byte offset of the next line not yet handed out
        self.line = 1  # its 1-based line number
        self._lines: pa.Array | None = None
        self._starts = np.zeros(0, np.int64)
        self._end = 0
        self._idx = 0

    def seek(self, pos: int, line: int) -> None:
        self.pos, self.line = pos, line
        self._lines, self._idx = None, 0
        self._f.seek(pos)

    def _fill(self) -> bool:
        self._f.seek(self.pos)
        data = self._f.read(_CHUNK)
        if not data:
            return False
        while not data.endswith(b"\n"):
            more = self._f.read(_CHUNK)
            if not more:
                break
            cut = more.rfind(b"\n")
            if cut < 0:
                data += more
                continue
            data += more[: cut + 1]
            break
        buf = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(buf == 10) + 1
        if len(ends) == 0 or ends[-1] != len(buf):
            ends = np.append(ends, len(buf))
        offsets = np.concatenate(([0], ends)).astype(np.int32)
        lines = pa.StringArray.from_buffers(len(ends), pa.py_buffer(offsets.tobytes()), pa.py_buffer(data))
        try:
            lines.validate(full=True)
        except pa.ArrowInvalid:
            text = [
                bytes(data[offsets[i] : offsets[i + 1]]).decode("utf-8", errors="replace") for i in range(len(ends))
            ]
            lines = pa.array(text, pa.string())
        self._lines = pc.utf8_rtrim(lines, characters="\r\n")
        self._starts = self.pos + offsets[:-1].astype(np.int64)
        self._end = self.pos + len(data)
        self._idx = 0
        return True

    def take(self, n: int) -> tuple[pa.Array, np.ndarray] | None:
        """The next up to `n` lines and their line numbers, or None at the end."""
        if self._lines is None or self._idx >= len(self._lines):
            if not self._fill():
                return None
        assert self._lines is not None
        i = self._idx
        j = min(i + n, len(self._lines))
        lines = self._lines.slice(i, j - i)
        numbers = self.line + np.arange(j - i, dtype=np.int64)
        self._idx = j
        self.line += j - i
        self.pos = int(self._starts[j]) if j < len(self._starts) else self._end
        return lines, numbers

    def close(self) -> None:
        self._f.close()


@frozen_dataclass
class Envelope:
    """A before/after change event: which field holds the operation and which values
    mean insert, update and delete (Debezium's {"before","after","op"}, Ogg's
    {"before","after","op_type"})."""

    name: str  # as error messages name the format
    op: str
    inserts: tuple[str, ...]
    updates: tuple[str, ...]
    deletes: tuple[str, ...]


DEBEZIUM = Envelope("Debezium JSON", "op", ("c", "r"), ("u",), ("d",))
OGG = Envelope("Ogg JSON", "op_type", ("I",), ("U",), ("D",))


class JsonRows:
    """Lines of JSON (objects, or before/after change events) → rows of `fields`: the fast
    Arrow path when it applies, else the exact path. `fail(message, number)` reports the
    first bad line (`number`: its line number in a file, its record index in a poll)."""

    def __init__(
        self,
        fields: list[Field],
        options: dict[str, str],
        debezium: bool = False,
        prefix: str | None = None,
        envelope: Envelope | None = None,
    ) -> None:
        prefix = prefix or ("debezium-json" if debezium else "json")
        self.debezium = debezium
        self.envelope = (envelope or DEBEZIUM) if debezium else None
        self.fields = fields
        self.ignore_errors = opt_bool(options, f"{prefix}.ignore-parse-errors")
        self.fail_on_missing = opt_bool(options, "json.fail-on-missing-field") and not debezium
        self.schema_include = prefix == "debezium-json" and opt_bool(options, "debezium-json.schema-include")
        standard = options.get(f"{prefix}.timestamp-format.standard", "SQL").upper()
        allowed = ("SQL", "ISO-8601", "ISO-8601-WITH-OFFSET") if prefix == "json" else ("SQL", "ISO-8601")
        if standard not in allowed:
            raise ConnectorError(
                f"Unsupported value '{standard}' for '{prefix}.timestamp-format.standard'. "
                f"Supported values are [{', '.join(allowed)}]."
            )
        self.conv = _Converter(
            {"SQL": SQL, "ISO-8601": ISO, "ISO-8601-WITH-OFFSET": ISO_OFFSET}[standard], self.ignore_errors
        )
        # One Arrow C++ pass for batches whose values need no Java-specific conversion.
        self.fast = FastJsonReader(self.fields, self.conv.style, self.fail_on_missing)
        self.fast_batches = 0  # batches the fast path produced (tests and benchmarks)
        self.skipped_rows = 0
        self.schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.fields])
        if debezium:
            self.schema = self.schema.append(pa.field(ROW_KIND, pa.int8(), False))

    def fail(self, message: str, number: int) -> None:
        raise DataError(message)

    def rows(self, lines: pa.Array, numbers: np.ndarray) -> pa.RecordBatch:
        return self._debezium(lines, numbers) if self.debezium else self._plain(lines, numbers)

    def explode_arrays(self, lines: pa.Array, numbers: np.ndarray) -> tuple[pa.Array, np.ndarray]:
        """Lines holding a top-level JSON array as one line per element (each element one
        row, as Flink's JSON format reads '[{...}, {...}]'; '[]' gives none), the element
        lines keeping their line's number. Only the plain 'json' format does this."""
        if self.debezium or len(lines) == 0:
            return lines, numbers
        arrays = pc.fill_null(pc.starts_with(pc.utf8_ltrim_whitespace(lines), "["), False)
        if not pc.any(arrays).as_py():
            return lines, numbers
        res = self.conv.query(
            pa.table({"j": lines, "a": arrays, "i": pa.array(np.arange(len(lines), dtype=np.int64))}),
            "SELECT i, CASE WHEN a AND json_type(TRY_CAST(j AS JSON)) = 'ARRAY' "
            "THEN json_extract(TRY_CAST(j AS JSON), '$[*]')::VARCHAR[] ELSE [j] END AS e FROM src",
        )
        elems = res.column("e").combine_chunks()
        index = res.column("i").to_numpy()
        lengths = pc.fill_null(pc.list_value_length(elems), 0).to_numpy(zero_copy_only=False)
        return pc.list_flatten(elems), numbers[np.repeat(index, lengths)]

    def _plain(self, lines: pa.Array, numbers: np.ndarray) -> pa.RecordBatch | None:
        fast = self.fast.read(lines) if self.fast.usable else None
        if fast is not None:
            self._kept = None
            self.fast_batches += 1
            return pa.RecordBatch.from_arrays(fast, schema=self.schema)
        arrays, invalid, bad, missing = self.conv.rows(lines, self.fields)
        self._check(lines, numbers, invalid, bad, missing)
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._kept = np.flatnonzero(~invalid)
        if invalid.any():
            batch = batch.filter(pa.array(~invalid))
        return batch

    def _check(
        self, lines: pa.Array, numbers: np.ndarray, invalid: np.ndarray, bad: np.ndarray, missing: list[int]
    ) -> None:
        if self.ignore_errors:  # counted per input line / record (an array's elements share one)
            self.skipped_rows += len(np.unique(numbers[invalid])) if invalid.any() else 0
            return
        candidates: list[tuple[int, str | None]] = []
        if invalid.any():
            candidates.append((int(np.flatnonzero(invalid)[0]), None))
        if bad.any():
            candidates.append((int(np.flatnonzero(bad)[0]), "a field value could not be converted to the column type"))
        if self.fail_on_missing:
            for i, row in enumerate(missing):
                if row >= 0:
                    candidates.append((row, f"Could not find field with name '{self.fields[i].name}'."))
        if not candidates:
            return
        row, reason = min(candidates, key=lambda c: c[0])
        detail = self._field_reason(lines.slice(row, 1)) if reason and reason.startswith("a field") else reason
        kind = self.envelope.name if self.envelope else "JSON"
        msg = f"Failed to deserialize {kind} '{lines[row].as_py()}'."
        self.fail(msg + (f" {detail}" if detail else ""), int(numbers[row]))

    def _field_reason(self, line: pa.Array) -> str:
        """Name the first field of a failing line that does not convert (error path only)."""
        obj = line[0].as_py()
        for f in self.fields:
            arrays, invalid, bad, _ = self.conv.rows(line, [f])
            if bad.any():
                value = json.loads(obj).get(f.name) if not invalid.any() else None
                return f"Field '{f.name}': cannot convert {json.dumps(value, ensure_ascii=False)} to {f.type}."
        return ""

    def _debezium(self, lines: pa.Array, numbers: np.ndarray) -> pa.RecordBatch | None:
        env = self.envelope
        assert env is not None
        root = "$.payload" if self.schema_include else "$"
        res = self.conv.query(
            pa.table({"j": lines}),
            f"SELECT json_type(j) AS t, json_extract_string(j, '{root}.{env.op}') AS op, "
            f"json_extract(j, '{root}.before')::VARCHAR AS b, json_extract(j, '{root}.after')::VARCHAR AS a "
            "FROM (SELECT TRY_CAST(j AS JSON) AS j FROM src)",
        )
        op = pc.fill_null(res.column("op").combine_chunks(), "")
        invalid = _wrong_type(res.column("t").combine_chunks(), "OBJECT", null_is_bad=True)
        ops = pa.array([*env.inserts, *env.updates, *env.deletes])
        known = np.asarray(pc.is_in(op, ops).to_numpy(zero_copy_only=False), bool)
        invalid |= ~known
        before_txt, after_txt = res.column("b").combine_chunks(), res.column("a").combine_chunks()
        b_arrays, b_inv, b_bad, _ = self.conv.rows(before_txt, self.fields)
        a_arrays, a_inv, a_bad, _ = self.conv.rows(after_txt, self.fields)
        op_np = np.asarray(op.to_numpy(zero_copy_only=False), dtype=object)
        b_null = np.asarray(before_txt.is_null().to_numpy(zero_copy_only=False), bool) | b_inv
        a_null = np.asarray(after_txt.is_null().to_numpy(zero_copy_only=False), bool) | a_inv
        is_ins, is_upd = np.isin(op_np, env.inserts), np.isin(op_np, env.updates)
        is_del = np.isin(op_np, env.deletes)
        use_before = (is_upd | is_del) & ~b_null
        use_after = (is_ins | is_upd) & ~a_null
        # an update or delete without its before image fails, as in Flink (a Postgres
        # table whose REPLICA IDENTITY is not FULL)
        invalid |= ((is_ins | is_upd) & a_null) | ((is_upd | is_del) & b_null)
        bad = (b_bad & use_before) | (a_bad & use_after)
        self._check(lines, numbers, invalid, bad, [])
        use_before &= ~invalid
        use_after &= ~invalid
        n = len(lines)
        kinds_b = np.where(is_del, DELETE, UPDATE_BEFORE).astype(np.int8)
        kinds_a = np.where(is_upd, UPDATE_AFTER, INSERT).astype(np.int8)
        # Interleave: row 2i is line i's "before" image, row 2i+1 its "after" image.
        order = np.empty(2 * n, dtype=np.int64)
        order[0::2] = np.arange(n)
        order[1::2] = n + np.arange(n)
        keep = np.empty(2 * n, dtype=bool)
        keep[0::2], keep[1::2] = use_before, use_after
        take = pa.array(order[keep])
        self._event_rows = (order[keep] % n) if n else order[keep]  # each row's line
        cols = [pc.take(pa.concat_arrays([b, a]), take) for b, a in zip(b_arrays, a_arrays, strict=True)]
        kinds = pc.take(pa.array(np.concatenate([kinds_b, kinds_a]), pa.int8()), take)
        return pa.RecordBatch.from_arrays([*cols, kinds], schema=self.schema)


class JsonFileReader(JsonRows, FileReader):
    def __init__(
        self,
        path: str,
        fields: tuple[Field, ...],
        projection: list[int] | None,
        options: dict[str, str],
        ctx: SourceContext,
        debezium: bool = False,
    ) -> None:
        super().__init__(
            [fields[i] for i in (range(len(fields)) if projection is None else projection)], options, debezium
        )
        self.path = path
        self.file = _LineFile(path)

    def fail(self, message: str, number: int) -> None:
        raise DataError(message, self.path, number)

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        want = max(1, max_rows // 2) if self.debezium else max_rows
        while True:
            got = self.file.take(want)
            if got is None:
                return None
            lines, numbers = _drop_blank(*got)
            lines, numbers = self.explode_arrays(lines, numbers)
            if len(lines) == 0:
                continue
            batch = self.rows(lines, numbers)
            if batch is not None and batch.num_rows:
                return batch

    def offset(self) -> Any:
        return {"byte": self.file.pos, "line": self.file.line}

    def seek(self, offset: Any) -> None:
        self.file.seek(int(offset["byte"]), int(offset["line"]))

    def close(self) -> None:
        self.file.close()


class JsonDecoder(JsonRows, MessageDecoder):
    """Kafka record payloads, one JSON object (or Debezium event) each. A NULL payload is
    no row (Flink's JSON deserializer returns null for it), as is an empty one."""

    def __init__(
        self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext, debezium: bool = False
    ) -> None:
        super().__init__(list(fields), options, debezium)
        self._locate: Callable[[int], str] = str

    def fail(self, message: str, number: int) -> None:
        raise DataError(f"{message} ({self._locate(number)})")

    def event_metadata(self, payloads: pa.Array, keys: list[str]) -> list[pa.Array]:
        if not self.debezium:
            return super().event_metadata(payloads, keys)
        return read_event_metadata(self.conv, _debezium_specs(self.schema_include), payloads, keys)

    def decode(self, payloads: pa.Array, locate: Callable[[int], str]) -> tuple[pa.RecordBatch, np.ndarray]:
        self._locate = locate
        numbers = np.arange(len(payloads), dtype=np.int64)
        lines, numbers = _drop_blank(_utf8_lines(payloads, self.fail), numbers)
        lines, numbers = self.explode_arrays(lines, numbers)
        if len(lines) == 0:
            return pa.RecordBatch.from_pylist([], schema=self.schema), numbers
        batch = self.rows(lines, numbers)
        if self.debezium:  # each row's line (an update gives two rows, a bad event none)
            return batch, numbers[self._event_rows]
        if batch.num_rows != len(lines):  # invalid lines were skipped ('ignore-parse-errors')
            numbers = numbers[self._kept]
        return batch, numbers


def _utf8_lines(payloads: pa.Array, fail: Callable[[str, int], None]) -> pa.Array:
    """Binary payloads as UTF-8 strings without line terminators (a bad one fails)."""
    try:
        lines = payloads.cast(pa.string())
    except pa.ArrowInvalid:
        values = payloads.to_pylist()
        for i, v in enumerate(values):
            if v is not None:
                try:
                    v.decode("utf-8")
                except UnicodeDecodeError:
                    fail("Failed to deserialize JSON: the payload is not UTF-8 text.", i)
        lines = pa.array([None if v is None else v.decode("utf-8", errors="replace") for v in values], pa.string())
    return pc.utf8_rtrim(lines, characters="\r\n")


# ---------------------------------------------------------------------- event metadata
@frozen_dataclass
class EventMetadata:
    """A metadata key of a change-event format: its type and the DuckDB expression that
    reads it from the event (`j`, the payload as JSON)."""

    key: str
    type: DataType
    sql: str
    description: str

    def column(self) -> MetadataColumn:
        return MetadataColumn(self.key, str(self.type), writable=False, description=self.description)


def json_text(path: str) -> str:
    """A JSON field as STRING: a string's text, any other value's JSON text (Jackson's
    asText / toString), NULL when absent or null."""
    return (
        f"CASE json_type(j, '{path}') WHEN 'VARCHAR' THEN json_extract_string(j, '{path}') "
        f"WHEN 'NULL' THEN NULL ELSE json_extract(j, '{path}')::VARCHAR END"
    )


def json_millis(path: str, scale: int = 1) -> str:
    """A JSON field as epoch milliseconds: a number (times `scale`: Maxwell's seconds), or
    a timestamp text ('2020-05-13 15:40:06.000000', with 'T' or without, read as UTC)."""
    return (
        f"CASE json_type(j, '{path}') WHEN 'VARCHAR' THEN "
        f"epoch_ms(TRY_CAST(replace(json_extract_string(j, '{path}'), 'T', ' ') AS TIMESTAMP)) "
        f"ELSE TRY_CAST(json_extract_string(j, '{path}') AS DOUBLE) * {scale} END"
    )


def json_string_map(path: str) -> str:
    """A JSON object as MAP<STRING, STRING> (values as text)."""
    return f"TRY_CAST(json_extract(j, '{path}') AS MAP(VARCHAR, VARCHAR))"


def json_string_list(path: str) -> str:
    return f"TRY_CAST(json_extract(j, '{path}') AS VARCHAR[])"


TIMESTAMP_META = TIMESTAMP_LTZ(3)
STRING_MAP_META = MAP(STRING(), STRING())
STRING_LIST_META = ARRAY(STRING())


def read_event_metadata(
    conv: _Converter, specs: tuple[EventMetadata, ...], payloads: pa.Array, keys: list[str]
) -> list[pa.Array]:
    """Metadata `keys` of each payload (NULL for a NULL or unparsable payload), read in one
    DuckDB pass over the whole poll."""
    by_key = {m.key: m for m in specs}
    texts = _utf8_lines(payloads, lambda message, number: None)
    cols = ", ".join(f"{by_key[k].sql} AS m{i}" for i, k in enumerate(keys))
    res = conv.query(pa.table({"p": texts}), f"SELECT {cols} FROM (SELECT TRY_CAST(p AS JSON) AS j FROM src)")
    out = []
    for i, k in enumerate(keys):
        col = res.column(f"m{i}").combine_chunks()
        dtype = by_key[k].type
        target = dtype.to_arrow()
        if dtype.name == "MAP":
            col = from_arrow_map(col, target)
        elif dtype.name == "TIMESTAMP_LTZ":
            col = pc.cast(pc.round(col.cast(pa.float64())), pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
        out.append(col.cast(target) if col.type != target else col)
    return out


# '{env}' stands for the event's root: '$', or '$.payload' with 'debezium-json.schema-include'.
DEBEZIUM_METADATA: tuple[EventMetadata, ...] = (
    EventMetadata(
        "schema",
        STRING(),
        json_text("$.schema"),
        "JSON text of the payload's schema; NULL when the event does not include it.",
    ),
    EventMetadata(
        "ingestion-timestamp",
        TIMESTAMP_META,
        json_millis("{env}.ts_ms"),
        "When the connector processed the event (the event's 'ts_ms').",
    ),
    EventMetadata(
        "source.timestamp",
        TIMESTAMP_META,
        json_millis("{env}.source.ts_ms"),
        "When the source system made the change ('source.ts_ms').",
    ),
    EventMetadata("source.database", STRING(), json_text("{env}.source.db"), "The originating database ('source.db')."),
    EventMetadata(
        "source.schema", STRING(), json_text("{env}.source.schema"), "The originating schema ('source.schema')."
    ),
    EventMetadata(
        "source.table",
        STRING(),
        f"coalesce({json_text('{env}.source.table')}, {json_text('{env}.source.collection')})",
        "The originating table ('source.table', or 'source.collection').",
    ),
    EventMetadata(
        "source.properties",
        STRING_MAP_META,
        json_string_map("{env}.source"),
        "The event's whole 'source' object, its values as text.",
    ),
)


def _debezium_specs(schema_include: bool) -> tuple[EventMetadata, ...]:
    env = "$.payload" if schema_include else "$"
    return tuple(EventMetadata(m.key, m.type, m.sql.replace("{env}", env), m.description) for m in DEBEZIUM_METADATA)


# ---------------------------------------------------------------------- writer
def plain_decimal_text(text: pa.Array, scale: int) -> pa.Array:
    """DECIMAL texts in plain notation. Arrow writes a decimal as Java's BigDecimal.toString
    does (and so as Flink's JSON serializer does by default): in scientific notation when
    the value is under 1e-6 ('2.7E-8', '0E-9' at scale 9). 'encode.decimal-as-plain-number'
    wants '0.000000027': the mantissa's digits padded to the scale after '0.'."""
    parts = pc.extract_regex(text, r"^(?P<sign>-?)(?P<d1>[0-9])(?:\.(?P<d2>[0-9]+))?E-[0-9]+$")
    digits = pc.binary_join_element_wise(
        pc.struct_field(parts, "d1"), pc.fill_null(pc.struct_field(parts, "d2"), ""), ""
    )
    plain = pc.binary_join_element_wise(pc.struct_field(parts, "sign"), "0.", pc.utf8_lpad(digits, scale, "0"), "")
    return pc.if_else(pc.fill_null(parts.is_valid(), False), plain, text)


class JsonRowEncoder:
    """Rows as JSON object texts, one per row, fields in schema order, as Flink's JSON
    serializer writes them (timestamps as text in the chosen standard, DECIMAL as a plain
    number), built column-wise with Arrow string kernels. `prefix` is the format's option
    prefix ('json', 'debezium-json', 'canal-json', ...): the change-event formats take the
    row options under their own name."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], prefix: str = "json") -> None:
        self.fields = fields
        standard = options.get(f"{prefix}.timestamp-format.standard", "SQL").upper()
        self.iso = standard in ("ISO-8601", "ISO-8601-WITH-OFFSET")
        # 'ISO-8601-WITH-OFFSET' writes every timestamp as UTC with a 'Z' (TIMESTAMP's wall clock taken as UTC)
        self.iso_offset = standard == "ISO-8601-WITH-OFFSET"
        self.ignore_nulls = opt_bool(options, f"{prefix}.encode.ignore-null-fields")
        self.decimal_plain = opt_bool(options, f"{prefix}.encode.decimal-as-plain-number")
        self.null_key_mode = options.get(f"{prefix}.map-null-key.mode", "FAIL").upper()
        self.null_key_literal = options.get(f"{prefix}.map-null-key.literal", "null")

    def _json_column(self, array: pa.Array, dtype: DataType) -> pa.Array:
        """Each value as JSON text (NULL → 'null')."""
        name = dtype.name
        if name in ("TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL", "INTERVAL_YEAR_MONTH", "INTERVAL_DAY_TIME"):
            text = pc.cast(pc.cast(array, pa.int64()) if name == "INTERVAL_DAY_TIME" else array, pa.string())
            if name == "DECIMAL" and self.decimal_plain and (dtype.scale or 0) > 6:
                text = plain_decimal_text(text, dtype.scale or 0)
        elif name == "BOOLEAN":
            text = pc.if_else(array, "true", "false")
        elif name in ("FLOAT", "DOUBLE"):
            text = format_text_column(array, dtype, "json")
            finite = pc.is_finite(array)
            text = pc.if_else(pc.fill_null(finite, True), text, pc.binary_join_element_wise('"', text, '"', ""))
        elif name in ("ARRAY", "MULTISET", "MAP"):
            text = self._list_column(array, dtype)
        elif name == "ROW":
            text = self._row_column(array, dtype)
        else:
            if name in ("TIMESTAMP", "TIMESTAMP_LTZ") and self.iso:
                raw = format_timestamp(array, iso=True)
                zoned = name == "TIMESTAMP_LTZ" or self.iso_offset
                raw = pc.binary_join_element_wise(raw, "Z", "") if zoned else raw
            else:
                raw = format_text_column(array, dtype, "json")
            # JSON string escaping, vectorized with a handful of replacements.
            esc = pc.replace_substring(raw, "\\", "\\\\")
            esc = pc.replace_substring(esc, '"', '\\"')
            for ch, rep in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"), ("\f", "\\f")):
                esc = pc.replace_substring(esc, ch, rep)
            text = pc.binary_join_element_wise('"', esc, '"', "")
        return pc.fill_null(text, "null")

    def _list_column(self, array: pa.Array, dtype: DataType) -> pa.Array:
        """ARRAY as '[...]', MAP as '{"key":value,...}' texts (NULL for a NULL value),
        built from the elements' texts with list kernels: no row loop."""
        n = len(array)
        offsets = np.asarray(array.offsets.to_numpy(zero_copy_only=False), np.int64)
        offsets = offsets - offsets[0]
        entries = array.flatten()
        if dtype.name == "MAP":
            if not dtype.children[0].is_string:
                raise ConnectorError(f"JSON format doesn't support non-string as key type of map. The type is: {dtype}")
            keys, values = entries.flatten()
            parents = np.asarray(pc.list_parent_indices(array).to_numpy(zero_copy_only=False), np.int64)
            null_key = np.asarray(keys.is_null().to_numpy(zero_copy_only=False), bool)
            if null_key.any():
                if self.null_key_mode == "FAIL":
                    raise DataError("JSON format doesn't support to serialize map data with null keys.")
                if self.null_key_mode == "DROP":
                    keep = pa.array(~null_key)
                    keys, values, parents = keys.filter(keep), values.filter(keep), parents[~null_key]
                    offsets = np.concatenate(([0], np.cumsum(np.bincount(parents, minlength=n))))
                else:
                    keys = pc.fill_null(keys.cast(pa.string()), self.null_key_literal)
            key_text = self._json_column(keys.cast(pa.string()), DataType("STRING"))
            items = pc.binary_join_element_wise(key_text, self._json_column(values, dtype.children[1]), ":")
            opening, closing = "{", "}"
        else:
            items = self._json_column(entries, dtype.children[0])
            opening, closing = "[", "]"
        lists = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), items)
        joined = pc.binary_join_element_wise(opening, pc.binary_join(lists, ","), closing, "")
        return pc.if_else(array.is_null(), pa.nulls(n, pa.string()), joined)

    def _row_column(self, array: pa.Array, dtype: DataType) -> pa.Array:
        """ROW as '{"field":value,...}' texts (NULL fields left out with
        'encode.ignore-null-fields', as Flink's row converter does at any depth)."""
        parts = []
        for child, fn, ft in zip(array.flatten(), dtype.field_names, dtype.children, strict=True):
            item = pc.binary_join_element_wise(
                json.dumps(fn, ensure_ascii=False) + ":", self._json_column(child, ft), ""
            )
            if self.ignore_nulls:
                item = pc.if_else(child.is_null(), pa.scalar(None, pa.string()), item)
            parts.append(item)
        if not parts:
            body = pa.array([""] * len(array), pa.string())
        else:
            body = join_skip(parts, ",")
            body = pc.fill_null(body, "")
        text = pc.binary_join_element_wise("{", body, "}", "")
        return pc.if_else(array.is_null(), pa.nulls(len(array), pa.string()), text)

    def objects(self, batch: pa.RecordBatch) -> pa.Array:
        """One JSON object text per row (the batch's first len(fields) columns)."""
        parts = []
        for i, f in enumerate(self.fields):
            key = json.dumps(f.name, ensure_ascii=False) + ":"
            value = self._json_column(batch.column(i), f.type)
            item = pc.binary_join_element_wise(key, value, "")
            if self.ignore_nulls:
                item = pc.if_else(batch.column(i).is_null(), pa.scalar(None, pa.string()), item)
            parts.append(item)
        if not parts:
            body = pa.array([""] * batch.num_rows, pa.string())
        elif len(parts) == 1:
            body = pc.fill_null(parts[0], "")
        else:
            body = join_skip(parts, ",")
        return pc.binary_join_element_wise("{", body, "}", "")


def join_lines(lines: pa.Array) -> bytes:
    """Texts joined into one newline-terminated block (one Arrow kernel, no row loop)."""
    whole = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n")
    return whole[0].as_py().encode("utf-8") + b"\n"


class _LinesWriter(FileWriter):
    """A part file of one text line per row; subclasses say what a batch's lines are."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        self.bytes_written = 0

    def lines(self, batch: pa.RecordBatch) -> pa.Array:
        raise NotImplementedError

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        payload = join_lines(self.lines(batch))
        self._file.write(payload)
        self.bytes_written += len(payload)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


class JsonFileWriter(_LinesWriter):
    """One JSON object per line (JsonRowEncoder)."""

    def __init__(self, path: str, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        super().__init__(path)
        self.encoder = JsonRowEncoder(fields, options)

    def lines(self, batch: pa.RecordBatch) -> pa.Array:
        return self.encoder.objects(batch)


class JsonEncoder(MessageEncoder):
    """Kafka record payloads of the 'json' format: one JSON object per row."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.rows = JsonRowEncoder(fields, options)

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        return self.rows.objects(batch).cast(pa.binary())


class ChangeEventEncoder(MessageEncoder):
    """Change events of a changelog format, one per row, as Flink's serializers write them:
    an insert or update-after is written as the row's insertion, an update-before or delete
    as its deletion (Debezium {"before","after","op"} with op 'c'/'d'; Canal {"data":[row],
    "type":"INSERT"/"DELETE"}; Maxwell {"data":row,"type":"insert"/"delete"})."""

    def __init__(self, style: str, fields: tuple[Field, ...], options: dict[str, str]) -> None:
        if style == "debezium-json" and opt_bool(options, "debezium-json.schema-include"):
            raise ConnectorError(
                "Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true."
            )
        self.style = style
        self.rows = JsonRowEncoder(fields, options, prefix=style)

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        obj = self.rows.objects(batch)
        idx = batch.schema.get_field_index(ROW_KIND)
        kinds = batch.column(idx).to_numpy(zero_copy_only=False) if idx >= 0 else np.zeros(batch.num_rows, np.int8)
        removed = pa.array((kinds == UPDATE_BEFORE) | (kinds == DELETE))
        if self.style in ("debezium-json", "ogg-json"):
            ogg = self.style == "ogg-json"
            op = pc.if_else(removed, '"D"', '"I"') if ogg else pc.if_else(removed, '"d"', '"c"')
            if self.rows.ignore_nulls:  # the null image is a null field too
                image = pc.if_else(removed, '"before":', '"after":')
                out = pc.binary_join_element_wise("{", image, obj, ',"op_type":' if ogg else ',"op":', op, "}", "")
            else:
                before = pc.if_else(removed, obj, "null")
                after = pc.if_else(removed, "null", obj)
                out = pc.binary_join_element_wise(
                    '{"before":', before, ',"after":', after, ',"op_type":' if ogg else ',"op":', op, "}", ""
                )
        elif self.style == "canal-json":
            typ = pc.if_else(removed, '"DELETE"', '"INSERT"')
            out = pc.binary_join_element_wise('{"data":[', obj, '],"type":', typ, "}", "")
        else:  # maxwell-json
            typ = pc.if_else(removed, '"delete"', '"insert"')
            out = pc.binary_join_element_wise('{"data":', obj, ',"type":', typ, "}", "")
        return out.cast(pa.binary())


def change_event_encoder(style: str) -> EncoderFactory:
    """The `open_encoder` of a change-event format named `style`."""

    def open_encoder(fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> MessageEncoder:
        return ChangeEventEncoder(style, fields, options)

    return open_encoder


class EventLinesWriter(_LinesWriter):
    """A changelog format's part file (filesystem sink): one change event per line, as
    Flink's file sink writes a serialization format's records (each followed by a newline).
    The batch carries `__op`; the format's encoder turns each row into its event."""

    def __init__(self, encoder: MessageEncoder, path: str) -> None:
        super().__init__(path)
        self.encoder = encoder

    def lines(self, batch: pa.RecordBatch) -> pa.Array:
        return self.encoder.encode(batch).cast(pa.string())


class EventLinesReader(FileReader):
    """A file of change events, one per line (what `EventLinesWriter` writes), read through
    the format's message decoder: rows of the projected fields plus `__op`. Blank lines are
    skipped; a bad event names the file and its line."""

    def __init__(self, path: str, decoder: MessageDecoder) -> None:
        self.path = path
        self.decoder = decoder
        self.file = _LineFile(path)
        self._numbers = np.zeros(0, np.int64)  # line numbers of the lines being decoded

    @property
    def skipped_rows(self) -> int:  # type: ignore[override]
        return self.decoder.skipped_rows

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        while True:
            got = self.file.take(max(1, max_rows // 2))  # an update event gives two rows
            if got is None:
                return None
            lines, numbers = _drop_blank(*got)
            if len(lines) == 0:
                continue
            self._numbers = numbers
            batch, _ = self.decoder.decode(lines.cast(pa.binary()), self._locate)
            if batch.num_rows:
                return batch

    def _locate(self, i: int) -> str:
        """Where the decoder's i-th event of the current lines is (for its error message)."""
        return f"file {self.path}, line {int(self._numbers[i])}"

    def offset(self) -> Any:
        return {"byte": self.file.pos, "line": self.file.line}

    def seek(self, offset: Any) -> None:
        self.file.seek(int(offset["byte"]), int(offset["line"]))

    def close(self) -> None:
        self.file.close()


def event_lines_writer(open_encoder: EncoderFactory) -> WriterFactory:
    """The `open_writer` of a changelog format: its encoder's events, one per line."""

    def open_writer(path: str, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> FileWriter:
        return EventLinesWriter(open_encoder(fields, options, ctx), path)

    return open_writer


def event_lines_reader(open_decoder: DecoderFactory) -> ReaderFactory:
    """The `open_reader` of a changelog format: its decoder over the file's lines, given
    only the projected fields (the decoder reads each field by name)."""

    def open_reader(
        path: str, fields: tuple[Field, ...], projection: list[int] | None, options: dict[str, str], ctx: SourceContext
    ) -> FileReader:
        wanted = fields if projection is None else tuple(fields[i] for i in projection)
        return EventLinesReader(path, open_decoder(wanted, options, ctx))

    return open_reader


def _validate_json(options: dict[str, str]) -> None:
    """Flink's JsonFormatOptionsUtil checks of the options that go together."""
    if opt_bool(options, "json.fail-on-missing-field") and opt_bool(options, "json.ignore-parse-errors"):
        raise ConnectorError("fail-on-missing-field and ignore-parse-errors shouldn't both be true.")


def _open_debezium(
    path: str, fields: tuple[Field, ...], projection: list[int] | None, options: dict[str, str], ctx: SourceContext
) -> FileReader:
    return JsonFileReader(path, fields, projection, options, ctx, debezium=True)


def _json_decoder(fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> MessageDecoder:
    return JsonDecoder(fields, options, ctx)


def _debezium_decoder(fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> MessageDecoder:
    return JsonDecoder(fields, options, ctx, debezium=True)


register_format(
    FileFormat(
        name="json",
        extension="json",
        description="One JSON object per line (newline-delimited JSON).",
        options=OPTIONS,
        open_reader=JsonFileReader,
        open_writer=JsonFileWriter,
        open_encoder=JsonEncoder,
        open_decoder=_json_decoder,
        validate=_validate_json,
    )
)
register_format(
    FileFormat(
        name="debezium-json",
        extension="json",
        description="Debezium change events, one JSON object per line ({before, after, op}); a changelog source.",
        options=DEBEZIUM_OPTIONS,
        open_reader=_open_debezium,
        changelog=True,
        open_writer=event_lines_writer(change_event_encoder("debezium-json")),
        open_encoder=change_event_encoder("debezium-json"),
        open_decoder=_debezium_decoder,
        metadata=tuple(m.column() for m in DEBEZIUM_METADATA),
    )
)
