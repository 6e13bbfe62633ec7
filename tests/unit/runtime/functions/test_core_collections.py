"""ITEM / CARDINALITY / ARRAY / MAP / ELEMENT against case 012."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.errors import EvaluationError
from runtime.functions._testing import call, lit, refs, run
from runtime.types import ARRAY, CHAR, INT, MAP, STRING

CASES = Path(__file__).parents[3] / "conformance" / "cases"


def test_case_012_array_map_basics() -> None:
    cols = [
        ([1, 2, 3, 4, 5], INT()),
        ([[10, 20, 30], [5], [], [None, 7, None], None], ARRAY(INT())),
        ([["a", "b"], ["x"], [], ["z", "ü"], None], ARRAY(STRING())),
        ([[("x", 1)], [("x", 2), ("y", 3)], [], [("x", None)], None], MAP(STRING(), INT())),
    ]
    i, arr, tags, m = refs(cols)
    k = lambda v: lit(v, INT(False))  # noqa: E731
    exprs = [
        i,
        arr,
        call("item", arr, k(1)),
        call("item", arr, k(3)),
        call("cardinality", arr),
        call("item", tags, k(2)),
        call("item", m, lit("x", CHAR(1, False))),
        call("item", m, lit("missing", CHAR(7, False))),
        call("cardinality", m),
        call("array", i, call("times", i, k(10))),
        call("cardinality", tags),
    ]
    got = [list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True)]
    path = CASES / "012_array_map_basics" / "expected" / "batch.jsonl"
    want = [json.loads(line)["row"] for line in path.read_text().splitlines() if line.strip()]
    assert got == want


def test_item_with_column_index_and_key() -> None:
    cols = [
        ([[1, 2], [3], None], ARRAY(INT())),
        ([2, 0, 1], INT()),
        ([[("a", 1), ("b", 2)], [("a", 5)], []], MAP(STRING(), INT())),
        (["b", "a", "a"], STRING()),
    ]
    arr, idx, m, key = refs(cols)
    assert run(call("item", arr, idx), cols) == ["2", None, None]
    assert run(call("item", m, key), cols) == ["2", "5", None]
    built = call("map", key, idx)
    assert run(built, cols) == ["{b=2}", "{a=0}", "{a=1}"]


def test_element() -> None:
    cols = [([[7], [], None], ARRAY(INT()))]
    (a,) = refs(cols)
    assert run(call("element", a), cols) == ["7", None, None]
    bad = [([[1, 2]], ARRAY(INT()))]
    (b,) = refs(bad)
    with pytest.raises(EvaluationError):
        run(call("element", b), bad)
