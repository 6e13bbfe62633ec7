"""Numeric functions against case 025 (Java double rendering, HALF_UP ROUND of doubles)."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pytest

from runtime.expr.ir import Literal
from runtime.functions._testing import call, lit, refs, run
from runtime.functions.numeric import infer_with_literals, round_type
from runtime.functions.registry import FunctionTypeError, lookup
from runtime.types import DECIMAL, DOUBLE, INT, STRING

CASES = Path(__file__).parents[3] / "conformance" / "cases"


def expected(case: str) -> list[list[str | None]]:
    path = CASES / case / "expected" / "batch.jsonl"
    return [json.loads(line)["row"] for line in path.read_text().splitlines() if line.strip()]


def _typed(name, *args):
    lits = [a.value if isinstance(a, Literal) else None for a in args]
    return call(name, *args, type=infer_with_literals(name, [a.type for a in args], lits))


def test_case_025_numeric_functions() -> None:
    dec = ["2.675", "-2.500", "0.000", "0.001", "-0.005", "99999.999"]
    cols = [
        ([1, 2, 3, 4, 5, 6], INT()),
        ([2.675, -2.5, 0.0, 1e-7, -0.0049, 123456.789], DOUBLE()),
        ([decimal.Decimal(x) for x in dec], DECIMAL(8, 3)),
        ([7, -7, 0, 4, -1, 2147483647], INT()),
    ]
    i, x, d, n = refs(cols)

    def k(v):
        return lit(v, INT(False))

    exprs = [
        i,
        call("abs", x),
        call("abs", n),
        call("mod", n, k(4)),
        call("power", x, k(2)),
        call("sqrt", call("abs", x)),
        call("exp", k(1)),
        call("ln", call("plus", call("abs", x), k(1))),
        call("log10", call("plus", call("abs", x), k(1))),
        call("log2", call("plus", call("abs", n), k(1))),
        call("log", k(2), call("plus", call("abs", n), k(8))),
        call("sign", x),
        _typed("round", x, k(2)),
        _typed("round", d, k(2)),
        _typed("round", x),
        _typed("truncate", x, k(1)),
        _typed("truncate", d, k(1)),
        call("floor", x),
        call("ceil", x),
        call("floor", d),
        call("ceil", d),
    ]
    got = [list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True)]
    assert got == expected("025_numeric_functions")


def test_result_types() -> None:
    assert lookup("abs").infer([INT()]) == INT()
    assert lookup("log2").infer([INT(False)]) == DOUBLE(False)
    assert round_type(DECIMAL(10, 2), 1) == DECIMAL(10, 1)
    assert round_type(DECIMAL(10, 2), -1) == DECIMAL(9, 0)
    assert round_type(DECIMAL(10, 2), 5) == DECIMAL(10, 2)
    assert lookup("ceil").infer([DECIMAL(8, 3)]).scale == 0
    with pytest.raises(FunctionTypeError, match="ABS"):
        lookup("abs").infer([STRING()])


def test_pi_and_integer_round_negative_digits() -> None:
    cols = [([15, -25, None], INT())]
    (v,) = refs(cols)
    assert run(call("round", v, lit(-1, INT(False))), cols) == ["20", "-30", None]
    assert run(call("pi"), cols)[0] == "3.141592653589793"
