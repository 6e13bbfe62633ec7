"""The BATCH regular join past `taskmanager.memory.managed.size`: a grace hash join.

The BATCH join (runtime/operators/join.py) builds a hash table of its right input and
streams its left input through it. When the right rows held pass the bound, `GraceHashJoin`
takes over: every row of both inputs from then on (and those buffered so far) is written
to Arrow IPC files under `io.tmp.dirs` (runtime/spill.py: one directory per operator,
removed when it closes, also after a failure), split into `FANOUT` partitions by a hash of
its join key cast to the type both inputs compare it in, so a key's rows of both inputs
land in the same partition number. At the end the partitions are joined one pair at a
time by the operator's own in-memory build and probe (`PartitionJoin`): the right
partition is built, the left one streamed through it a file at a time, then the right
rows nothing matched are emitted (RIGHT / FULL). Each pair is joined on its own, so every
join type emits the unmatched rows of a partition exactly once.

A right partition still over the bound is split again, both inputs' rows, with the next
level's hash (independent of the first), up to `MAX_LEVEL` times. One that does not split
(a single key holding more than the bound, or no equi-key at all) or is past the last
level is joined by blocks instead (Flink falls back to a sort-merge join there): the right
partition is read a bound's worth of rows at a time, and the left partition (kept on disk)
streamed through each block; a flag per left row records whether any block matched it, for
the LEFT / FULL NULL-padded rows and the SEMI / ANTI result after the last block. Memory
is then a block, a left file and a bit per left row of the partition.

Rows whose (not null-safe) key is NULL never match: they are not written; the outer join
emits them at once (a left row NULL-padded, ANTI the left row, a right row of RIGHT /
FULL NULL-padded), other joins drop them.

Everything is vectorized (per batch and per partition, never per row). The output is the
in-memory join's multiset of rows; only its order differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np
import pyarrow as pa

from runtime.operators.base import Output
from runtime.spill import HashPartitionedRows, SpillFiles

# Partitions per split, and how many times a partition is split again before it is
# joined by blocks (16 ** 3 partitions: only huge keys get there).
FANOUT = 16
MAX_LEVEL = 3
# Rows per batch probed from a partition read back.
_CHUNK_ROWS = 1 << 16
# What a built right row costs beyond its values: its entry in the key index (hash table
# and key columns, ~100 bytes at a key per row, about twice that while it grows), the
# build side's per-row counters and its sorted key runs. Counted with the values against
# the bound, so the bound is about the memory the build holds, not the rows' Arrow size.
BUILD_ROW_BYTES = 160


def build_bytes(nbytes: int, rows: int) -> int:
    """The memory a build side of these right rows holds (values plus `BUILD_ROW_BYTES`)."""
    return nbytes + rows * BUILD_ROW_BYTES


class PartitionJoin(Protocol):
    """What the join operator does for one partition (runtime/operators/join.py)."""

    keeps_unmatched_left: bool  # LEFT / FULL / ANTI: left rows without a match are output
    keeps_unmatched_right: bool  # RIGHT / FULL: right rows without a match are output
    keeps_matched_left: bool  # SEMI: the left rows that matched are the output

    def key_arrays(self, data: pa.RecordBatch, side: int) -> tuple[list[pa.Array], np.ndarray]:
        """The rows' join-key columns cast to the compared types, and where a key is NULL
        (a key that never matches)."""
        ...

    def build(self, right: list[pa.Table]) -> None:
        """Replace the build side by these right rows (none: release it)."""
        ...

    def probe(self, left: pa.RecordBatch, out: Output, pairs_only: bool) -> np.ndarray:
        """Join left rows with the build side and emit the result (`pairs_only`: only the
        joined pairs, no NULL-padded or SEMI / ANTI rows); whether each left row matched."""
        ...

    def unmatched_right(self, out: Output) -> None:
        """Emit the build side's rows no probe matched, NULL-padded (RIGHT / FULL)."""
        ...

    def left_alone(self, left: pa.RecordBatch, matched: np.ndarray, out: Output) -> None:
        """Emit what the join outputs for left rows that did (not) match, beyond the
        pairs: NULL-padded unmatched rows (LEFT / FULL), the matched (SEMI) or unmatched
        (ANTI) rows themselves."""
        ...

    def right_alone(self, right: pa.RecordBatch, out: Output) -> None:
        """Emit right rows that match nothing, NULL-padded (RIGHT / FULL)."""
        ...


def batches(table: pa.Table) -> Iterator[pa.RecordBatch]:
    """A table read back, as record batches of at most `_CHUNK_ROWS` rows."""
    yield from table.combine_chunks().to_batches(max_chunksize=_CHUNK_ROWS)


def _drain(out: Output) -> Iterator[pa.RecordBatch]:
    batches_out, _ = out.drain()
    yield from batches_out


