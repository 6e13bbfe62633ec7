"""BATCH GroupAggregate past `taskmanager.memory.managed.size`: the groups held stay in
memory, the rows of other keys go to disk in hash partitions (runtime/spill.py) and are
aggregated a partition at a time. The result must be the in-memory one for every kind of
aggregate, files must have been written, and none may remain after the job (also when it
fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spillkit import batch_env, sorted_rows

from runtime import spill
from runtime.errors import UserFunctionError
from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.udf import AggregateFunction, udaf

ROWS = 6000
# a few KB: the first source batch of 256 rows already passes it, and so does each
# partition read back, which is split again
SPILL = {"taskmanager.memory.managed.size": "4kb", "table.exec.source.batch-rows": "256"}


class Concat(AggregateFunction):
    """A Python UDAF without `merge` whose result depends on its rows' order."""

    def create_accumulator(self) -> list[str]:
        return []

    def accumulate(self, acc: list[str], v: int | None) -> None:
        acc.append("-" if v is None else str(v))

    def get_value(self, acc: list[str]) -> str:
        return ".".join(acc)


class FailOn(AggregateFunction):
    """Fails when it emits the group holding the value 4321 (after the spill)."""

    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, acc: list[int], v: int | None) -> None:
        if v == 4321:
            acc[0] = 1

    def get_value(self, acc: list[int]) -> int:
        if acc[0]:
            raise ValueError("boom on 4321")
        return 0


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ids = np.arange(ROWS, dtype=np.int64)
    k = (ids * 7919 % 1501).astype(np.int32)  # 1,501 keys, their rows spread over the input
    path = tmp_path_factory.mktemp("group_spill") / "in.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "k": pa.array(k, mask=ids % 97 == 0),  # NULL keys too
                "v": pa.array((ids % 13).astype(np.int32), mask=ids % 11 == 0),
                "s": pa.array([f"s{i % 37}" for i in range(ROWS)]),
            }
        ),
        path,
    )
    return path


def _env(path: Path, settings: dict[str, str]) -> TableEnvironment:
    env = batch_env(settings)
    env.create_temporary_function("concat_v", udaf(Concat(), result_type=DataTypes.STRING()))
    env.create_temporary_function("fail_on", udaf(FailOn(), result_type=DataTypes.INT()))
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, k INT, v INT, s STRING) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
    )
    return env


QUERIES = {
    "core": "SELECT k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(s), AVG(v), SUM(id) FROM src GROUP BY k",
    "distinct": "SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), COUNT(DISTINCT s) FROM src GROUP BY k",
    # order-dependent within a key: the rows of a key must be folded in input order
    "ordered": "SELECT k, LISTAGG(s), FIRST_VALUE(v), LAST_VALUE(s), concat_v(v) FROM src GROUP BY k",
    "filter": "SELECT s, k, COUNT(*) FILTER (WHERE v > 5), MAX(id) FROM src GROUP BY s, k",
    "grouping_sets": "SELECT k, s, COUNT(*), SUM(v) FROM src GROUP BY GROUPING SETS ((k), (k, s), (s), ())",
    "select_distinct": "SELECT DISTINCT k, v FROM src",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_spilled_group_aggregate_equals_in_memory(name: str, source: Path, tmp_path: Path, spill_writes: Any) -> None:
    query = QUERIES[name]
    tmp = tmp_path / "spill"
    spilled = sorted_rows(_env(source, {**SPILL, "io.tmp.dirs": str(tmp)}), query)
    assert len(spill_writes.rows) >= 8 and sum(spill_writes.rows) > ROWS // 2  # most rows went to disk
    if name in ("filter", "grouping_sets"):  # 6,000+ groups: partitions were split again, and again
        assert max(spill_writes.partitions) >= 16 + 16 * 16
    assert tmp.is_dir() and not any(tmp.iterdir())  # the operator's directory is gone
    spill_writes.clear()
    in_memory = sorted_rows(_env(source, {}), query)
    assert not spill_writes.rows
    assert spilled == in_memory and len(in_memory) > 1000


def test_empty_input_spills_nothing(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    assert sorted_rows(env, "SELECT k, COUNT(*) FROM src WHERE id < 0 GROUP BY k") == []
    assert sorted_rows(env, "SELECT COUNT(*), SUM(v) FROM src WHERE id < 0") == [(0, None)]
    assert not spill_writes.rows


def test_spill_directory_removed_when_the_job_fails(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    tmp = tmp_path / "spill"
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)})
    # the id 4321 is read long after the bound was passed: its group is a spilled one
    with pytest.raises(UserFunctionError, match="boom on 4321"):  # the UDAF's error, as without a spill
        env.execute_sql("SELECT k, fail_on(CAST(id AS INT)) FROM src GROUP BY k").to_arrow()
    assert spill_writes.rows
    assert tmp.is_dir() and not any(tmp.iterdir())


