"""The built-in functions corpus (Flink 2.3 oracle, tests/conformance/functions), batch mode.

Cases that do not pass yet are listed with their reason in functions_xfail.json (non-strict
xfail, so a fixed case shows as XPASS: then remove its entry). Per-expression detail:
`python tests/conformance/functions_report.py [case ...]`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from functions_corpus import XFAIL_FILE, case_dirs, run_case

XFAIL: dict[str, str] = json.loads(XFAIL_FILE.read_text())


def _params() -> list[object]:
    out: list[object] = []
    for case_dir in case_dirs():
        marks = []
        if case_dir.name in XFAIL:
            marks.append(pytest.mark.xfail(reason=XFAIL[case_dir.name], strict=False))
        out.append(pytest.param(case_dir, id=case_dir.name, marks=marks))
    return out


def test_xfail_names_exist() -> None:
    names = {p.name for p in case_dirs()}
    assert not set(XFAIL) - names, f"xfail entries for unknown cases: {sorted(set(XFAIL) - names)}"


@pytest.mark.parametrize("case_dir", _params())
def test_function_case(case_dir: Path) -> None:
    outcome = run_case(case_dir)
    assert outcome.ok, outcome.reason


def test_documented_list_is_the_corpus_list() -> None:
    """docs/functions.md counts against streamsql.docgen's copy of Flink's documented list;
    the corpus names every documented entry but the window-only ones."""
    from streamsql.docgen import FLINK_DOCUMENTED_FUNCTIONS, WINDOW_ONLY_FUNCTIONS

    named: set[str] = set()
    for case_dir in case_dirs():
        named.update(json.loads((case_dir / "case.json").read_text()).get("functions", []))
    assert named | set(WINDOW_ONLY_FUNCTIONS) == set(FLINK_DOCUMENTED_FUNCTIONS)
    assert len(FLINK_DOCUMENTED_FUNCTIONS) == 272
