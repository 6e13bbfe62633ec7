"""MATCH_RECOGNIZE end to end (Match operator) in both modes: skip strategies, quantifiers,
WITHIN, late rows, batch-size independence."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from runtime.errors import JobError
from streamsql import EnvironmentSettings, TableEnvironment

ROWS = [
    ("2024-01-01 00:00:01.000", "A", 10),
    ("2024-01-01 00:00:02.000", "A", 9),
    ("2024-01-01 00:00:03.000", "A", 8),
    ("2024-01-01 00:00:04.000", "A", 11),
    ("2024-01-01 00:00:05.000", "A", 7),
    ("2024-01-01 00:00:06.000", "A", 12),
    ("2024-01-01 00:00:02.500", "B", 5),
    ("2024-01-01 00:00:03.500", "B", 4),
    ("2024-01-01 00:00:04.500", "B", 6),
]


def run(tmp_path: Path, query: str, mode: str, rows=ROWS, extra: dict[str, str] | None = None) -> Counter:
    """The final table of `query` over a `ticks(ts, sym, price)` table holding `rows`."""
    csv = tmp_path / "ticks.csv"
    csv.write_text("".join(f"{ts},{s},{p}\n" for ts, s, p in rows))
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    for k, v in (extra or {}).items():
        env.get_config().set(k, v)
    env.execute_sql(
        "CREATE TABLE ticks (ts TIMESTAMP(3), sym STRING, price INT, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv')"
    )
    table: Counter = Counter()
    for row in env.execute_sql(query).collect():
        kind = row.get_row_kind().short_string()
        assert kind == "+I", "MATCH_RECOGNIZE output is insert-only"
        table[tuple(row)] += 1
    return table


V_SHAPE = """
SELECT sym, start_p, bottom, end_p FROM ticks MATCH_RECOGNIZE (
  PARTITION BY sym ORDER BY ts
  MEASURES A.price AS start_p, LAST(B.price) AS bottom, C.price AS end_p
  AFTER MATCH SKIP {skip}
  PATTERN (A B+ C)
  DEFINE B AS price < PREV(price), C AS price > PREV(price)
)"""


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_v_shape_past_last_row(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, V_SHAPE.format(skip="PAST LAST ROW"), mode)
    assert got == Counter({("A", 10, 8, 11): 1, ("B", 5, 4, 6): 1})


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_skip_to_next_row_finds_overlapping_matches(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, V_SHAPE.format(skip="TO NEXT ROW"), mode)
    # 9 8 11 starts inside the first match; 11 7 12 starts at its last row.
    assert got == Counter({("A", 10, 8, 11): 1, ("A", 9, 8, 11): 1, ("A", 11, 7, 12): 1, ("B", 5, 4, 6): 1})


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_skip_to_last_variable(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, V_SHAPE.format(skip="TO LAST C"), mode)
    # The next match may start at the previous match's C row (11 -> 7 -> 12).
    assert got == Counter({("A", 10, 8, 11): 1, ("A", 11, 7, 12): 1, ("B", 5, 4, 6): 1})


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_skip_to_first_variable(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, V_SHAPE.format(skip="TO FIRST C"), mode)
    # Same as TO LAST C here: C is a single row.
    assert got == Counter({("A", 10, 8, 11): 1, ("A", 11, 7, 12): 1, ("B", 5, 4, 6): 1})


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize(
    ("skip", "pattern", "message"),
    [
        ("TO FIRST A", "A B+ C", "Could not skip to first element of a match."),  # back to the start: a loop
        ("TO LAST A", "A B+ C", "Could not skip to first element of a match."),
        ("TO FIRST D", "A D? B+ C", "Could not skip to D. No such element in the found match."),
    ],
)
def test_skip_to_an_impossible_row_fails_the_job(
    tmp_path: Path, mode: str, skip: str, pattern: str, message: str
) -> None:
    """Flink's SkipToElementStrategy with throwExceptionOnMiss (as its planner builds it):
    skipping to the match's first row, or to a variable without rows, fails the job."""
    query = V_SHAPE.format(skip=skip).replace("PATTERN (A B+ C)", f"PATTERN ({pattern})")
    if "D" in pattern:
        query = query.replace("DEFINE B AS", "DEFINE D AS price > 100, B AS")
    with pytest.raises(JobError, match=re.escape(message)):
        run(tmp_path, query, mode)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_reluctant_vs_greedy_and_aggregates(tmp_path: Path, mode: str) -> None:
    q = """
    SELECT * FROM ticks MATCH_RECOGNIZE (
      PARTITION BY sym ORDER BY ts
      MEASURES FIRST(D.price) AS first_d, COUNT(D.price) AS n, SUM(D.price) AS s, AVG(D.price) AS a, E.price AS e
      AFTER MATCH SKIP PAST LAST ROW
      PATTERN (D{1,2}? E)
      DEFINE D AS price < 100, E AS price > 6
    )"""
    got = run(tmp_path, q, mode)
    # Reluctant D{1,2}?: E is tried as soon as one D is taken.
    assert got == Counter({("A", 10, 1, 10, 10, 9): 1, ("A", 8, 1, 8, 8, 11): 1, ("A", 7, 1, 7, 7, 12): 1})


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_within_drops_slow_matches(tmp_path: Path, mode: str) -> None:
    q = """
    SELECT * FROM ticks MATCH_RECOGNIZE (
      PARTITION BY sym ORDER BY ts
      MEASURES A.price AS a, B.price AS b
      AFTER MATCH SKIP PAST LAST ROW
      PATTERN (A X*? B) WITHIN INTERVAL '2' SECOND
      DEFINE B AS price > A.price
    )"""
    got = run(tmp_path, q, mode)
    # A: 10 -> (9, 8) -> 11 takes 3 s; 8 -> 11 within 1 s matches; 7 -> 12 too.
    assert got == Counter({("A", 8, 11): 1, ("A", 7, 12): 1, ("B", 4, 6): 1})


