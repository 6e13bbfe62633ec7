"""The 'csv' format through the filesystem source: Flink's conversion rules and errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from runtime.connectors.base import SourceContext, get_connector
from runtime.errors import DataError
from runtime.types import ARRAY, BOOLEAN, DECIMAL, INT, STRING, TIMESTAMP, Field

from .conftest import read_all

ORDERS = (
    "1,apple,3,0.50,2024-01-01 10:00:00\n"
    '2,"widget, large",10,12.25,2024-01-01 10:00:01.500\n'
    "3,café,,3.10,2024-01-01 10:00:02\n"
    "4,日本茶,12,-1.05,2024-02-29 23:59:59.999\n"
    '5,"quote""d",0,0.00,\n'
    "6,,1,100.99,2024-01-01 00:00:00\n"
)
SCHEMA = (
    Field("id", INT()),
    Field("item", STRING()),
    Field("qty", INT()),
    Field("unit_price", DECIMAL(8, 2)),
    Field("ts", TIMESTAMP(3)),
)


def csv_opts(path, **extra):
    return {"connector": "filesystem", "path": str(path), "format": "csv", **extra}


def test_null_literal_empty_makes_every_empty_field_null(tmp_path):
    (tmp_path / "orders.csv").write_text(ORDERS + '7,"",2,1.00,""\n', encoding="utf-8")
    rows = read_all(csv_opts(tmp_path / "orders.csv", **{"csv.null-literal": ""}), SCHEMA).to_pylist()
    assert rows[1]["item"] == "widget, large"
    assert rows[2] == {"id": 3, "item": "café", "qty": None, "unit_price": Decimal("3.10"), "ts": rows[2]["ts"]}
    assert rows[3]["item"] == "日本茶" and str(rows[3]["ts"]) == "2024-02-29 23:59:59.999000"
    assert rows[4]["item"] == 'quote"d' and rows[4]["ts"] is None
    assert rows[5]["item"] is None
    assert rows[6]["item"] is None and rows[6]["ts"] is None  # quoted "" is NULL too
    assert str(rows[1]["ts"]) == "2024-01-01 10:00:01.500000"


def test_empty_int_field_without_null_literal_fails_naming_file_and_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("2024-01-01 00:00:01.000,a,1\n\n2024-01-01 00:00:02.000,b,\n")
    schema = (Field("ts", TIMESTAMP(3)), Field("k", STRING()), Field("v", INT()))
    with pytest.raises(DataError) as err:
        read_all(csv_opts(path), schema)
    assert err.value.line == 3 and err.value.path == str(path)
    assert "For input string" in str(err.value) and "t.csv" in str(err.value) and "line 3" in str(err.value)


def test_empty_decimal_and_timestamp_fail_too(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("1,\n")
    with pytest.raises(DataError):
        read_all(csv_opts(path), (Field("a", INT()), Field("d", DECIMAL(5, 2))))
    with pytest.raises(DataError):
        read_all(csv_opts(path), (Field("a", INT()), Field("t", TIMESTAMP(3))))


def test_empty_boolean_is_false_and_empty_string_is_empty(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("1,,\n2,TRUE,x\n")
    rows = read_all(csv_opts(path), (Field("id", INT()), Field("b", BOOLEAN()), Field("s", STRING()))).to_pylist()
    assert rows == [{"id": 1, "b": False, "s": ""}, {"id": 2, "b": True, "s": "x"}]


def test_null_literal_word(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text("1,NULL\nNULL,x\n")
    rows = read_all(
        csv_opts(path, **{"csv.null-literal": "NULL"}), (Field("id", INT()), Field("s", STRING()))
    ).to_pylist()
    assert rows == [{"id": 1, "s": None}, {"id": None, "s": "x"}]


def test_ignore_parse_errors_nulls_bad_fields_and_skips_long_rows(tmp_path):
    """As Flink: a field that does not parse is NULL, a row with too few fields has NULL
    for the missing ones, a row with too many is skipped."""
    path = tmp_path / "e.csv"
    path.write_text("1,a\nx,b\n3\n4,d,extra\n5,e\n")
    factory = get_connector("filesystem")
    opts = {"path": str(path), "format": "csv", "csv.ignore-parse-errors": "true"}
    source = factory.create_source(opts, (Field("id", INT()), Field("s", STRING())), None, SourceContext("BATCH"))
    reader = source.create_reader(source.splits()[0])
    rows = reader.read(100).to_pylist()
    assert rows == [{"id": 1, "s": "a"}, {"id": None, "s": "b"}, {"id": 3, "s": None}, {"id": 5, "s": "e"}]
    assert reader.skipped_rows == 1


def test_invalid_utf8_fails_naming_file_line_and_byte(tmp_path):
    """Flink's CSV reader (Jackson) fails on bytes that are not UTF-8: "Invalid UTF-8
    start byte 0xA0" (a Latin-1 NBSP), "... middle byte ..." for a broken sequence."""
    path = tmp_path / "latin1.csv"
    path.write_bytes(b'1,abc\n2,"multi\nline"\n3,d\xa0e\n4,ok\n')
    with pytest.raises(DataError) as err:
        read_all(csv_opts(path), (Field("id", INT()), Field("s", STRING())))
    assert err.value.line == 4 and err.value.path == str(path)
    assert "Invalid UTF-8 start byte 0xA0" in str(err.value) and "line 4" in str(err.value)
    path.write_bytes(b"1,\xd7A\n")
    with pytest.raises(DataError, match="Invalid UTF-8 middle byte 0x41"):
        read_all(csv_opts(path), (Field("id", INT()), Field("s", STRING())))


