"""CAST / TRY_CAST: the matrix of case 008 and failure behaviour."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pytest

from runtime.errors import EvaluationError
from runtime.functions._testing import call, lit, refs, run
from runtime.functions.cast import cast_supported
from runtime.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    INT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    VARCHAR,
)

CASES = Path(__file__).parents[3] / "conformance" / "cases"


def expected(case: str) -> list[list[str | None]]:
    path = CASES / case / "expected" / "batch.jsonl"
    return sorted(json.loads(line)["row"] for line in path.read_text().splitlines() if line.strip())


def test_case_008_cast_matrix() -> None:
    s = STRING()
    cols = [
        (["42", "-7", "0", "2147483647"], s),
        (["3.14159", "-2.5", "1e3", "0.005"], s),
        (["true", "FALSE", "TRUE", "false"], s),
        (["2024-02-29", "1999-12-31", "1970-01-01", "2000-01-01"], s),
        (["2024-02-29 12:34:56.789", "1999-12-31 23:59:59", "1970-01-01 00:00:00.000", "2000-01-01 00:00:00.1"], s),
        ([3.7, -3.7, 0.5, -0.5], DOUBLE()),
        ([300, -129, 0, 127], INT()),
    ]
    s_int, s_dbl, s_bool, s_date, s_ts, d, i = refs(cols)

    def c(e, t):
        return call("cast", e, type=t)

    exprs = [
        c(s_int, INT()),
        call("plus", c(s_int, BIGINT()), lit(1, INT(False))),
        c(s_dbl, DOUBLE()),
        c(s_dbl, DECIMAL(10, 2)),
        c(s_bool, BOOLEAN()),
        c(s_date, DATE()),
        c(s_ts, TIMESTAMP(3)),
        c(d, INT()),
        c(d, BIGINT()),
        c(d, STRING()),
        c(i, TINYINT()),
        c(i, DOUBLE()),
        c(i, STRING()),
        c(c(s_ts, TIMESTAMP(3)), DATE()),
        c(c(s_ts, TIMESTAMP(3)), STRING()),
        c(c(s_date, DATE()), TIMESTAMP(3)),
        c(c(s_bool, BOOLEAN()), STRING()),
        c(i, BOOLEAN()),
    ]
    got = sorted(list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True))
    assert got == expected("008_cast_matrix")


def test_bad_string_fails_cast_but_not_try_cast() -> None:
    cols = [([" 12 ", "abc", None, "3000000000", "1.9"], STRING())]
    (s,) = refs(cols)
    with pytest.raises(EvaluationError, match="abc"):
        run(call("cast", s, type=INT()), cols)
    assert run(call("try_cast", s, type=INT()), cols) == ["12", None, None, None, "1"]
    assert run(call("try_cast", s, type=BIGINT()), cols) == ["12", None, None, "3000000000", "1"]
    assert run(call("try_cast", s, type=DOUBLE()), cols) == ["12.0", None, None, "3.0E9", "1.9"]
    assert run(call("try_cast", s, type=BOOLEAN()), cols) == [None, None, None, None, None]
    # Flink's lenient date parsing: a bare year is Jan 1st of it (flink-bugs/009's notes)
    assert run(call("try_cast", s, type=DATE()), cols) == ["0012-01-01", None, None, None, None]
    with pytest.raises(EvaluationError):
        run(call("cast", s, type=DATE()), cols)


def test_double_to_int_saturates_and_decimal_overflow_is_null() -> None:
    cols = [([1e20, -1e20, float("nan"), 2.675], DOUBLE())]
    (d,) = refs(cols)
    assert run(call("cast", d, type=INT()), cols) == ["2147483647", "-2147483648", "0", "2"]
    assert run(call("cast", d, type=DECIMAL(5, 2)), cols) == [None, None, None, "2.68"]


def test_string_to_decimal_rounds_half_up() -> None:
    """HALF_UP; a string whose value does not fit fails the CAST (Flink's CastFunctionITCase:
    CAST('12345.6789' AS DECIMAL(8, 4)) is a NumberFormatException) and is NULL for TRY_CAST."""
    cols = [(["0.005", "-0.005", "1.2345", "999.999"], STRING())]
    (s,) = refs(cols)
    assert run(call("try_cast", s, type=DECIMAL(5, 2)), cols) == ["0.01", "-0.01", "1.23", None]
    with pytest.raises(EvaluationError, match="'999.999': it does not fit in DECIMAL"):
        run(call("cast", s, type=DECIMAL(5, 2)), cols)


def test_boolean_words_and_numbers() -> None:
    cols = [(["yes", "0", "TrUe", "n"], STRING())]
    (s,) = refs(cols)
    assert run(call("cast", s, type=BOOLEAN()), cols) == ["TRUE", "FALSE", "TRUE", "FALSE"]
    # no trimming: Flink fails on CAST('  true ' AS BOOLEAN) (functions corpus conversion_lit_03_err03_cast)
    padded = [([" true "], STRING())]
    (p,) = refs(padded)
    with pytest.raises(EvaluationError):
        run(call("cast", p, type=BOOLEAN()), padded)
    nums = [([decimal.Decimal("0.00"), decimal.Decimal("-1.50")], DECIMAL(5, 2))]
    (x,) = refs(nums)
    assert run(call("cast", x, type=BOOLEAN()), nums) == ["FALSE", "TRUE"]


def test_timestamp_ltz_conversions_use_session_zone() -> None:
    cols = [([0, 1706745599999], TIMESTAMP_LTZ(3))]
    (t,) = refs(cols)
    got = run(call("cast", t, type=TIMESTAMP(3)), cols, time_zone="Asia/Shanghai")
    assert got == ["1970-01-01 08:00:00.000", "2024-02-01 07:59:59.999"]
    assert run(call("cast", t, type=STRING()), cols, time_zone="Asia/Shanghai")[0] == "1970-01-01 08:00:00.000"
    back = call("cast", call("cast", t, type=TIMESTAMP(3)), type=TIMESTAMP_LTZ(3))
    assert run(call("cast", back, type=BIGINT()), cols, time_zone="Asia/Shanghai") == ["0", "1706745599"]
    s = [(["2024-01-01 08:00:00"], STRING())]
    (x,) = refs(s)
    assert run(call("cast", call("cast", x, type=TIMESTAMP_LTZ(3)), type=BIGINT()), s, time_zone="Asia/Shanghai") == [
        "1704067200"
    ]


def test_string_to_timestamp_reads_flinks_default_timestamp_formatter() -> None:
    """Flink's DateTimeUtils DEFAULT_TIMESTAMP_FORMATTER (`yyyy-[MM][M]-[dd][d]` then
    optionally ` [HH][H]:[mm][m]:[ss][s]` and up to nine fraction digits, not trimmed) with
    java.time's SMART resolver: no 'T', both colons, a day past the month's end is its last
    day, 24:00:00 the next midnight, hour 25 fails."""
    texts = [
        "2024-01-02 03:04:05.123456789",
        "2024-1-2 3:4:5",
        "2024-01-02",
        "2024-01-02 10:00:",
        "2024-02-30",
        "2024-02-29 24:00:00",
        "2024-01-02T03:04:05",
        "2024-01-02 03:04",
        " 2024-01-02",
        "2024-02-29 25:00:00",
        "2024-02-32",
    ]
    cols = [(texts, STRING())]
    (s,) = refs(cols)
    assert run(call("try_cast", s, type=TIMESTAMP(9)), cols) == [
        "2024-01-02 03:04:05.123456789",
        "2024-01-02 03:04:05.000000000",
        "2024-01-02 00:00:00.000000000",
        "2024-01-02 10:00:00.000000000",
        "2024-02-29 00:00:00.000000000",
        "2024-03-01 00:00:00.000000000",
        None,
        None,
        None,
        None,
        None,
    ]
    assert run(call("cast", s, type=TIMESTAMP(0)), [(texts[:1], STRING())]) == ["2024-01-02 03:04:05"]
    with pytest.raises(EvaluationError, match="Text '2024-01-02T03:04:05' could not be parsed"):
        run(call("cast", s, type=TIMESTAMP(3)), cols)


def test_string_to_time_follows_flinks_parse_time() -> None:
    """Flink's DateTimeUtils.parseTime: h[:m[:s[.f]]] with any number of digits and no range
    check (the milliseconds add up; the hour prints as its last two digits, so '123' shows
    23:00:00), Java's trim around each number, three fraction digits rounded by the fourth,
    a zone '-h[:m]' / '+h[:m]' subtracted / added; anything else fails (TRY_CAST: NULL)."""
    texts = [
        "123",
        "12:34",
        " 1 : 2 :3 ",
        "12:60",
        "25:00:00",
        "12:34:56.9999",
        "12:34:56.5x7",
        "10:00:00-01:00",
        "10-01",
        "10:00+02:00",
        "abc",
        "",
        "-5",
        None,
    ]
    cols = [(texts, STRING())]
    (s,) = refs(cols)
    assert run(call("try_cast", s, type=TIME(3)), cols) == [
        "23:00:00.000",
        "12:34:00.000",
        "01:02:03.000",
        "13:00:00.000",
        "25:00:00.000",
        "12:34:57.000",
        "12:34:56.507",
        "09:00:00.000",
        "09:00:00.000",
        None,  # the minutes would span the zone's sign: Flink refuses it too
        None,
        None,
        None,
        None,
    ]
    assert run(call("cast", call("cast", s, type=TIME(0)), type=STRING()), [([*texts[:2]], STRING())]) == [
        "23:00:00",
        "12:34:00",
    ]
    with pytest.raises(EvaluationError, match=r"DateTimeException: For input string: '10:00\+02:00'\."):
        run(call("cast", s, type=TIME(0)), cols)


def test_to_varchar_and_char_length() -> None:
    cols = [(["abcdef", "ab"], STRING())]
    (s,) = refs(cols)
    assert run(call("cast", s, type=VARCHAR(3)), cols) == ["abc", "ab"]
    assert run(call("cast", s, type=CHAR(3)), cols) == ["abc", "ab "]


def test_array_cast_elementwise() -> None:
    """Element-wise; TRY_CAST of an array with an element that fails is NULL as a whole,
    as in Flink (FLINK-31300), not an array holding a NULL."""
    cols = [([["1", "2"], None, ["x"], ["3", None]], ARRAY(STRING()))]
    (a,) = refs(cols)
    assert run(call("try_cast", a, type=ARRAY(INT())), cols) == ["[1, 2]", None, None, "[3, NULL]"]


def test_cast_supported_matrix() -> None:
    assert cast_supported(STRING(), INT())
    assert cast_supported(INT(), STRING())
    assert cast_supported(DATE(), TIMESTAMP(3))
    assert not cast_supported(BOOLEAN(), DATE())
