"""The message formats' documented options and edge cases, in process (decoders and
encoders over Arrow arrays, no broker): json, debezium-json, ogg-json, canal-json,
maxwell-json, raw; the formats' metadata; refused formats; the Java client settings a
Kafka table may carry."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.base import SourceContext
from runtime.connectors.formats import get_format
from runtime.errors import ConnectorError, DataError
from runtime.types import (
    BIGINT,
    BYTES,
    DECIMAL,
    DOUBLE,
    INT,
    MAP,
    STRING,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    Field,
)

CTX = SourceContext("STREAMING")


def decode(fmt: str, fields: tuple[Field, ...], payloads: list[Any], **options: str) -> tuple[list[dict], list[int]]:
    decoder = get_format(fmt).open_decoder(fields, options, CTX)  # type: ignore[misc]
    raw = [
        p if p is None or isinstance(p, bytes) else (p if isinstance(p, str) else json.dumps(p)).encode()
        for p in payloads
    ]
    batch, src = decoder.decode(pa.array(raw, pa.binary()), lambda i: f"record {i}")
    return batch.to_pylist(), [int(i) for i in src]


def encode(
    fmt: str, fields: tuple[Field, ...], rows: list[tuple], kinds: list[int] | None = None, **options: str
) -> list[str]:
    return [v.decode() for v in encode_raw(fmt, fields, rows, kinds, **options)]


def encode_raw(
    fmt: str, fields: tuple[Field, ...], rows: list[tuple], kinds: list[int] | None = None, **options: str
) -> list[bytes]:
    cols = [pa.array([r[i] for r in rows], f.type.to_arrow()) for i, f in enumerate(fields)]
    names = [f.name for f in fields]
    if kinds is not None:
        cols.append(pa.array(kinds, pa.int8()))
        names.append(ROW_KIND)
    encoder = get_format(fmt).open_encoder(fields, options, CTX)  # type: ignore[misc]
    return list(encoder.encode(pa.RecordBatch.from_arrays(cols, names=names)).to_pylist())


ID_NAME = (Field("id", INT()), Field("name", STRING()))


# ---------------------------------------------------------------------- json
def test_json_fail_on_missing_field() -> None:
    assert decode("json", ID_NAME, [{"id": 1}])[0] == [{"id": 1, "name": None}]
    with pytest.raises(DataError, match=r"Could not find field with name 'name'.*record 1"):
        decode("json", ID_NAME, [{"id": 1, "name": "a"}, {"id": 2}], **{"json.fail-on-missing-field": "true"})


def test_json_ignore_parse_errors_skips_rows_and_nulls_fields() -> None:
    with pytest.raises(DataError, match="record 1"):
        decode("json", ID_NAME, [{"id": 1}, "{oops", {"id": "x"}])
    got, src = decode(
        "json", ID_NAME, [{"id": 1}, "{oops", {"id": "x", "name": "b"}], **{"json.ignore-parse-errors": "true"}
    )
    assert (got, src) == ([{"id": 1, "name": None}, {"id": None, "name": "b"}], [0, 2])


def test_json_top_level_arrays_give_a_row_per_element() -> None:
    got, src = decode("json", ID_NAME, ['[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]', "[]", {"id": 3}])
    assert got == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": None}]
    assert src == [0, 0, 2]
    with pytest.raises(DataError, match="record 0"):
        decode("json", ID_NAME, ["[1, 2]"])


TS = (Field("ts", TIMESTAMP(3)), Field("ltz", TIMESTAMP_LTZ(3)))
NOON = datetime(2020, 12, 30, 12, 13, 14, 123000)


@pytest.mark.parametrize(
    ("standard", "text", "written"),
    [
        ("SQL", {"ts": "2020-12-30 12:13:14.123", "ltz": "2020-12-30 12:13:14.123Z"},
         '{"ts":"2020-12-30 12:13:14.123","ltz":"2020-12-30 12:13:14.123Z"}'),
        ("ISO-8601", {"ts": "2020-12-30T12:13:14.123", "ltz": "2020-12-30T12:13:14.123Z"},
         '{"ts":"2020-12-30T12:13:14.123","ltz":"2020-12-30T12:13:14.123Z"}'),
        ("ISO-8601-WITH-OFFSET", {"ts": "2020-12-30T14:13:14.123+02:00", "ltz": "2020-12-30T06:43:14.123-05:30"},
         '{"ts":"2020-12-30T12:13:14.123Z","ltz":"2020-12-30T12:13:14.123Z"}'),
    ],
)  # fmt: skip
def test_json_timestamp_format_standard(standard: str, text: dict[str, str], written: str) -> None:
    """Each standard reads its documented text and writes it back; 'ISO-8601-WITH-OFFSET'
    normalizes any offset to UTC."""
    opts = {"json.timestamp-format.standard": standard}
    ((row,), _) = decode("json", TS, [text], **opts)
    assert row["ts"] == NOON
    assert row["ltz"] == NOON.replace(tzinfo=UTC)
    assert encode("json", TS, [(NOON, NOON.replace(tzinfo=UTC))], **opts) == [written]


def test_json_timestamp_text_of_another_standard_does_not_convert() -> None:
    with pytest.raises(DataError, match="cannot convert"):
        decode("json", TS[:1], [{"ts": "2020-12-30T12:13:14.123"}])
    with pytest.raises(ConnectorError, match="Supported values are"):
        decode("json", TS[:1], [], **{"json.timestamp-format.standard": "RFC"})


MAPS = (Field("m", MAP(STRING(), INT())),)


@pytest.mark.parametrize(
    ("options", "written"),
    [
        ({"json.map-null-key.mode": "DROP"}, '{"m":{"a":1}}'),
        ({"json.map-null-key.mode": "LITERAL"}, '{"m":{"a":1,"null":2}}'),
        ({"json.map-null-key.mode": "LITERAL", "json.map-null-key.literal": "nokey"}, '{"m":{"a":1,"nokey":2}}'),
    ],
)
def test_json_map_null_key_mode(options: dict[str, str], written: str) -> None:
    assert encode("json", MAPS, [([("a", 1), (None, 2)],)], **options) == [written]


def test_json_map_null_key_mode_fail_is_the_default() -> None:
    with pytest.raises(DataError, match="null keys"):
        encode("json", MAPS, [([("a", 1), (None, 2)],)])


def test_json_decimal_as_plain_number() -> None:
    """Flink writes a DECIMAL as Java's BigDecimal.toString: scientific under 1e-6."""
    fields = (Field("d", DECIMAL(12, 9)),)
    values = [(Decimal("0.000000027"),), (Decimal("1.5"),), (Decimal("0"),), (Decimal("-0.000000120"),)]
    assert encode("json", fields, values) == ['{"d":2.7E-8}', '{"d":1.500000000}', '{"d":0E-9}', '{"d":-1.20E-7}']
    plain = encode("json", fields, values, **{"json.encode.decimal-as-plain-number": "true"})
    assert plain == ['{"d":0.000000027}', '{"d":1.500000000}', '{"d":0.000000000}', '{"d":-0.000000120}']
    # both read back to the same values
    assert [r["d"] for r in decode("json", fields, encode("json", fields, values))[0]] == [v for (v,) in values]


