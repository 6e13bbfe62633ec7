"""Evaluation shortcuts: common subexpressions computed once per `evaluate_many`, CASE
branches gathering only the columns they read, Calc filtering only what it projects."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

import pyarrow as pa
import pytest

from runtime.expr import evaluator
from runtime.expr.evaluator import evaluate, evaluate_many
from runtime.expr.ir import Call, InputRef, Literal
from runtime.functions import registry
from runtime.functions.registry import EvalContext
from runtime.types import BIGINT, BOOLEAN, DOUBLE, INT, STRING, Field

BATCH = pa.record_batch({"s": pa.array(["Ab", "cD", None, "ee"]), "v": pa.array([1, 2, 3, 4], pa.int32())})
S = InputRef(0, STRING())
V = InputRef(1, INT())


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls: list[int] = []
    fn = registry.lookup(name)
    assert fn is not None

    def kernel(*a: Any) -> Any:
        calls.append(1)
        return fn.kernel(*a)

    original = registry.lookup
    monkeypatch.setattr(registry, "lookup", lambda n: replace(fn, kernel=kernel) if n.lower() == name else original(n))
    return calls


def test_repeated_call_is_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch, "lower")
    low = Call("lower", (S,), STRING())
    case = Call(
        "case",
        (
            Call("equals", (low, Literal("ab", STRING(False))), BOOLEAN()),
            Literal("0", STRING(False)),
            Call("equals", (low, Literal("cd", STRING(False))), BOOLEAN()),
            Literal("1", STRING(False)),
            low,
        ),
        STRING(),
    )
    out = evaluate_many([case, low], BATCH, EvalContext(4))
    assert out[0].to_pylist() == ["0", "1", None, "ee"]
    assert out[1].to_pylist() == ["ab", "cd", None, "ee"]
    assert len(calls) == 1
    assert evaluator._MEMO.get() is None  # the memo lives only during the call
    evaluate_many([low], BATCH, EvalContext(4))
    assert len(calls) == 2  # not across calls (another batch may have the same id)


def test_nondeterministic_calls_are_not_shared() -> None:
    rand = Call("rand", (), DOUBLE(False))
    a, b = evaluate_many([rand, rand], BATCH, EvalContext(4))
    assert a.to_pylist() != b.to_pylist()


def test_case_branch_gathers_only_its_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[int] = []
    original = evaluator._take_referenced

    def spy(expr: Any, batch: pa.RecordBatch, idx: Any) -> pa.RecordBatch:
        sub = original(expr, batch, idx)
        taken.extend(i for i, c in enumerate(sub.columns) if c.null_count < len(c))
        return sub

    monkeypatch.setattr(evaluator, "_take_referenced", spy)
    div = Call("divide", (V, Literal(2, INT(False))), INT())  # may fail: evaluated on its rows only
    case = Call("case", (Call("is_null", (S,), BOOLEAN(False)), div, Literal(None, INT())), INT())
    assert evaluate(case, BATCH, EvalContext(4)).to_pylist() == [None, None, 1, None]
    assert taken == [1]  # only `v` was gathered, not `s`


@pytest.mark.parametrize("project_first", [True, False])
def test_calc_filters_only_projected_columns(kit: ModuleType, tmp_path: Any, project_first: bool) -> None:
    p = tmp_path / "e.csv"
    p.write_text("2024-01-01 00:00:01.000,a,1\n2024-01-01 00:00:02.000,b,20\n2024-01-01 00:00:03.000,c,30\n")
    big = Call("greater_than", (kit.ref(2, INT()), Literal(5, INT(False))), BOOLEAN())
    proj = (
        [kit.ref(1, STRING()), kit.ref(2, INT())]
        if project_first
        else [Call("upper", (kit.ref(1, STRING()),), STRING()), Call("cast", (kit.ref(2, INT()),), BIGINT())]
    )
    nodes = [
        kit.scan(1, p, kit.EVENTS),
        kit.node(2, "Calc", (1,), [Field("k", STRING()), Field("v", BIGINT())], projections=proj, condition=big),
    ]
    rows, ex = kit.run(nodes, 2)
    assert ex.operators[2].project_first is project_first
    assert ex.operators[2].used == {1, 2}
    want = [("b", "20"), ("c", "30")] if project_first else [("B", "20"), ("C", "30")]
    assert kit.as_rows(rows) == want


def test_split_index_parts_of_one_column(monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.functions import strings

    splits: list[int] = []
    original = strings.pc.split_pattern
    monkeypatch.setattr(strings.pc, "split_pattern", lambda *a, **k: splits.append(1) or original(*a, **k))
    urls = pa.record_batch({"u": pa.array(["https://x/a/b", "https://y/c", None])})
    u = InputRef(0, STRING())
    exprs = [Call("split_index", (u, Literal("/", STRING(False)), Literal(i, INT(False))), STRING()) for i in (2, 3, 4)]
    out = [a.to_pylist() for a in evaluate_many(exprs, urls, EvalContext(3))]
    assert out == [["x", "y", None], ["a", "c", None], ["b", None, None]]
    assert len(splits) == 1  # the column was split once for the three parts
    other = pa.record_batch({"u": pa.array(["p/q/r/s/t", "", "1/2/3/4"])})
    assert evaluate(exprs[1], other, EvalContext(3)).to_pylist() == ["s", None, "4"]
