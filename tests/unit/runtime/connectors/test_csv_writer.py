"""The 'csv' format's writer as Flink's (Jackson's CsvGenerator) and the options that shape it:
quoting, DECIMAL notation ('csv.write-bigdecimal-in-scientific-notation'), NULL and the null
literal, and what an empty field reads back as."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from runtime.connectors.base import SourceContext
from runtime.connectors.formats.csv_format import (
    CsvDecoder,
    CsvRowEncoder,
    decimal_plain_text,
    decimal_scientific_text,
)
from runtime.errors import DataError
from runtime.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    ROW,
    STRING,
    TIME,
    TIMESTAMP,
    TINYINT,
    Field,
    arrow_schema,
)

from .conftest import read_all
from .test_filesystem import _write


def _lines(fields: tuple[Field, ...], rows: list[dict], **options: str) -> list[str]:
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(fields))
    return CsvRowEncoder(fields, options).lines(batch).to_pylist()


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain", "plain"),
        ("", ""),  # an empty string is not quoted (Jackson's default)
        ("a b", '"a b"'),  # a space is below ','
        ("a,b", '"a,b"'),
        ('say "hi"', '"say ""hi"""'),
        ("tab\there", '"tab\there"'),
        ("line\nbreak", '"line\nbreak"'),
        ("back\\slash", '"back\\slash"'),  # the default escape-check character
        ("x" * 24, "x" * 24),
        ("x" * 25, '"' + "x" * 25 + '"'),  # longer than 24: quoted unchecked
        ("a-b.c:d", "a-b.c:d"),  # characters above ',' need no quotes
    ],
)
def test_strings_are_quoted_by_jacksons_loose_check(value: str, written: str) -> None:
    assert _lines((Field("s", STRING()),), [{"s": value}]) == [written]


def test_numbers_and_booleans_are_never_quoted_text_is() -> None:
    fields = (Field("i", INT()), Field("d", DOUBLE()), Field("b", BOOLEAN()), Field("ts", TIMESTAMP(3)))
    rows = [{"i": -1, "d": -1.5e-7, "b": True, "ts": dt.datetime(2024, 1, 1, 10, 0, 1, 500000)}]
    assert _lines(fields, rows) == ['-1,-1.5E-7,true,"2024-01-01 10:00:01.5"']


def test_delimiter_and_quote_options_move_the_quoting_threshold() -> None:
    fields = (Field("a", STRING()), Field("b", STRING()))
    # ';' (0x3B) is the highest: '1' and ':' are below it, 'a' is not
    assert _lines(fields, [{"a": "a1", "b": "a"}], **{"csv.field-delimiter": ";"}) == ['"a1";a']
    assert _lines(fields, [{"a": "it's", "b": "x y"}], **{"csv.quote-character": "'"}) == ["'it''s','x y'"]
    assert _lines(fields, [{"a": "a,b", "b": "c d"}], **{"csv.disable-quote-character": "true"}) == ["a,b,c d"]


def test_a_configured_escape_character_triggers_quotes_and_doubles_inside_them() -> None:
    fields = (Field("s", STRING()),)
    assert _lines(fields, [{"s": "a|b"}], **{"csv.escape-character": "|"}) == ['"a||b"']
    assert _lines(fields, [{"s": "a\\b"}], **{"csv.escape-character": "|"}) == ["a\\b"]


def test_decimal_is_plain_at_its_scale_unless_scientific_is_set() -> None:
    values = [Decimal(v) for v in ("100000.00", "1.50", "0.00", "-120.00", "0.000000120")]
    column = pa.array(values, pa.decimal128(20, 9))
    assert decimal_plain_text(column).to_pylist() == [
        "100000.000000000",
        "1.500000000",
        "0.000000000",
        "-120.000000000",
        "0.000000120",
    ]
    # Java's BigDecimal.stripTrailingZeros().toString()
    assert decimal_scientific_text(column).to_pylist() == ["1E+5", "1.5", "0", "-1.2E+2", "1.2E-7"]
    fields = (Field("d", DECIMAL(10, 2)),)
    rows = [{"d": Decimal("100000.00")}, {"d": Decimal("1.50")}]
    assert _lines(fields, rows) == ["100000.00", "1.50"]
    assert _lines(fields, rows, **{"csv.write-bigdecimal-in-scientific-notation": "false"}) == ["100000.00", "1.50"]
    # '+' is below ',': Jackson's check quotes the text it writes for a BigDecimal
    assert _lines(fields, rows, **{"csv.write-bigdecimal-in-scientific-notation": "true"}) == ['"1E+5"', "1.5"]


def test_array_elements_use_the_array_delimiter_and_null_literal() -> None:
    fields = (Field("xs", ARRAY(INT())), Field("s", STRING()))
    rows = [{"xs": [1, None, 3], "s": None}]
    assert _lines(fields, rows) == ["1;;3,"]
    assert _lines(fields, rows, **{"csv.null-literal": "N/A", "csv.array-element-delimiter": "|"}) == ["1|N/A|3,N/A"]


