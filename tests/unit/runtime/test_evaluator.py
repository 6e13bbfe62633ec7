"""The evaluator: columns, literal decoding, broadcasting, short-circuit conditionals."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest

from runtime.errors import EvaluationError
from runtime.expr.evaluator import evaluate, evaluate_many, literal_to_scalar
from runtime.expr.ir import Call, InputRef, Literal
from runtime.functions.registry import EvalContext
from runtime.types import (
    ARRAY,
    BOOLEAN,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    INT,
    INTERVAL_DAY_TIME,
    STRING,
    TIMESTAMP,
    DataType,
)

BATCH = pa.record_batch({"v": pa.array([1, 0, None, 5], pa.int32()), "s": pa.array(["a", "b", None, "d"])})
CTX = EvalContext(4)
V = InputRef(0, INT())
ONE = Literal(1, INT(False))
ZERO = Literal(0, INT(False))


def ev(expr):
    return evaluate(expr, BATCH, CTX).to_pylist()


def div(a, b):
    return Call("divide", (a, b), INT())


def test_input_ref_and_literal_broadcast() -> None:
    assert ev(V) == [1, 0, None, 5]
    assert ev(Literal("x", CHAR(1, False))) == ["x"] * 4
    assert ev(Literal(None, INT())) == [None] * 4
    out = evaluate(Call("plus", (V, ONE), INT()), BATCH, CTX)
    assert out.type == pa.int32() and out.to_pylist() == [2, 1, None, 6]
    # a kernel returning a constant is broadcast
    assert evaluate(Call("pi", (), DOUBLE(False)), BATCH, CTX).to_pylist()[3] == pytest.approx(3.14159265)


def test_literal_decoding() -> None:
    assert literal_to_scalar(Literal("1.50", DECIMAL(3, 2))).as_py() == decimal.Decimal("1.50")
    assert literal_to_scalar(Literal(19723, DATE())).as_py().isoformat() == "2024-01-01"
    ts = literal_to_scalar(Literal(1704067200123, TIMESTAMP(3)))
    assert ts.type == pa.timestamp("ms") and ts.as_py().isoformat() == "2024-01-01T00:00:00.123000"
    assert literal_to_scalar(Literal(10000, INTERVAL_DAY_TIME())).type == pa.duration("ms")
    assert literal_to_scalar(Literal([1, None], ARRAY(INT()))).as_py() == [1, None]
    assert literal_to_scalar(Literal(None, DataType("NULL"))).type == pa.null()


def test_evaluate_many() -> None:
    cols = evaluate_many([V, Call("is_null", (V,), BOOLEAN(False))], BATCH, CTX)
    assert [c.to_pylist() for c in cols] == [[1, 0, None, 5], [False, False, True, False]]


def test_division_by_zero_raises_outside_conditionals() -> None:
    with pytest.raises(EvaluationError, match="/ by zero"):
        ev(div(Literal(100, INT(False)), V))


def test_case_evaluates_branch_only_on_selected_rows() -> None:
    guarded = Call(
        "case",
        (Call("not_equals", (V, ZERO), BOOLEAN()), div(Literal(100, INT(False)), V), Literal(-1, INT(False))),
        INT(),
    )
    assert ev(guarded) == [100, -1, -1, 20]
    iff = Call("if", (Call("equals", (V, ZERO), BOOLEAN()), ZERO, div(ONE, V)), INT())
    assert ev(iff) == [1, 0, None, 0]


def test_and_or_short_circuit() -> None:
    nz = Call("not_equals", (V, ZERO), BOOLEAN())
    gt = Call("greater_than", (div(Literal(10, INT(False)), V), Literal(3, INT(False))), BOOLEAN())
    assert ev(Call("and", (nz, gt), BOOLEAN())) == [True, False, None, False]
    is_zero = Call("equals", (V, ZERO), BOOLEAN())
    assert ev(Call("or", (is_zero, gt), BOOLEAN())) == [True, True, None, False]


def test_coalesce_evaluates_later_arguments_only_where_needed() -> None:
    w = InputRef(0, INT())
    expr = Call("coalesce", (Call("nullif", (w, ZERO), INT()), div(ONE, Literal(0, INT(False)))), INT())
    with pytest.raises(EvaluationError):
        ev(expr)  # row 1 (0) and row 2 (NULL) need the second argument
    ok = Call("coalesce", (V, div(ONE, Literal(1, INT(False)))), INT(False))
    assert ev(ok) == [1, 0, 1, 5]


def test_nested_case_with_strings() -> None:
    s = InputRef(1, STRING())
    expr = Call(
        "case",
        (
            Call("is_null", (s,), BOOLEAN(False)),
            Literal("none", CHAR(4, False)),
            Call("equals", (s, Literal("a", CHAR(1, False))), BOOLEAN()),
            Literal("A", CHAR(1, False)),
            s,
        ),
        STRING(),
    )
    assert ev(expr) == ["A", "b", "none", "d"]


def test_empty_batch() -> None:
    empty = BATCH.slice(0, 0)
    out = evaluate(Call("plus", (V, ONE), INT()), empty, EvalContext(0))
    assert len(out) == 0 and out.type == pa.int32()
    case = Call("case", (Call("is_null", (V,), BOOLEAN(False)), ONE, V), INT())
    assert evaluate(case, empty, EvalContext(0)).to_pylist() == []
