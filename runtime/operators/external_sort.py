"""The external merge sort of BATCH operators that need their input sorted: ORDER BY
(`SortOperator`), the OVER aggregation and Rank / Top-N (sorted by partition, then order
keys, so they read one partition after another). In memory up to
`taskmanager.memory.managed.size`, sorted runs in Arrow IPC files under `io.tmp.dirs` past it
(runtime/spill.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.operators.rank_common import SortKey, sort_order, take_rows
from runtime.spill import SpillFiles, spill_refusal, tmp_dir

# External sort: files per sorted run (the merge holds one file of each run at a time),
# fewest rows per file, runs merged at once (more are merged into longer runs first), rows
# per output batch of the merge.
_RUN_FILES = 16
_MIN_FILE_ROWS = 128
_MERGE_FANIN = 16
_MERGE_CHUNK_ROWS = 1 << 16
# The arrival-number column `ExternalSort.merged` appends to the data columns.
SORT_SEQ = "$seq"


class ExternalSort:
    """Rows sorted by `order` (then arrival), in memory up to `bound` bytes and past it as an
    external merge sort; used by batch ORDER BY (`SortOperator`) and the batch OVER
    aggregation (sorted by partition then order keys, so it reads one partition at a time).

    `add` buffers tables of data columns. When the buffer passes `bound` (0: never), it is
    sorted by (order keys, arrival number) and written to Arrow IPC files under `io.tmp.dirs`
    as a sorted run (`_RUN_FILES` files in order). `merged` then merges the runs, vectorized:
    one file of each run is held; the held rows are sorted together and every row up to the
    earliest "fence" (the last held row of a run that has more files) is emitted, since no
    unread row can sort before it; the runs whose fence went out read their next file. The
    arrival number breaks ties, so the output is exactly the in-memory stable sort's. The
    merge holds a file of each run (a `_RUN_FILES`th of the bound); past `_MERGE_FANIN` runs,
    groups of runs are first merged into longer runs on disk, so it holds about the bound.
    The spill directory goes when the merge ends, or at `close` (a failed job).
    """

    def __init__(self, config: Any, order: Sequence[SortKey], bound: int) -> None:
        self.config = config
        self.order: list[SortKey] = list(order)
        self.bound = bound
        self.buffer: list[pa.RecordBatch | pa.Table] = []
        self.buffered_bytes = 0
        self.arrived = 0  # rows before the buffer's first (its arrival numbers follow)
        self.width = 0  # data columns of the tables added
        self.spill: SpillFiles | None = None
        self.runs: dict[int, int] = {}  # spilled run (a SpillFiles partition) -> its files
        self.file_rows = 0  # rows per file of the runs (the merged runs' files hold as many)

    @property
    def spilled(self) -> bool:
        """Whether sorted runs were written (then read the rows through `merged`)."""
        return bool(self.runs)

    def add(self, data: pa.RecordBatch | pa.Table) -> None:
        if not data.num_rows:
            return
        self.width = data.num_columns
        self.buffer.append(data)
        self.buffered_bytes += data.nbytes
        if self.bound and self.buffered_bytes > self.bound:
            self._write_run()

    def snapshot(self) -> list[pa.RecordBatch | pa.Table]:
        """The rows held, for a checkpoint (a job with periodic checkpoints never spills; a
        savepoint triggered by hand after the sort spilled cannot include the runs)."""
        if self.runs:
            raise spill_refusal("a BATCH operator's sort")
        return self.buffer

    def restore(self, buffer: list[pa.RecordBatch | pa.Table]) -> None:
        """Hold these rows (a checkpoint's `buffer`; a job with checkpointing never spills:
        its operators pass `bound` 0)."""
        self.buffer = list(buffer)
        self.buffered_bytes = sum(t.nbytes for t in self.buffer)
        if self.buffer:
            self.width = self.buffer[0].num_columns

    def take_buffer(self) -> pa.Table | None:
        """The buffered rows in arrival order (nothing spilled), emptying the buffer."""
        if not self.buffer:
            return None
        tables = [t if isinstance(t, pa.Table) else pa.Table.from_batches([t]) for t in self.buffer]
        self.buffer, self.buffered_bytes = [], 0
        return pa.concat_tables(tables).combine_chunks()

    def _write_run(self) -> None:
        """Sort the buffer and write it as one run of `_RUN_FILES` files."""
        table = self.take_buffer()
        assert table is not None
        n = table.num_rows
        seq = np.arange(self.arrived, self.arrived + n, dtype=np.int64)
        self.arrived += n
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.order, None, seq)
        run = pa.Table.from_arrays([*take_rows(table, idx), pa.array(seq[idx])], names=[*table.column_names, SORT_SEQ])
        del table, cols
        if self.spill is None:
            self.spill = SpillFiles(tmp_dir(self.config))
        (rid,) = self.spill.new_partitions(1)
        step = max(-(-n // _RUN_FILES), _MIN_FILE_ROWS)
        self.file_rows = max(self.file_rows, step)
        for lo in range(0, n, step):
            self.spill.write(rid, run.slice(lo, step))
        self.runs[rid] = -(-n // step)

    def merged(self) -> Iterator[pa.Table]:
        """All rows in order (the buffer written as a last run): tables of the data columns
        then `SORT_SEQ` (the arrival number); the spill directory goes when the last row is
        out. Past `_MERGE_FANIN` runs, groups of them are merged into longer runs first (on
        disk), so the final merge holds a file of at most `_MERGE_FANIN` runs."""
        if self.buffer:
            self._write_run()
        spill = self.spill
        if spill is None:
            return
        width = self.width
        runs = dict(self.runs)
        self.runs = {}
        while len(runs) > _MERGE_FANIN:
            group = dict(list(runs.items())[:_MERGE_FANIN])
            for rid in group:
                del runs[rid]
            (merged,) = spill.new_partitions(1)
            runs[merged] = 0
            pending: list[pa.Table] = []
            rows = 0
            for piece in self._merge_runs(spill, group, width):
                pending.append(piece)
                rows += piece.num_rows
                if rows >= self.file_rows:
                    spill.write(merged, pa.concat_tables(pending))
                    runs[merged] += 1
                    pending, rows = [], 0
            if pending:
                spill.write(merged, pa.concat_tables(pending))
                runs[merged] += 1
        yield from self._merge_runs(spill, runs, width)
        self.close()

    def sorted_pieces(self, piece_rows: int | None = None) -> Iterator[pa.Table]:
        """All rows in order, data columns only (no `SORT_SEQ`): the merge when spilled,
        else the buffer sorted in memory, cut into pieces of at most `piece_rows` rows (one
        table without it). Emptied as `merged` and `take_buffer` empty the sort."""
        if self.spilled:
            for piece in self.merged():
                yield piece.drop_columns([SORT_SEQ])
            return
        table = self.take_buffer()
        if table is None:
            return
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.order, None, np.arange(table.num_rows))
        del cols
        step = piece_rows or max(len(idx), 1)
        for lo in range(0, len(idx), step):
            yield table.take(pa.array(idx[lo : lo + step]))

    def _merge_runs(self, spill: SpillFiles, runs: dict[int, int], width: int) -> Iterator[pa.Table]:
        """Merge these runs (run -> its files): their rows with `SORT_SEQ`, in order, in
        tables of up to `_MERGE_CHUNK_ROWS` rows; each file is deleted once read."""
        files = {rid: iter(spill.take(rid)) for rid in runs}
        left = dict(runs)  # files not read yet, per run
        held: pa.Table | None = None  # sorted rows not emitted yet, with `$fence` and `$run`
        need = list(runs)
        while True:
            tables = [] if held is None else [held]
            for rid in need:
                piece = next(files[rid], None)
                if piece is None:
                    continue
                left[rid] -= 1
                fence = np.zeros(piece.num_rows, dtype=bool)
                fence[-1] = left[rid] > 0  # more of the run to come: nothing after it is safe
                tables.append(
                    piece.append_column("$fence", pa.array(fence)).append_column(
                        "$run", pa.array(np.full(piece.num_rows, rid, dtype=np.int64))
                    )
                )
            if not tables:
                return
            table = pa.concat_tables(tables).combine_chunks()
            del tables, held
            cols = [table.column(i).chunk(0) for i in range(width)]
            seq = table.column(width).to_numpy()
            idx = sort_order(cols, self.order, None, seq)
            fence_rows = np.flatnonzero(table.column(width + 1).to_numpy(zero_copy_only=False))
            cut = len(idx)
            need = []
            if len(fence_rows):
                pos = np.empty(len(idx), dtype=np.int64)
                pos[idx] = np.arange(len(idx), dtype=np.int64)
                cut = int(pos[fence_rows].min()) + 1
                run_of = table.column(width + 2).to_numpy()
                need = run_of[fence_rows[pos[fence_rows] < cut]].tolist()
            out = table.select(range(width + 1))
            for lo in range(0, cut, _MERGE_CHUNK_ROWS):
                yield out.take(pa.array(idx[lo : min(cut, lo + _MERGE_CHUNK_ROWS)]))
            # the rest, sorted, with the fences of the runs that still hold rows
            held = table.take(pa.array(idx[cut:])) if cut < len(idx) else None
            del table, out

    def close(self) -> None:
        """Remove the spill directory (also when the job failed before the end)."""
        self.runs = {}
        if self.spill is not None:
            self.spill.close()
            self.spill = None
