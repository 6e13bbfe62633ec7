"""BATCH ORDER BY past `taskmanager.memory.managed.size`: an external merge sort (sorted
runs in Arrow IPC files under `io.tmp.dirs`, merged). The output must be the in-memory
stable sort's, row for row (ties in arrival order), and no file may remain after the job,
also when it fails."""

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

ROWS = 5000
# a few KB: sorted runs of some source batches of 256 rows, each run in several files
SPILL = {"taskmanager.memory.managed.size": "16kb", "table.exec.source.batch-rows": "256"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ids = np.arange(ROWS, dtype=np.int64)
    path = tmp_path_factory.mktemp("sort_spill") / "in.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "k": pa.array((ids * 7919 % 211).astype(np.int32), mask=ids % 89 == 0),  # ties and NULLs
                "s": pa.array([f"s{(i * 31) % 53}" for i in range(ROWS)]),
            }
        ),
        path,
    )
    return path


def _env(path: Path, settings: dict[str, str]) -> TableEnvironment:
    env = batch_env(settings, ROWS - 1)
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, k INT, s STRING) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
    )
    return env


QUERIES = {
    # ties on k keep the arrival order (id ascending)
    "ties": "SELECT k, id FROM src ORDER BY k",
    "desc_nulls": "SELECT s, k, id FROM src ORDER BY s DESC, k ASC NULLS LAST",
    "total": "SELECT id, k, s FROM src ORDER BY k DESC NULLS FIRST, s, id DESC",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_external_sort_equals_in_memory(name: str, source: Path, tmp_path: Path, spill_writes: Any) -> None:
    tmp = tmp_path / "spill"
    spilled = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)}).execute_sql(QUERIES[name]).to_arrow()
    assert len(spill_writes.rows) > 20 and sum(spill_writes.rows) == ROWS  # every row went through a sorted run
    assert tmp.is_dir() and not any(tmp.iterdir())
    spill_writes.clear()
    in_memory = _env(source, {}).execute_sql(QUERIES[name]).to_arrow()
    assert not spill_writes.rows
    assert spilled.num_rows == ROWS and spilled.to_pylist() == in_memory.to_pylist()


def test_empty_input_sorts_to_nothing(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")})
    assert env.execute_sql("SELECT id FROM src WHERE id < 0 ORDER BY k").to_arrow().num_rows == 0
    assert not spill_writes.rows


def test_spill_directory_removed_when_the_job_fails(source: Path, tmp_path: Path, spill_writes: Any) -> None:
    tmp = tmp_path / "spill"
    env = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)})
    with pytest.raises(UserFunctionError, match="boom at the last row"):  # after runs were written
        env.execute_sql("SELECT fail_last(id) AS i, k FROM src ORDER BY k").to_arrow()
    assert spill_writes.rows
    assert tmp.is_dir() and not any(tmp.iterdir())


def test_many_runs_merge_in_passes(
    source: Path, tmp_path: Path, spill_writes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `_MERGE_FANIN` runs (2 here), groups of runs are merged into longer runs on
    disk first; the result is still the stable sort's."""
    from runtime.operators import external_sort

    monkeypatch.setattr(external_sort, "_MERGE_FANIN", 2)
    tmp = tmp_path / "spill"
    query = QUERIES["ties"]
    spilled = _env(source, {**SPILL, "io.tmp.dirs": str(tmp)}).execute_sql(query).to_arrow()
    assert sum(spill_writes.rows) >= 2 * ROWS  # rows were written again by the first passes
    assert tmp.is_dir() and not any(tmp.iterdir())
    in_memory = _env(source, {}).execute_sql(query).to_arrow()
    assert spilled.to_pylist() == in_memory.to_pylist()
