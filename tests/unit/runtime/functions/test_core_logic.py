"""Comparisons, three-valued logic and conditional functions (cases 010, 027, 031, 907)."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pytest

from runtime.functions._testing import call, lit, refs, run
from runtime.functions.registry import FunctionTypeError, lookup
from runtime.types import BOOLEAN, CHAR, DATE, DECIMAL, INT, STRING, TIMESTAMP, DataType

CASES = Path(__file__).parents[3] / "conformance" / "cases"
NULL = DataType("NULL")


def expected(case: str) -> list[list[str | None]]:
    path = CASES / case / "expected" / "batch.jsonl"
    return [json.loads(line)["row"] for line in path.read_text().splitlines() if line.strip()]


def s(v: str):
    return lit(v, CHAR(len(v), False))


def test_case_010_three_valued_logic() -> None:
    t, f, n = True, False, None
    cols = [
        (list(range(1, 10)), INT()),
        ([t, t, t, f, f, f, n, n, n], BOOLEAN()),
        ([t, f, n, t, f, n, t, f, n], BOOLEAN()),
    ]
    i, p, q = refs(cols)
    either = call("or", p, q)
    exprs = [
        i,
        p,
        q,
        call("and", p, q),
        either,
        call("not", p),
        call("equals", p, q),
        call("not_equals", p, q),
        call("is_true", p),
        call("is_not_true", p),
        call("is_null", call("and", p, q)),
        call("is_not_false", p),
        call("is_distinct_from", p, q),
        call("case", either, s("yes"), call("not", either), s("no"), s("unknown")),
    ]
    got = [list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True)]
    assert got == expected("010_boolean_three_valued_logic")
    where = call("or", p, q, call("is_null", p), call("is_null", q), call("not", p))
    assert run(where, cols) == ["TRUE"] * 9


def test_case_027_conditional_functions() -> None:
    cols = [
        ([1, 2, 3, 4, 5, 6], INT()),
        ([1, 2, None, 3, None, -4], INT()),
        ([2, 2, 5, None, None, -9], INT()),
        (["x", None, "", None, "n", "neg"], STRING()),
    ]
    i, a, b, st = refs(cols)
    k = lambda v: lit(v, INT(False))  # noqa: E731
    exprs = [
        i,
        call("case", call("equals", a, k(1)), s("one"), call("equals", a, k(2)), s("two"), s("other")),
        call("case", call("equals", a, lit(None, NULL)), s("null!"), s("not matched")),
        call("case", call("greater_than", a, b), s("a"), call("less_than", a, b), s("b"), lit(None, CHAR(1))),
        call("coalesce", a, b, k(-1)),
        call("nullif", a, b),
        call("if", call("greater_than", a, b), s("gt"), s("not gt")),
        call("ifnull", st, s("dflt")),
        call("is_distinct_from", a, b),
        call("is_not_distinct_from", a, b),
        call("equals", a, b),
        call("greatest", a, b),
        call("least", a, b, k(0)),
    ]
    got = [list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True)]
    assert got == expected("027_conditional_functions")
    assert exprs[4].type == INT(False)  # COALESCE with a NOT NULL last argument


def test_case_031_not_in_with_null_is_never_true() -> None:
    cols = [([1, 100, None, -2], INT())]
    (v,) = refs(cols)
    not_in = call("not", call("in", v, lit(100, INT(False)), call("cast", lit(None, NULL), type=INT())))
    assert run(not_in, cols) == [None, "FALSE", None, None]
    assert run(call("is_not_true", not_in), cols) == ["TRUE"] * 4
    between = call(
        "and",
        call("greater_than_or_equal", v, lit(-2, INT(False))),
        call("less_than_or_equal", v, lit(5, INT(False))),
    )
    assert run(between, cols) == ["TRUE", "FALSE", None, "TRUE"]
    assert run(call("in", v, v, lit(3, INT(False))), cols) == ["TRUE", "TRUE", None, "TRUE"]


def test_case_907_int_equals_boolean_is_rejected() -> None:
    with pytest.raises(FunctionTypeError) as err:
        lookup("equals").infer([INT(), BOOLEAN(False)])
    assert str(err.value) == (
        "Cannot apply '=' to arguments of type '<INTEGER> = <BOOLEAN>'. "
        "Supported form(s): '<COMPARABLE_TYPE> = <COMPARABLE_TYPE>'"
    )
    with pytest.raises(FunctionTypeError):
        lookup("less_than").infer([STRING(), INT()])
    assert lookup("equals").infer([INT(False), NULL]) == BOOLEAN(True)


def test_mixed_comparisons() -> None:
    cols = [
        ([decimal.Decimal("1.50"), decimal.Decimal("2.00")], DECIMAL(5, 2)),
        ([2, 2], INT()),
        ([19723, 19724], DATE()),
        ([1704067200000, 1704067200000], TIMESTAMP(3)),
        (["abc", "abd"], STRING()),
    ]
    d, i, dt, ts, st = refs(cols)
    assert run(call("less_than", d, i), cols) == ["TRUE", "FALSE"]
    assert run(call("equals", d, lit("2.0", DECIMAL(2, 1, False))), cols) == ["FALSE", "TRUE"]
    assert run(call("equals", dt, ts), cols) == ["TRUE", "FALSE"]
    assert run(call("greater_than", st, s("abc")), cols) == ["FALSE", "TRUE"]
    assert run(call("greatest", st, s("abcc")), cols) == ["abcc", "abd"]


def test_greatest_with_bare_null_fails() -> None:
    with pytest.raises(FunctionTypeError, match="NULL"):
        lookup("greatest").infer([INT(), NULL])
