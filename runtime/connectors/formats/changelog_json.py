"""The 'canal-json', 'maxwell-json' and 'ogg-json' change-event formats (Canal's, Maxwell's
and Oracle GoldenGate's JSON messages → +I/-U/+U/-D rows), with their metadata ('value.table'
...). Message connectors (Kafka) read and write one event per record; the filesystem
connector one event per line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.base import ConfigOption, SourceContext
from runtime.connectors.formats import FileFormat, MessageDecoder, register_format
from runtime.connectors.formats.json_format import (
    OGG,
    STRING_LIST_META,
    TIMESTAMP_META,
    EventMetadata,
    JsonDecoder,
    JsonRows,
    _utf8_lines,
    change_event_encoder,
    event_lines_reader,
    event_lines_writer,
    json_millis,
    json_string_list,
    json_string_map,
    json_text,
    read_event_metadata,
)
from runtime.errors import DataError
from runtime.types import INT, MAP, STRING, Field


def _options(prefix: str) -> tuple[ConfigOption[Any], ...]:
    return (
        ConfigOption(
            f"{prefix}.ignore-parse-errors",
            type="boolean",
            default="false",
            description="Skip change events that cannot be parsed instead of failing.",
        ),
        ConfigOption(
            f"{prefix}.timestamp-format.standard",
            type="enum",
            default="SQL",
            values=("SQL", "ISO-8601"),
            description="Timestamp text standard of the row fields (see 'json.timestamp-format.standard').",
        ),
        ConfigOption(
            f"{prefix}.map-null-key.mode",
            type="enum",
            default="FAIL",
            values=("FAIL", "DROP", "LITERAL"),
            description="Writing a MAP with a NULL key: FAIL, DROP the entry, or write the literal.",
        ),
        ConfigOption(
            f"{prefix}.map-null-key.literal",
            default="null",
            description="Key text for NULL map keys when the mode is LITERAL.",
        ),
        ConfigOption(
            f"{prefix}.encode.decimal-as-plain-number",
            type="boolean",
            default="false",
            description="Write DECIMAL values in plain notation (0.000000027); by default a value under 1e-6 is "
            "written in Java's scientific notation (2.7E-8).",
        ),
    )


CANAL_OPTIONS: tuple[ConfigOption[Any], ...] = _options("canal-json") + (
    ConfigOption(
        "canal-json.database.include",
        description="Only read change events of databases whose name matches this regular expression.",
    ),
    ConfigOption(
        "canal-json.table.include",
        description="Only read change events of tables whose name matches this regular expression.",
    ),
)
MAXWELL_OPTIONS: tuple[ConfigOption[Any], ...] = _options("maxwell-json")
OGG_OPTIONS: tuple[ConfigOption[Any], ...] = _options("ogg-json") + (
    ConfigOption(
        "ogg-json.encode.ignore-null-fields",
        type="boolean",
        default="false",
        description="Leave NULL fields out of written events (the null 'before' / 'after' image too).",
    ),
)

CANAL_METADATA: tuple[EventMetadata, ...] = (
    EventMetadata("database", STRING(), json_text("$.database"), "The originating database ('database')."),
    EventMetadata("table", STRING(), json_text("$.table"), "The originating table ('table')."),
    EventMetadata(
        "sql-type",
        MAP(STRING(), INT()),
        "TRY_CAST(json_extract(j, '$.sqlType') AS MAP(VARCHAR, INTEGER))",
        "The SQL types of the row's fields ('sqlType').",
    ),
    EventMetadata(
        "pk-names", STRING_LIST_META, json_string_list("$.pkNames"), "The primary key's columns ('pkNames')."
    ),
    EventMetadata(
        "ingestion-timestamp",
        TIMESTAMP_META,
        json_millis("$.ts"),
        "When the connector processed the event ('ts', epoch milliseconds).",
    ),
    EventMetadata(
        "event-timestamp",
        TIMESTAMP_META,
        json_millis("$.es"),
        "When the database made the change ('es', epoch milliseconds).",
    ),
)
MAXWELL_METADATA: tuple[EventMetadata, ...] = (
    EventMetadata("database", STRING(), json_text("$.database"), "The originating database ('database')."),
    EventMetadata("table", STRING(), json_text("$.table"), "The originating table ('table')."),
    EventMetadata(
        "primary-key-columns",
        STRING_LIST_META,
        json_string_list("$.primary_key_columns"),
        "The primary key's columns ('primary_key_columns').",
    ),
    EventMetadata(
        "ingestion-timestamp",
        TIMESTAMP_META,
        json_millis("$.ts", scale=1000),
        "When the connector processed the event ('ts', epoch seconds).",
    ),
)
# Flink's OggJsonDecodingFormat's keys. Flink reads 'current_ts' as epoch milliseconds and
# 'op_ts' / 'table' out of a map; here each is read as GoldenGate writes it: a timestamp
# text ('2020-05-13 15:40:06.000000', UTC) or epoch milliseconds, and the table's name.
OGG_METADATA: tuple[EventMetadata, ...] = (
    EventMetadata(
        "table", STRING(), json_text("$.table"), "The fully qualified table name ('table': CATALOG.SCHEMA.TABLE)."
    ),
    EventMetadata(
        "current_ts",
        TIMESTAMP_META,
        json_millis("$.current_ts"),
        "When GoldenGate's formatter processed the operation ('current_ts').",
    ),
    EventMetadata(
        "op_ts", TIMESTAMP_META, json_millis("$.op_ts"), "When the operation happened in the source ('op_ts')."
    ),
    EventMetadata(
        "source.properties",
        MAP(STRING(), STRING()),
        json_string_map("$.source"),
        "The event's 'source' object, its values as text.",
    ),
)


class ChangeEventDecoder(JsonRows, MessageDecoder):
    """Canal / Maxwell change events → +I / -U / +U / -D rows (record order kept; an
    UPDATE gives its before image (the new values overlaid with the changed fields' old
    values) then its after image). Events of other types (DDL) give no row."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext, kind: str) -> None:
        super().__init__(list(fields), options, prefix=kind)
        self.kind = kind
        self.out_schema = self.schema.append(pa.field(ROW_KIND, pa.int8(), False))
        self.database = options.get("canal-json.database.include") if kind == "canal-json" else None
        self.table = options.get("canal-json.table.include") if kind == "canal-json" else None
        self._locate: Callable[[int], str] = str

    def fail(self, message: str, number: int) -> None:
        raise DataError(f"{message} ({self._locate(number)})")

    def event_metadata(self, payloads: pa.Array, keys: list[str]) -> list[pa.Array]:
        specs = CANAL_METADATA if self.kind == "canal-json" else MAXWELL_METADATA
        return read_event_metadata(self.conv, specs, payloads, keys)

    def _images(self, lines: pa.Array) -> pa.Table:
        """One row per image: (event index, kind, image JSON text); -1 kind = bad event."""
        if self.kind == "canal-json":
            base = (
                "SELECT i, json_type(j) AS t, upper(json_extract_string(j, '$.type')) AS typ, "
                "json_extract_string(j, '$.database') AS db, json_extract_string(j, '$.table') AS tb, "
                "json_extract(j, '$.data') AS data, json_extract(j, '$.old') AS old "
                "FROM (SELECT (row_number() OVER ()) - 1 AS i, TRY_CAST(j AS JSON) AS j FROM src)"
            )
            sql = (
                f"WITH b AS ({base}), e AS (SELECT i, t, typ, db, tb, data, old, "
                "unnest(CASE WHEN json_type(data) = 'ARRAY' THEN range(json_array_length(data)::BIGINT) ELSE [NULL] END) AS k "
                "FROM b) "
                "SELECT i, k, t, typ, db, tb, json_extract(data, '$[' || k || ']')::VARCHAR AS d, "
                "json_extract(old, '$[' || k || ']')::VARCHAR AS o FROM e ORDER BY i, k"
            )
        else:
            sql = (
                "SELECT i, 0 AS k, json_type(j) AS t, upper(json_extract_string(j, '$.type')) AS typ, "
                "json_extract_string(j, '$.database') AS db, json_extract_string(j, '$.table') AS tb, "
                "json_extract(j, '$.data')::VARCHAR AS d, json_extract(j, '$.old')::VARCHAR AS o "
                "FROM (SELECT (row_number() OVER ()) - 1 AS i, TRY_CAST(j AS JSON) AS j FROM src) ORDER BY i"
            )
        return self.conv.query(pa.table({"j": lines}), sql)

    def decode(self, payloads: pa.Array, locate: Callable[[int], str]) -> tuple[pa.RecordBatch, np.ndarray]:
        self._locate = locate
        present = np.flatnonzero(np.asarray(payloads.is_valid().to_numpy(zero_copy_only=False), bool))
        if len(present) == 0:
            return pa.RecordBatch.from_pylist([], schema=self.out_schema), present
        lines = _utf8_lines(payloads.take(pa.array(present)), self.fail)
        res = self._images(lines)
        event = present[res.column("i").to_numpy()]
        typ = np.asarray(pc.fill_null(res.column("typ").combine_chunks(), "").to_numpy(zero_copy_only=False), object)
        is_obj = np.asarray(pc.fill_null(pc.equal(res.column("t").combine_chunks(), "OBJECT"), False), bool)
        d = res.column("d").combine_chunks()
        has_d = np.asarray(d.is_valid().to_numpy(zero_copy_only=False), bool)
        keep = np.ones(len(event), bool)
        for col, pattern in (("db", self.database), ("tb", self.table)):
            if pattern:
                names = res.column(col).combine_chunks()
                ok = pc.fill_null(pc.match_substring_regex(names, "^(?:" + pattern + ")$"), False)
                keep &= np.asarray(ok.to_numpy(zero_copy_only=False), bool)
        known = np.isin(typ, ["INSERT", "UPDATE", "DELETE"])
        bad = ~is_obj | (known & ~has_d)
        if self.kind == "canal-json":
            known &= is_obj  # canal DDL events ('CREATE', 'ALTER', ...) are skipped
        else:
            bad |= is_obj & ~known & ~np.isin(typ, ["BOOTSTRAP-START", "BOOTSTRAP-COMPLETE", "TABLE-CREATE"])
        if bad.any() and not self.ignore_errors:
            i = int(np.flatnonzero(bad)[0])
            self.fail(
                f"Failed to deserialize {self.kind} event '{lines[int(res.column('i')[i].as_py())].as_py()}'.",
                int(event[i]),
            )
        if bad.any():
            self.skipped_rows += len(np.unique(event[bad]))
        use = known & keep & ~bad
        upd = use & (typ == "UPDATE")
        merged = (
            self.conv.query(
                pa.table({"d": d, "o": res.column("o").combine_chunks()}),
                "SELECT json_merge_patch(d, coalesce(o, '{}'))::VARCHAR AS b FROM src",
            )
            .column("b")
            .combine_chunks()
        )
        # images in order: an UPDATE's before image right before its after image
        n = len(event)
        order = np.empty(2 * n, np.int64)
        order[0::2] = n + np.arange(n)  # before images (from `merged`)
        order[1::2] = np.arange(n)
        sel = np.empty(2 * n, bool)
        sel[0::2], sel[1::2] = upd, use
        picked = order[sel]
        texts = pa.concat_arrays([d.cast(pa.string()), merged.cast(pa.string())]).take(pa.array(picked))
        kinds_all = np.concatenate(
            [
                np.where(typ == "INSERT", INSERT, np.where(typ == "DELETE", DELETE, UPDATE_AFTER)).astype(np.int8),
                np.full(n, UPDATE_BEFORE, np.int8),
            ]
        )
        kinds = kinds_all[picked]
        src = event[picked % n] if n else event[:0]
        if len(texts) == 0:
            return pa.RecordBatch.from_pylist([], schema=self.out_schema), src
        rows = self._plain(texts, src)
        assert rows is not None
        if self._kept is not None:
            kinds, src = kinds[self._kept], src[self._kept]
        return rows.append_column(pa.field(ROW_KIND, pa.int8(), False), pa.array(kinds, pa.int8())), src


