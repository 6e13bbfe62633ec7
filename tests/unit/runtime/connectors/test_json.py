"""The 'json' and 'debezium-json' formats."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from runtime.connectors.base import SourceContext, get_connector
from runtime.errors import DataError
from runtime.map_values import pairs
from runtime.types import ARRAY, BIGINT, BOOLEAN, DATE, DECIMAL, DOUBLE, INT, MAP, ROW, STRING, TIMESTAMP, Field

from .conftest import read_all

ROWS = """{"i": 1, "b": 10000000000, "d": 1.5, "f": true, "s": "plain", "dt": "2024-01-31", "ts": "2024-01-31 23:59:59.999", "dcm": 1.2345}
{"i": -2, "b": -1, "d": 0.1, "f": false, "s": "ünïcödé ✓", "dt": "2000-02-29", "ts": "2000-02-29 00:00:00", "dcm": -0.0005}
{"i": null, "b": null, "d": null, "f": null, "s": null, "dt": null, "ts": null, "dcm": null}
{"i": 4, "extra": "ignored"}
{"i": "42", "b": "7", "d": "2.5", "f": "true", "s": 17, "dt": "1970-01-01", "ts": "1970-01-01 00:00:00.001", "dcm": "99.9999"}
{"i": 6, "b": 9223372036854775807, "d": 1e10, "f": false, "s": "", "dt": "1969-12-31", "ts": "1969-12-31 23:59:59.5", "dcm": 1234567.891}
{"i": 7, "d": 1.0E-5, "s": "tab\\there", "dcm": 0}
"""
SCHEMA = (
    Field("i", INT()),
    Field("b", BIGINT()),
    Field("d", DOUBLE()),
    Field("f", BOOLEAN()),
    Field("s", STRING()),
    Field("dt", DATE()),
    Field("ts", TIMESTAMP(3)),
    Field("dcm", DECIMAL(10, 3)),
)


def opts(path, fmt="json", **extra):
    return {"connector": "filesystem", "path": str(path), "format": fmt, **extra}


def test_types_nulls_strings_numbers(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(ROWS, encoding="utf-8")
    rows = read_all(opts(path), SCHEMA).to_pylist()
    assert rows[0]["dcm"] == Decimal("1.235") and rows[0]["b"] == 10_000_000_000 and rows[0]["f"] is True
    assert rows[1]["dcm"] == Decimal("-0.001") and rows[1]["s"] == "ünïcödé ✓"
    assert all(v is None for v in rows[2].values())
    assert rows[3] == {"i": 4, **{k: None for k in "b d f s dt ts dcm".split()}}
    assert rows[4] == {
        "i": 42,
        "b": 7,
        "d": 2.5,
        "f": True,
        "s": "17",
        "dt": rows[4]["dt"],
        "ts": rows[4]["ts"],
        "dcm": Decimal("100.000"),
    }
    assert str(rows[4]["ts"]) == "1970-01-01 00:00:00.001000"
    assert rows[5]["b"] == 2**63 - 1 and rows[5]["d"] == 1e10 and str(rows[5]["ts"]) == "1969-12-31 23:59:59.500000"
    assert str(rows[5]["dt"]) == "1969-12-31"
    assert rows[6]["s"] == "tab\there" and rows[6]["d"] == 1e-5 and rows[6]["dcm"] == Decimal("0.000")


def test_nested_array_map_row(tmp_path):
    path = tmp_path / "coll.json"
    lines = [
        {"id": 1, "arr": [10, 20, 30], "m": {"x": 1}, "r": {"a": "5", "tags": ["p", None]}},
        {"id": 2, "arr": [], "m": {}, "r": None},
        {"id": 3, "arr": [None, 7], "m": {"x": None, "y": 2}},
        {"id": 4},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    schema = (
        Field("id", INT()),
        Field("arr", ARRAY(INT())),
        Field("m", MAP(STRING(), INT())),
        Field("r", ROW([("a", INT()), ("tags", ARRAY(STRING()))])),
    )
    rows = read_all(opts(path), schema).to_pylist()
    # a MAP row value is its list of {key, value} entries (runtime/map_values.py)
    assert rows[0] == {
        "id": 1,
        "arr": [10, 20, 30],
        "m": [{"key": "x", "value": 1}],
        "r": {"a": 5, "tags": ["p", None]},
    }
    assert rows[1] == {"id": 2, "arr": [], "m": [], "r": None}
    assert rows[2]["arr"] == [None, 7] and pairs(rows[2]["m"]) == [("x", None), ("y", 2)]
    assert rows[3] == {"id": 4, "arr": None, "m": None, "r": None}


def test_float_into_int_truncates_like_jackson(tmp_path):
    path = tmp_path / "f.json"
    path.write_text('{"i": 1.7}\n{"i": -2.9}\n')
    assert read_all(opts(path), (Field("i", INT()),)).column("i").to_pylist() == [1, -2]


def test_bad_line_fails_with_file_and_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"i": 1}\n\n{"i": 2\n{"i": 3}\n')
    with pytest.raises(DataError) as err:
        read_all(opts(path), (Field("i", INT()),))
    assert err.value.line == 3 and "bad.json" in str(err.value) and "Failed to deserialize JSON" in str(err.value)


def test_bad_field_fails_with_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"i": 1}\n{"i": "x"}\n')
    with pytest.raises(DataError) as err:
        read_all(opts(path), (Field("i", INT()),))
    assert err.value.line == 2 and "'i'" in str(err.value)


def test_ignore_parse_errors_skips_and_counts(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"i": 1}\nnot json\n[1, 2]\n{"i": "x"}\n{"i": 5}\n')
    factory = get_connector("filesystem")
    source = factory.create_source(
        {"path": str(path), "format": "json", "json.ignore-parse-errors": "true"},
        (Field("i", INT()),),
        None,
        SourceContext("BATCH"),
    )
    reader = source.create_reader(source.splits()[0])
    assert reader.read(100).column("i").to_pylist() == [1, None, 5]
    assert reader.skipped_rows == 2


def test_fail_on_missing_field(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"i": 1, "s": "a"}\n{"i": 2}\n')
    with pytest.raises(DataError) as err:
        read_all(opts(path, **{"json.fail-on-missing-field": "true"}), (Field("i", INT()), Field("s", STRING())))
    assert err.value.line == 2 and "Could not find field with name 's'" in str(err.value)


def test_iso_timestamps(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"ts": "2024-01-01T10:00:01.5"}\n{"ts": "2024-01-01T10:00"}\n')
    table = read_all(opts(path, **{"json.timestamp-format.standard": "ISO-8601"}), (Field("ts", TIMESTAMP(3)),))
    assert [str(v) for v in table.column("ts").to_pylist()] == ["2024-01-01 10:00:01.500000", "2024-01-01 10:00:00"]


def test_offset_seek_resume(tmp_path):
    path = tmp_path / "n.json"
    path.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(500)))
    factory = get_connector("filesystem")
    source = factory.create_source(
        {"path": str(path), "format": "json"}, (Field("i", INT()),), None, SourceContext("BATCH")
    )
    reader = source.create_reader(source.splits()[0])
    reader.read(123)
    offset = reader.offset()
    assert offset["line"] == 124
    fresh = source.create_reader(source.splits()[0])
    fresh.seek(offset)
    got = []
    while (b := fresh.read(100)) is not None:
        got.extend(b.column(0).to_pylist())
    assert got == list(range(123, 500))


def test_debezium_changelog(tmp_path):
    path = tmp_path / "p.json"
    events = [
        {"before": None, "after": {"id": 1, "c": "fruit", "p": 1.5}, "op": "c"},
        {"before": {"id": 1, "c": "fruit", "p": 1.5}, "after": {"id": 1, "c": "veg", "p": 1.5}, "op": "u"},
        {"before": {"id": 1, "c": "veg", "p": 1.5}, "after": None, "op": "d"},
        {"before": None, "after": {"id": 2, "c": "nuts", "p": 9}, "op": "r"},
    ]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    schema = (Field("id", INT()), Field("c", STRING()), Field("p", DECIMAL(6, 2)))
    table = read_all(opts(path, "debezium-json"), schema, max_rows=2)
    assert table.column("__op").to_pylist() == [0, 1, 2, 3, 0]
    assert table.column("c").to_pylist() == ["fruit", "fruit", "veg", "veg", "nuts"]
    from runtime.connectors.filesystem import changelog_mode

    assert changelog_mode({"format": "debezium-json"}) == "I,UB,UA,D"
    assert changelog_mode({"format": "json"}) == "I"
