"""Spilling a batch operator's state to local disk, and the two options that bound it.

A BATCH operator whose state follows its input (the window aggregation's (window, key)
groups when every group holds a few rows: one group per input row at worst; the group
aggregation's groups; a sort's, an OVER aggregation's and a Rank's rows; a SESSION window's
and a window join's rows; MATCH_RECOGNIZE's and an interval join's rows; a regular join's
build side) keeps that state in memory up to `taskmanager.memory.managed.size` and writes
the rest to Arrow IPC files under `io.tmp.dirs`, read back a part at a time when it emits. So a job's resident memory is the
operators' in-memory state plus this bound, whatever the input size. Flink's batch
operators spill their managed memory the same way; unlike Flink, the size is each spilling
operator's, not a TaskManager's total split among them.

Two ways to spill live here: `SpillFiles` (tables by partition, what an operator decides
to write) and `HashPartitionedRows` on top of it (input rows split by a hash of their keys
into partitions, so each partition can be aggregated or joined on its own later), with `held_bytes`
to tell when the state in memory passed the bound.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.config.options import key
from runtime.errors import JobError, file_access_error
from runtime.state.keygroups import hash_rows

MANAGED_MEMORY_SIZE = (
    key("taskmanager.memory.managed.size")
    .memory_type()
    .default_value(256 << 20)
    .with_check(lambda v: v >= 1 << 10, "a memory size of at least 1 kb")
    .with_description(
        "BATCH: memory a batch operator may hold for state that grows with its input before it writes the "
        "rest to disk under `io.tmp.dirs`: the window aggregation's (window, key) groups (one per input row "
        "at worst), the group aggregation's groups (GROUP BY, GROUPING SETS, SELECT DISTINCT), ORDER BY's "
        "rows, an OVER aggregation's or Rank / Top-N's rows (window Top-N and window deduplication included), "
        "a SESSION window aggregation's or SESSION window table function's rows, a window join's, an "
        "interval join's and a MATCH_RECOGNIZE's rows and a "
        "regular join's input rows held while its build (right) input is "
        "open. Past it the window "
        "aggregation writes its earliest groups to disk; the group aggregation keeps "
        "the groups it holds and writes the input rows of other keys to disk, split into hash partitions of the "
        "key, then aggregates one partition at a time; ORDER BY writes sorted runs and merges them; OVER and "
        "Rank sort the same way by partition and order keys, then OVER computes one partition at a time (a "
        "partition is held whole) and Rank ranks the merged rows as they come; SESSION windows sort the same "
        "way by their keys and rowtime and process a few complete sessions at a time; the window join sorts "
        "both inputs by window and joins the windows complete on both sides as it reads them; MATCH_RECOGNIZE "
        "sorts by partition and ORDER BY keys and matches a few complete partitions at a time; the interval "
        "join sorts both inputs by time and sweeps them side by side, holding a time band of its bounds' "
        "width; the join "
        "writes both inputs to disk in hash partitions of the join key and joins one partition at a time (a "
        "partition still too big is split again, a key too big is joined a block of build rows at a time). Per "
        "spilling operator (Flink divides a TaskManager's managed "
        "memory among its operators). STREAMING state does not spill (`state.backend.type` = `rocksdb` keeps "
        "large keyed state on disk)."
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


class SpilledStateError(JobError):
    """A snapshot (a savepoint taken by hand, mostly) of a BATCH operator whose state is
    partly on disk or outside what `snapshot_state` writes: refused, never a snapshot that
    would silently lose rows on restore. The snapshot fails; the job runs on."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}, so it cannot be snapshotted (the snapshot would lose rows); hint: enable periodic "
            "checkpoints ('execution.checkpointing.interval' and 'execution.checkpointing.dir') so BATCH "
            "operators keep their state in memory, where snapshots hold it, or take no savepoint of this BATCH job"
        )


