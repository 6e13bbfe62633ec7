"""BATCH window operators past `taskmanager.memory.managed.size`.

- SESSION window aggregation and the SESSION window table function held every input row
  until the end: past the bound the rows go through the external merge sort by (session
  keys, rowtime, arrival) and a few complete sessions are processed at a time
  (runtime/operators/session_sort.py).
- The window join held both inputs: past the bound each goes through the sort by
  (window_start, window_end, arrival) and the windows complete on both sides are joined
  as the two sorted inputs are read side by side (runtime/operators/window_join.py).
- MATCH_RECOGNIZE held its rows until the end: past the bound they are sorted by
  (partition, ORDER BY, arrival) and a few complete partitions are matched at a time
  (runtime/operators/match.py).
- The interval join held both inputs: past the bound each is sorted by time and the two
  are swept side by side, holding a band of the bounds' width (interval_join.py).
- Window Top-N and window deduplication are planned as BATCH Rank (sorted by window_start,
  window_end, keys, order keys, arrival through the same sort, ranked as the merged rows
  come).

Every result must be the in-memory run's (order-sensitive aggregates included: a session's
rows are folded in arrival order), with ties, NULL and NaN keys, many keys and windows, rows
arriving out of time order; no spill file may remain after the job, also when it fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spillkit import batch_env

from runtime.errors import UserFunctionError
from streamsql import TableEnvironment

ROWS = 3000
# a few KB: many sorted runs of source batches of 256 rows
SPILL = {"taskmanager.memory.managed.size": "8kb", "table.exec.source.batch-rows": "256"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ids = np.arange(ROWS, dtype=np.int64)
    # rowtimes out of arrival order over ~7 minutes, a 10 s hole every 20 s (sessions of
    # dozens of rows per key, cut by the holes and by sparser stretches), equal rowtimes
    # within a key (ties)
    x = ids * 7919 % 283
    secs = x + x // 20 * 10 + (ids * 104729 % 3 == 0) * 2
    ts = pa.array(secs * 1000, type=pa.int64()).cast(pa.timestamp("ms"))
    path = tmp_path_factory.mktemp("window_spill") / "in.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "k": pa.array((ids * 31 % 23).astype(np.int32), mask=ids % 37 == 0),  # NULL keys
                "f": np.where(ids % 7 == 0, np.nan, ids % 5 / 2),  # NaN: one key, as in Flink
                "v": pa.array((ids * 13 % 101).astype(np.int64), mask=ids % 11 == 0),
                "s": pa.array([f"s{i % 17}" for i in range(ROWS)]),
                "ts": ts,
                "tn": pa.array(ts, mask=ids % 43 == 0),  # the interval join's rowtime, NULL in some rows
            }
        ),
        path,
    )
    return path


def _env(path: Path, settings: dict[str, str]) -> TableEnvironment:
    env = batch_env(settings, ROWS - 1)
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, k INT, f DOUBLE, v BIGINT, s STRING, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
    )
    env.execute_sql(
        "CREATE TABLE srcn (id BIGINT, k INT, v BIGINT, tn TIMESTAMP(3), WATERMARK FOR tn AS tn) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
    )
    return env


TUMBLE = "TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"
HOP = "TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '2' MINUTE))"
CUMULATE = "TABLE(CUMULATE(TABLE src, DESCRIPTOR(ts), INTERVAL '20' SECOND, INTERVAL '1' MINUTE))"


SESSION = "TABLE(SESSION(TABLE src PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
QUERIES = {
    # sessions per key: order-sensitive aggregates see each session's rows in arrival order
    "session_agg": "SELECT k, window_start, window_end, SUM(v) AS sv, COUNT(*) AS c, MAX(s) AS ms, "
    "LISTAGG(s) AS ls, FIRST_VALUE(id) AS fi, LAST_VALUE(v) AS lv "
    f"FROM {SESSION} GROUP BY k, window_start, window_end",
    # one key: sessions cut by the gap alone
    "session_agg_no_key": "SELECT window_start, window_end, COUNT(*) AS c, LISTAGG(CAST(id AS STRING)) AS ids "
    "FROM TABLE(SESSION(TABLE src, DESCRIPTOR(ts), INTERVAL '3' SECOND)) GROUP BY window_start, window_end",
    "session_agg_nan_key": "SELECT f, window_start, window_end, COUNT(*) AS c, SUM(id) AS si "
    "FROM TABLE(SESSION(TABLE src PARTITION BY f, DESCRIPTOR(ts), INTERVAL '4' SECOND)) "
    "GROUP BY f, window_start, window_end",
    # legacy GROUP BY SESSION(...) (the same operator)
    "session_group_window": "SELECT k, SESSION_START(ts, INTERVAL '5' SECOND) AS ws, COUNT(*) AS c, SUM(v) AS sv "
    "FROM src GROUP BY k, SESSION(ts, INTERVAL '5' SECOND)",
    "session_tvf": f"SELECT id, k, window_start, window_end, window_time FROM {SESSION}",
    # window Top-N / dedup (BATCH Rank over the window columns)
    "tumble_top_n": "SELECT * FROM (SELECT id, k, v, window_start, window_end, ROW_NUMBER() OVER ("
    f"PARTITION BY window_start, window_end, k ORDER BY v DESC) AS rn FROM {TUMBLE}"
    ") WHERE rn <= 2",
    "hop_rank": "SELECT * FROM (SELECT id, window_start, window_end, RANK() OVER ("
    f"PARTITION BY window_start, window_end ORDER BY k NULLS LAST) AS r "
    f"FROM {HOP}) WHERE r <= 5",
    "cumulate_dense": "SELECT * FROM (SELECT id, f, window_start, window_end, DENSE_RANK() OVER ("
    f"PARTITION BY window_start, window_end, f ORDER BY s) AS r "
    f"FROM {CUMULATE}) WHERE r <= 2",
    "dedup_first": "SELECT id, k, window_start FROM (SELECT *, ROW_NUMBER() OVER ("
    f"PARTITION BY window_start, window_end, k ORDER BY ts) AS rn FROM {TUMBLE}"
    ") WHERE rn = 1",
    "dedup_last": "SELECT id, k, window_start FROM (SELECT *, ROW_NUMBER() OVER ("
    f"PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS rn "
    f"FROM {TUMBLE}) WHERE rn = 1",
    "session_top_n": "SELECT * FROM (SELECT id, k, window_start, ROW_NUMBER() OVER ("
    f"PARTITION BY window_start, window_end, k ORDER BY v DESC NULLS LAST, id) AS rn FROM {SESSION}) WHERE rn <= 2",
}


LW = "(SELECT * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '30' SECOND)) WHERE id % 2 = 0)"
RW = "(SELECT * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '30' SECOND)) WHERE id % 3 = 0)"
ON = "L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k"
JOIN_QUERIES = {
    # window joins: both inputs sorted by window, complete windows joined a few at a time
    f"window_join_{kind.lower()}": f"SELECT L.id, R.id AS rid, L.window_start, R.window_end AS re "
    f"FROM {LW} L {kind} JOIN {RW} R ON {ON}"
    for kind in ("INNER", "LEFT", "RIGHT", "FULL")
}
JOIN_QUERIES.update(
    {
        "window_join_residual": f"SELECT L.id, R.id AS rid FROM {LW} L JOIN {RW} R ON {ON} AND L.v < R.v",
        "window_join_hop": "SELECT L.id, R.id AS rid, L.window_start FROM "
        f"(SELECT * FROM {HOP} WHERE id % 2 = 0) L FULL JOIN (SELECT * FROM {HOP} WHERE id % 5 = 0) R "
        f"ON {ON}",
        "window_join_semi": f"SELECT L.id, L.window_start FROM {LW} L WHERE L.k IN "
        f"(SELECT R.k FROM {RW} R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)",
        "window_join_anti": f"SELECT L.id, L.window_start FROM {LW} L WHERE NOT EXISTS "
        f"(SELECT * FROM {RW} R WHERE L.window_start = R.window_start AND L.window_end = R.window_end "
        "AND L.k = R.k)",
    }
)
QUERIES.update(JOIN_QUERIES)
MATCH = (
    "MEASURES FIRST(A.id) AS fa, LAST(A.id) AS la, COUNT(A.id) AS ca, B.id AS b, B.v AS bv "
    "ONE ROW PER MATCH AFTER MATCH SKIP {after} PATTERN (A+ B) "
    "DEFINE A AS A.v < 60 OR A.v IS NULL, B AS B.v >= 60 AND B.v > PREV(v)"
)
MATCH_QUERIES = {
    # MATCH_RECOGNIZE: sorted by (partition, ORDER BY, arrival), a few partitions at a time
    "match": f"SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts {MATCH.format(after='PAST LAST ROW')})",
    "match_order_keys": "SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts, v DESC, s "
    f"{MATCH.format(after='TO NEXT ROW')})",
    "match_nan_key": f"SELECT * FROM src MATCH_RECOGNIZE (PARTITION BY f ORDER BY ts {MATCH.format(after='TO LAST B')})",
    # one partition: held whole once merged
    "match_no_partition": f"SELECT * FROM src MATCH_RECOGNIZE (ORDER BY ts {MATCH.format(after='PAST LAST ROW')})",
}
QUERIES.update(MATCH_QUERIES)
IL = "(SELECT * FROM srcn WHERE id % 2 = 0)"
IR = "(SELECT * FROM srcn WHERE id % 3 = 0)"
BAND = "L.k = R.k AND R.tn BETWEEN L.tn - INTERVAL '3' SECOND AND L.tn + INTERVAL '1' SECOND"
INTERVAL_QUERIES = {
    # interval joins: both inputs sorted by time, swept side by side
    f"interval_join_{kind.lower()}": f"SELECT L.id, R.id AS rid FROM {IL} L {kind} JOIN {IR} R ON {BAND}"
    for kind in ("INNER", "LEFT", "RIGHT", "FULL")
}
INTERVAL_QUERIES.update(
    {
        "interval_join_ahead": f"SELECT L.id, R.id AS rid FROM {IL} L FULL JOIN {IR} R ON L.k = R.k "
        "AND R.tn BETWEEN L.tn + INTERVAL '2' SECOND AND L.tn + INTERVAL '6' SECOND AND L.v < R.v",
        "interval_join_behind": f"SELECT L.id, R.id AS rid FROM {IL} L LEFT JOIN {IR} R ON L.k = R.k "
        "AND R.tn BETWEEN L.tn - INTERVAL '9' SECOND AND L.tn - INTERVAL '4' SECOND",
    }
)
QUERIES.update(INTERVAL_QUERIES)
# rows each query's spilling operator takes (every one goes through a sorted run)
INPUT_ROWS = {name: ROWS for name in QUERIES} | {name: ROWS // 2 + ROWS // 3 for name in JOIN_QUERIES}
INPUT_ROWS["window_join_hop"] = 4 * (ROWS // 2 + ROWS // 5)  # HOP: every row in 4 windows
INPUT_ROWS |= {name: (ROWS // 2 + ROWS // 3) * 42 // 43 for name in INTERVAL_QUERIES}  # rows with a time


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The rows in a canonical order (NaN and NULL made comparable)."""

    def canon(v: Any) -> Any:
        if isinstance(v, float) and v != v:
            return (2,)
        return (1,) if v is None else (0, v)

    return sorted(tuple(canon(v) for v in r.values()) for r in table.to_pylist())