class OggDecoder(JsonDecoder):
    """Oracle GoldenGate's JSON events ({"before","after","op_type": I/U/D}) → rows, as
    Flink's ogg-json reads them: an update or delete without "before" fails, as does an
    operation other than I/U/D (a truncate 'T' too), unless 'ogg-json.ignore-parse-errors'."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        JsonRows.__init__(self, list(fields), options, debezium=True, prefix="ogg-json", envelope=OGG)
        self._locate = str

    def event_metadata(self, payloads: pa.Array, keys: list[str]) -> list[pa.Array]:
        return read_event_metadata(self.conv, OGG_METADATA, payloads, keys)


def _canal(fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> MessageDecoder:
    return ChangeEventDecoder(fields, options, ctx, "canal-json")


def _maxwell(fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> MessageDecoder:
    return ChangeEventDecoder(fields, options, ctx, "maxwell-json")


register_format(
    FileFormat(
        name="canal-json",
        extension="json",
        description="Canal's JSON change events (INSERT / UPDATE / DELETE with 'data' and 'old' arrays).",
        options=CANAL_OPTIONS,
        open_reader=event_lines_reader(_canal),
        open_writer=event_lines_writer(change_event_encoder("canal-json")),
        open_decoder=_canal,
        open_encoder=change_event_encoder("canal-json"),
        changelog=True,
        metadata=tuple(m.column() for m in CANAL_METADATA),
    )
)
register_format(
    FileFormat(
        name="maxwell-json",
        extension="json",
        description="Maxwell's JSON change events (insert / update / delete with 'data' and 'old').",
        options=MAXWELL_OPTIONS,
        open_reader=event_lines_reader(_maxwell),
        open_writer=event_lines_writer(change_event_encoder("maxwell-json")),
        open_decoder=_maxwell,
        open_encoder=change_event_encoder("maxwell-json"),
        changelog=True,
        metadata=tuple(m.column() for m in MAXWELL_METADATA),
    )
)
register_format(
    FileFormat(
        name="ogg-json",
        extension="json",
        description="Oracle GoldenGate's JSON change events ({before, after, op_type}: I / U / D).",
        options=OGG_OPTIONS,
        open_reader=event_lines_reader(OggDecoder),
        open_writer=event_lines_writer(change_event_encoder("ogg-json")),
        open_decoder=OggDecoder,
        open_encoder=change_event_encoder("ogg-json"),
        changelog=True,
        metadata=tuple(m.column() for m in OGG_METADATA),
    )
)