def test_json_ignore_null_fields() -> None:
    assert encode("json", ID_NAME, [(1, None)]) == ['{"id":1,"name":null}']
    assert encode("json", ID_NAME, [(1, None)], **{"json.encode.ignore-null-fields": "true"}) == ['{"id":1}']


# ---------------------------------------------------------------------- debezium, ogg
PRODUCT = (Field("id", BIGINT()), Field("weight", DOUBLE()))


def test_debezium_schema_include() -> None:
    event = {"before": None, "after": {"id": 1, "weight": 5.0}, "op": "c"}
    wrapped = {"schema": {"type": "struct"}, "payload": event}
    got, _ = decode("debezium-json", PRODUCT, [wrapped], **{"debezium-json.schema-include": "true"})
    assert got == [{"id": 1, "weight": 5.0, ROW_KIND: INSERT}]
    # without the option the envelope has no "op": the event is not a change event
    with pytest.raises(DataError, match="Failed to deserialize Debezium JSON"):
        decode("debezium-json", PRODUCT, [wrapped])


def test_debezium_update_without_before_fails_as_in_flink() -> None:
    """An UPDATE whose "before" is null (a Postgres table without REPLICA IDENTITY FULL)."""
    event = {"before": None, "after": {"id": 1, "weight": 5.0}, "op": "u"}
    with pytest.raises(DataError, match="Debezium JSON"):
        decode("debezium-json", PRODUCT, [event])
    got, _ = decode(
        "debezium-json",
        PRODUCT,
        [event, {"after": {"id": 2}, "op": "r"}],
        **{"debezium-json.ignore-parse-errors": "true"},
    )
    assert got == [{"id": 2, "weight": None, ROW_KIND: INSERT}]


