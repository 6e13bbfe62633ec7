"""The rocksdb backend behaves like hashmap (same slots contract, snapshots interchangeable)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import numpy as np
import pyarrow as pa
import pytest

from runtime.checkpoint import format as state_format
from runtime.executor.parallel.executor import refuse_fork_after_rocksdb
from runtime.graph import JobGraph
from runtime.state import HashMapStateBackend, create_backend, rocksdb
from runtime.state.rocksdb import RocksDBStateBackend


def _backend(tmp_path: Path) -> RocksDBStateBackend:
    b = create_backend({"state.backend.type": "rocksdb", "state.backend.rocksdb.localdir": str(tmp_path)})
    assert isinstance(b, RocksDBStateBackend)
    return b


def test_lookup_create_remove_and_reuse(tmp_path: Path) -> None:
    b = _backend(tmp_path)
    keys = [pa.array(["a", "b", "a", None]), pa.array([1, 2, 1, 3])]
    slots = b.lookup(keys, 4)
    assert slots[0] == slots[2] and len(set(slots.tolist())) == 3
    assert b.keys_of(slots[:2]) == [("a", 1), ("b", 2)]
    assert b.lookup([pa.array(["zz"]), pa.array([9])], 1, create=False).tolist() == [-1]
    b.remove(slots[:1])
    assert not b.contains(slots[:1])[0]
    again = b.lookup([pa.array(["c"]), pa.array([5])], 1)
    assert again[0] == slots[0]  # the freed slot is reused
    assert len(b) == 3
    b.dispose()
    assert not any(tmp_path.iterdir())


def test_key_layout_is_by_key_group(tmp_path: Path) -> None:
    b = _backend(tmp_path)
    b.lookup([pa.array(np.arange(200))], 200)
    groups = [int.from_bytes(k[:2], "big") for k in b.db.keys() if not k.startswith(b"\xff\xff")]
    assert groups == sorted(groups)  # RocksDB order = key-group order: ranges are contiguous
    assert set(groups) <= set(range(128))
    b.dispose()


def test_snapshot_is_interchangeable_with_hashmap_and_can_be_resplit(tmp_path: Path) -> None:
    r = _backend(tmp_path)
    slots = r.lookup([pa.array([f"k{i}" for i in range(50)])], 50)
    snap = r.snapshot()
    h = HashMapStateBackend()
    h.restore(snap)
    assert h.keys_of(slots) == r.keys_of(slots)
    r2 = _backend(tmp_path)
    r2.restore(h.snapshot(), key_group_range=(0, 63))
    kept = r2.live_slots()
    assert 0 < len(kept) < 50
    assert (r2.key_groups(kept) <= 63).all()
    assert r2.lookup([pa.array(r2.keys_of(kept)[0][:1])], 1, create=False)[0] == kept[0]
    r.dispose()
    r2.dispose()


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="state.backend.type"):
        create_backend({"state.backend.type": "nope"})


def test_a_columnar_hashmap_snapshot_restores_into_rocksdb(tmp_path: Path) -> None:
    h = HashMapStateBackend()
    cols = [pa.array([f"k{i}" for i in range(40)]), pa.array(np.arange(40) * 1.5)]
    slots = h.lookup(cols, 40)
    snap = state_format.decode(state_format.encode(h.snapshot()))
    r = _backend(tmp_path)
    r.restore(snap)
    assert r.keys_of(slots) == h.keys_of(slots)
    assert r.lookup(cols, 40, create=False).tolist() == slots.tolist()
    r.dispose()


def test_an_unused_backend_opens_no_database(tmp_path: Path) -> None:
    """The parallel executor's job process builds its sinks with a backend they never use:
    it must not open RocksDB there (forked workers would inherit its thread pool without
    the threads and hang at their first flush)."""
    b = _backend(tmp_path)
    b.restore(RocksDBStateBackend(config={"state.backend.rocksdb.localdir": str(tmp_path)}).snapshot())
    assert len(b) == 0 and not b.contains(np.array([0])).any()
    assert not any(tmp_path.iterdir())
    b.dispose()


def test_a_process_forked_after_rocksdb_started_refuses_it(tmp_path: Path) -> None:
    """Once this process opened a database, a forked child fails clearly instead of hanging,
    and the parallel executor refuses to fork workers for a rocksdb job."""
    b = _backend(tmp_path)
    b.lookup([pa.array([1])], 1)  # opens the database: RocksDB's threads run here now
    assert rocksdb.threads_started_here()
    graph = cast("JobGraph", SimpleNamespace(config={"state.backend.type": "rocksdb"}))
    with pytest.raises(rocksdb.RocksDBForkError, match="new process"):
        refuse_fork_after_rocksdb(graph)
    refuse_fork_after_rocksdb(cast("JobGraph", SimpleNamespace(config={})))  # hashmap: fine
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report whether opening failed cleanly, never run pytest on
        code = b"hang?"
        try:
            _backend(tmp_path / "child").lookup([pa.array([1])], 1)
        except rocksdb.RocksDBForkError:
            code = b"refused"
        except BaseException:  # noqa: BLE001 - anything else is reported as a failure
            code = b"other"
        os.write(write, code)
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 60
    while os.waitpid(pid, os.WNOHANG) == (0, 0):  # a child that hangs fails the test, not CI
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung opening RocksDB")
        time.sleep(0.01)
    assert os.read(read, 100) == b"refused"
    os.close(read)
    b.dispose()