def test_invalid_utf8_row_is_skipped_and_counted_with_ignore_parse_errors(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"1,abc\n2,d\xa0e\n3,\xe2\x82\n4,caf\xc3\xa9\n")
    source = get_connector("filesystem").create_source(
        {"path": str(path), "format": "csv", "csv.ignore-parse-errors": "true"},
        (Field("id", INT()), Field("s", STRING())),
        None,
        SourceContext("BATCH"),
    )
    reader = source.create_reader(source.splits()[0])
    assert reader.read(100).to_pylist() == [{"id": 1, "s": "abc"}, {"id": 4, "s": "café"}]
    assert reader.skipped_rows == 2
    reader.seek(reader.offset())  # the offset counts the skipped rows as consumed
    assert reader.read(100) is None


def test_a_row_both_malformed_and_not_utf8_is_skipped_with_ignore_parse_errors(tmp_path):
    """Arrow cannot hand such a row to the invalid-row handler: the reader goes on with
    Python's csv module and skips it like any malformed row (counted), keeping the others,
    also after a restore's seek past it; without the option the job fails naming the file."""
    path = tmp_path / "both.csv"
    path.write_bytes(b'1,abc\n2,x\xa0y,extra\n3,"q,\nr"\n\n4,d\xa0e\n5\n6,NULL\n7,caf\xc3\xa9\n')
    schema = (Field("id", INT()), Field("s", STRING()))
    opts = {"path": str(path), "format": "csv", "csv.ignore-parse-errors": "true", "csv.null-literal": "NULL"}
    source = get_connector("filesystem").create_source(opts, schema, None, SourceContext("BATCH"))
    reader = source.create_reader(source.splits()[0])
    rows = [
        {"id": 1, "s": "abc"},
        {"id": 3, "s": "q,\nr"},
        {"id": 5, "s": None},  # one field of two: the other is NULL, as in Flink
        {"id": 6, "s": None},
        {"id": 7, "s": "café"},
    ]
    got = []
    while (batch := reader.read(2)) is not None:
        got += batch.to_pylist()
    assert got == rows
    assert reader.skipped_rows == 2  # row 2 (both), row 4 (not UTF-8)
    reader.seek({"records": 2})  # as a restore does: past rows 1 and 3
    assert reader.read(100).to_pylist() == rows[2:]
    with pytest.raises(DataError, match="not UTF-8") as err:
        read_all(csv_opts(path), schema)
    assert err.value.path == str(path)