def test_ogg_json_events() -> None:
    before, after = {"id": 1, "weight": 5.18}, {"id": 1, "weight": 5.15}
    events = [
        {"before": None, "after": before, "op_type": "I", "table": "S.PRODUCTS"},
        {"before": before, "after": after, "op_type": "U"},
        {"before": after, "after": None, "op_type": "D"},
        None,  # a tombstone: no row
    ]
    got, src = decode("ogg-json", PRODUCT, events)
    assert [(r[ROW_KIND], r["weight"]) for r in got] == [
        (INSERT, 5.18), (UPDATE_BEFORE, 5.18), (UPDATE_AFTER, 5.15), (DELETE, 5.15)
    ]  # fmt: skip
    assert src == [0, 1, 1, 2]
    truncate = {"before": None, "after": None, "op_type": "T"}
    with pytest.raises(DataError, match="Ogg JSON.*record 0"):
        decode("ogg-json", PRODUCT, [truncate])
    got, _ = decode("ogg-json", PRODUCT, [truncate, events[0]], **{"ogg-json.ignore-parse-errors": "true"})
    assert [r[ROW_KIND] for r in got] == [INSERT]


def test_ogg_json_writes_insertions_and_deletions() -> None:
    rows = [(1, 5.18), (1, 5.18), (1, 5.15), (1, 5.15)]
    out = encode("ogg-json", PRODUCT, rows, [INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE])
    assert out == [
        '{"before":null,"after":{"id":1,"weight":5.18},"op_type":"I"}',
        '{"before":{"id":1,"weight":5.18},"after":null,"op_type":"D"}',
        '{"before":null,"after":{"id":1,"weight":5.15},"op_type":"I"}',
        '{"before":{"id":1,"weight":5.15},"after":null,"op_type":"D"}',
    ]
    lean = encode("ogg-json", PRODUCT, rows[:2], [INSERT, DELETE], **{"ogg-json.encode.ignore-null-fields": "true"})
    assert lean == ['{"after":{"id":1,"weight":5.18},"op_type":"I"}', '{"before":{"id":1,"weight":5.18},"op_type":"D"}']
    # read back: the same changes
    got, _ = decode("ogg-json", PRODUCT, out)
    assert [(r[ROW_KIND], r["weight"]) for r in got] == [(INSERT, 5.18), (DELETE, 5.18), (INSERT, 5.15), (DELETE, 5.15)]


# ---------------------------------------------------------------------- metadata
def metadata(fmt: str, payloads: list[Any], keys: list[str], **options: str) -> list[list[Any]]:
    decoder = get_format(fmt).open_decoder(PRODUCT, options, CTX)  # type: ignore[misc]
    raw = pa.array([None if p is None else json.dumps(p).encode() for p in payloads], pa.binary())
    return [a.to_pylist() for a in decoder.event_metadata(raw, keys)]


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def test_debezium_metadata() -> None:
    source = {"ts_ms": 1700000000000, "db": "inv", "schema": "public", "table": "t", "lsn": 7}
    event = {"before": None, "after": {"id": 1}, "source": source, "op": "c", "ts_ms": 1700000000500}
    keys = ["ingestion-timestamp", "source.timestamp", "source.database", "source.schema", "source.table", "schema"]
    got = metadata("debezium-json", [event, None, {"source": {"collection": "c"}, "op": "c"}], keys)
    assert got == [
        [at(1700000000500), None, None],
        [at(1700000000000), None, None],
        ["inv", None, None],
        ["public", None, None],
        ["t", None, "c"],  # 'collection' where there is no 'table' (MongoDB)
        [None, None, None],
    ]
    (props,) = metadata("debezium-json", [event], ["source.properties"])
    assert {e["key"]: e["value"] for e in props[0]} == {
        "ts_ms": "1700000000000",
        "db": "inv",
        "schema": "public",
        "table": "t",
        "lsn": "7",
    }
    wrapped = {"schema": {"type": "struct", "optional": False}, "payload": event}
    schema, table = metadata(
        "debezium-json", [wrapped], ["schema", "source.table"], **{"debezium-json.schema-include": "true"}
    )
    assert json.loads(schema[0]) == {"type": "struct", "optional": False}
    assert table == ["t"]


