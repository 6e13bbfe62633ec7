"""Window TVF aggregation with GROUPING SETS and window deduplication keeping the last row,
in STREAMING mode (issue 14's held-out behaviours), against Flink's semantics:

- `GROUP BY window_start, window_end, GROUPING SETS (...)` is one WindowAggregate keyed by
  the set keys and `$e` (an Expand before the window assignment): insert-only results at
  the watermark, a late row dropped, not an updating GroupAggregate.
- Window dedup with `ORDER BY rowtime DESC` keeps the last row; among rows with the same
  row time the later arrival wins (Flink's `<=` in its dedup combiner).
"""

from __future__ import annotations

import json
from pathlib import Path

from streamsql import EnvironmentSettings, TableEnvironment

ROWS = [
    {"k": "a", "c": "x", "v": 1, "ts": "2024-01-01 00:00:01"},
    {"k": "a", "c": "y", "v": 2, "ts": "2024-01-01 00:00:03"},
    {"k": "b", "c": "x", "v": 5, "ts": "2024-01-01 00:00:04"},
    {"k": "a", "c": "x", "v": 7, "ts": "2024-01-01 00:00:06"},
    {"k": "b", "c": "y", "v": 3, "ts": "2024-01-01 00:00:12"},  # watermark 11: window [0, 10) fires
    {"k": "a", "c": "x", "v": 4, "ts": "2024-01-01 00:00:08"},  # late for [0, 10)
]


def _changelog(tmp_path: Path, rows: list[dict[str, object]], query: str, mode: str) -> list[tuple[str, list[object]]]:
    (tmp_path / "t.json").write_text("\n".join(json.dumps(r) for r in rows))
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql("SET 'table.exec.source.batch-rows' = '1'")
    env.execute_sql(
        "CREATE TABLE t (k STRING, c STRING, v INT, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 't.json'}', 'format' = 'json')"
    )
    result = env.execute_sql(query)
    return [(str(r.get_row_kind()), [str(v) if v is not None else None for v in r]) for r in result.collect()]


GROUPING_SETS = (
    "SELECT window_start, k, c, SUM(v) AS s, COUNT(*) AS n "
    "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
    "GROUP BY window_start, window_end, GROUPING SETS ((k, c), (k), ())"
)


def test_window_grouping_sets_streaming_is_a_window_aggregate(tmp_path: Path) -> None:
    out = _changelog(tmp_path, ROWS, GROUPING_SETS, "streaming")
    assert {op for op, _ in out} == {"+I"}, "insert-only, as a window aggregate emits"
    first = sorted((row[1:] for _, row in out if row[0] == "2024-01-01 00:00:00"), key=lambda r: [str(x) for x in r])
    # the late row (a, x, 4) is dropped: Flink's window aggregate, not a group aggregate
    assert first == sorted(
        [
            ["a", "x", "8", "2"],
            ["a", "y", "2", "1"],
            ["a", None, "10", "3"],
            ["b", "x", "5", "1"],
            ["b", None, "5", "1"],
            [None, None, "15", "4"],
        ],
        key=lambda r: [str(x) for x in r],
    )


def test_window_grouping_sets_explain_shows_window_aggregate(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text("")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE t (k STRING, c STRING, v INT, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 't.json'}', 'format' = 'json')"
    )
    plan = env.explain_sql(GROUPING_SETS)
    physical = plan.split("== Optimized Physical Plan ==")[1]
    assert "WindowAggregate(groupBy=[k, c, $e]" in physical
    assert "GroupAggregate" not in physical


def test_window_dedup_keep_last_row_takes_the_later_of_equal_times(tmp_path: Path) -> None:
    rows = [
        {"k": "a", "c": "x", "v": 1, "ts": "2024-01-01 00:00:01"},
        {"k": "a", "c": "y", "v": 2, "ts": "2024-01-01 00:00:06"},
        {"k": "a", "c": "x", "v": 3, "ts": "2024-01-01 00:00:03"},
        {"k": "a", "c": "x", "v": 9, "ts": "2024-01-01 00:00:06"},
        {"k": "b", "c": "y", "v": 3, "ts": "2024-01-01 00:00:12"},
    ]
    query = (
        "SELECT window_start, k, v FROM ("
        " SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS rn"
        " FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn = 1"
    )
    out = _changelog(tmp_path, rows, query, "streaming")
    assert sorted(row for _, row in out) == [["2024-01-01 00:00:00", "a", "9"], ["2024-01-01 00:00:10", "b", "3"]]