def test_row_length_mismatch_fails_with_line(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text('1,a\n2,"multi\nline"\n3\n')
    with pytest.raises(DataError) as err:
        read_all(csv_opts(path), (Field("id", INT()), Field("s", STRING())))
    assert err.value.line == 4
    assert "Row length mismatch" in str(err.value)
    assert "'csv.field-delimiter' = ','" in str(err.value)  # the option that decides the fields


def test_a_delimiter_not_in_the_file_is_named_in_the_error(tmp_path):
    """A one-character delimiter (valid, as in Flink) that is not the file's: the row-length
    error names the option and its value as written in SQL."""
    path = tmp_path / "e.csv"
    path.write_text("1,a\n")
    with pytest.raises(DataError) as err:
        read_all(csv_opts(path, **{"csv.field-delimiter": "'"}), (Field("id", INT()), Field("s", STRING())))
    assert "2 fields expected but was 1 (fields split at 'csv.field-delimiter' = ''''" in str(err.value)


def test_delimiter_quote_escape_comments(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("# a comment\n1\t'a\tb'\n2\tc\\'d\n")
    opts = csv_opts(
        path,
        **{
            "csv.field-delimiter": "\\t",
            "csv.quote-character": "'",
            "csv.allow-comments": "true",
            "csv.escape-character": "\\",
        },
    )
    rows = read_all(opts, (Field("id", INT()), Field("s", STRING()))).to_pylist()
    assert rows == [{"id": 1, "s": "a\tb"}, {"id": 2, "s": "c'd"}]


def test_array_fields(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("1,10;20;30\n2,5\n")
    rows = read_all(csv_opts(path), (Field("id", INT()), Field("xs", ARRAY(INT())))).to_pylist()
    assert rows == [{"id": 1, "xs": [10, 20, 30]}, {"id": 2, "xs": [5]}]


def test_projection_and_batches(tmp_path):
    path = tmp_path / "orders.csv"
    path.write_text(ORDERS)
    table = read_all(csv_opts(path, **{"csv.null-literal": ""}), SCHEMA, projection=[3, 0], max_rows=4)
    assert table.column_names == ["unit_price", "id"]
    assert table.column("id").to_pylist() == [1, 2, 3, 4, 5, 6]
    assert max(b.num_rows for b in table.to_batches()) <= 4


def test_offset_and_seek_resume_exactly(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text("".join(f"{i},r{i}\n" for i in range(1000)))
    factory = get_connector("filesystem")
    schema = (Field("id", INT()), Field("s", STRING()))
    source = factory.create_source({"path": str(path), "format": "csv"}, schema, None, SourceContext("BATCH"))
    reader = source.create_reader(source.splits()[0])
    reader.read(300)
    reader.read(77)
    offset = reader.offset()
    assert offset == {"records": 377}
    rest = []
    while (b := reader.read(100)) is not None:
        rest.extend(b.column(0).to_pylist())
    fresh = source.create_reader(source.splits()[0])
    fresh.seek(offset)
    resumed = []
    while (b := fresh.read(64)) is not None:
        resumed.extend(b.column(0).to_pylist())
    assert resumed == rest == list(range(377, 1000))


def test_a_field_of_many_megabytes_is_read(tmp_path: Path) -> None:
    """Arrow's CSV reader needs a record to fit in a block: the block grows for a 10 MB field
    and reading continues after the rows already returned (no row lost or repeated)."""
    from streamsql import TableEnvironment

    with open(tmp_path / "big.csv", "w") as f:
        for i in range(3000):
            f.write(f"{i},small{i}\n")
        f.write("3000," + "x" * 10_000_000 + "\n")
        for i in range(3001, 4000):
            f.write(f"{i},after{i}\n")
    env = TableEnvironment.create({"execution.runtime-mode": "batch"})
    env.execute_sql(
        f"CREATE TABLE t (k INT, s STRING) WITH ('connector'='filesystem','path'='{tmp_path / 'big.csv'}','format'='csv')"
    )
    (row,) = env.execute_sql("SELECT COUNT(*), SUM(k), MAX(CHAR_LENGTH(s)) FROM t").collect()
    assert tuple(row) == (4000, sum(range(4000)), 10_000_000)