def spill_refusal(what: str) -> SpilledStateError:
    """The refusal of a BATCH operator that wrote state to disk (`SpilledStateError`)."""
    return SpilledStateError(f"{what} spilled to disk (taskmanager.memory.managed.size)")


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
    `close`, when the object is collected, or at the latest when the process exits
    (`weakref.finalize`: its clean-ups run as `atexit` callbacks, also when the `streamsql`
    command skips the interpreter's teardown, where a `__del__` would not run)."""

    def __init__(self, parent: str) -> None:
        self.dir = ""  # (set once created: `close` may run after a failed start)
        try:
            os.makedirs(parent, exist_ok=True)
            self.dir = tempfile.mkdtemp(prefix="streamsql-spill-", dir=parent)
        except OSError as e:
            raise file_access_error(e, "create a spill directory (io.tmp.dirs) under", parent) from e
        self._remove_dir = weakref.finalize(self, shutil.rmtree, self.dir, ignore_errors=True)
        self.files: dict[int, list[str]] = {}
        self.sizes: dict[int, int] = {}  # bytes on disk per partition
        self.rows: dict[int, int] = {}  # rows per partition
        self.bytes_written = 0
        self._seq = 0
        self._next_partition = 0

    def new_partitions(self, n: int) -> list[int]:
        """`n` partition numbers not handed out before (for writers sharing the directory)."""
        first = self._next_partition
        self._next_partition += n
        return list(range(first, first + n))

    def write(self, partition: int, table: pa.Table) -> None:
        path = os.path.join(self.dir, f"{partition}-{self._seq}.arrow")
        self._seq += 1
        try:
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        except OSError as e:  # disk full, directory removed: name the file and the option
            raise file_access_error(e, "write the spill file (io.tmp.dirs)", path) from e
        size = os.path.getsize(path)
        self.bytes_written += size
        self.sizes[partition] = self.sizes.get(partition, 0) + size
        self.rows[partition] = self.rows.get(partition, 0) + table.num_rows
        self.files.setdefault(partition, []).append(path)

    def partitions(self) -> list[int]:
        return list(self.files)

    def partition_bytes(self, partition: int) -> int:
        """The partition's bytes on disk (about its tables' size in memory)."""
        return self.sizes.get(partition, 0)

    def partition_rows(self, partition: int) -> int:
        return self.rows.get(partition, 0)

    def take(self, partition: int) -> Iterator[pa.Table]:
        """The partition's tables (read into memory, not mapped), each file deleted once read."""
        self.sizes.pop(partition, None)
        self.rows.pop(partition, None)
        for path in self.files.pop(partition, []):
            yield _read(path)
            os.remove(path)

    def read(self, partition: int) -> Iterator[pa.Table]:
        """The partition's tables, one at a time, keeping the files (a partition read more
        than once: `take` or `drop` it after the last time)."""
        for path in list(self.files.get(partition, [])):
            yield _read(path)

    def drop(self, partition: int) -> None:
        """Delete the partition's files unread."""
        self.sizes.pop(partition, None)
        self.rows.pop(partition, None)
        for path in self.files.pop(partition, []):
            os.remove(path)

    def close(self) -> None:
        self.files = {}
        self.sizes = {}
        self.rows = {}
        if self.dir:
            self._remove_dir()  # (once: a finalizer is dead after its first call)


def _read(path: str) -> pa.Table:
    with pa.OSFile(path, "rb") as source:
        return pa.ipc.open_file(source).read_all()


# A Python object's size as `held_bytes` guesses it (a pointer plus a small object).
_OBJECT_BYTES = 64
# Lists / tuples / dicts up to this length are looked into (a state's few runs of arrays);
# longer ones count `_OBJECT_BYTES` per entry, so the estimate never costs a loop per entry.
_SMALL_CONTAINER = 32


def held_bytes(*parts: Any, _depth: int = 0) -> int:
    """An estimate of the memory `parts` hold, cheap enough to take after every batch: the
    cost follows the number of attributes, never the number of entries. numpy arrays count
    their buffers (object arrays `_OBJECT_BYTES` per entry), Arrow arrays / tables their
    buffers, long containers `_OBJECT_BYTES` per entry; objects are followed three levels
    deep (an accumulator wrapping another, a state backend's key index)."""
    total = 0
    for p in parts:
        if p is None or isinstance(p, (str, bytes, int, float, bool)):
            continue
        if isinstance(p, np.ndarray):
            total += p.size * _OBJECT_BYTES if p.dtype == object else int(p.nbytes)
            continue
        nbytes = getattr(p, "nbytes", None)
        if isinstance(nbytes, int):
            total += nbytes
            continue
        if isinstance(p, (list, tuple, set, frozenset, dict)):
            if len(p) > _SMALL_CONTAINER or _depth >= 3:
                total += len(p) * _OBJECT_BYTES
            else:
                total += held_bytes(*(p.values() if isinstance(p, dict) else p), _depth=_depth + 1)
        elif _depth < 3 and hasattr(p, "__dict__"):
            total += held_bytes(*vars(p).values(), _depth=_depth + 1)
    return total


class HashPartitionedRows:
    """Input rows written to `files` in `fanout` partitions by a hash of their key columns:
    all rows of a key land in one partition, in the order they were added, so a partition
    can later be aggregated on its own (and be split again at the next `level`, whose hash
    is independent of this one's). Rows are buffered up to `flush_bytes`, then written a
    file per partition (few, large files rather than one per batch and partition)."""

    def __init__(
        self, files: SpillFiles, key_columns: Sequence[int], level: int, fanout: int, flush_bytes: int
    ) -> None:
        self.files = files
        self.key_columns = list(key_columns)
        self.seed = np.uint64((0x9E3779B97F4A7C15 * (level + 1)) & ((1 << 64) - 1))
        self.fanout = fanout
        self.flush_bytes = flush_bytes
        self.ids = files.new_partitions(fanout)
        self.written: set[int] = set()
        self.tables: list[pa.Table] = []
        self.parts: list[np.ndarray] = []
        self.buffered = 0

    def add(self, table: pa.Table, keys: Sequence[pa.Array] | None = None) -> None:
        """Buffer these rows (written when the buffer is full or at `finish`). `keys`: the
        arrays to hash instead of the key columns (a join's keys cast to the type both
        inputs compare them in, so equal keys of two inputs land in the same partition)."""
        if table.num_rows == 0:
            return
        if keys is None:
            keys = [table.column(i) for i in self.key_columns]
        with np.errstate(over="ignore"):  # re-mixed with the level's seed: another split
            h = (hash_rows(keys, table.num_rows) ^ self.seed) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        self.parts.append(((h >> np.uint64(32)) % np.uint64(self.fanout)).astype(np.int64))
        self.tables.append(table)
        self.buffered += table.nbytes
        if self.buffered >= self.flush_bytes:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows: the rows of each partition together, in their order."""
        if not self.tables:
            return
        table = pa.concat_tables(self.tables).combine_chunks()
        part = np.concatenate(self.parts)
        self.tables, self.parts, self.buffered = [], [], 0
        order = np.argsort(part, kind="stable")
        part = part[order]
        table = table.take(pa.array(order))
        bounds = np.flatnonzero(np.diff(part)) + 1
        starts = np.concatenate([[0], bounds])
        ends = np.concatenate([bounds, [len(part)]])
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            pid = self.ids[int(part[lo])]
            self.files.write(pid, table.slice(lo, hi - lo))
            self.written.add(pid)

    def finish(self) -> list[int]:
        """Write what is buffered; the partitions holding rows (for `SpillFiles.take`)."""
        self.flush()
        return [p for p in self.ids if p in self.written]
