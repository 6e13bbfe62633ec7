"""Temporal functions: conformance cases 021 (format/parse), 024 (unix time, LTZ),
022 (EXTRACT, with Flink 2.3's truncating arithmetic for pre-1970 values) and
004 (DATE_FORMAT of TIMESTAMP_LTZ in the session zone)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Call, InputRef, Literal
from runtime.functions import datetime_patterns as dp
from runtime.functions.registry import EvalContext, FunctionTypeError, lookup
from runtime.types import BIGINT, CHAR, DATE, INT, STRING, TIMESTAMP, TIMESTAMP_LTZ


def lit(v: object) -> Literal:
    if isinstance(v, str):
        return Literal(v, CHAR(max(len(v), 1), False))
    return Literal(v, INT(False))


def call(name: str, *args) -> Call:
    fn = lookup(name)
    assert fn is not None, name
    return Call(name, tuple(args), fn.infer([a.type for a in args]))


def run(expr, arrays: list[pa.Array], tz: str = "UTC", now_ms: int = 0) -> list:
    batch = pa.RecordBatch.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])
    out = evaluate(expr, batch, EvalContext(batch.num_rows, time_zone=tz, now_ms=now_ms))
    assert out.type == expr.type.to_arrow()
    return [render(v) for v in out.to_pylist()]


def render(v):
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}"
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


def ts_array(values: list[str | None]) -> pa.Array:
    return pa.array([None if v is None else dt.datetime.fromisoformat(v) for v in values], pa.timestamp("ms"))


# ---------------------------------------------------------------------- case 021
TS021 = ts_array(
    [
        "2024-01-05 07:08:09.123",
        "1999-12-31 23:59:59.999",
        "2024-02-29 00:00:00.000",
        "1970-01-01 00:00:00.000",
        None,
        "2000-06-15 12:00:00.500",
    ]
)
S021 = pa.array(
    ["2024-01-05 07:08:09", "1999-12-31 23:59:59.999", "2024-02-29", "not a date", None, "2000-06-15T12:00:00"]
)
D021 = pa.array(["05.01.2024 07:08", "31.12.1999 23:59", "29.02.2024", "32.01.2024 10:00", None, "15.06.2000 12:00"])
TS, S, D = InputRef(0, TIMESTAMP(3)), InputRef(1, STRING()), InputRef(2, STRING())


@pytest.mark.parametrize(
    "expr, expected",
    [
        (
            call("date_format", TS, lit("yyyy/MM/dd HH:mm:ss")),
            [
                "2024/01/05 07:08:09",
                "1999/12/31 23:59:59",
                "2024/02/29 00:00:00",
                "1970/01/01 00:00:00",
                None,
                "2000/06/15 12:00:00",
            ],
        ),
        (
            call("date_format", TS, lit("EEE dd MMM yyyy, SSS")),
            [
                "Fri 05 Jan 2024, 123",
                "Fri 31 Dec 1999, 999",
                "Thu 29 Feb 2024, 000",
                "Thu 01 Jan 1970, 000",
                None,
                "Thu 15 Jun 2000, 500",
            ],
        ),
        (call("date_format", S, lit("yyyyMMdd")), ["20240105", "19991231", None, None, None, None]),
        (
            call("to_timestamp", S),
            ["2024-01-05 07:08:09.000", "1999-12-31 23:59:59.999", "2024-02-29 00:00:00.000", None, None, None],
        ),
        (
            call("to_timestamp", D, lit("dd.MM.yyyy HH:mm")),
            ["2024-01-05 07:08:00.000", "1999-12-31 23:59:00.000", None, None, None, "2000-06-15 12:00:00.000"],
        ),
        (call("to_date", S), ["2024-01-05", "1999-12-31", "2024-02-29", None, None, None]),
        (
            call("to_date", D, lit("dd.MM.yyyy")),
            ["2024-01-05", "1999-12-31", "2024-02-29", "2024-02-01", None, "2000-06-15"],
        ),
    ],
    ids=lambda x: str(x) if isinstance(x, Call) else "",
)
def test_case_021(expr, expected):
    assert run(expr, [TS021, S021, D021]) == expected


# ---------------------------------------------------------------------- case 024
S024 = pa.array(["2024-01-01 00:00:00", "1970-01-01 00:00:01", "1969-12-31 23:59:59", "garbage", "2038-01-19 03:14:08"])
SEC024 = pa.array([1704067200, 0, -86400, 2147483648, 1], pa.int64())
MS024 = pa.array([1704067200123, -1, -86400000, 253402300799999, 999], pa.int64())
S24, SEC, MS = InputRef(0, STRING()), InputRef(1, BIGINT()), InputRef(2, BIGINT())


@pytest.mark.parametrize(
    "expr, expected",
    [
        (call("unix_timestamp", S24), [1704067200, 1, -1, -9223372036854775808, 2147483648]),
        (
            call("unix_timestamp", S24, lit("yyyy-MM-dd HH:mm:ss")),
            [1704067200, 1, -1, -9223372036854775808, 2147483648],
        ),
        (
            call("from_unixtime", SEC),
            [
                "2024-01-01 00:00:00",
                "1970-01-01 00:00:00",
                "1969-12-31 00:00:00",
                "2038-01-19 03:14:08",
                "1970-01-01 00:00:01",
            ],
        ),
        (
            call("from_unixtime", SEC, lit("yyyy/MM/dd HH:mm")),
            ["2024/01/01 00:00", "1970/01/01 00:00", "1969/12/31 00:00", "2038/01/19 03:14", "1970/01/01 00:00"],
        ),
        (
            call("to_timestamp_ltz", SEC, lit(0)),
            [
                "2024-01-01 00:00:00.000",
                "1970-01-01 00:00:00.000",
                "1969-12-31 00:00:00.000",
                "2038-01-19 03:14:08.000",
                "1970-01-01 00:00:01.000",
            ],
        ),
        (
            call("to_timestamp_ltz", MS, lit(3)),
            [
                "2024-01-01 00:00:00.123",
                "1969-12-31 23:59:59.999",
                "1969-12-31 00:00:00.000",
                "9999-12-31 23:59:59.999",
                "1970-01-01 00:00:00.999",
            ],
        ),
    ],
    ids=lambda x: str(x) if isinstance(x, Call) else "",
)
def test_case_024(expr, expected):
    assert run(expr, [S024, SEC024, MS024]) == expected


def test_to_timestamp_ltz_type():
    # nullable: an epoch outside 0000..9999 gives NULL (Flink: TO_TIMESTAMP_LTZ(253402300800000, 3))
    assert lookup("to_timestamp_ltz").infer([BIGINT(False), INT(False)]) == TIMESTAMP_LTZ(3, True)
    assert lookup("to_timestamp").infer([STRING(False)]) == TIMESTAMP(3, True)
    with pytest.raises(FunctionTypeError):
        lookup("to_timestamp_ltz").infer([DATE()])


# ---------------------------------------------------------------------- case 022 (Flink's answers)
TS022 = ts_array(
    [
        "2024-01-01 00:00:00.000",
        "2024-02-29 13:14:15.678",
        "2020-12-31 23:59:59.999",
        "2021-01-03 12:00:00.001",
        "1969-07-20 20:17:40.000",
        "2023-10-01 06:30:45.250",
    ]
)
EXTRACT022 = {
    "YEAR": [2024, 2024, 2020, 2021, 1969, 2023],
    "QUARTER": [1, 1, 4, 1, 3, 4],
    "MONTH": [1, 2, 12, 1, 7, 10],
    # 1969-07-20 20:17:40: Flink divides the epoch millis truncating, so the date is
    # 1969-07-21 (ISO week 30, a Monday) and the time of day -03:42:20
    "WEEK": [1, 9, 53, 53, 30, 39],
    "DAY": [1, 29, 31, 3, 21, 1],
    "DOY": [1, 60, 366, 3, 202, 274],
    "DOW": [2, 5, 5, 1, 2, 1],
    "HOUR": [0, 13, 23, 12, -3, 6],
    "MINUTE": [0, 14, 59, 0, -42, 30],
    "SECOND": [0, 15, 59, 0, -20, 45],
    "MILLISECOND": [0, 678, 999, 1, 0, 250],
}
SHORTHAND = {
    "year": "YEAR",
    "quarter": "QUARTER",
    "month": "MONTH",
    "week": "WEEK",
    "dayofyear": "DOY",
    "dayofmonth": "DAY",
    "dayofweek": "DOW",
    "hour": "HOUR",
    "minute": "MINUTE",
    "second": "SECOND",
}


@pytest.mark.parametrize("unit", sorted(EXTRACT022))
def test_extract_case_022_as_flink(unit):
    x = InputRef(0, TIMESTAMP(3))
    assert run(call("extract", lit(unit), x), [TS022]) == EXTRACT022[unit]


@pytest.mark.parametrize("fn", sorted(SHORTHAND))
def test_extract_shorthands(fn):
    assert run(call(fn, InputRef(0, TIMESTAMP(3))), [TS022]) == EXTRACT022[SHORTHAND[fn]]


def test_extract_types_and_date_interval_inputs():
    assert lookup("extract").infer([CHAR(4, False), TIMESTAMP(3, False)]) == BIGINT(False)
    days = pa.array([19723, -1, None], pa.int32()).cast(pa.date32())  # 2024-01-01, 1969-12-31
    assert run(call("extract", lit("YEAR"), InputRef(0, DATE())), [days]) == [2024, 1969, None]
    assert run(call("extract", lit("DOY"), InputRef(0, DATE())), [days]) == [1, 365, None]
    with pytest.raises(FunctionTypeError):
        lookup("extract").infer([CHAR(4, False), STRING()])


# ---------------------------------------------------------------------- LTZ & session zone (case 004)
def test_ltz_formats_in_session_zone():
    inst = pa.array([1704124799000, 1704124800000, 1704211199999], pa.timestamp("ms", tz="UTC"))
    x = InputRef(0, TIMESTAMP_LTZ(3))
    out = run(call("date_format", x, lit("yyyy-MM-dd HH:mm")), [inst], tz="Asia/Shanghai")
    assert out == ["2024-01-01 23:59", "2024-01-02 00:00", "2024-01-02 23:59"]
    assert run(call("hour", x), [inst], tz="Asia/Shanghai") == [23, 0, 23]
    # UNIX_TIMESTAMP / FROM_UNIXTIME read and print wall clocks in the session zone
    s = InputRef(0, STRING())
    assert run(call("unix_timestamp", s), [pa.array(["2024-01-02 00:00:00"])], tz="Asia/Shanghai") == [1704124800]
    assert run(
        call("from_unixtime", InputRef(0, BIGINT())), [pa.array([1704124800], pa.int64())], tz="Asia/Shanghai"
    ) == ["2024-01-02 00:00:00"]


def test_now_functions_use_context():
    now = 1704124800123  # 2024-01-01 16:00:00.123 UTC
    one = [pa.array([1, 2], pa.int64())]
    assert run(call("current_timestamp"), one, tz="Asia/Shanghai", now_ms=now) == ["2024-01-01 16:00:00.123"] * 2
    assert run(call("localtimestamp"), one, tz="Asia/Shanghai", now_ms=now) == ["2024-01-02 00:00:00.123"] * 2
    assert run(call("current_date"), one, tz="Asia/Shanghai", now_ms=now) == ["2024-01-02"] * 2
    assert not lookup("now").deterministic
    assert lookup("current_timestamp").infer([]) == TIMESTAMP_LTZ(3, False)


def test_timestampadd_and_diff():
    x = ts_array(["2024-01-31 10:00:00.000", None])
    t = InputRef(0, TIMESTAMP(3))
    assert run(call("timestampadd", lit("MONTH"), lit(1), t), [x]) == ["2024-02-29 10:00:00.000", None]
    assert run(call("timestampadd", lit("HOUR"), lit(-11), t), [x]) == ["2024-01-30 23:00:00.000", None]
    y = ts_array(["2024-03-30 09:59:59.999", "2024-01-01 00:00:00.000"])
    both = [x, y]
    t2 = InputRef(1, TIMESTAMP(3))
    assert run(call("timestampdiff", lit("MONTH"), t, t2), both) == [1, None]
    assert run(call("timestampdiff", lit("DAY"), t, t2), both) == [58, None]


def test_patterns_directly():
    ms, ok = dp.parse(pa.array(["2024-13-01", "2024-02-30", "24-02-03"]), "yyyy-MM-dd", lenient=False)
    assert ok.tolist() == [False, True, False]  # SMART: Feb 30 clamps to Feb 29
    assert ms[1] == dp.days_from_civil(*[__import__("numpy").array([v]) for v in (2024, 2, 29)])[0] * dp.MS_PER_DAY
    out = dp.format_wall(ms, ok, "yyyy-MM-dd'T'hh:mm a D w", "UTC").to_pylist()
    assert out == [None, "2024-02-29T12:00 AM 60 9", None]
    assert dp.tokenize("yyyy'''x'") == (dp.Token("y", 4), dp.Token("", 0, "'x"))
