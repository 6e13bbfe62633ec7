"""Rendering values as the Flink SQL client prints them."""

from __future__ import annotations

import decimal
import time

import pyarrow as pa

from runtime.render import java_double_str, java_float_str, render_column, render_value
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
    INTERVAL_DAY_TIME,
    INTERVAL_YEAR_MONTH,
    MAP,
    ROW,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
)


def test_double_like_java() -> None:
    values = [3.0, 0.1, 1e10, 1e-5, -0.0, float("nan"), float("inf"), float("-inf"), 9.999999999999998e-15]
    values += [1.5241578750190521e10, 3.1622776601683794e-4, 9999999.0, 1e7, 0.001, 9.999999999e7, None]
    want = ["3.0", "0.1", "1.0E10", "1.0E-5", "-0.0", "NaN", "Infinity", "-Infinity", "9.999999999999998E-15"]
    want += ["1.5241578750190521E10", "3.1622776601683794E-4", "9999999.0", "1.0E7", "0.001", "9.999999999E7", None]
    assert render_column(pa.array(values, pa.float64()), DOUBLE()) == want
    assert java_double_str(123456.789) == "123456.789"
    assert java_double_str(-1.0e-7) == "-1.0E-7"


def test_float_like_java() -> None:
    assert render_column(pa.array([0.1, 3.0, 1e-5, 1.1e10, None], pa.float32()), FLOAT()) == [
        "0.1",
        "3.0",
        "1.0E-5",
        "1.1E10",
        None,
    ]
    assert java_float_str(1.0e7) == "1.0E7"


def test_scalars() -> None:
    assert render_column(pa.array([True, False, None]), BOOLEAN()) == ["TRUE", "FALSE", None]
    assert render_column(pa.array([-2, 9223372036854775807], pa.int64()), BIGINT()) == ["-2", "9223372036854775807"]
    dec = pa.array([decimal.Decimal("100"), decimal.Decimal("-0.001"), decimal.Decimal("0")], pa.decimal128(10, 3))
    assert render_column(dec, DECIMAL(10, 3)) == ["100.000", "-0.001", "0.000"]
    tiny = pa.array([decimal.Decimal("0"), decimal.Decimal("1.2E-7")], pa.decimal128(21, 13))
    assert render_column(tiny, DECIMAL(21, 13)) == ["0.0000000000000", "0.0000001200000"]
    assert render_column(pa.array(["tab\there", ""]), STRING()) == ["tab\there", ""]
    assert render_column(pa.array([b"\x01\x02"]), BYTES()) == ["x'0102'"]


def test_temporal() -> None:
    ts = pa.array([0, -500, 1706745599999, None], pa.timestamp("ms"))
    assert render_column(ts, TIMESTAMP(3)) == [
        "1970-01-01 00:00:00.000",
        "1969-12-31 23:59:59.500",
        "2024-01-31 23:59:59.999",
        None,
    ]
    assert render_column(ts.slice(0, 2), TIMESTAMP(0)) == ["1970-01-01 00:00:00", "1969-12-31 23:59:59"]
    assert render_column(pa.array([1], pa.timestamp("us")), TIMESTAMP(6)) == ["1970-01-01 00:00:00.000001"]
    ltz = pa.array([0], pa.timestamp("ms", tz="UTC"))
    assert render_column(ltz, TIMESTAMP_LTZ(3), "Asia/Shanghai") == ["1970-01-01 08:00:00.000"]
    assert render_column(pa.array([-1, 10957], pa.date32()), DATE()) == ["1969-12-31", "2000-01-01"]
    assert render_column(pa.array([45296000], pa.time32("ms")), TIME()) == ["12:34:56"]
    assert render_column(pa.array([10000, -3723004], pa.duration("ms")), INTERVAL_DAY_TIME()) == [
        "+0 00:00:10.000",
        "-0 01:02:03.004",
    ]
    assert render_column(pa.array([14], pa.int32()), INTERVAL_YEAR_MONTH()) == ["+1-02"]


def test_nested() -> None:
    arr = pa.array([[1, 2], [None, 7, None], [], None], pa.list_(pa.int32()))
    assert render_column(arr, ARRAY(INT())) == ["[1, 2]", "[NULL, 7, NULL]", "[]", None]
    assert render_column(arr.slice(1, 2), ARRAY(INT())) == ["[NULL, 7, NULL]", "[]"]
    m = pa.array([[("a", 1)], [("b", 2), ("c", None)], None], pa.map_(pa.string(), pa.int32()))
    assert render_column(m.slice(1), MAP(STRING(), INT())) == ["{b=2, c=NULL}", None]
    rt = ROW([("a", INT()), ("b", DOUBLE())])
    r = pa.array([{"a": 1, "b": 1e10}, None, {"a": None, "b": 0.5}], rt.to_arrow())
    assert render_column(r, rt) == ["(1, 1.0E10)", None, "(NULL, 0.5)"]
    assert render_value([1.0, None], ARRAY(DOUBLE())) == "[1.0, NULL]"
    assert render_value(None, INT()) is None


def test_double_rendering_cost_is_vectorized_for_common_values() -> None:
    values = pa.array([float(i) / 7 for i in range(100_000)], pa.float64())
    start = time.perf_counter()
    out = render_column(values, DOUBLE())
    elapsed = time.perf_counter() - start
    assert out[7] == "1.0" and out[1] == "0.14285714285714285"
    assert elapsed < 2.0  # ~0.05 s measured: only values outside [1e-3, 1e7) go through Python
