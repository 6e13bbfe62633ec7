"""LIKE / SIMILAR TO against case 020."""

from __future__ import annotations

import json
from pathlib import Path

from runtime.functions._testing import call, lit, refs, run
from runtime.functions.patterns import like_to_regex, similar_to_regex
from runtime.types import CHAR, INT, STRING

CASES = Path(__file__).parents[3] / "conformance" / "cases"


def s(v: str):
    return lit(v, CHAR(len(v), False))


def test_case_020_like_similar_to() -> None:
    ids = [1, 2, 3, 4, 5, 6, 7, 9, 10]
    texts = ["abc", "Abc", "xbz", "a_c", "cdab", None, "", "abab", "ñandú"]
    cols = [(ids, INT()), (texts, STRING())]
    i, x = refs(cols)
    exprs = [
        i,
        x,
        call("like", x, s("a%")),
        call("like", x, s("_b%")),
        call("like", x, s("%!_%"), s("!")),
        call("not", call("like", x, s("%c"))),
        call("like", x, s("A%")),
        call("similar_to", x, s("(ab|cd)%")),
        call("similar_to", x, s("[a-c]+")),
        call("like", x, s("%")),
    ]
    got = sorted(list(r) for r in zip(*(run(e, cols) for e in exprs), strict=True))
    path = CASES / "020_like_similar_to" / "expected" / "batch.jsonl"
    want = sorted(json.loads(line)["row"] for line in path.read_text().splitlines() if line.strip())
    assert got == want


def test_filter_not_like() -> None:
    cols = [(["zzz", "abc", None], STRING())]
    (x,) = refs(cols)
    assert run(call("not", call("like", x, s("zz%"))), cols) == ["FALSE", "TRUE", None]


def test_pattern_column_and_regex_translation() -> None:
    cols = [(["abc", "a.c", "xyz"], STRING()), (["a_c", "a.c", "%z"], STRING())]
    x, p = refs(cols)
    assert run(call("like", x, p), cols) == ["TRUE", "TRUE", "TRUE"]
    assert like_to_regex("a.c%") == r"(?s)^a\.c.*$"
    assert like_to_regex("50\\%") == r"(?s)^50\\.*$"  # no default escape in Flink 2.3
    assert similar_to_regex("(ab|cd)%") == "(?s)^(?:(ab|cd).*)$"
