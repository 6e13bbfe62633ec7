"""BATCH OVER aggregation and Rank / Top-N past `taskmanager.memory.managed.size`: their input
goes through the external merge sort (sorted runs under `io.tmp.dirs`) by (partition, order
keys, arrival); OVER is evaluated a few partitions at a time, Rank ranks the merged rows as
they come. Every row's values must be the in-memory run's, and no file may remain after the
job, also when it fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spillkit import batch_env

from runtime.batch import data_width
from runtime.errors import UserFunctionError
from streamsql import TableEnvironment

ROWS = 3000
# a few KB: many sorted runs of source batches of 256 rows
SPILL = {"taskmanager.memory.managed.size": "8kb", "table.exec.source.batch-rows": "256"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ids = np.arange(ROWS, dtype=np.int64)
    path = tmp_path_factory.mktemp("over_spill") / "in.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "k": pa.array((ids * 7919 % 37).astype(np.int32), mask=ids % 41 == 0),  # NULL partition keys
                "ts": (ids * 104729 % 997).astype(np.int64),  # ties within a partition
                "v": pa.array((ids * 31 % 101).astype(np.int64), mask=ids % 13 == 0),
                "big": np.where(ids % 3 == 0, 0, ids % 5).astype(np.int32),  # one partition a third of the rows
                "f": np.where(ids % 7 == 0, np.nan, ids % 11 / 2),  # NaN: one partition, as in Flink
            }
        ),
        path,
    )
    return path


def _env(path: Path, settings: dict[str, str]) -> TableEnvironment:
    env = batch_env(settings, ROWS - 1)
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, k INT, ts BIGINT, v BIGINT, big INT, f DOUBLE) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
    )
    return env


QUERIES = {
    "rows": "SELECT id, SUM(v) OVER w AS s, COUNT(v) OVER w AS c, MAX(v) OVER w AS m, AVG(v) OVER w AS a "
    "FROM src WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)",
    "range": "SELECT id, SUM(v) OVER w AS s, MIN(v) OVER w AS m, COUNT(*) OVER w AS c "
    "FROM src WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN 50 PRECEDING AND CURRENT ROW)",
    "unbounded": "SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts) AS s FROM src",
    "lag_lead": "SELECT id, LAG(v) OVER w AS p, LEAD(v, 2, -1) OVER w AS n FROM src "
    "WINDOW w AS (PARTITION BY k ORDER BY ts)",
    "ranking": "SELECT id, ROW_NUMBER() OVER w AS rn, RANK() OVER w AS r, DENSE_RANK() OVER w AS dr FROM src "
    "WINDOW w AS (PARTITION BY k ORDER BY ts DESC)",
    "big_partition": "SELECT id, SUM(v) OVER (PARTITION BY big ORDER BY ts, id "
    "ROWS BETWEEN 5 PRECEDING AND 2 FOLLOWING) AS s FROM src",
    "nan_partition": "SELECT id, SUM(v) OVER (PARTITION BY f ORDER BY ts) AS s FROM src",
    # one partition, frames of a bounded number of rows: evaluated in slices with a look-back
    "no_partition_rows": "SELECT id, SUM(v) OVER w AS s, COUNT(v) OVER w AS c, FIRST_VALUE(v) OVER w AS f "
    "FROM src WINDOW w AS (ORDER BY ts ROWS BETWEEN 7 PRECEDING AND 2 FOLLOWING)",
    "no_partition_lag": "SELECT id, LAG(v, 3) OVER w AS p, LEAD(v, 5, 0) OVER w AS n FROM src WINDOW w AS (ORDER BY ts)",
    "big_partition_rows": "SELECT id, MAX(v) OVER (PARTITION BY big ORDER BY ts DESC "
    "ROWS BETWEEN 3 FOLLOWING AND 20 FOLLOWING) AS m FROM src",
    # one partition: held whole once merged (a partition larger than the bound stays in memory)
    "no_partition": "SELECT id, ROW_NUMBER() OVER w AS rn, SUM(v) OVER w AS s FROM src WINDOW w AS (ORDER BY ts)",
}
# planned as Rank / SortLimit operators (ranking alone, or a Top-N filter)
RANK_QUERIES = {
    "row_number": "SELECT id, k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM src",
    "rank_top": "SELECT * FROM (SELECT id, k, ts, RANK() OVER (PARTITION BY k ORDER BY ts DESC) AS r FROM src) "
    "WHERE r <= 3",
    "dense_range": "SELECT * FROM (SELECT id, k, v, DENSE_RANK() OVER (PARTITION BY k ORDER BY v) AS r FROM src) "
    "WHERE r BETWEEN 2 AND 4",
    "big_top_n": "SELECT id, big FROM (SELECT id, big, ROW_NUMBER() OVER (PARTITION BY big ORDER BY v DESC) AS rn "
    "FROM src) WHERE rn <= 500",
    "one_partition": "SELECT id, RANK() OVER (ORDER BY v) AS r FROM src",
    "nan_partition": "SELECT id, ROW_NUMBER() OVER (PARTITION BY f ORDER BY ts) AS rn FROM src",
    "sort_limit": "SELECT id, v FROM src ORDER BY v DESC, ts LIMIT 20",
}
QUERIES.update({f"rank_{name}": q for name, q in RANK_QUERIES.items()})


def _by_id(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("name", list(QUERIES))
def test_spilled_over_equals_in_memory(name: str, source: Path, tmp_path: Path, spill_writes: Any) -> None:
    tmp = tmp_path / "spill"
    spilled = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)}).execute_sql(QUERIES[name]).to_arrow()
    assert len(spill_writes.rows) > 10 and sum(spill_writes.rows) >= ROWS  # every row went through a sorted run
    assert tmp.is_dir() and not any(tmp.iterdir())
    spill_writes.clear()
    in_memory = _env(source, {}).execute_sql(QUERIES[name]).to_arrow()
    assert not spill_writes.rows
    assert spilled.num_rows == in_memory.num_rows > 0 and _by_id(spilled) == _by_id(in_memory)
    if name == "rank_sort_limit":  # ORDER BY ... LIMIT: in order
        assert spilled.to_pylist() == in_memory.to_pylist()


def test_spilled_output_comes_sorted_by_partition(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    """Spilled, rows come in (partition, order key) order, as Flink's sort-based batch OVER."""
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    rows = (
        env.execute_sql(
            "SELECT k, ts, id FROM (SELECT k, ts, id, COUNT(*) OVER (PARTITION BY k ORDER BY ts) AS c FROM src)"
        )
        .to_arrow()
        .to_pylist()
    )
    assert spill_writes.rows
    keys = [(r["k"] is not None, r["k"] or 0, r["ts"], r["id"]) for r in rows]
    assert keys == sorted(keys)


