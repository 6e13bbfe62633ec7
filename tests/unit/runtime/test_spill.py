"""`taskmanager.memory.managed.size` / `io.tmp.dirs` from SQL: a BATCH window job whose
groups exceed the bound spills them (runtime/spill.py) and gives the same table as one that
keeps them in memory; the spill directory is removed at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from streamsql import EnvironmentSettings, TableEnvironment

QUERY = (
    "SELECT window_start, k, COUNT(*) AS c, SUM(v) AS s "
    "FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, k"
)


def _table(path: Path, settings: dict[str, str]) -> pa.Table:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    for k, v in settings.items():
        env.execute_sql(f"SET '{k}' = '{v}'")
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, k INT, v INT, ts TIMESTAMP(3)) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
    )
    table = env.execute_sql(QUERY).to_arrow()
    return table.sort_by([("window_start", "ascending"), ("k", "ascending")])


def test_batch_window_state_spills_past_the_managed_memory(tmp_path: Path, spill_writes: Any) -> None:
    n = 60_000  # one row per (1 s window, key): ~2.6 MB of groups, past a 1 mb bound
    ids = np.arange(n, dtype=np.int64)
    path = tmp_path / "in.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "k": (ids % 1000).astype(np.int32),
                "v": (ids % 7).astype(np.int32),
                "ts": pa.array(ids, pa.int64()).cast(pa.timestamp("ms")),
            }
        ),
        path,
    )
    written = spill_writes.rows
    tmp = tmp_path / "spill"
    spilled = _table(path, {"taskmanager.memory.managed.size": "1mb", "io.tmp.dirs": str(tmp)})
    assert sum(written) > n // 2  # most groups went to disk
    assert tmp.is_dir() and not any(tmp.iterdir())
    written.clear()
    in_memory = _table(path, {})
    assert not written
    assert spilled.equals(in_memory) and in_memory.num_rows == n