def test_canal_maxwell_and_ogg_metadata() -> None:
    canal = {
        "database": "d",
        "table": "t",
        "sqlType": {"id": 4},
        "pkNames": ["id"],
        "ts": 1000,
        "es": 2000,
        "type": "INSERT",
    }
    assert metadata("canal-json", [canal], ["database", "table", "pk-names", "ingestion-timestamp", "event-timestamp"]) == [
        ["d"], ["t"], [["id"]], [at(1000)], [at(2000)]
    ]  # fmt: skip
    (sql_type,) = metadata("canal-json", [canal], ["sql-type"])
    assert sql_type[0] == [{"key": "id", "value": 4}]
    maxwell = {"database": "d", "table": "t", "primary_key_columns": ["id"], "ts": 1477053217, "type": "insert"}
    assert metadata("maxwell-json", [maxwell], ["primary-key-columns", "ingestion-timestamp"]) == [
        [["id"]], [at(1477053217000)]  # Maxwell's 'ts' is in seconds
    ]  # fmt: skip
    ogg = {
        "table": "C.S.T",
        "op_ts": "2020-05-13 15:40:06.000000",
        "current_ts": "2020-05-13T15:40:07.000000",
        "op_type": "I",
    }
    assert metadata("ogg-json", [ogg, {**ogg, "current_ts": 1589384407000}], ["table", "op_ts", "current_ts"]) == [
        ["C.S.T", "C.S.T"],
        [at(1589384406000), at(1589384406000)],
        [at(1589384407000), at(1589384407000)],
    ]


def test_formats_declare_their_metadata_with_flinks_types() -> None:
    declared = {m.key: m.type for m in get_format("debezium-json").metadata}
    assert declared == {
        "schema": "STRING",
        "ingestion-timestamp": "TIMESTAMP_LTZ(3)",
        "source.timestamp": "TIMESTAMP_LTZ(3)",
        "source.database": "STRING",
        "source.schema": "STRING",
        "source.table": "STRING",
        "source.properties": "MAP<STRING, STRING>",
    }
    assert get_format("json").metadata == ()


# ---------------------------------------------------------------------- raw
@pytest.mark.parametrize("endianness", ["big-endian", "little-endian"])
def test_raw_numbers_round_trip_in_either_byte_order(endianness: str) -> None:
    fields = (Field("v", BIGINT()),)
    opts = {"raw.endianness": endianness}
    encoder = get_format("raw").open_encoder(fields, opts, CTX)  # type: ignore[misc]
    payloads = encoder.encode(pa.RecordBatch.from_arrays([pa.array([1, -2, None], pa.int64())], names=["v"]))
    order = "big" if endianness == "big-endian" else "little"
    assert payloads.to_pylist() == [(1).to_bytes(8, order, signed=True), (-2).to_bytes(8, order, signed=True), None]
    got, _ = decode("raw", fields, payloads.to_pylist(), **opts)
    assert [r["v"] for r in got] == [1, -2, None]


def test_raw_charset() -> None:
    text = (Field("a", STRING()),)
    for charset, data in (
        ("UTF-8", "grüße".encode()),
        ("ISO-8859-1", b"gr\xfc\xdfe"),
        ("UTF-16BE", "grüße".encode("utf-16-be")),
    ):
        assert encode_raw("raw", text, [("grüße",), (None,)], **{"raw.charset": charset}) == [data, None]
        assert decode("raw", text, [data, None], **{"raw.charset": charset})[0] == [{"a": "grüße"}, {"a": None}]
    with pytest.raises(ConnectorError, match="Unsupported 'raw.charset' charset: EBCDIC-XYZ"):
        decode("raw", text, [], **{"raw.charset": "EBCDIC-XYZ"})
    with pytest.raises(DataError, match="record 0: not UTF-8"):
        decode("raw", text, [b"\xff"])
    with pytest.raises(ConnectorError, match="single physical column"):
        decode("raw", (Field("a", STRING()), Field("b", BYTES())), [])


# ---------------------------------------------------------------------- planning-time checks
def _plan(ddl: str) -> None:
    from streamsql import TableEnvironment

    env = TableEnvironment.create()
    env.execute_sql(ddl)
    env.explain_sql("SELECT * FROM t")


KAFKA = (
    "'connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = '127.0.0.1:9', "
    "'scan.startup.mode' = 'earliest-offset'"
)


