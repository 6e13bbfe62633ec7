"""Event-time consumers of a UNION ALL, end to end in both modes (Flink 2.3 keeps a column
that is a rowtime attribute in every input a rowtime attribute, and the union's watermark
is the minimum of its inputs'): window TVFs (TUMBLE, HOP, CUMULATE, SESSION) with a window
aggregation, window Top-N, a window join, an interval join with a unioned side, OVER,
MATCH_RECOGNIZE and a rowtime deduplication ordered by the union's rowtime, a union of
three inputs and a union inside a view. Each
source is in event-time order, so no row is late and STREAMING's final table equals
BATCH's; the expected rows are worked out by hand in the comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.row import RowKind

ROWS = {
    "a": ["x,2024-01-01 00:00:01,1", "y,2024-01-01 00:00:04,2", "x,2024-01-01 00:00:12,3", "x,2024-01-01 00:00:25,4"],
    "b": [
        "y,2024-01-01 00:00:02,10",
        "x,2024-01-01 00:00:11,20",
        "y,2024-01-01 00:00:13,30",
        "x,2024-01-01 00:00:31,40",
    ],
    "c": ["x,2024-01-01 00:00:03,100", "y,2024-01-01 00:00:14,200"],
}
MODES = {"streaming": EnvironmentSettings.in_streaming_mode(), "batch": EnvironmentSettings.in_batch_mode()}


def _env(mode: str, tmp_path: Path) -> TableEnvironment:
    env = TableEnvironment.create(MODES[mode])
    for name, lines in ROWS.items():
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join(lines) + "\n")
        env.execute_sql(
            f"CREATE TABLE {name} (k STRING, ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
            f"WITH ('connector'='filesystem', 'path'='{path}', 'format'='csv')"
        )
    env.execute_sql("CREATE VIEW u AS SELECT * FROM a UNION ALL SELECT * FROM b")
    return env


def _rows(mode: str, tmp_path: Path, sql: str) -> list[tuple]:
    """The query's rows, sorted; insert-only in both modes."""
    env = _env(mode, tmp_path)
    with env.execute_sql(sql).collect() as it:
        rows = list(it)
    assert {r.get_row_kind() for r in rows} <= {RowKind.INSERT}
    return sorted(tuple(str(v) for v in r) for r in rows)


def _t(s: int) -> str:
    return f"2024-01-01 00:00:{s:02d}"


def _win(tvf: str) -> str:
    return (
        f"SELECT window_start, window_end, COUNT(*) AS cnt, SUM(v) AS total FROM TABLE({tvf}) "
        "GROUP BY window_start, window_end"
    )