def test_late_rows_are_dropped_in_streaming(tmp_path: Path) -> None:
    rows = [*ROWS[:6], ("2024-01-01 00:00:00.500", "A", 100)]  # 5.5 s behind: below the watermark
    q = V_SHAPE.format(skip="PAST LAST ROW")
    assert run(tmp_path, q, "streaming", rows) == Counter({("A", 10, 8, 11): 1})
    # Batch mode has no watermark: the row is first in time order and becomes A.
    assert run(tmp_path, q, "batch", rows) == Counter({("A", 100, 8, 11): 1})


def test_result_does_not_depend_on_batch_size(tmp_path: Path) -> None:
    q = V_SHAPE.format(skip="TO NEXT ROW")
    big = run(tmp_path, q, "streaming")
    small = run(tmp_path, q, "streaming", extra={"table.exec.source.batch-rows": "1"})
    assert big == small


def test_match_rowtime_is_a_rowtime_attribute(tmp_path: Path) -> None:
    q = """
    SELECT sym, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE (
      SELECT * FROM ticks MATCH_RECOGNIZE (
        PARTITION BY sym ORDER BY ts
        MEASURES MATCH_ROWTIME() AS rt
        AFTER MATCH SKIP PAST LAST ROW
        PATTERN (A B)
        DEFINE B AS price > PREV(price)
      )), DESCRIPTOR(rt), INTERVAL '10' SECOND))
    GROUP BY sym, window_start, window_end"""
    got = run(tmp_path, q, "streaming")
    assert {(r[0], r[2]) for r in got} == {("A", 2), ("B", 1)}


def test_match_job_graph_survives_json(tmp_path: Path) -> None:
    """Navigation slots, pattern and DEFINE are plain data: the JobGraph round-trips."""
    import pyarrow as pa

    from planner.api import Planner
    from runtime.executor.local import LocalExecutor
    from runtime.graph import JobGraph

    csv = tmp_path / "ticks.csv"
    csv.write_text("".join(f"{ts},{s},{p}\n" for ts, s, p in ROWS))
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE ticks (ts TIMESTAMP(3), sym STRING, price INT, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{csv}', 'format' = 'csv')"
    )
    (stmt,) = env.parse(V_SHAPE.format(skip="PAST LAST ROW").replace("LAST(B.price)", "SUM(B.price)"))
    graph = Planner(env.catalog, env.get_config().to_dict()).plan_query(stmt).graph
    again = JobGraph.from_json(graph.to_json())
    rows = pa.Table.from_batches(list(LocalExecutor(again).run())).to_pylist()
    assert sorted((r["sym"], r["bottom"]) for r in rows) == [("A", 17), ("B", 4)]