def test_empty_input(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    query = "SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts) AS s FROM src WHERE id < 0"
    assert env.execute_sql(query).to_arrow().num_rows == 0
    assert not spill_writes.rows


@pytest.mark.parametrize(
    "query",
    [
        "SELECT fail_last(id) AS i, SUM(v) OVER (PARTITION BY k ORDER BY ts) AS s FROM src",
        "SELECT fail_last(id) AS i, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM src",
    ],
    ids=["over", "rank"],
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


def test_spilled_over_evaluates_a_few_partitions_at_a_time(
    source: Path, tmp_path: Path, spill_writes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spilled, the frames are computed over slices of the merged rows holding whole
    partitions (never the whole input at once)."""
    from runtime.operators import over_frames

    sizes: list[int] = []
    compute = over_frames.OverComputer.compute

    def counted(self: over_frames.OverComputer, table: pa.Table) -> list[pa.Array]:
        sizes.append(table.num_rows)
        return compute(self, table)

    monkeypatch.setattr(over_frames.OverComputer, "compute", counted)
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    assert env.execute_sql(QUERIES["rows"]).to_arrow().num_rows == ROWS
    assert sum(sizes) >= ROWS and len(sizes) > 2 and max(sizes) < ROWS // 2
    # one partition whose frames reach 7 rows back and 2 ahead: slices with that context
    sizes.clear()
    assert env.execute_sql(QUERIES["no_partition_rows"]).to_arrow().num_rows == ROWS
    assert sum(sizes) > ROWS and len(sizes) > 2 and max(sizes) < ROWS // 2
    sizes.clear()  # ROW_NUMBER depends on every row before: the partition is held whole
    assert env.execute_sql(QUERIES["no_partition"]).to_arrow().num_rows == ROWS
    assert sizes == [ROWS]


@pytest.mark.parametrize("name", ["rows", "range", "lag_lead", "ranking", "big_partition", "nan_partition"])
def test_in_memory_over_in_partition_slices(name: str, source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In memory, a large input's frames are computed over slices of whole partitions (here
    ~64 rows) and put back in arrival order: the same rows, in the same order, as one run."""
    from runtime.operators import over, over_frames

    whole = _env(source, {}).execute_sql(QUERIES[name]).to_arrow()
    sizes: list[int] = []
    compute = over_frames.OverComputer.compute

    def counted(self: over_frames.OverComputer, table: pa.Table) -> list[pa.Array]:
        sizes.append(table.num_rows)
        return compute(self, table)

    monkeypatch.setattr(over, "_SPILLED_CHUNK_ROWS", 64)
    monkeypatch.setattr(over_frames.OverComputer, "compute", counted)
    sliced = _env(source, {}).execute_sql(QUERIES[name]).to_arrow()
    assert len(sizes) > 3 and sum(sizes) == ROWS
    assert sliced.to_pylist() == whole.to_pylist()


@pytest.mark.parametrize("name", ["rows", "rank_row_number", "rank_sort_limit"])
def test_checkpointed_batch_job_holds_its_input_in_the_snapshot(
    name: str, source: Path, tmp_path: Path, spill_writes: Any
) -> None:
    """With checkpointing, BATCH OVER / Rank hold their input (never spill) and a savepoint
    taken mid-input carries it: the restored job's result is the uninterrupted one."""
    import dataclasses

    from runtime.executor.local import LocalExecutor

    class SavepointAt(LocalExecutor):
        """Takes a savepoint after the 3rd source batch and stops there."""

        calls = 0
        location: str | None = None

        def _checkpoint_work(self) -> None:
            self.calls += 1
            if self.calls != 3:
                super()._checkpoint_work()
                return
            p = self.checkpoints.snapshot("savepoint", str(tmp_path / "sp"), stop=True)
            self.checkpoints.complete(self.coordinator.completed(wait=True))
            self.location = p.location

    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})

    def graph(**conf: str) -> Any:
        (stmt,) = env.parse(QUERIES[name])
        g = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
        return dataclasses.replace(g, config={**(g.config or {}), **conf})

    expected = _by_id(env.execute_sql(QUERIES[name]).to_arrow())
    spill_writes.clear()
    periodic = {"execution.checkpointing.interval": "1 h", "execution.checkpointing.dir": str(tmp_path / "cp")}
    first = SavepointAt(graph(**periodic))
    assert not list(first.run()) and first.location is not None  # stopped before the end of input
    assert not spill_writes.rows
    rest = LocalExecutor(graph(**{"execution.savepoint.path": first.location}))
    got = pa.Table.from_batches(list(rest.run()))
    assert _by_id(got.select(list(range(data_width(got.to_batches()[0]))))) == expected
