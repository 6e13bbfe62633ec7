"""BATCH operators mapped in runtime/executor/spark/windowed.py against the local runner: OVER
aggregates (ROWS / RANGE frames, ranking, LAG / LEAD), window joins, UNNEST and LIMIT; and the
run-time refusals where the local runner's result depends on arrival order."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from harness import final_table
from spark_util import run_script

from runtime.errors import JobError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

DDL = """
CREATE TABLE e (k STRING, ts TIMESTAMP(3), v INT) WITH (
  'connector' = 'filesystem', 'path' = 'e.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
"""
# (k, ts) unique: ROWS frames and ROW_NUMBER are deterministic; v has NULLs and ties.
UNIQUE = (
    "a,2024-01-01 00:00:01,1\nb,2024-01-01 00:00:02,10\na,2024-01-01 00:00:04,3\na,2024-01-01 00:00:03,NULL\n"
    "a,2024-01-01 00:00:09,3\nb,2024-01-01 00:00:06,20\nb,2024-01-01 00:00:10,-5\nNULL,2024-01-01 00:00:05,7\n"
)
# Two 'a' rows share a timestamp with different values.
TIED = UNIQUE + "a,2024-01-01 00:00:04,8\n"


def _same(sql: str, tmp_path: Path) -> list[dict[str, Any]]:
    local = run_script(sql, "batch", "local", tmp_path)
    assert local, "nothing compared"
    assert final_table(run_script(sql, "batch", "spark", tmp_path)) == final_table(local)
    return local


def test_over_rows_frames_ranking_and_lag_lead_match_local(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text(UNIQUE)
    sql = DDL + (
        "SELECT k, ts, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), "
        "AVG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), "
        "ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC), "
        "LAG(v) OVER (PARTITION BY k ORDER BY ts), LEAD(v, 2, -1) OVER (PARTITION BY k ORDER BY ts), "
        "COUNT(*) OVER (PARTITION BY k), MAX(v) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING) "
        "FROM e"
    )
    rows = _same(sql, tmp_path)
    a3 = next(r["row"] for r in rows if r["row"][0] == "a" and "00:00:03" in r["row"][1])
    assert a3[6] == "1" and a3[7] == "3"  # LAG over the row before (v=1); LEAD 2 rows on (v=3)


def test_over_range_frames_and_peer_ranks_with_ties_match_local(spark: Any, tmp_path: Path) -> None:
    """RANGE frames and RANK see peers, so ties are deterministic: no refusal."""
    (tmp_path / "e.csv").write_text(TIED)
    sql = DDL + (
        "SELECT k, ts, v, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING "
        "AND CURRENT ROW), COUNT(v) OVER (PARTITION BY k ORDER BY ts), RANK() OVER (PARTITION BY k ORDER BY ts), "
        "MIN(v) OVER (PARTITION BY k ORDER BY ts DESC "
        "RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) FROM e"
    )
    rows = _same(sql, tmp_path)
    tied = [r["row"] for r in rows if r["row"][0] == "a" and "00:00:04" in r["row"][1]]
    assert len(tied) == 2 and tied[0][3] == tied[1][3] == "11"  # NULL + 3 + 8: both peers in each frame


def test_over_rows_frame_with_differing_ties_is_refused_at_run_time(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text(TIED)
    sql = DDL + "SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM e"
    with pytest.raises(JobError, match="OverAggregate .*arrival order"):
        run_script(sql, "batch", "spark", tmp_path)


W_DDL = """
CREATE TABLE l (k STRING, lv INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'filesystem', 'path' = 'l.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
CREATE TABLE r (k STRING, rv INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'filesystem', 'path' = 'r.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
"""


@pytest.mark.parametrize("kind", ["JOIN", "FULL JOIN"])
def test_window_join_matches_local(spark: Any, tmp_path: Path, kind: str) -> None:
    (tmp_path / "l.csv").write_text(
        "a,1,2024-01-01 00:00:01\na,2,2024-01-01 00:00:12\nNULL,3,2024-01-01 00:00:03\nb,4,2024-01-01 00:00:04\n"
    )
    (tmp_path / "r.csv").write_text(
        "a,10,2024-01-01 00:00:05\na,20,2024-01-01 00:00:05\nNULL,30,2024-01-01 00:00:03\nb,40,2024-01-01 00:00:14\n"
    )
    sql = W_DDL + (
        "SELECT L.window_start, L.k, L.lv, R.k, R.rv FROM "
        "(SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND))) L "
        f"{kind} (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND))) R "
        "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k AND L.lv < R.rv"
    )
    rows = _same(sql, tmp_path)
    assert sum(1 for r in rows if r["row"][4] in ("10", "20")) == 2  # NULL keys never match


def test_unnest_arrays_and_maps_match_local(spark: Any, tmp_path: Path) -> None:
    lines = [
        {"id": 1, "tags": ["x", "y", None], "m": {"a": 1}},
        {"id": 2, "tags": [], "m": {}},
        {"id": 3, "tags": None, "m": None},
        {"id": 4, "tags": ["z", "z"], "m": {"b": 2, "c": 3}},
    ]
    (tmp_path / "t.json").write_text("".join(json.dumps(x) + "\n" for x in lines))
    ddl = (
        "CREATE TABLE t (id INT, tags ARRAY<STRING>, m MAP<STRING, INT>) WITH ("
        "'connector' = 'filesystem', 'path' = 't.json', 'format' = 'json');\n"
    )
    rows = _same(
        ddl + "SELECT t.id, x.tag, x.pos FROM t CROSS JOIN UNNEST(t.tags) WITH ORDINALITY AS x(tag, pos)", tmp_path
    )
    assert len(rows) == 5
    _same(ddl + "SELECT t.id, x.k, x.v FROM t CROSS JOIN UNNEST(t.m) AS x(k, v)", tmp_path)
    left = _same(ddl + "SELECT t.id, x.tag FROM t LEFT JOIN UNNEST(t.tags) AS x(tag) ON TRUE", tmp_path)
    assert len(left) == 7  # ids 2 and 3 kept once, padded with NULL


LIMIT_DDL = """
CREATE TABLE n (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = 'n.csv', 'format' = 'csv');
"""


def test_limit_runs_where_arrival_order_cannot_matter(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text("a,1\nb,2\na,1\n")
    assert len(_same(LIMIT_DDL + "SELECT k, v FROM n LIMIT 5", tmp_path)) == 3  # at most FETCH rows
    assert len(_same(LIMIT_DDL + "SELECT k, v FROM n WHERE k = 'a' LIMIT 1", tmp_path)) == 1  # equal rows


def test_limit_over_differing_rows_is_refused_at_run_time(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "n.csv").write_text("a,1\nb,2\na,1\n")
    with pytest.raises(JobError, match="Limit .*arrival order"):
        run_script(LIMIT_DDL + "SELECT k, v FROM n LIMIT 2", "batch", "spark", tmp_path)
