"""Incremental RocksDB checkpoints: chk-1 full, chk-2 uploads only new SST files, restore
from chk-2 equals an uninterrupted run; retention never deletes a shared file a retained
checkpoint needs; savepoints stay canonical."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from runtime.batch import data_width, row_kinds
from runtime.checkpoint import format as state_format
from runtime.checkpoint.incremental import incremental_enabled
from runtime.executor.local import LocalExecutor
from runtime.graph import JobGraph
from runtime.state.slot_values import NativeSnapshot
from streamsql.environment import TableEnvironment

BASE = 1_700_000_000_000
QUERIES = {
    # MAX over insert-only input keeps an object array (an encoded column of the value rows)
    "group_agg": "SELECT k, COUNT(*), SUM(v), MAX(v) FROM a GROUP BY k",
    "group_agg_retract": "SELECT c, COUNT(*), MIN(k) FROM (SELECT k, COUNT(*) AS c FROM a GROUP BY k) GROUP BY c",
    "window_agg": (
        "SELECT k, window_start, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
        "GROUP BY k, window_start, window_end"
    ),
}


class _CheckpointsAt(LocalExecutor):
    """Takes a (completed) checkpoint after each listed call and stops after the last."""

    def __init__(self, graph: JobGraph, at: list[int]) -> None:
        super().__init__(graph)
        self.at = at
        self.calls = 0
        self.locations: list[str] = []
        self.flushed: list[pa.RecordBatch] = []

    def _checkpoint_work(self) -> None:
        self.calls += 1
        if self.calls not in self.at:
            super()._checkpoint_work()
            return
        p = self.checkpoints.snapshot("checkpoint")
        self.checkpoints.complete(self.coordinator.completed(wait=True))
        self.locations.append(p.location)
        if self.calls == self.at[-1]:
            self.checkpoints.stop_requested = True
            self.flushed = self.results.drain()


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[int, tuple[Any, ...]]]:
    out = []
    for b in batches:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        out += [(int(kinds[i]), tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return out


def _setup(root: Path, backend: str = "rocksdb", n: int = 1200, keys: int = 300) -> TableEnvironment:
    rng = random.Random(5)
    (root / "a").mkdir(exist_ok=True)
    with open(root / "a" / "a.csv", "w") as f:
        for i in range(n):
            f.write(f"{rng.randrange(keys)},{rng.randrange(1000)},{BASE + i * 37}\n")
    env = TableEnvironment.create({"table.exec.source.batch-rows": "50"})
    env.execute_sql(
        "CREATE TABLE a (k INT, v INT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), "
        f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='filesystem','path'='{root}/a','format'='csv')"
    )
    return env


def _graph(env: TableEnvironment, root: Path, sql: str, backend: str = "rocksdb", **conf: str) -> JobGraph:
    (stmt,) = env.parse(sql)
    graph = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
    base = {
        "state.backend.type": backend,
        "state.backend.rocksdb.localdir": str(root / "rocks"),
        "execution.checkpointing.dir": f"file://{root}/chk",
        "execution.checkpointing.incremental": "true",
        "state.checkpoints.num-retained": "2",
        "$internal.pipeline.job-id": "job",
    }
    return dataclasses.replace(graph, config={**(graph.config or {}), **base, **conf})


def _meta(location: str) -> dict[str, Any]:
    return json.loads((Path(location) / "_metadata").read_text())


def _shared(meta: dict[str, Any]) -> set[str]:
    return {f for o in meta["operators"] for f in o.get("shared_files", [])}


@pytest.mark.parametrize("case", sorted(QUERIES))
def test_incremental_chain_restores_exactly(tmp_path: Path, case: str) -> None:
    env = _setup(tmp_path)
    sql = QUERIES[case]
    expected = _rows(list(LocalExecutor(_graph(env, tmp_path, sql, "hashmap")).run()))
    first = _CheckpointsAt(_graph(env, tmp_path, sql), [8, 12])
    before = list(first.run()) + first.flushed
    assert len(first.locations) == 2
    m1, m2 = _meta(first.locations[0]), _meta(first.locations[1])
    s1, s2 = _shared(m1), _shared(m2)
    assert s1 and s2, "no SST file was uploaded: the checkpoints were not incremental"
    assert s1 & s2, "checkpoint 2 re-uploaded every SST file of checkpoint 1"
    agg1 = [o for o in m1["operators"] if o["shared_files"]][0]
    agg2 = next(o for o in m2["operators"] if o["uid"] == agg1["uid"])
    job_dir = tmp_path / "chk" / "job"
    chk2 = Path(first.locations[1])
    new_sst = sum((job_dir / f).stat().st_size for f in set(agg2["shared_files"]) - set(agg1["shared_files"]))
    private = sum(f.stat().st_size for f in (chk2 / f"native-{agg2['uid']}").iterdir())
    state_file = (chk2 / agg2["file"]).stat().st_size
    assert agg2["bytes"] == new_sst + private + state_file  # only SST files not in chk-1 were uploaded
    handle = state_format.decode((chk2 / agg2["file"]).read_bytes())
    assert isinstance(handle, NativeSnapshot) and handle.local_dir is None
    # restore from chk-2 into fresh operators and run the rest
    rest = LocalExecutor(_graph(env, tmp_path, sql, **{"execution.savepoint.path": first.locations[1]}))
    after = _rows(list(rest.run()))
    assert rest.restored_from == first.locations[1]
    assert len(_rows(before)) < len(expected)
    assert _rows(before) + after == expected


def test_restore_incremental_checkpoint_into_hashmap(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    sql = QUERIES["group_agg"]
    expected = _rows(list(LocalExecutor(_graph(env, tmp_path, sql, "hashmap")).run()))
    first = _CheckpointsAt(_graph(env, tmp_path, sql), [10])
    before = list(first.run()) + first.flushed
    rest = LocalExecutor(_graph(env, tmp_path, sql, "hashmap", **{"execution.savepoint.path": first.locations[0]}))
    assert _rows(before) + _rows(list(rest.run())) == expected


def test_retention_keeps_shared_files_of_retained_checkpoints(tmp_path: Path) -> None:
    env = _setup(tmp_path, n=3000, keys=2000)
    sql = QUERIES["group_agg"]
    ex = _CheckpointsAt(_graph(env, tmp_path, sql, **{"state.checkpoints.num-retained": "1"}), [4, 8, 12, 16, 20])
    list(ex.run())
    job_dir = tmp_path / "chk" / "job"
    chks = sorted(d.name for d in job_dir.iterdir() if d.name.startswith("chk-"))
    assert chks == ["chk-5"]
    needed = _shared(_meta(str(job_dir / "chk-5")))
    on_disk = {str(p.relative_to(job_dir)) for p in (job_dir / "shared").rglob("*") if p.is_file()}
    assert needed and needed == on_disk  # nothing needed is missing, nothing unneeded is left
    # earlier checkpoints' files that chk-5 still refers to survived their checkpoint's deletion
    m_first_uploads = {f for f in needed if f.endswith(".sst")}
    assert m_first_uploads


def test_savepoint_is_canonical_with_incremental_on(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    sql = QUERIES["group_agg"]

    class _Savepoint(_CheckpointsAt):
        def _checkpoint_work(self) -> None:
            self.calls += 1
            if self.calls != 6:
                LocalExecutor._checkpoint_work(self)
                return
            p = self.checkpoints.snapshot("savepoint", str(tmp_path / "sp"), stop=True)
            self.checkpoints.complete(self.coordinator.completed(wait=True))
            self.locations.append(p.location)

    ex = _Savepoint(_graph(env, tmp_path, sql), [])
    list(ex.run())
    sp = Path(ex.locations[0])
    meta = _meta(str(sp))
    assert not _shared(meta)
    agg = next(o for o in meta["operators"] if o["operator"] == "GroupAggregate")
    state = state_format.decode((sp / agg["file"]).read_bytes())
    assert isinstance(state, bytes)  # the canonical generic encoding, self-contained
    assert not (sp / "shared").exists()


def test_incremental_applies_to_rocksdb_only() -> None:
    on = {"execution.checkpointing.incremental": "true"}
    assert incremental_enabled({**on, "state.backend.type": "rocksdb"})
    assert not incremental_enabled({**on, "state.backend.type": "hashmap"})
    assert not incremental_enabled({"state.backend.type": "rocksdb"})


def test_full_rocksdb_checkpoint_is_self_contained(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    sql = QUERIES["window_agg"]
    expected = _rows(list(LocalExecutor(_graph(env, tmp_path, sql, "hashmap")).run()))
    full = {"execution.checkpointing.incremental": "false"}
    first = _CheckpointsAt(_graph(env, tmp_path, sql, **full), [6, 10])
    before = list(first.run()) + first.flushed
    assert not (tmp_path / "chk" / "job" / "shared").exists()
    chk2 = Path(first.locations[1])
    meta = _meta(str(chk2))
    agg = next(o for o in meta["operators"] if o["operator"] == "WindowAggregate")
    assert not agg["shared_files"] and any(f.name.endswith(".sst") for f in (chk2 / f"native-{agg['uid']}").iterdir())
    rest = LocalExecutor(_graph(env, tmp_path, sql, **full, **{"execution.savepoint.path": str(chk2)}))
    assert _rows(before) + _rows(list(rest.run())) == expected


def test_rocksdb_checkpoint_rescales_through_the_canonical_form(tmp_path: Path) -> None:
    """A RocksDB checkpoint (parallelism 1) restored as 2 subtasks: each keeps its key groups."""
    from runtime.checkpoint.rescale import load_state
    from runtime.checkpoint.restore import load_checkpoint

    env = _setup(tmp_path)
    sql = QUERIES["group_agg"]
    first = _CheckpointsAt(_graph(env, tmp_path, sql), [10])
    list(first.run())
    snap = load_checkpoint(first.locations[0])
    agg = next(o for o in snap.metadata.operators if o.operator == "GroupAggregate")
    ((_, state),) = snap.subtask_states(agg.uid)
    assert isinstance(state, NativeSnapshot) and state.local_dir is not None
    canonical = load_state(state)
    keyed, aggset = canonical["keyed"], canonical["attrs"]["aggset"]
    assert len(keyed["slots"]) == state.keys > 0
    counts = aggset.row_count[keyed["slots"]]
    assert (counts > 0).all() and int(counts.sum()) == 10 * 50  # every row read before the checkpoint