def test_null_int_round_trips_with_an_empty_null_literal(tmp_path) -> None:
    fields = (Field("a", INT()), Field("s", STRING()), Field("d", DATE()))
    rows = [{"a": None, "s": "x", "d": None}, {"a": 1, "s": None, "d": dt.date(2024, 2, 29)}]
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(fields))
    out = tmp_path / "with"
    options = {"path": str(out), "format": "csv", "csv.null-literal": ""}
    _write(options, fields, [batch])
    assert read_all({"connector": "filesystem", **options}, fields).to_pylist() == rows


def test_null_int_without_null_literal_is_written_empty_and_cannot_be_read_back(tmp_path) -> None:
    """As in Flink: NULL is written as '' and Jackson hands '' to Integer.parseInt."""
    fields = (Field("a", INT()), Field("s", STRING()))
    batch = pa.RecordBatch.from_pylist([{"a": None, "s": "x"}], schema=arrow_schema(fields))
    out = tmp_path / "without"
    _write({"path": str(out), "format": "csv"}, fields, [batch])
    assert [p.read_text() for p in out.iterdir()] == [",x\n"]
    with pytest.raises(DataError) as err:
        read_all({"connector": "filesystem", "path": str(out), "format": "csv"}, fields)
    message = str(err.value)
    assert 'For input string: ""' in message and "'csv.null-literal' = ''" in message and err.value.line == 1
    # a STRING's empty field stays '' (not NULL) without the literal
    batch = pa.RecordBatch.from_pylist([{"a": 1, "s": None}], schema=arrow_schema(fields))
    _write({"path": str(tmp_path / "s"), "format": "csv"}, fields, [batch])
    got = read_all({"connector": "filesystem", "path": str(tmp_path / "s"), "format": "csv"}, fields).to_pylist()
    assert got == [{"a": 1, "s": ""}]


def test_written_quoting_reads_back_unchanged(tmp_path) -> None:
    fields = (Field("s", STRING()), Field("ts", TIMESTAMP(3)), Field("d", DECIMAL(10, 2)))
    rows = [
        {"s": 'a "b", c\\d' + "x" * 30, "ts": dt.datetime(2024, 1, 1, 0, 0, 0, 1000), "d": Decimal("1.50")},
        {"s": "multi\nline", "ts": None, "d": Decimal("-0.05")},
    ]
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(fields))
    options = {"path": str(tmp_path / "o"), "format": "csv", "csv.null-literal": "NULL"}
    _write(options, fields, [batch])
    assert read_all({"connector": "filesystem", **options}, fields).to_pylist() == rows


def test_row_fields_are_joined_by_the_array_delimiter_and_read_back(tmp_path) -> None:
    fields = (Field("id", INT()), Field("r", ROW([("a", INT()), ("b", STRING())])))
    rows: list[dict] = [
        {"id": 1, "r": {"a": 2, "b": "x y"}},
        {"id": 2, "r": None},
        {"id": 3, "r": {"a": None, "b": "z"}},
    ]
    assert _lines(fields, rows) == ['1,"2;x y"', "2,", "3,;z"]
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(fields))
    options = {"path": str(tmp_path / "r"), "format": "csv", "csv.null-literal": ""}
    _write(options, fields, [batch])
    assert read_all({"connector": "filesystem", **options}, fields).to_pylist() == rows
    (tmp_path / "bad.csv").write_text("1,2;x;extra\n")
    with pytest.raises(DataError, match="cannot read field 'r'"):
        read_all({"connector": "filesystem", "path": str(tmp_path / "bad.csv"), "format": "csv"}, fields)
    lenient = {"connector": "filesystem", "path": str(tmp_path / "bad.csv"), "format": "csv"}
    lenient["csv.ignore-parse-errors"] = "true"
    assert read_all(lenient, fields).to_pylist() == [{"id": 1, "r": None}]


NULLS = {"csv.null-literal": "null"}


