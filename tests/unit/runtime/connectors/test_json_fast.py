"""The JSON reader's Arrow fast path (json_fast.py) against the exact DuckDB path.

The differential tests read the same random / nasty JSON lines twice, once with the fast
path and once with it disabled, and require identical rows, skip counts and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.connectors.base import SourceContext
from runtime.connectors.formats.json_format import JsonFileReader
from runtime.errors import DataError
from runtime.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAP,
    ROW,
    SMALLINT,
    STRING,
    TIMESTAMP,
    TINYINT,
    Field,
)

SCHEMA = (
    Field("i", INT()),
    Field("t", TINYINT()),
    Field("sm", SMALLINT()),
    Field("b", BIGINT()),
    Field("d", DOUBLE()),
    Field("fl", FLOAT()),
    Field("f", BOOLEAN()),
    Field("s", STRING()),
    Field("dt", DATE()),
    Field("ts", TIMESTAMP(3)),
    Field("dcm", DECIMAL(10, 3)),
    Field("r", ROW([("id", BIGINT()), ("ts", TIMESTAMP(3)), ("name", STRING())])),
    Field("arr", ARRAY(INT())),
)


def _read(path: Path, fast: bool, schema: tuple[Field, ...] = SCHEMA, **options: str) -> tuple[Any, int, int]:
    """(rows or the error text, skipped rows, fast batches) of one read of `path`."""
    reader = JsonFileReader(str(path), schema, None, dict(options), SourceContext("BATCH"))
    if not fast:
        reader.fast.schema = None
    rows: list[dict[str, Any]] = []
    try:
        while (b := reader.read(7)) is not None:
            rows.extend(b.to_pylist())
    except DataError as e:
        return f"ERROR {e}", reader.skipped_rows, reader.fast_batches
    finally:
        reader.close()
    return _canon(rows), reader.skipped_rows, reader.fast_batches


def _canon(v: Any) -> Any:
    """NaN-safe comparable form."""
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, dict):
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon(x) for x in v]
    return v


def _agree(path: Path, schema: tuple[Field, ...] = SCHEMA, **options: str) -> int:
    fast, f_skipped, f_batches = _read(path, True, schema, **options)
    exact, e_skipped, _ = _read(path, False, schema, **options)
    assert fast == exact
    assert f_skipped == e_skipped
    return f_batches


_ints = st.integers(min_value=-(2**64), max_value=2**64)
_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_ts_text = st.sampled_from(
    [
        "2024-01-31 23:59:59.999",
        "2024-01-31 23:59:59",
        "2024-01-31T23:59:59",
        "2024-02-30 00:00:00",
        "1969-12-31 23:59:59.5",
        "2024-01-31",
        " 2024-01-31 00:00:00",
    ]
)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    _ints,
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
    _ts_text,
    st.sampled_from(["1", "-2", "1.5", "true", "TRUE", "1e3", "99.9995", "2024-01-31", "abc"]),
)
_value = st.recursive(
    _scalar,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.dictionaries(st.sampled_from(["id", "ts", "name", "x"]), kids, max_size=3),
    ),
    max_leaves=6,
)
_obj = st.dictionaries(st.sampled_from([f.name for f in SCHEMA] + ["extra"]), _value, max_size=8)
_good = st.fixed_dictionaries(
    {
        "i": st.integers(-(2**31), 2**31 - 1),
        "b": st.integers(-(2**63), 2**63 - 1),
        "d": st.floats(allow_nan=False, allow_infinity=False),
        "s": _text,
        "ts": st.sampled_from(["2024-01-31 23:59:59.999", "1970-01-01 00:00:00", None]),
        "r": st.one_of(st.none(), st.fixed_dictionaries({"id": st.integers(0, 10**12), "name": _text})),
        "arr": st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-100, 100)), max_size=3)),
    }
)
_nasty = st.sampled_from(
    [
        '{"i": 1}{"i": 2}',
        '{"i": 1, "i": 2}',
        '{"i": 1, "extra": NaN}',
        '{"d": NaN}',
        '{"d": Infinity}',
        '{"d": -Infinity, "fl": NaN}',
        '{"arr": [1, NaN]}',
        '{"s": "NaN", "extra": [-Infinity]}',
        '{"i": NaN}',
        '{"i": 1,}',
        "[1, 2]",
        "5",
        "null",
        ' {"i": 1}',
        '{"i": 1} null',
        '{"i": 1}  {"i": 2}',
        '"text"',
        '{"i": 01}',
        '{"i": 1} trailing',
        '{"s": "a\\u0000b"}',
        '{"s": "\\ud83d\\ude00"}',
        '{"r": {"id": 1, "id": 2}}',
        '{"r": 5}',
        '{"arr": {"a": 1}}',
        '{"i": 2147483648}',
        '{"t": 128}',
        '{"i": 1.9}',
        '{"i": -1e2}',
        '{"b": 9223372036854775808}',
        '{"fl": 3.4028235e39}',
        '{"d": 1e400}',
        '{"i": 1}\r',
        '{"i": 1, "extra": {"deep": [1, {"x": null}]}}',
        '{"ts": 1700000000}',
        '{"dcm": 1.2345}',
        '{"dcm": "1.2345"}',
    ]
)
_line = st.one_of(_obj.map(json.dumps), _good.map(json.dumps), _nasty)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(lines=st.lists(_line, min_size=1, max_size=20), ignore=st.booleans(), missing=st.booleans())
def test_fast_path_agrees_with_exact_path(tmp_path: Path, lines: list[str], ignore: bool, missing: bool) -> None:
    path = tmp_path / "rows.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options = {"json.ignore-parse-errors": str(ignore).lower(), "json.fail-on-missing-field": str(missing).lower()}
    _agree(path, **options)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(lines=st.lists(_good.map(json.dumps), min_size=1, max_size=30), iso=st.booleans())
def test_fast_path_agrees_on_clean_data(tmp_path: Path, lines: list[str], iso: bool) -> None:
    path = tmp_path / "clean.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    standard = "ISO-8601" if iso else "SQL"
    _agree(path, **{"json.timestamp-format.standard": standard})


def _nexmark_like(path: Path, n: int) -> None:
    rows = []
    for k in range(n):
        rows.append(
            {
                "event_type": 2,
                "person": None,
                "auction": None,
                "bid": {
                    "auction": 1000 + k,
                    "bidder": 7,
                    "price": 123,
                    "channel": "Google",
                    "url": "https://x/y?z",
                    "dateTime": f"2015-07-15 00:00:{k % 60:02d}.{k % 1000:03d}",
                    "extra": "",
                },
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


NEXMARK = (
    Field("event_type", INT()),
    Field("person", ROW([("id", BIGINT()), ("name", STRING()), ("dateTime", TIMESTAMP(3))])),
    Field("auction", ROW([("id", BIGINT()), ("expires", TIMESTAMP(3))])),
    Field(
        "bid",
        ROW(
            [
                ("auction", BIGINT()),
                ("bidder", BIGINT()),
                ("price", BIGINT()),
                ("channel", STRING()),
                ("url", STRING()),
                ("dateTime", TIMESTAMP(3)),
                ("extra", STRING()),
            ]
        ),
    ),
)


def test_nexmark_rows_take_the_fast_path(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    _nexmark_like(path, 50)
    assert _agree(path, NEXMARK) == 8  # every batch (7 rows each) through Arrow
    rows, _, _ = _read(path, True, NEXMARK)
    assert rows[3]["bid"]["auction"] == 1003 and str(rows[3]["bid"]["dateTime"]) == "2015-07-15 00:00:03.003000"


def test_java_conversions_fall_back_to_the_exact_path(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    path.write_text('{"i": "42", "s": 17, "dcm": 1.2345}\n', encoding="utf-8")
    assert _agree(path) == 0
    rows, _, _ = _read(path, True)
    assert rows[0]["i"] == 42 and rows[0]["s"] == "17" and str(rows[0]["dcm"]) == "1.235"


def test_errors_and_offsets_survive_the_fast_path(tmp_path: Path) -> None:
    path = tmp_path / "err.json"
    path.write_text('{"i": 1}\n\n{"i": 2}\n{"i": oops}\n', encoding="utf-8")
    rows, _, _ = _read(path, True)
    assert rows.startswith("ERROR") and "line 4" in rows
    reader = JsonFileReader(str(path), SCHEMA, None, {}, SourceContext("BATCH"))
    first = reader.read(3)  # the blank line counts as read
    assert first is not None and first.column(0).to_pylist() == [1, 2] and reader.fast_batches == 1
    assert reader.offset() == {"byte": len(b'{"i": 1}\n\n{"i": 2}\n'), "line": 4}
    reader.close()


def test_map_columns_keep_the_exact_path(tmp_path: Path) -> None:
    path = tmp_path / "map.json"
    path.write_text('{"m": {"a": 1}}\n', encoding="utf-8")
    schema = (Field("m", MAP(STRING(), INT())),)
    assert _agree(path, schema) == 0


@pytest.mark.parametrize("text", ['{"d": 1}', '{"d": -0.0}', '{"d": 12345678901234567890123}'])
def test_numbers_in_double_columns(tmp_path: Path, text: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(text + "\n", encoding="utf-8")
    assert _agree(path) == 1
    assert isinstance(pa.array([0.0]), pa.Array)