@pytest.mark.parametrize("fmt", ["avro-confluent", "debezium-avro-confluent"])
def test_confluent_avro_formats_are_refused_with_the_reason(fmt: str) -> None:
    with pytest.raises(Exception, match=f"(?s)Format '{fmt}'.*not supported.*Confluent Schema Registry"):
        _plan(f"CREATE TABLE t (id INT) WITH ({KAFKA}, 'value.format' = '{fmt}', '{fmt}.url' = 'http://r:8081')")


def test_format_metadata_keys_are_offered_under_value() -> None:
    _plan(
        f"CREATE TABLE t (tb STRING METADATA FROM 'value.table' VIRTUAL, id INT) WITH ({KAFKA}, 'format' = 'ogg-json')"
    )
    with pytest.raises(Exception, match=r"(?s)Invalid metadata key 'value.source.table'.*value\.table"):
        _plan(
            f"CREATE TABLE t (tb STRING METADATA FROM 'value.source.table' VIRTUAL, id INT) WITH ({KAFKA}, 'format' = 'ogg-json')"
        )
    with pytest.raises(Exception, match="Invalid metadata key 'value.table'"):  # plain json has none
        _plan(
            f"CREATE TABLE t (tb STRING METADATA FROM 'value.table' VIRTUAL, id INT) WITH ({KAFKA}, 'format' = 'json')"
        )


def test_ogg_json_options_are_flinks() -> None:
    keys = {o.key for o in get_format("ogg-json").options}
    assert keys == {
        "ogg-json.ignore-parse-errors",
        "ogg-json.timestamp-format.standard",
        "ogg-json.map-null-key.mode",
        "ogg-json.map-null-key.literal",
        "ogg-json.encode.decimal-as-plain-number",
        "ogg-json.encode.ignore-null-fields",
    }