# Union rows by time: x1@1 y10@2 (x100@3 of c) y2@4 x20@11 x3@12 y30@13 (y200@14 of c) x4@25 x40@31
CASES = {
    "tumble_over_inline_union": (
        _win("TUMBLE(TABLE (SELECT * FROM a UNION ALL SELECT * FROM b), DESCRIPTOR(ts), INTERVAL '10' SECOND)"),
        [
            (_t(0), _t(10), "3", "13"),
            (_t(10), _t(20), "3", "53"),
            (_t(20), _t(30), "1", "4"),
            (_t(30), _t(40), "1", "40"),
        ],
    ),
    "tumble_over_three_inputs": (
        _win(
            "TUMBLE(TABLE (SELECT * FROM a UNION ALL SELECT * FROM b UNION ALL SELECT * FROM c), "
            "DESCRIPTOR(ts), INTERVAL '10' SECOND)"
        ),
        [
            (_t(0), _t(10), "4", "113"),
            (_t(10), _t(20), "4", "253"),
            (_t(20), _t(30), "1", "4"),
            (_t(30), _t(40), "1", "40"),
        ],
    ),
    "hop_over_view": (
        _win("HOP(TABLE u, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '20' SECOND)"),
        [
            ("2023-12-31 23:59:50", _t(10), "3", "13"),
            (_t(0), _t(20), "6", "66"),
            (_t(10), _t(30), "4", "57"),
            (_t(20), _t(40), "2", "44"),
            (_t(30), _t(50), "1", "40"),
        ],
    ),
    "cumulate_over_view": (
        _win("CUMULATE(TABLE u, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"),
        [
            (_t(0), _t(5), "3", "13"),
            (_t(0), _t(10), "3", "13"),
            (_t(10), _t(15), "3", "53"),
            (_t(10), _t(20), "3", "53"),
            (_t(20), _t(30), "1", "4"),
            (_t(30), _t(35), "1", "40"),
            (_t(30), _t(40), "1", "40"),
        ],
    ),
    "session_over_view": (
        "SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(SESSION(TABLE u PARTITION BY k, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end",
        [
            ("x", _t(1), _t(6), "1", "1"),
            ("x", _t(11), _t(17), "2", "23"),
            ("x", _t(25), _t(30), "1", "4"),
            ("x", _t(31), _t(36), "1", "40"),
            ("y", _t(2), _t(9), "2", "12"),
            ("y", _t(13), _t(18), "1", "30"),
        ],
    ),
    "window_top_n_over_view": (
        "SELECT window_start, k, total FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
        "ORDER BY total DESC) AS rn FROM (SELECT window_start, window_end, k, SUM(v) AS total FROM "
        "TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k)) "
        "WHERE rn <= 1",
        [(_t(0), "y", "12"), (_t(10), "y", "30"), (_t(20), "x", "4"), (_t(30), "x", "40")],
    ),
    "interval_join_with_union_side": (
        "SELECT u.k, u.v, c.v FROM u, c WHERE u.k = c.k AND c.ts BETWEEN u.ts AND u.ts + INTERVAL '5' SECOND",
        [("x", "1", "100"), ("y", "30", "200")],
    ),
    "over_ordered_by_union_rowtime": (
        "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM u",
        [
            ("x", "1", "1"),
            ("x", "20", "21"),
            ("x", "3", "24"),
            ("x", "4", "28"),
            ("x", "40", "68"),
            ("y", "10", "10"),
            ("y", "2", "12"),
            ("y", "30", "42"),
        ],
    ),
    "window_join_of_union_and_table": (
        "SELECT l.k, l.window_start, l.cnt, r.cnt FROM (SELECT k, window_start, window_end, COUNT(*) AS cnt "
        "FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end) l "
        "JOIN (SELECT k, window_start, window_end, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE c, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end) r "
        "ON l.k = r.k AND l.window_start = r.window_start AND l.window_end = r.window_end",
        # u per key and window: x[0,10) 1, y[0,10) 2, x[10,20) 2, y[10,20) 1, ...; c: x[0,10) 1, y[10,20) 1
        [("x", _t(0), "1", "1"), ("y", _t(10), "1", "1")],
    ),
    "match_recognize_over_union": (
        "SELECT * FROM u MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES FIRST(A.v) AS first_v, "
        "LAST(B.v) AS last_v ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B) "
        "DEFINE B AS B.v > A.v)",
        [("x", "1", "20"), ("x", "3", "4"), ("y", "2", "30")],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_event_time_consumers_of_a_union(name: str, tmp_path: Path) -> None:
    sql, expected = CASES[name]
    streaming = _rows("streaming", tmp_path, sql)
    assert streaming == sorted(expected)
    assert _rows("batch", tmp_path, sql) == streaming


MINI_BATCH_TWO_PHASE = {
    "table.exec.mini-batch.enabled": "true",
    "table.exec.mini-batch.allow-latency": "1 h",
    "table.exec.mini-batch.size": "1000",
    "table.optimizer.agg-phase-strategy": "TWO_PHASE",
}


@pytest.mark.parametrize("config", [{}, MINI_BATCH_TWO_PHASE], ids=["default", "mini_batch_two_phase"])
def test_lateness_after_a_union_follows_the_unions_watermark(tmp_path: Path, config: dict[str, str]) -> None:
    """Sources read a row at a time alternate a, b, a, b, ...: x@5 arrives when a's own
    watermark is 30 but b's is 1, so the union's is 1 and the row counts (as in Flink's
    window after the union); x@7 arrives when the union's watermark is min(31, 21) = 21,
    late for [0, 10): dropped, as Flink drops it. With mini-batches the assigners below the
    union hold no rows (a held x@5 would reach the union after b moved it to 20)."""
    files = {
        "la": [
            "x,2024-01-01 00:00:30,1",
            "x,2024-01-01 00:00:05,2",
            "x,2024-01-01 00:00:31,3",
            "x,2024-01-01 00:00:07,4",
        ],
        "lb": [
            "y,2024-01-01 00:00:01,10",
            "y,2024-01-01 00:00:20,20",
            "y,2024-01-01 00:00:21,30",
            "y,2024-01-01 00:00:22,40",
        ],
    }
    env = TableEnvironment.create(MODES["streaming"])
    env.get_config().set("table.exec.source.batch-rows", "1")
    for k, v in config.items():
        env.get_config().set(k, v)
    for name, lines in files.items():
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join(lines) + "\n")
        env.execute_sql(
            f"CREATE TABLE {name} (k STRING, ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts) "
            f"WITH ('connector'='filesystem', 'path'='{path}', 'format'='csv')"
        )
    sql = _win("TUMBLE(TABLE (SELECT * FROM la UNION ALL SELECT * FROM lb), DESCRIPTOR(ts), INTERVAL '10' SECOND)")
    with env.execute_sql(sql).collect() as it:
        rows = sorted(tuple(str(v) for v in r) for r in it)
    assert rows == [(_t(0), _t(10), "2", "12"), (_t(20), _t(30), "3", "90"), (_t(30), _t(40), "2", "4")]


def test_rowtime_deduplication_over_a_union_final_table(tmp_path: Path) -> None:
    """Keep the last row per key by the union's rowtime: STREAMING's changelog folds to
    BATCH's table (x's last row is x40@31, y's y30@13)."""
    sql = (
        "SELECT k, ts, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM u) WHERE rn = 1"
    )
    final: list[tuple] = []
    with _env("streaming", tmp_path).execute_sql(sql).collect() as it:
        for r in it:
            row = tuple(str(v) for v in r)
            if r.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                final.append(row)
            else:
                final.remove(row)
    expected = [("x", "2024-01-01 00:00:31", "40"), ("y", "2024-01-01 00:00:13", "30")]
    assert sorted(final) == expected
    assert _rows("batch", tmp_path, sql) == expected
