"""Arithmetic kernels: DECIMAL rules of case 006, Java integer semantics, temporal ± interval."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pytest

from runtime.errors import EvaluationError
from runtime.functions._testing import call, lit, refs, run
from runtime.functions.numeric import infer_with_literals
from runtime.functions.registry import FunctionTypeError, lookup
from runtime.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    INT,
    INTERVAL_DAY_TIME,
    INTERVAL_YEAR_MONTH,
    SMALLINT,
    TIMESTAMP,
    TINYINT,
    DataType,
)

CASES = Path(__file__).parents[3] / "conformance" / "cases"
D = decimal.Decimal


def expected(case: str) -> list[list[str | None]]:
    path = CASES / case / "expected" / "batch.jsonl"
    return [json.loads(line)["row"] for line in path.read_text().splitlines() if line.strip()]


def test_case_006_decimal_arithmetic_rounding() -> None:
    rows = [
        (1, "2.25", "1.000", 2),
        (2, "-2.25", "0.500", -3),
        (3, "2.35", "0.125", 7),
        (4, "0.05", "-0.001", 1),
        (5, "99999999.99", "9.999", 3),
        (6, "-15.55", "1.111", 4),
        (7, None, "2.000", 5),
        (8, "0.00", "0.333", -1),
    ]
    cols = [
        ([r[0] for r in rows], INT()),
        ([None if r[1] is None else D(r[1]) for r in rows], DECIMAL(10, 2)),
        ([D(r[2]) for r in rows], DECIMAL(5, 3)),
        ([r[3] for r in rows], INT()),
    ]
    i, a, b, c = refs(cols)

    def rnd(x, n):
        t = infer_with_literals("round", [x.type, INT(False)], [None, n])
        return call("round", x, lit(n, INT(False)), type=t)

    exprs = [
        i,
        call("plus", a, b),
        call("minus", a, b),
        call("times", a, b),
        call("divide", a, b),
        call("times", a, c),
        call("divide", a, c),
        rnd(a, 1),
        rnd(a, 0),
        rnd(a, -1),
        call("cast", a, type=DECIMAL(6, 1)),
        call("cast", a, type=INT()),
        call("cast", a, type=DECIMAL(4, 2)),
        call("cast", a, type=DOUBLE()),
    ]
    assert exprs[1].type == DECIMAL(12, 3)
    assert exprs[4].type == DECIMAL(19, 8)
    assert exprs[6].type == DECIMAL(21, 13)
    got = [list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True)]
    assert got == expected("006_decimal_arithmetic_rounding")


def test_decimal_precision_capped_at_38() -> None:
    t = lookup("times").infer([DECIMAL(38, 10), DECIMAL(38, 10)])
    assert (t.precision, t.scale) == (38, 6)
    t = lookup("divide").infer([DECIMAL(38, 2), DECIMAL(38, 2)])
    assert (t.precision, t.scale) == (38, 6)
    assert lookup("plus").infer([INT(), DECIMAL(5, 2)]) == DECIMAL(13, 2)
    assert lookup("plus").infer([DECIMAL(5, 2), DOUBLE()]) == DOUBLE()
    assert lookup("plus").infer([INT(False), BIGINT(False)]) == BIGINT(False)


def test_integer_wraps_and_truncates_like_java() -> None:
    cols = [([2147483647, -7, 7, -2147483648], INT()), ([1, 2, -2, -1], INT())]
    a, b = refs(cols)
    assert run(call("plus", a, b), cols) == ["-2147483648", "-5", "5", "2147483647"]
    assert run(call("divide", a, b), cols) == ["2147483647", "-3", "-3", "-2147483648"]
    assert run(call("mod", a, b), cols) == ["0", "-1", "1", "0"]
    assert run(call("times", a, lit(2, INT(False))), cols) == ["-2", "-14", "14", "0"]
    assert run(call("negate", a), cols) == ["-2147483647", "7", "-7", "-2147483648"]
    big = [([9223372036854775807], BIGINT()), ([6], INT())]
    x, y = refs(big)
    assert run(call("plus", x, y), big) == ["-9223372036854775803"]
    small = [([32767, -32768, 5], SMALLINT()), ([2, 3, -1], SMALLINT())]
    s, t = refs(small)  # computed in 16 bits: the same as in 64 bits, narrowed
    assert run(call("plus", s, t), small) == ["-32767", "-32765", "4"]
    assert run(call("minus", s, t), small) == ["32765", "32765", "6"]
    assert run(call("times", s, t), small) == ["-2", "-32768", "-5"]
    mixed = [([127, -128], TINYINT()), ([100, 70000], INT())]
    m, i = refs(mixed)
    assert run(call("times", m, i), mixed) == ["12700", "-8960000"]


def test_int_division_by_zero_raises() -> None:
    cols = [([1, 2], INT())]
    (v,) = refs(cols)
    expr = call("divide", lit(100, INT(False)), call("minus", v, lit(1, INT(False))))
    with pytest.raises(EvaluationError, match="/ by zero"):
        run(expr, cols)
    with pytest.raises(EvaluationError, match="/ by zero"):
        run(call("mod", v, lit(0, INT(False))), cols)


def test_double_division_by_zero_is_infinite() -> None:
    cols = [([1.0, -1.0, 0.0], DOUBLE())]
    (v,) = refs(cols)
    assert run(call("divide", v, lit(0.0, DOUBLE(False))), cols) == ["Infinity", "-Infinity", "NaN"]
    assert run(call("times", v, lit(2, INT(False))), cols) == ["2.0", "-2.0", "0.0"]


def test_null_operand_gives_null() -> None:
    cols = [([1, None], INT())]
    (v,) = refs(cols)
    assert run(call("plus", v, lit(None, DataType("NULL"))), cols) == [None, None]
    assert run(call("plus", v, lit(1, INT(False))), cols) == ["2", None]


def test_timestamp_and_date_plus_intervals() -> None:
    ts_2024_01_31 = 1706659200000  # 2024-01-31 00:00:00
    cols = [([ts_2024_01_31 + 1500, None], TIMESTAMP(3)), ([19753, 19782], DATE())]
    ts, d = refs(cols)
    assert run(call("plus", ts, lit(10_000, INTERVAL_DAY_TIME(False))), cols) == ["2024-01-31 00:00:11.500", None]
    assert run(call("minus", ts, lit(1, INTERVAL_YEAR_MONTH(False))), cols) == ["2023-12-31 00:00:01.500", None]
    assert run(call("plus", ts, lit(1, INTERVAL_YEAR_MONTH(False))), cols) == ["2024-02-29 00:00:01.500", None]
    assert run(call("plus", d, lit(86_400_000, INTERVAL_DAY_TIME(False))), cols) == ["2024-02-01", "2024-03-01"]
    assert run(call("plus", lit(12, INTERVAL_YEAR_MONTH(False)), d), cols) == ["2025-01-31", "2025-02-28"]


def test_bad_operand_types_rejected() -> None:
    with pytest.raises(FunctionTypeError, match=r"Cannot apply '\+' to arguments of type '<INTEGER> \+ <BOOLEAN>'"):
        lookup("plus").infer([INT(), BOOLEAN()])