def test_hash_partitions_keep_a_keys_rows_together_in_order(tmp_path: Path) -> None:
    files = spill.SpillFiles(str(tmp_path))
    rows = spill.HashPartitionedRows(files, [0], level=0, fanout=8, flush_bytes=1 << 10)
    keys = np.arange(4000) % 101
    for lo in range(0, 4000, 500):
        rows.add(pa.table({"k": keys[lo : lo + 500], "seq": np.arange(lo, lo + 500)}))
    parts = rows.finish()
    assert 1 < len(parts) <= 8 and len(files.partitions()) == len(parts)
    seen: set[int] = set()
    for p in parts:
        table = pa.concat_tables(list(files.take(p)))
        mine = set(table.column("k").to_pylist())
        assert not mine & seen  # a key is in one partition only
        seen |= mine
        for k in mine:  # its rows in the order they were added
            seq = table.filter(pa.compute.equal(table.column("k"), k)).column("seq").to_numpy()
            assert (np.diff(seq) > 0).all() and len(seq) in (39, 40)
    assert seen == set(range(101))
    # the next level splits one partition's keys over several partitions again
    level1 = spill.HashPartitionedRows(files, [0], level=1, fanout=8, flush_bytes=1 << 20)
    level0 = spill.HashPartitionedRows(files, [0], level=0, fanout=8, flush_bytes=1 << 20)
    one = pa.table({"k": np.arange(10_000)})
    level0.add(one)
    level1.add(one)
    assert not (level0.parts[0] == level1.parts[0]).all()
    files.close()
    assert not any(tmp_path.iterdir())


def test_spilled_changelog_input_applies_its_retractions(tmp_path: Path, spill_writes: Any) -> None:
    """A CDC source in BATCH: updates and deletes reach spilled keys as retractions (the
    row kind is written with the row); a key whose rows were all deleted is not emitted."""
    import json

    events = [{"op": "c", "before": None, "after": {"id": i, "g": i % 700, "v": i % 50}} for i in range(3000)]
    for i in range(3000):
        old = {"id": i, "g": i % 700, "v": i % 50}
        if old["g"] % 10 == 0:  # every row of these keys
            events.append({"op": "d", "before": old, "after": None})
        elif i % 3 == 0:
            events.append({"op": "u", "before": old, "after": {**old, "v": -i}})
    path = tmp_path / "cdc.json"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    query = "SELECT g, COUNT(*), SUM(v), MIN(v), MAX(v) FROM c GROUP BY g"

    def run(settings: dict[str, str]) -> list[tuple[object, ...]]:
        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        for k, v in settings.items():
            env.execute_sql(f"SET '{k}' = '{v}'")
        env.execute_sql(
            "CREATE TABLE c (id INT, g INT, v INT) "
            f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'debezium-json')"
        )
        return sorted_rows(env, query)

    tmp = tmp_path / "spill"
    spilled = run({**SPILL, "io.tmp.dirs": str(tmp)})
    assert spill_writes.rows and not any(tmp.iterdir())
    in_memory = run({})
    assert spilled == in_memory and 600 < len(in_memory) < 700  # some keys were deleted entirely
