"""BATCH session windows beyond memory (a helper of the SESSION window aggregate and the
SESSION window table function, not an operator).

Both operators keep every input row until its session closes (session.py: the rows are
aggregated, or emitted, when the session fires), and in BATCH mode no session fires before
the end of the input: they held the whole input. Here the rows go through the external
merge sort of the other BATCH operators (`ExternalSort`, bounded by
`taskmanager.memory.managed.size`), sorted by (session keys, rowtime, arrival). The merged
rows are cut where a session must start (another key, or a rowtime more than the gap past
the previous row's: session windows `[t, t + gap)` that touch merge, so a row at exactly
the previous one's `t + gap` joins its session); complete sessions are handed to the
operator's `SessionWindows` a quarter of the bound (or 65,536 rows) at a time, put back in
arrival order, and fired at once. `SessionWindows` computes the same sessions from the same
rows, folding each session's rows in arrival order, so every result is the in-memory one;
only the order of the output rows differs (key by key instead of by session end). A session
larger than the bound is held whole (its rows are aggregated together).

While nothing spilled, the rows are processed at the end of the input as before (the
buffer in arrival order). With periodic checkpoints the operators hold their rows in
`SessionWindows` (the snapshot) and do not use this sort.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK
from runtime.operators.base import Output
from runtime.operators.external_sort import SORT_SEQ, ExternalSort
from runtime.operators.rank_common import SortKey, _plain, _same_adjacent
from runtime.operators.session import SessionWindows

# Rows of complete sessions handed to `SessionWindows` at once (or a quarter of the bound).
_CHUNK_ROWS = 1 << 16


class SortedSessionInput:
    """The input rows of a BATCH session operator (module docstring): `add` them (data
    columns and rowtimes), then `finish` processes them through the operator's sessions."""

    def __init__(self, config: Any, keys: list[int], gap: int, bound: int) -> None:
        self.keys = keys
        self.gap = gap
        self.width = -1  # data columns (the rowtime column follows them in the sort)
        self.config = config
        self.bound = bound
        self.sorter: ExternalSort | None = None

    @property
    def spilled(self) -> bool:
        return self.sorter is not None and self.sorter.spilled

    def add(self, data: pa.RecordBatch, ts: np.ndarray) -> None:
        if not data.num_rows:
            return
        if self.sorter is None:
            self.width = data.num_columns
            order = [SortKey(i) for i in self.keys] + [SortKey(self.width)]
            self.sorter = ExternalSort(self.config, order, self.bound)
        self.sorter.add(pa.Table.from_batches([data]).append_column("$ts", pa.array(ts, pa.int64())))

    def snapshot_check(self) -> None:
        """Fail with a hint when the rows were spilled (a savepoint taken by hand in BATCH
        mode cannot include the sorted runs)."""
        if self.sorter is not None:
            self.sorter.snapshot()

    def move_to(self, sessions: SessionWindows) -> None:
        """Hand the rows held (nothing spilled) to `sessions` in arrival order, as the
        in-memory path takes them (before a snapshot, or after a restore)."""
        self.snapshot_check()
        for data, ts in self._buffered():
            sessions.process(data, ts, None, Output())

    def finish(self, sessions: SessionWindows, out: Output) -> None:
        """End of input: every session processed and fired (spilled: as the executor takes
        the output, `Output.emit_later`)."""
        if self.spilled:
            out.emit_later(self._spilled(sessions))
            return
        for data, ts in self._buffered():
            sessions.process(data, ts, None, out)
        sessions.fire(MAX_WATERMARK, out)

    def _buffered(self) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
        table = None if self.sorter is None else self.sorter.take_buffer()
        if table is None:
            return
        for batch in table.to_batches():
            yield self._split(batch)

    def _split(self, batch: pa.RecordBatch | pa.Table) -> tuple[pa.RecordBatch, np.ndarray]:
        """(data columns as one RecordBatch, rowtimes) of a table of the sort's columns."""
        if isinstance(batch, pa.Table):
            batch = batch.combine_chunks().to_batches()[0]
        ts = batch.column(self.width).to_numpy(zero_copy_only=False)
        data = pa.RecordBatch.from_arrays(batch.columns[: self.width], schema=_data_schema(batch, self.width))
        return data, ts

    def _spilled(self, sessions: SessionWindows) -> Iterator[pa.RecordBatch]:
        """The merged rows cut at session starts; complete sessions processed a chunk at a time."""
        assert self.sorter is not None
        limit = max(self.bound // 4, 1)
        ready: list[pa.Table] = []  # complete sessions not processed yet
        ready_rows = ready_bytes = 0
        tail: pa.Table | None = None  # the session the merge is in
        buffer = Output()
        for piece in self.sorter.merged():
            probe = piece if tail is None else pa.concat_tables([tail, piece])
            starts = np.flatnonzero(self._session_starts(probe))
            cut = int(starts[-1]) if len(starts) else 0
            tail = probe.slice(cut)
            if cut:
                done = probe.slice(0, cut)
                ready.append(done)
                ready_rows += done.num_rows
                ready_bytes += done.nbytes
            if ready_rows >= _CHUNK_ROWS or ready_bytes >= limit:
                yield from self._process(sessions, ready, buffer)
                ready, ready_rows, ready_bytes = [], 0, 0
        if tail is not None:
            ready.append(tail)
        if ready:
            yield from self._process(sessions, ready, buffer)

    def _session_starts(self, probe: pa.Table) -> np.ndarray:
        """Per row of `probe` (sorted by keys, rowtime): a session starts there (other keys
        than the previous row's, or a rowtime past its `t + gap`); row 0 counts as one."""
        n = probe.num_rows
        same = np.ones(n, dtype=bool)
        for i in self.keys:
            same &= _same_adjacent(_plain(probe.column(i)))
        ts = probe.column(self.width).to_numpy()
        same[1:] &= ts[1:] <= ts[:-1] + self.gap
        same[0] = False
        return ~same

    def _process(self, sessions: SessionWindows, tables: list[pa.Table], buffer: Output) -> Iterator[pa.RecordBatch]:
        """These complete sessions' rows, in arrival order, through `sessions`, then fired."""
        table = pa.concat_tables(tables).combine_chunks()
        seq = table.column(SORT_SEQ).to_numpy()
        data, ts = self._split(table.take(pa.array(np.argsort(seq, kind="stable"))))
        sessions.process(data, ts, None, buffer)
        sessions.fire(MAX_WATERMARK, buffer)
        yield from buffer.drain()[0]

    def close(self) -> None:
        """Remove the spill directory (also when the job failed before the end)."""
        if self.sorter is not None:
            self.sorter.close()


def _data_schema(batch: pa.RecordBatch, width: int) -> pa.Schema:
    return pa.schema([batch.schema.field(i) for i in range(width)], metadata=batch.schema.metadata)