def test_java_client_settings() -> None:
    """'sasl.jaas.config' of the PLAIN / SCRAM login modules becomes librdkafka's user and
    password; Java keystores and other login modules fail naming the option."""
    from runtime.connectors.kafka.options import librdkafka_properties

    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3 cr t";'
    assert librdkafka_properties({"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas}) == {
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "alice",
        "sasl.password": "s3 cr t",
    }
    with pytest.raises(ConnectorError, match="PLAIN and SCRAM login modules"):
        librdkafka_properties({"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"})
    with pytest.raises(Exception, match=r"properties\.ssl\.truststore\.location.*properties\.ssl\.ca\.location"):
        _plan(
            f"CREATE TABLE t (id INT) WITH ({KAFKA}, 'format' = 'json', 'properties.ssl.truststore.location' = '/t.jks')"
        )


# ---------------------------------------------------------------------- avro
def test_avro_schema_follows_flinks_timestamp_mapping() -> None:
    from runtime.connectors.formats.avro_format import avro_type

    def logical(t: Any) -> str:
        return str((t[1] if isinstance(t, list) else t)["logicalType"])

    assert logical(avro_type(TIMESTAMP(3), "c")) == "timestamp-millis"
    assert logical(avro_type(TIMESTAMP(6), "c")) == "timestamp-micros"  # TIMESTAMP is TIMESTAMP(6)
    assert logical(avro_type(TIMESTAMP_LTZ(3), "c")) == "timestamp-millis"
    assert logical(avro_type(TIMESTAMP(3), "c", legacy=False)) == "local-timestamp-millis"
    assert logical(avro_type(TIMESTAMP(6), "c", legacy=False)) == "local-timestamp-micros"
    assert logical(avro_type(TIMESTAMP_LTZ(6), "c", legacy=False)) == "timestamp-micros"
    with pytest.raises(ConnectorError, match="precision: 9"):
        avro_type(TIMESTAMP(9), "c")


@pytest.mark.parametrize(
    "options", [{}, {"avro.encoding": "json"}, {"avro.timestamp_mapping.legacy": "false", "avro.codec": "snappy"}]
)
def test_avro_round_trip(options: dict[str, str]) -> None:
    fields = (
        Field("id", INT()),
        Field("ts", TIMESTAMP(6)),
        Field("d", DECIMAL(10, 2)),
        Field("m", MAP(STRING(), INT())),
    )
    row = (1, datetime(2020, 1, 1, 1, 2, 3, 456789), Decimal("1.50"), [("a", 1)])
    payloads = encode_raw("avro", fields, [row, (None, None, None, None)], **options)
    if options.get("avro.encoding") == "json":  # Avro's JSON encoding: a union's value under its branch
        assert json.loads(payloads[0])["id"] == {"int": 1}
        assert json.loads(payloads[0])["ts"] == {"long": 1577840523456789}
    got, _ = decode("avro", fields, payloads, **options)
    assert [(r["id"], r["ts"], r["d"], r["m"]) for r in got] == [
        (1, row[1], Decimal("1.50"), [{"key": "a", "value": 1}]),
        (None, None, None, None),
    ]


def test_debezium_json_cannot_write_the_schema_envelope() -> None:
    with pytest.raises(ConnectorError, match="doesn't support 'debezium-json.schema-include'"):
        encode("debezium-json", PRODUCT, [(1, 1.0)], [INSERT], **{"debezium-json.schema-include": "true"})
    out = encode("debezium-json", PRODUCT, [(1, 1.0)], [INSERT], **{"debezium-json.map-null-key.mode": "DROP"})
    assert out == ['{"before":null,"after":{"id":1,"weight":1.0},"op":"c"}']


def test_json_fail_on_missing_field_and_ignore_parse_errors_exclude_each_other() -> None:
    with pytest.raises(Exception, match="fail-on-missing-field and ignore-parse-errors shouldn't both be true"):
        _plan(
            f"CREATE TABLE t (id INT) WITH ({KAFKA}, 'value.format' = 'json', "
            "'value.json.fail-on-missing-field' = 'true', 'value.json.ignore-parse-errors' = 'true')"
        )


def test_json_nested_values_are_written_column_wise_with_the_options() -> None:
    from runtime.types import ARRAY, ROW

    fields = (
        Field("a", ARRAY(DECIMAL(10, 2))),
        Field("m", MAP(STRING(), ARRAY(INT()))),
        Field("r", ROW([("x", INT()), ("y", STRING())])),
    )
    rows = [
        ([Decimal("1.50"), None], [("k", [1, 2]), (None, None)], {"x": 1, "y": 'a"b'}),
        (None, [], None),
        ([], None, {"x": None, "y": None}),
    ]
    assert encode("json", fields, rows, **{"json.map-null-key.mode": "LITERAL"}) == [
        '{"a":[1.50,null],"m":{"k":[1,2],"null":null},"r":{"x":1,"y":"a\\"b"}}',
        '{"a":null,"m":{},"r":null}',
        '{"a":[],"m":null,"r":{"x":null,"y":null}}',
    ]
    lean = encode("json", fields, rows, **{"json.map-null-key.mode": "DROP", "json.encode.ignore-null-fields": "true"})
    assert lean == ['{"a":[1.50,null],"m":{"k":[1,2]},"r":{"x":1,"y":"a\\"b"}}', '{"m":{}}', '{"a":[],"r":{}}']


def test_json_ignore_null_fields_keeps_a_row_whose_fields_are_all_null() -> None:
    """Arrow 26's null-skipping join drops rows where every item is NULL: each row must
    still give one object."""
    two = (Field("a", INT()), Field("b", INT()))
    out = encode("json", two, [(1, None), (None, None), (None, 3)], **{"json.encode.ignore-null-fields": "true"})
    assert out == ['{"a":1}', "{}", '{"b":3}']


def test_java_client_settings_librdkafka_names_otherwise() -> None:
    from runtime.connectors.kafka.options import librdkafka_properties

    java = {
        "fetch.max.wait.ms": "500",
        "receive.buffer.bytes": "65536",
        "buffer.memory": "33554432",
        "max.request.size": "1048576",
        "key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "max.block.ms": "60000",
        "acks": "all",
    }
    assert librdkafka_properties(java) == {
        "fetch.wait.max.ms": "500",
        "socket.receive.buffer.bytes": "65536",
        "queue.buffering.max.kbytes": "32768",
        "message.max.bytes": "1048576",
        "acks": "all",
    }
    with pytest.raises(ConnectorError, match=r"properties\.interceptor\.classes"):
        librdkafka_properties({"interceptor.classes": "com.example.Tracing"})


def test_json_map_keys_must_be_strings_as_in_flink() -> None:
    with pytest.raises(ConnectorError, match="doesn't support non-string as key type of map"):
        encode("json", (Field("m", MAP(INT(), INT())),), [([(1, 2)],)])