@pytest.mark.parametrize("name", list(QUERIES))
def test_spilled_window_operator_equals_in_memory(name: str, source: Path, tmp_path: Path, spill_writes: Any) -> None:
    tmp = tmp_path / "spill"
    spilled = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)}).execute_sql(QUERIES[name]).to_arrow()
    assert len(spill_writes.rows) > 10 and sum(spill_writes.rows) >= INPUT_ROWS[name]  # all through sorted runs
    assert tmp.is_dir() and not any(tmp.iterdir())
    spill_writes.clear()
    in_memory = _env(source, {}).execute_sql(QUERIES[name]).to_arrow()
    assert not spill_writes.rows
    assert spilled.num_rows == in_memory.num_rows > 0
    assert _rows(spilled) == _rows(in_memory)


def test_spilled_sessions_are_processed_a_few_at_a_time(
    source: Path, tmp_path: Path, spill_writes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spilled, the sessions' rows reach `SessionWindows` in chunks of complete sessions,
    never the whole input at once."""
    from runtime.operators import session

    sizes: list[int] = []
    process = session.SessionWindows.process

    def counted(self: session.SessionWindows, data: pa.RecordBatch, *args: Any) -> None:
        sizes.append(data.num_rows)
        process(self, data, *args)

    monkeypatch.setattr(session.SessionWindows, "process", counted)
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    assert env.execute_sql(QUERIES["session_agg"]).to_arrow().num_rows > 0
    assert sum(sizes) == ROWS and len(sizes) > 2 and max(sizes) < ROWS // 2


def test_empty_input(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    query = "SELECT k, COUNT(*) AS c FROM TABLE(SESSION(TABLE (SELECT * FROM src WHERE id < 0) PARTITION BY k, "
    query += "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end"
    assert env.execute_sql(query).to_arrow().num_rows == 0
    assert not spill_writes.rows


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k, SUM(i) AS c FROM TABLE(SESSION(TABLE (SELECT fail_last(id) AS i, k, ts FROM src) "
        "PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end",
        "SELECT * FROM TABLE(SESSION(TABLE (SELECT fail_last(id) AS i, k, ts FROM src) "
        "PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))",
        "SELECT L.i, R.id FROM (SELECT fail_last(id) AS i, * FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
        f"INTERVAL '30' SECOND))) L JOIN {RW} R ON {ON}",
        "SELECT * FROM (SELECT fail_last(id) AS i, k, v, ts FROM src) MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts "
        "MEASURES A.i AS ai PATTERN (A) DEFINE A AS A.v > 10)",
        f"SELECT L.i, R.id FROM (SELECT fail_last(id) AS i, * FROM srcn) L JOIN {IR} R ON {BAND}",
    ],
    ids=["session_agg", "session_tvf", "window_join", "match", "interval_join"],
)
def test_spill_directory_removed_when_the_job_fails(
    query: str, source: Path, tmp_path: Path, spill_writes: Any
) -> None:
    tmp = tmp_path / "spill"
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)})
    with pytest.raises(UserFunctionError, match="boom at the last row"):  # after runs were written
        env.execute_sql(query).to_arrow()
    assert spill_writes.rows
    assert tmp.is_dir() and not any(tmp.iterdir())


class _SavepointAt:
    """A local executor that takes a savepoint after the `at`th source batch and stops there."""

    @staticmethod
    def make(graph: Any, path: Path, at: int = 3) -> Any:
        from runtime.executor.local import LocalExecutor

        class SavepointAt(LocalExecutor):
            calls = 0
            location: str | None = None

            def _checkpoint_work(self) -> None:
                self.calls += 1
                if self.calls != at:
                    super()._checkpoint_work()
                    return
                p = self.checkpoints.snapshot("savepoint", str(path), stop=True)
                self.checkpoints.complete(self.coordinator.completed(wait=True))
                self.location = p.location

        return SavepointAt(graph)


def _graph(env: TableEnvironment, query: str, **conf: str) -> Any:
    import dataclasses

    (stmt,) = env.parse(query)
    g = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
    return dataclasses.replace(g, config={**(g.config or {}), **conf})


@pytest.mark.parametrize("name", ["session_agg", "session_tvf", "window_join_full", "match", "interval_join_full"])
def test_checkpointed_batch_job_holds_its_input_in_the_snapshot(
    name: str, source: Path, tmp_path: Path, spill_writes: Any
) -> None:
    """With checkpointing these BATCH operators hold their input (never spill) and a
    savepoint taken mid-input carries it: the restored job (without checkpointing: the rows
    still to come join the restored ones in memory) gives the uninterrupted result."""
    from runtime.batch import data_width
    from runtime.executor.local import LocalExecutor

    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    expected = _rows(env.execute_sql(QUERIES[name]).to_arrow())
    spill_writes.clear()
    periodic = {"execution.checkpointing.interval": "1 h", "execution.checkpointing.dir": str(tmp_path / "cp")}
    first = _SavepointAt.make(_graph(env, QUERIES[name], **periodic), tmp_path / "sp")
    assert not list(first.run()) and first.location is not None  # stopped before the end of input
    assert not spill_writes.rows
    rest = LocalExecutor(_graph(env, QUERIES[name], **{"execution.savepoint.path": first.location}))
    got = pa.Table.from_batches(list(rest.run()))
    assert _rows(got.select(list(range(data_width(got.to_batches()[0]))))) == expected


@pytest.mark.parametrize(
    ("name", "at"),
    # (the interval join's inputs are smaller: both have spilled after 12 source batches)
    [("session_agg", 3), ("session_tvf", 3), ("window_join_inner", 3), ("match", 3), ("interval_join_left", 12)],
)
def test_savepoint_after_a_spill_fails_with_a_hint(
    name: str, at: int, source: Path, tmp_path: Path, spill_writes: Any
) -> None:
    """A savepoint taken by hand in BATCH mode after the sorted runs were written cannot
    include them: refused with a hint (never a snapshot silently missing rows)."""
    from runtime.errors import JobError

    tmp = tmp_path / "spill"
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)})
    job = _SavepointAt.make(_graph(env, QUERIES[name]), tmp_path / "sp", at)
    with pytest.raises(JobError, match="spilled to disk.*hint: enable periodic checkpoints"):
        list(job.run())
    assert spill_writes.rows
    assert not any(tmp.iterdir())


@pytest.mark.parametrize("name", list(INTERVAL_QUERIES))
def test_interval_join_sweep_equals_the_whole_join(
    name: str, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In memory too, the BATCH interval join sweeps its time-sorted inputs (here ~100 rows
    a piece): the same rows as joining the whole inputs at once (what it does with
    checkpointing, where its inputs are its snapshot)."""
    from runtime.operators import interval_join

    whole_join: list[int] = []
    join = interval_join.IntervalJoinOperator._pairs

    def counted(self: interval_join.IntervalJoinOperator, side: int, rows: Any, *args: Any) -> Any:
        whole_join.append(rows.num_rows)
        return join(self, side, rows, *args)

    monkeypatch.setattr(interval_join.IntervalJoinOperator, "_pairs", counted)
    periodic = {"execution.checkpointing.interval": "1 h", "execution.checkpointing.dir": str(tmp_path / "cp")}
    expected = _env(source, periodic).execute_sql(QUERIES[name]).to_arrow()
    assert len(whole_join) == 1  # one join of all left rows
    whole_join.clear()
    monkeypatch.setattr(interval_join, "_SWEEP_ROWS", 97)
    swept = _env(source, {}).execute_sql(QUERIES[name]).to_arrow()
    assert len(whole_join) > 5 and max(whole_join) < ROWS // 4
    assert expected.num_rows > 0 and _rows(swept) == _rows(expected)