class GraceHashJoin:
    """Both inputs of a BATCH join in hash partitions on disk, joined a partition at a
    time at the end (see the module docstring). `bound`: the bytes of right rows a
    partition's in-memory join (or a block) may hold; `keyed`: whether the join has
    equi-keys (without, hashing cannot split anything)."""

    def __init__(self, join: PartitionJoin, files: SpillFiles, bound: int, keyed: bool) -> None:
        self.join = join
        self.files = files
        self.bound = bound
        self.keyed = keyed
        self.flush_bytes = max(bound // 4, 1 << 16)
        self.sides = (self._partitioned(0), self._partitioned(0))
        self.right_rows = 0

    def _partitioned(self, level: int) -> HashPartitionedRows:
        return HashPartitionedRows(self.files, [], level, FANOUT, self.flush_bytes)

    def add(self, side: int, data: pa.RecordBatch, out: Output) -> None:
        """Rows of input `side`: NULL keys emitted (outer) or dropped now, the rest written."""
        if data.num_rows == 0:
            return
        if side == 1:
            self.right_rows += data.num_rows
        keys, null = self.join.key_arrays(data, side)
        if null.any():
            lonely = data.filter(pa.array(null))
            if side == 0:
                self.join.left_alone(lonely, np.zeros(lonely.num_rows, dtype=bool), out)
            elif self.join.keeps_unmatched_right:
                self.join.right_alone(lonely, out)
            keep = pa.array(~null)
            data = data.filter(keep)
            keys = [k.filter(keep) for k in keys]
        # one schema for every batch of an input (the files of a partition are concatenated)
        table = pa.Table.from_arrays(data.columns, names=[f"f{i}" for i in range(data.num_columns)])
        self.sides[side].add(table, keys)

    def results(self) -> Iterator[pa.RecordBatch]:
        """The join of every partition pair, a batch at a time; the files go as they are
        read, the directory when the last pair is done."""
        pending = [(left, right, 1) for left, right in self._pairs(self.sides)]
        while pending:
            left, right, level = pending.pop()
            yield from self._join_pair(left, right, level, pending)
        self.files.close()

    def _pairs(self, sides: tuple[HashPartitionedRows, HashPartitionedRows]) -> list[tuple[int | None, int | None]]:
        """(left partition, right partition) of every partition number holding rows (None:
        that input has no rows there)."""
        left, right = sides
        left.finish()
        right.finish()
        pairs = []
        for lp, rp in zip(left.ids, right.ids, strict=True):
            pair = (lp if lp in left.written else None, rp if rp in right.written else None)
            if pair != (None, None):
                pairs.append(pair)
        return pairs

    def _join_pair(
        self, left: int | None, right: int | None, level: int, pending: list[tuple[int | None, int | None, int]]
    ) -> Iterator[pa.RecordBatch]:
        join, files, out = self.join, self.files, Output()
        if right is None or left is None:
            # one input has no rows here: the other's rows are all unmatched
            alone, keep = (left, join.keeps_unmatched_left) if right is None else (right, join.keeps_unmatched_right)
            assert alone is not None
            if not keep:
                files.drop(alone)
                return
            for table in files.take(alone):
                for batch in batches(table):
                    if right is None:
                        join.left_alone(batch, np.zeros(batch.num_rows, dtype=bool), out)
                    else:
                        join.right_alone(batch, out)
                    yield from _drain(out)
            return
        if build_bytes(files.partition_bytes(right), files.partition_rows(right)) <= self.bound:
            join.build(list(files.take(right)))
            for table in files.take(left):
                for batch in batches(table):
                    join.probe(batch, out, pairs_only=False)
                    yield from _drain(out)
            join.unmatched_right(out)
            join.build([])
            yield from _drain(out)
            return
        if self.keyed and level <= MAX_LEVEL:
            sides = (self._partitioned(level), self._partitioned(level))
            for side, partition in ((0, left), (1, right)):
                for table in files.take(partition):
                    for batch in batches(table):
                        sides[side].add(pa.Table.from_batches([batch]), self.join.key_arrays(batch, side)[0])
            pairs = self._pairs(sides)
            split = sum(rp is not None for _, rp in pairs) > 1
            # a right partition that did not split (one key) goes to the block join at once
            pending += [(lp, rp, level + 1 if split else MAX_LEVEL + 1) for lp, rp in pairs]
            return
        yield from self._join_blocks(left, right)

    def _blocks(self, right: int) -> Iterator[list[pa.Table]]:
        """The right partition's rows (taken off disk), a bound's worth (`build_bytes`) at a time."""
        block: list[pa.Table] = []
        held = 0
        for table in self.files.take(right):
            step = max(1, table.num_rows * self.bound // max(1, build_bytes(table.nbytes, table.num_rows)))
            for lo in range(0, table.num_rows, step):
                piece = table.slice(lo, step)
                size = build_bytes(piece.nbytes, piece.num_rows)
                if block and held + size > self.bound:
                    yield block
                    block, held = [], 0
                block.append(piece)
                held += size
        if block:
            yield block

    def _join_blocks(self, left: int, right: int) -> Iterator[pa.RecordBatch]:
        """Join a partition pair whose right rows pass the bound by blocks of right rows,
        the left partition read once per block (module docstring)."""
        join, files, out = self.join, self.files, Output()
        matched: list[np.ndarray] = []  # per left batch, in the order the partition is read
        for block in self._blocks(right):
            join.build(block)
            del block
            i = 0
            for table in files.read(left):
                for batch in batches(table):
                    m = join.probe(batch, out, pairs_only=True)
                    if i == len(matched):
                        matched.append(m)
                    else:
                        matched[i] |= m
                    i += 1
                    yield from _drain(out)
            join.unmatched_right(out)
            yield from _drain(out)
        join.build([])
        if not (join.keeps_unmatched_left or join.keeps_matched_left):
            files.drop(left)
            return
        i = 0
        for table in files.take(left):
            for batch in batches(table):
                join.left_alone(batch, matched[i], out)
                i += 1
                yield from _drain(out)
