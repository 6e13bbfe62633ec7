"""CAST string → TIMESTAMP/DATE over Flink's whole range (0000..9999, not just the
int64-nanosecond 1677..2262), and wall clock → TIMESTAMP_LTZ across DST gaps and
overlaps with Java's `LocalDateTime.atZone` rules (gap: shifted forward by its length;
overlap: the earlier offset)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from runtime.connectors.formats.convert import CSV, convert_strings
from runtime.errors import EvaluationError
from runtime.functions._testing import call, refs, run
from runtime.functions.zones import wall_to_instant
from runtime.types import BIGINT, DATE, STRING, TIME, TIMESTAMP, TIMESTAMP_LTZ

UTC = dt.UTC


def _epoch_s(y: int, mo: int, d: int, h: int = 0, mi: int = 0) -> int:
    return int(dt.datetime(y, mo, d, h, mi, tzinfo=UTC).timestamp())


# ---------------------------------------------------------------------- range


def test_timestamp_range_boundaries() -> None:
    cols = [(["0000-01-01 00:00:00", "9999-12-31 23:59:59.999999", "1600-02-29 12:00:00.5", None], STRING())]
    (s,) = refs(cols)
    for fn in ("cast", "try_cast"):
        got = run(call(fn, s, type=TIMESTAMP(6)), cols)
        assert got == [
            "0000-01-01 00:00:00.000000",
            "9999-12-31 23:59:59.999999",
            "1600-02-29 12:00:00.500000",
            None,
        ]
    assert run(call("cast", s, type=TIMESTAMP(3)), cols)[:2] == ["0000-01-01 00:00:00.000", "9999-12-31 23:59:59.999"]


def test_timestamp_range_epoch_values() -> None:
    cols = [(["0000-01-01 00:00:00", "9999-12-31 23:59:59.999999"], STRING())]
    (s,) = refs(cols)
    secs = run(call("cast", call("cast", s, type=TIMESTAMP(6)), type=BIGINT()), cols)
    # year 0 is 1 BC; Python's datetime starts at year 1, which is 366 days (leap year 0) later
    assert secs == [str(_epoch_s(1, 1, 1) - 366 * 86400), str(_epoch_s(9999, 12, 31, 23, 59) + 59)]


def test_timestamp_ltz_range_uses_local_mean_time() -> None:
    cols = [(["0000-01-01 00:00:00", "9999-12-31 23:59:59.999"], STRING())]
    (s,) = refs(cols)
    ltz = call("cast", s, type=TIMESTAMP_LTZ(3))
    ny = "America/New_York"
    assert run(call("cast", ltz, type=STRING()), cols, time_zone=ny) == [
        "0000-01-01 00:00:00.000",
        "9999-12-31 23:59:59.999",
    ]
    # New York's LMT is -4:56:02 before 1883 (Java's tzdb agrees); EST in December 9999
    lmt = 4 * 3600 + 56 * 60 + 2
    assert run(call("cast", ltz, type=BIGINT()), cols, time_zone=ny) == [
        str(_epoch_s(1, 1, 1) - 366 * 86400 + lmt),
        str(_epoch_s(9999, 12, 31, 23, 59) + 59 + 5 * 3600),
    ]


def test_invalid_year_zero_dates_and_out_of_range_text() -> None:
    """A day past the month's end but not past 31 is the month's last day (java.time's SMART
    resolver behind Flink's DEFAULT_TIMESTAMP_FORMATTER; year 0 is a leap year); day 32 and
    a five-digit year fail."""
    cols = [(["0000-02-29 00:00:00", "0000-02-30 00:00:00", "0000-02-32 00:00:00", "10000-01-01 00:00:00"], STRING())]
    (s,) = refs(cols)
    assert run(call("try_cast", s, type=TIMESTAMP(3)), cols) == [
        "0000-02-29 00:00:00.000",
        "0000-02-29 00:00:00.000",
        None,
        None,
    ]
    bad = [(["0000-02-32 00:00:00"], STRING())]
    with pytest.raises(EvaluationError):
        run(call("cast", refs(bad)[0], type=TIMESTAMP(3)), bad)


def test_date_range_boundaries() -> None:
    # Flink's parseDate: years 0..9999, no sign ('-0' is NULL, not year 0)
    cols = [(["0000-01-01", "0000-02-29", "9999-12-31", "0000-02-30", "-1-01-01", "-0", "0", "+5"], STRING())]
    (s,) = refs(cols)
    got = run(call("try_cast", s, type=DATE()), cols)
    assert got == ["0000-01-01", "0000-02-29", "9999-12-31", None, None, None, "0000-01-01", None]
    ts = [(["0000-01-01 23:59:59.999"], STRING())]
    t = call("cast", refs(ts)[0], type=TIMESTAMP(3))
    assert run(call("cast", t, type=STRING()), ts) == ["0000-01-01 23:59:59.999"]
    assert run(call("cast", t, type=TIME(0)), ts) == ["23:59:59"]
    # Flink 2.3 divides negative epoch millis truncating (as for 1969-12-31 23:59:59.999,
    # which it casts to 1970-01-01): the last millisecond of a pre-1970 day is the next day
    assert run(call("cast", t, type=DATE()), ts) == ["0000-01-02"]


def test_timestamp9_outside_arrow_nanos_fails_clearly() -> None:
    cols = [(["0000-01-01 00:00:00"], STRING())]
    with pytest.raises(EvaluationError, match="1677"):
        run(call("cast", refs(cols)[0], type=TIMESTAMP(9)), cols)
    ok = [(["2024-01-01 00:00:00.123456789"], STRING())]
    assert run(call("cast", refs(ok)[0], type=TIMESTAMP(9)), ok) == ["2024-01-01 00:00:00.123456789"]


def test_to_timestamp_and_to_date_range() -> None:
    cols = [(["0000-01-01 00:00:00", "9999-12-31 23:59:59"], STRING())]
    (s,) = refs(cols)
    assert run(call("to_timestamp", s), cols) == ["0000-01-01 00:00:00.000", "9999-12-31 23:59:59.000"]
    d = [(["0000-01-01", "9999-12-31"], STRING())]
    assert run(call("to_date", refs(d)[0]), d) == ["0000-01-01", "9999-12-31"]


def test_csv_reader_range() -> None:
    text = pa.array(["0000-01-01 00:00:00", "9999-12-31 23:59:59.999999", None])
    values, bad = convert_strings(text, TIMESTAMP(6), CSV)
    assert not bad.any()
    assert values.cast(pa.int64()).to_pylist() == [
        (_epoch_s(1, 1, 1) - 366 * 86400) * 10**6,
        (_epoch_s(9999, 12, 31, 23, 59) + 59) * 10**6 + 999_999,
        None,
    ]
    # TIMESTAMP(9) cannot hold year 0 in Arrow: a parse error, never a wrapped value
    _, bad9 = convert_strings(pa.array(["0000-01-01 00:00:00"]), TIMESTAMP(9), CSV)
    assert bad9.tolist() == [True]


# ---------------------------------------------------------------------- DST

# (zone, wall clock, expected UTC instant): gap → shifted forward by the gap, overlap → earlier offset
DST_CASES = [
    ("America/New_York", "2024-03-10 02:30:00", dt.datetime(2024, 3, 10, 7, 30)),  # gap → 03:30 EDT
    ("America/New_York", "2024-03-10 02:00:00", dt.datetime(2024, 3, 10, 7, 0)),  # gap start → 03:00 EDT
    ("America/New_York", "2024-03-10 03:00:00", dt.datetime(2024, 3, 10, 7, 0)),  # first valid time
    ("America/New_York", "2024-11-03 01:30:00", dt.datetime(2024, 11, 3, 5, 30)),  # overlap → EDT
    ("America/New_York", "2024-11-03 02:00:00", dt.datetime(2024, 11, 3, 7, 0)),  # after overlap: EST
    ("Australia/Sydney", "2024-10-06 02:30:00", dt.datetime(2024, 10, 5, 16, 30)),  # gap → 03:30 AEDT
    ("Australia/Sydney", "2024-04-07 02:30:00", dt.datetime(2024, 4, 6, 15, 30)),  # overlap → AEDT
    ("Australia/Sydney", "2024-07-01 12:00:00", dt.datetime(2024, 7, 1, 2, 0)),  # plain AEST
]


@pytest.mark.parametrize(("zone", "wall", "instant"), DST_CASES)
def test_cast_to_ltz_follows_java_at_zone(zone: str, wall: str, instant: dt.datetime) -> None:
    cols = [([wall], STRING())]
    (s,) = refs(cols)
    want = int(instant.replace(tzinfo=UTC).timestamp())
    for p in (3, 6):
        ltz = call("cast", s, type=TIMESTAMP_LTZ(p))
        assert run(call("cast", ltz, type=BIGINT()), cols, time_zone=zone) == [str(want)]
    # TIMESTAMP column → TIMESTAMP_LTZ goes through the same rule
    ts = call("cast", s, type=TIMESTAMP(3))
    assert run(call("cast", call("cast", ts, type=TIMESTAMP_LTZ(3)), type=BIGINT()), cols, time_zone=zone) == [
        str(want)
    ]
    assert run(call("unix_timestamp", s), cols, time_zone=zone) == [str(want)]


def test_gap_shift_is_shown_in_session_zone() -> None:
    cols = [(["2024-03-10 02:30:00.250", "2024-03-10 02:59:59.999"], STRING())]
    (s,) = refs(cols)
    ltz = call("cast", s, type=TIMESTAMP_LTZ(3))
    got = run(call("cast", ltz, type=STRING()), cols, time_zone="America/New_York")
    assert got == ["2024-03-10 03:30:00.250", "2024-03-10 03:59:59.999"]


def test_wall_to_instant_helper_units_and_nulls() -> None:
    walls = [dt.datetime(2024, 3, 10, 2, 30, 0, 123456), None, dt.datetime(2024, 11, 3, 1, 30)]
    for unit in ("ms", "us"):
        out = wall_to_instant(pa.array(walls, pa.timestamp(unit)), "America/New_York")
        assert out.type == pa.timestamp(unit, tz="UTC")
        got = out.to_pylist()
        assert got[1] is None
        assert got[0].replace(tzinfo=None) == dt.datetime(2024, 3, 10, 7, 30, 0, 123000 if unit == "ms" else 123456)
        assert got[2].replace(tzinfo=None) == dt.datetime(2024, 11, 3, 5, 30)
    utc = wall_to_instant(pa.array(walls, pa.timestamp("ms")), "UTC").to_pylist()
    assert utc[2].replace(tzinfo=None) == dt.datetime(2024, 11, 3, 1, 30)
