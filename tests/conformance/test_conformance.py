"""The Flink-oracle conformance cases (copied from shared/conformance), in every mode.

Cases that an open issue owns are marked xfail with that issue (non-strict, so a case that
starts passing shows up as XPASS); they are never deleted or edited to fit.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from harness import diff, expected_table, final_table, load_case, normalize, run_case

HERE = Path(__file__).parent
CASES = sorted(p for p in (HERE / "cases").iterdir() if p.is_dir())
FLINK_BUGS = sorted(p for p in (HERE / "flink-bugs").iterdir() if p.is_dir())

# Issue 2 (walking skeleton) must pass these; the rest belong to later issues.
SKELETON = {
    "001",
    "002",
    "004",
    "006",
    "008",
    "010",
    "012",
    "016",
    "017",
    "018",
    "020",
    "021",
    "024",
    "025",
    "027",
    "029",
    "031",
    "032",
    "038",
    "040",
    "044",
    "047",
    "048",
    "049",
    "051",
    "052",
    "054",
    "056",
    "058",
    "059",
    "901",
    "902",
    "904",
    "905",
    "907",
    "908",
    "911",
    "914",
    "916",
    "917",
}
OWNER = (
    "issue 3 (relational operators: joins, Top-N, dedup, OVER, set ops, MATCH_RECOGNIZE, ORDER BY, aggregation breadth)"
)
KNOWN_GAPS: dict[str, str] = {}
# Cases beyond the skeleton that already pass (as "case/mode"); they are regular tests, so a
# regression shows. Rejected modes pass when streamsql refuses them cleanly, as Flink does.
ALSO_PASSING = {
    # time-based joins (interval, window, temporal)
    "063/streaming",
    "063/batch",
    "064/streaming",
    "064/batch",
    "066/streaming",
    "066/batch",
    "067/streaming",
    "067/batch",
    "082/streaming",
    "082/batch",
    "083/streaming",
    "083/batch",
    "085/streaming",
    "086/streaming",
    # issue 3: Top-N, deduplication, window Top-N / dedup, ORDER BY / LIMIT
    "069/batch",
    "070/streaming",
    "070/batch",
    "089/streaming",
    "089/batch",
    "090/streaming",
    "090/batch",
    "092/streaming",
    "092/batch",
    "093/streaming",
    "093/batch",
    "095/streaming",
    "095/batch",
    "096/streaming",
    "096/batch",
    "116/streaming",
    "116/batch",
    "117/streaming",
    "117/batch",
    "119/streaming",
    "119/batch",
    # issue 3: regular joins, semi/anti joins, subqueries
    "015/streaming",
    "015/batch",
    "046/streaming",
    "046/batch",
    "072/streaming",
    "072/batch",
    "073/streaming",
    "073/batch",
    "075/streaming",
    "075/batch",
    "076/streaming",
    "076/batch",
    "078/streaming",
    "078/batch",
    "079/streaming",
    "079/batch",
    "081/streaming",
    "081/batch",
    "037/streaming",
    "037/batch",
    "061/streaming",
    "061/batch",
    "062/streaming",
    "062/batch",
    "088/streaming",
    # aggregation breadth (issue 3): STDDEV/VAR, LISTAGG/COLLECT, GROUPING SETS, CUBE
    "034/streaming",
    "034/batch",
    "035/streaming",
    "035/batch",
    "041/streaming",
    "041/batch",
    "043/streaming",
    "043/batch",
    "088/batch",
    "098/streaming",
    "098/batch",
    "106/streaming",
    "106/batch",
    # OVER aggregation and set operations (issue 3)
    "099/streaming",
    "099/batch",
    "100/streaming",
    "102/batch",
    "103/batch",
    "105/streaming",
    "105/batch",
    "107/streaming",
    "107/batch",
    "109/streaming",
    "109/batch",
    "110/streaming",
    "110/batch",
    "910/streaming",
    "910/batch",
    "913/streaming",
    "913/batch",
    # MATCH_RECOGNIZE and UNNEST (issue 3)
    "013/streaming",
    "013/batch",
    "111/streaming",
    "111/batch",
    "112/streaming",
    "112/batch",
    "114/streaming",
    "114/batch",
    "115/streaming",
    "115/batch",
    # refused cleanly in the mode Flink refuses too
    "069/streaming",
    "085/batch",
    "086/batch",
    "100/batch",
    "102/streaming",
    "103/streaming",
}


def _params() -> list[object]:
    out: list[object] = []
    for case_dir in CASES:
        meta = load_case(case_dir)
        num = case_dir.name[:3]
        modes = list(meta.get("modes") or meta.get("error_modes") or [])
        for mode in ("streaming", "batch"):
            rejected = mode in (meta.get("rejected") or {})
            if mode not in modes and not rejected:
                continue
            marks = []
            if num not in SKELETON and f"{num}/{mode}" not in ALSO_PASSING:
                marks.append(pytest.mark.xfail(reason=f"owned by {OWNER}", strict=False))
            elif f"{num}/{mode}" in KNOWN_GAPS:
                marks.append(pytest.mark.xfail(reason=KNOWN_GAPS[f"{num}/{mode}"], strict=False))
            out.append(pytest.param(case_dir, mode, id=f"{case_dir.name}-{mode}", marks=marks))
    return out


# The oracle's run_sql.py handed Flink each statement with its continuation lines indented
# by four spaces, so Flink's recorded columns on lines 2+ are 4 to the right of the text in
# case.sql (e.g. 904: `       amount` starts at column 8, Flink says 12; 902: `FROM` at
# column 1, Flink says 5). streamsql reports positions in the text as the user wrote it.
ORACLE_CONTINUATION_INDENT = 4


def flink_position(position: str) -> tuple[int, int]:
    line, col = (int(x) for x in position.split(":"))
    return line, col - ORACLE_CONTINUATION_INDENT if line > 1 else col


@pytest.mark.parametrize(("case_dir", "mode"), _params())
def test_case(case_dir: Path, mode: str) -> None:
    from planner.errors import SqlError
    from runtime.errors import JobError

    meta = load_case(case_dir)
    if meta.get("error"):
        with pytest.raises((SqlError, JobError)) as info:
            run_case(case_dir, mode)
        err = info.value
        assert str(err).strip(), "the error must carry a message"
        if meta.get("position") and isinstance(err, SqlError):
            line, col = flink_position(meta["position"])
            assert (err.line, err.column) == (line, col), (
                f"position {err.line}:{err.column}, Flink says {line}:{col}\n{err}"
            )
        return
    if mode in (meta.get("rejected") or {}):
        # Flink refused this mode; the engine may refuse too (with a clear SQL error) or run it.
        try:
            run_case(case_dir, mode)
        except SqlError as e:
            assert str(e).strip()
        return
    run = run_case(case_dir, mode)
    key = meta.get("streaming_upsert_key") if mode == "streaming" else None
    actual = normalize(final_table(run.changelog, key))
    expected = normalize(expected_table(case_dir, mode))
    assert actual == expected, diff(actual, expected)
    ordered = case_dir / "expected" / "batch.ordered.jsonl"
    if mode == "batch" and ordered.exists():
        # ORDER BY: the batch result must also arrive in Flink's order
        want = [tuple(json.loads(line)["row"]) for line in ordered.read_text().splitlines() if line.strip()]
        got = [tuple(rec["row"]) for rec in run.changelog if rec["op"] == "+I"]
        norm = [normalize(Counter([r])) for r in got], [normalize(Counter([r])) for r in want]
        assert norm[0] == norm[1], f"batch order differs:\n  got      {got}\n  expected {want}"


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("case_dir", FLINK_BUGS, ids=[p.name for p in FLINK_BUGS])
def test_flink_bug_case(case_dir: Path, mode: str) -> None:
    """Where Flink 2.3 is wrong, streamsql gives the correct answer (flink-bugs/README.md)."""
    run = run_case(case_dir, mode)
    actual = normalize(final_table(run.changelog))
    expected = normalize(expected_table(case_dir, "streamsql"))
    assert actual == expected, diff(actual, expected)
