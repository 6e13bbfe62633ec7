"""The Flink-oracle conformance cases (copied from shared/conformance), in every mode.

Cases that an open issue owns are marked xfail with that issue (non-strict, so a case that
starts passing shows up as XPASS); they are never deleted or edited to fit.
"""

from __future__ import annotations

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
    "037/streaming",
    "037/batch",
    "061/streaming",
    "061/batch",
    "062/streaming",
    "062/batch",
    "088/streaming",
    "098/streaming",
    "098/batch",
    "106/streaming",
    "106/batch",
    "910/streaming",
    "910/batch",
    "913/streaming",
    "913/batch",
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


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("case_dir", FLINK_BUGS, ids=[p.name for p in FLINK_BUGS])
def test_flink_bug_case(case_dir: Path, mode: str) -> None:
    """Where Flink 2.3 is wrong, streamsql gives the correct answer (flink-bugs/README.md)."""
    run = run_case(case_dir, mode)
    actual = normalize(final_table(run.changelog))
    expected = normalize(expected_table(case_dir, "streamsql"))
    assert actual == expected, diff(actual, expected)
