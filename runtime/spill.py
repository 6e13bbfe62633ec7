"""Spilling a batch operator's state to local disk, and the two options that bound it.

A BATCH operator whose state follows its input (the window aggregation's (window, key)
groups when every group holds a few rows: one group per input row at worst) keeps that
state in memory up to `taskmanager.memory.managed.size` and writes the rest to Arrow IPC
files under `io.tmp.dirs`, read back one partition at a time when it emits. So a job's
resident memory is the operators' in-memory state plus this bound, whatever the input size.
Flink's batch operators spill their managed memory the same way; unlike Flink, the size is
each spilling operator's, not a TaskManager's total split among them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from runtime.config.options import key

MANAGED_MEMORY_SIZE = (
    key("taskmanager.memory.managed.size")
    .memory_type()
    .default_value(256 << 20)
    .with_check(lambda v: v >= 1 << 20, "a memory size of at least 1 mb")
    .with_description(
        "BATCH: memory a batch operator may hold for state that grows with its input (today the window "
        "aggregation's (window, key) groups, one per input row at worst) before it writes the rest to disk "
        "under `io.tmp.dirs`; it reads the spilled state back a part at a time when it emits. Per spilling "
        "operator (Flink divides a TaskManager's managed memory among its operators). STREAMING state does "
        "not spill (`state.backend.type` = `rocksdb` keeps large keyed state on disk)."
    )
)

TMP_DIRS = (
    key("io.tmp.dirs")
    .string_type()
    .no_default_value()
    .with_description(
        "Directories for temporary files (spilled batch state), separated by ',' or the path separator as in "
        "Flink; one is picked per operator. Default: the system temp directory."
    )
)


def tmp_dir(config: Any) -> str:
    """The directory spill files go under (`io.tmp.dirs`' first entry, or the system's)."""
    dirs = TMP_DIRS.get(config)
    for d in (dirs or "").replace(os.pathsep, ",").split(","):
        if d.strip():
            return d.strip()
    return tempfile.gettempdir()


class SpillFiles:
    """Tables written to Arrow IPC files in a private directory, grouped by an integer
    partition; read back (and deleted) a partition at a time. The directory goes at
    `close` (and when the object is collected)."""

    def __init__(self, parent: str) -> None:
        os.makedirs(parent, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="streamsql-spill-", dir=parent)
        self.files: dict[int, list[str]] = {}
        self.bytes_written = 0
        self._seq = 0

    def write(self, partition: int, table: pa.Table) -> None:
        path = os.path.join(self.dir, f"{partition}-{self._seq}.arrow")
        self._seq += 1
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        self.bytes_written += os.path.getsize(path)
        self.files.setdefault(partition, []).append(path)

    def partitions(self) -> list[int]:
        return list(self.files)

    def take(self, partition: int) -> Iterator[pa.Table]:
        """The partition's tables (read into memory, not mapped), each file deleted once read."""
        for path in self.files.pop(partition, []):
            with pa.OSFile(path, "rb") as source:
                table = pa.ipc.open_file(source).read_all()
            os.remove(path)
            yield table

    def close(self) -> None:
        self.files = {}
        shutil.rmtree(self.dir, ignore_errors=True)

    def __del__(self) -> None:
        self.close()
