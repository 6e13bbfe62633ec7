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
    the corpus names every documented entry but the window-only ones and the 8 its copy of
    the list missed."""
    from streamsql.docgen import FLINK_DOCUMENTED_FUNCTIONS, NOT_IN_CORPUS_FUNCTIONS, WINDOW_ONLY_FUNCTIONS

    named: set[str] = set()
    for case_dir in case_dirs():
        named.update(json.loads((case_dir / "case.json").read_text()).get("functions", []))
    assert not named & set(NOT_IN_CORPUS_FUNCTIONS)
    assert named | set(WINDOW_ONLY_FUNCTIONS) | set(NOT_IN_CORPUS_FUNCTIONS) == set(FLINK_DOCUMENTED_FUNCTIONS)
    assert len(FLINK_DOCUMENTED_FUNCTIONS) == 280


# Documented entries that are syntax rather than a registered function name: the binder
# handles them (each is still exercised by a passing corpus case, checked below).
_SYNTAX_FORMS = {"BETWEEN", "DESCRIPTOR", "EXISTS", "GROUPING/GROUPING_ID", "GROUP_ID", "OVERLAPS", "SIMILAR TO"}

# Entries whose only corpus cases are ones Flink rejects (or an xfail case): the test that
# proves each works, and a text it must contain.
_TESTED_ELSEWHERE = {
    "CURRENT_WATERMARK": ("tests/unit/runtime/functions/test_current_watermark.py", "CURRENT_WATERMARK(ts)"),
    "DESCRIPTOR": ("tests/conformance/cases/048_tumble_tvf_edges_late/case.sql", "DESCRIPTOR("),
    # the entries the corpus lacks (streamsql.docgen.NOT_IN_CORPUS_FUNCTIONS): the page's examples
    **{
        name: ("tests/unit/runtime/functions/test_documented_examples.py", text)
        for name, text in {
            "COSH": "COSH(0)",
            "DEGREES": "DEGREES(PI())",
            "E": "E()",
            "LOG": "LOG(2, 8)",
            "OVERLAPS": ") OVERLAPS (",
            "RADIANS": "RADIANS(180)",
            "RAND()": "RAND() >= 0",
            "TRIM": "TRIM(BOTH FROM",
        }.items()
    },
}


def test_every_documented_function_is_implemented_or_listed() -> None:
    """Done-when of issue 14: each entry of Flink 2.3's documented list is implemented (a
    passing corpus case exercises it, not one where Flink's answer is an error, and a
    function name is registered; a window-only function runs in a query) or is listed in
    docs/functions.md with the reason it is not."""
    import re

    from runtime.aggregates.types import AGGREGATE_NAMES
    from runtime.functions.registry import lookup
    from streamsql import EnvironmentSettings, TableEnvironment
    from streamsql.docgen import FLINK_DOCUMENTED_FUNCTIONS, UNAVAILABLE_FUNCTIONS, WINDOW_ONLY_FUNCTIONS

    unavailable = {n.strip() for names, _ in UNAVAILABLE_FUNCTIONS for n in names.split(",")}
    page = (Path(__file__).resolve().parents[2] / "docs" / "functions.md").read_text()
    for names, why in UNAVAILABLE_FUNCTIONS:
        assert f"- {names}: {why}." in page, f"docs/functions.md does not list {names} with its reason"
    for name in unavailable:
        assert lookup(name.lower()) is None, f"{name} is listed as unavailable but is registered"

    passing: set[str] = set()
    for case_dir in case_dirs():
        case = json.loads((case_dir / "case.json").read_text())
        # a suspected Flink bug (Flink crashed) counts when streamsql answers or fails cleanly
        if (not case.get("error") or case.get("suspected_flink_bug")) and case_dir.name not in XFAIL:
            passing.update(case.get("functions", []))
    aggregates = {a.upper() for a in AGGREGATE_NAMES}
    implemented = []
    for entry in FLINK_DOCUMENTED_FUNCTIONS:
        if entry in unavailable or entry in WINDOW_ONLY_FUNCTIONS:
            continue
        if entry in _TESTED_ELSEWHERE:
            path, text = _TESTED_ELSEWHERE[entry]
            assert text in (Path(__file__).resolve().parents[2] / path).read_text(), entry
            passing.add(entry)
        assert entry in passing, f"{entry}: no passing corpus case exercises it"
        word = re.fullmatch(r"([A-Z][A-Z0-9_]*)(\(.*\))?", entry)
        if word and entry not in _SYNTAX_FORMS:
            name = word.group(1)
            assert lookup(name.lower()) is not None or name in aggregates, f"{entry} is not registered"
        implemented.append(entry)

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    calls = [{"NTILE": "NTILE(2)", "LAG": "LAG(x)", "LEAD": "LEAD(x)"}.get(f, f"{f}()") for f in WINDOW_ONLY_FUNCTIONS]
    over = ", ".join(f"{c} OVER (ORDER BY x)" for c in calls)
    rows = list(env.execute_sql(f"SELECT x, {over} FROM (VALUES (1), (2), (3)) AS t(x)").collect())
    assert len(rows) == 3 and all(len(r) == 1 + len(calls) for r in rows)
    implemented += list(WINDOW_ONLY_FUNCTIONS)

    # Flink 2.3 documents 280 entries: 278 implemented, 2 listed (added in Flink 2.4.0, not
    # registered in Flink 2.3.0)
    assert (len(FLINK_DOCUMENTED_FUNCTIONS), len(implemented), len(unavailable)) == (280, 278, 2)