@pytest.mark.parametrize(
    ("dtype", "value", "written"),
    [  # Flink's CsvRowDataSerDeSchemaTest (testSerializeDeserialize), null literal 'null'
        (STRING(), "This is a test.", '"This is a test."'),
        (STRING(), "This is a test\n\r.", '"This is a test\n\r."'),
        (BOOLEAN(), True, "true"),
        (BIGINT(), None, "null"),
        (BIGINT(), 12345678910, "12345678910"),
        (FLOAT(), 0.33333334, "0.33333334"),
        (DOUBLE(), 0.33333333332, "0.33333333332"),
        (DECIMAL(38, 25), Decimal("1234.0000000000000000000000001"), '"1234.0000000000000000000000001"'),
        (DECIMAL(38, 0), Decimal("123400000000000000000000000001"), '"123400000000000000000000000001"'),
        (DATE(), dt.date(2018, 10, 12), "2018-10-12"),
        (TIME(0), dt.time(12, 12, 12), "12:12:12"),
        (TIME(3), dt.time(12, 12, 12, 232000), "12:12:12.232"),
        (TIMESTAMP(0), dt.datetime(2018, 10, 12, 12, 12, 12), '"2018-10-12 12:12:12"'),
        (
            ROW([("f0", STRING()), ("f1", INT()), ("f2", BOOLEAN())]),
            {"f0": "Hello", "f1": 42, "f2": False},
            "Hello;42;false",
        ),
        (ARRAY(STRING()), ["a", "b", "c"], "a;b;c"),
        (ARRAY(TINYINT()), [12, 4, None], "12;4;null"),
        (BYTES(), bytes([107, 3, 11]), "awML"),
    ],
)
def test_fields_as_flinks_serializer_writes_them(dtype, value, written) -> None:
    fields = (Field("a", STRING()), Field("f1", dtype), Field("b", STRING()))
    line = _lines(fields, [{"a": "BEGIN", "f1": value, "b": "END"}], **NULLS)
    assert line == [f"BEGIN,{written},END"]


@pytest.mark.parametrize(
    ("dtype", "value", "written"),
    [  # testSerializeDeserializeCustomizedProperties: quote ', escape *, array ':', delimiter ';'
        (STRING(), "123'4*", "'123''4**'"),
        (STRING(), "a;b'c", "'a;b''c'"),
        (INT(), 12, "12"),
        (ROW([("f0", STRING()), ("f1", STRING())]), {"f0": "1", "f1": "hello"}, "'1:hello'"),
        (ROW([("f0", STRING()), ("f1", STRING())]), {"f0": "1", "f1": "hello world"}, "'1:hello world'"),
        (STRING(), "null", "null"),  # no null literal set: just a string
    ],
)
def test_customized_properties_as_flinks_serializer(dtype, value, written) -> None:
    fields = (Field("a", STRING()), Field("f1", dtype), Field("b", STRING()))
    options = {
        "csv.quote-character": "'",
        "csv.escape-character": "*",
        "csv.array-element-delimiter": ":",
        "csv.field-delimiter": ";",
    }
    assert _lines(fields, [{"a": "BEGIN", "f1": value, "b": "END"}], **options) == [f"BEGIN;{written};END"]


def test_quote_character_and_disabled_quotes_as_flinks_serializer() -> None:
    fields = (Field("f0", STRING()), Field("f1", INT()), Field("f2", STRING()))
    row = [{"f0": "Test", "f1": 12, "f2": "2019-12-26 12:12:12"}]
    assert _lines(fields, [{"f0": "Test", "f1": 12, "f2": "Hello"}]) == ["Test,12,Hello"]
    assert _lines(fields, row, **{"csv.quote-character": "#"}) == ["Test,12,#2019-12-26 12:12:12#"]
    assert _lines(fields, row, **{"csv.disable-quote-character": "true"}) == ["Test,12,2019-12-26 12:12:12"]


def test_ignore_parse_errors_reads_a_short_rows_missing_fields_as_null(tmp_path) -> None:
    """Flink (Jackson maps the fields a row has; 'ignore-parse-errors' lets the converter
    read the others as NULL): a shorter row is kept, a longer one skipped."""
    fields = (Field("s", STRING()), Field("i", INT()), Field("t", STRING()))
    (tmp_path / "f.csv").write_text("a,1,x\nTest\nb,2,y,extra\nc,3\nd,4,z\n")
    options = {"connector": "filesystem", "path": str(tmp_path / "f.csv"), "format": "csv"}
    with pytest.raises(DataError, match="Row length mismatch. 3 fields expected but was 1"):
        read_all(options, fields)
    rows = read_all({**options, "csv.ignore-parse-errors": "true"}, fields).to_pylist()
    assert rows == [
        {"s": "a", "i": 1, "t": "x"},
        {"s": "Test", "i": None, "t": None},
        {"s": "c", "i": 3, "t": None},
        {"s": "d", "i": 4, "t": "z"},
    ]


def test_kafka_payload_with_too_few_fields_under_ignore_parse_errors() -> None:
    fields = (Field("s", STRING()), Field("i", INT()), Field("t", STRING()))
    decoder = CsvDecoder(fields, {"csv.ignore-parse-errors": "true"}, SourceContext("STREAMING"))
    payloads = pa.array([b"a,1,x", b"Test", b"b,2,y,extra"], pa.binary())
    batch, source = decoder.decode(payloads, lambda i: f"record {i}")
    assert batch.to_pylist() == [{"s": "a", "i": 1, "t": "x"}, {"s": "Test", "i": None, "t": None}]
    assert source.tolist() == [0, 1] and decoder.skipped_rows == 1
