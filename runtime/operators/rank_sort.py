"""Sort (batch ORDER BY), Limit (LIMIT / OFFSET without ORDER BY) and TemporalSort
(streaming ORDER BY a time attribute).

- Sort: buffers its input and emits it sorted at `end_input` (stable: ties keep arrival
  order). Batch only; the planner rejects a streaming sort on a non-time column. Past
  `taskmanager.memory.managed.size` it is an external merge sort (`SortOperator`).
- Limit: passes rows [offset, offset + fetch) of its (insert-only) input through, in
  arrival order, as they come (a slice per batch); then ignores the rest.
- TemporalSort: buffers rows and, when the watermark reaches them, emits the rows with
  rowtime <= watermark sorted by the ORDER BY keys (the rowtime first). Rows whose rowtime
  is <= the watermark when they arrive are late and dropped (counted), as Flink's
  RowTimeSortOperator drops them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, MAX_WATERMARK, data_columns, row_kinds, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.errors import JobError
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.rank import input_names, is_batch_node, offset_fetch
from runtime.operators.rank_common import SortKey, format_order, sort_order, take_rows
from runtime.operators.spec import (
    SINGLE,
    OperatorParams,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    SparkCapability,
    register_spec,
)
from runtime.operators.window_assign import rowtime_ms
from runtime.spill import MANAGED_MEMORY_SIZE, SpillFiles, tmp_dir

if TYPE_CHECKING:
    from runtime.checkpoint.rescale import OldStates

# External sort: files per sorted run (the merge holds one file of each run at a time),
# fewest rows per file, runs merged at once (more are merged into longer runs first), rows
# per output batch of the merge.
_RUN_FILES = 16
_MIN_FILE_ROWS = 128
_MERGE_FANIN = 16
_MERGE_CHUNK_ROWS = 1 << 16
# The arrival-number column `ExternalSort.merged` appends to the data columns.
SORT_SEQ = "$seq"


@dataclass(frozen=True)
class SortParams(OperatorParams):
    """ORDER BY `order` (batch: the whole input, emitted sorted at its end)."""

    order: tuple[SortKey, ...]


@dataclass(frozen=True)
class LimitParams(OperatorParams):
    """OFFSET `offset` FETCH `fetch` (None = no limit) without ORDER BY: rows in arrival order."""

    offset: int = 0
    fetch: int | None = None


@dataclass(frozen=True)
class TemporalSortParams(OperatorParams):
    """Streaming ORDER BY `order`, whose first key is a time attribute (`time_kind`
    ROWTIME | PROCTIME) ascending: rows are emitted sorted as the watermark passes them."""

    order: tuple[SortKey, ...]
    time_kind: str = "ROWTIME"


def _insert_only(batch: pa.RecordBatch, name: str) -> None:
    if (row_kinds(batch) != INSERT).any():
        raise JobError(f"{name} doesn't support consuming update and delete changes")


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


class SortOperator(Operator):
    """Batch ORDER BY (module docstring): an `ExternalSort` bounded by
    `taskmanager.memory.managed.size` in BATCH mode."""

    # Batch mode only in practice (the buffer is sorted at end of input); snapshotted as is.
    checkpointing = "generic"
    state_attributes = ("buffer",)
    state_merge = {"buffer": "concat"}  # restore with another parallelism: subtask 0 takes all

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        order = SortParams.of(node).order
        self.sorter = ExternalSort(ctx.config, order, MANAGED_MEMORY_SIZE.get(ctx.config) if ctx.is_batch else 0)

    @property
    def buffer(self) -> list[pa.RecordBatch | pa.Table]:
        """The rows not written to a sorted run (the generic checkpoint's state)."""
        return self.sorter.buffer

    @buffer.setter
    def buffer(self, value: list[pa.RecordBatch | pa.Table]) -> None:
        self.sorter.buffer = list(value)
        self.sorter.buffered_bytes = sum(t.nbytes for t in value)
        if value:
            self.sorter.width = value[0].num_columns

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows:
            _insert_only(batch, self.node.operator)
            self.sorter.add(data)

    def end_input(self, input_index: int, out: Output) -> None:
        if self.sorter.spilled:
            # merged a file per run at a time, as the executor takes the batches
            out.emit_later(self._merged())
            return
        table = self.sorter.take_buffer()
        if table is None:
            return
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.sorter.order, None, np.arange(table.num_rows, dtype=np.int64))
        out.emit(make_batch(self.node, take_rows(table, idx), np.zeros(len(idx), dtype=np.int8)))

    def _merged(self) -> Iterator[pa.RecordBatch]:
        width = len(self.node.schema)
        for piece in self.sorter.merged():
            cols = [piece.column(i).combine_chunks() for i in range(width)]
            yield make_batch(self.node, cols, np.zeros(piece.num_rows, np.int8))

    def close(self) -> None:
        """Remove the spill directory (also when the job failed before the end)."""
        self.sorter.close()
        super().close()


class LimitOperator(Operator):
    """LIMIT without ORDER BY (module docstring)."""

    checkpointing = "custom"  # the number of rows seen

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = LimitParams.of(node)
        self.offset = p.offset
        self.stop = None if p.fetch is None else self.offset + p.fetch
        self.seen = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        _insert_only(batch, self.node.operator)
        lo = max(self.offset - self.seen, 0)
        hi = n if self.stop is None else min(max(self.stop - self.seen, 0), n)
        self.seen += n
        if hi > lo:
            part = data.slice(lo, hi - lo)
            out.emit(make_batch(self.node, list(part.columns), np.zeros(hi - lo, dtype=np.int8)))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return self.seen

    def restore_state(self, handles: Any) -> None:
        if handles is not None:  # None: a subtask the "single" exchange sends no row
            self.seen = int(handles)

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Every row reaches subtask 0 (a "single" exchange): it keeps the count."""
        from runtime.checkpoint.rescale import key_group_zero_state

        return key_group_zero_state(old, new_range)


class TemporalSortOperator(Operator):
    """Streaming ORDER BY a time attribute (module docstring)."""

    checkpointing = "custom"  # rows waiting for the watermark

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.order: list[SortKey] = list(TemporalSortParams.of(node).order)
        self.time_index = self.order[0].index
        self.buffer: list[pa.RecordBatch] = []
        self.times: list[np.ndarray] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        _insert_only(batch, self.node.operator)
        ts, valid = rowtime_ms(data.column(self.time_index), self.ctx.time_zone)
        wms = row_watermarks(batch)
        ok = valid.copy()
        if wms is not None:
            ok &= ts > wms
        if not ok.all():
            self.ctx.metrics.late_rows_dropped += int((~ok).sum())
            data, ts = data.filter(pa.array(ok)), ts[ok]
        if data.num_rows:
            self.buffer.append(data)
            self.times.append(ts)

    def on_watermark(self, watermark: int, out: Output) -> None:
        self._fire(watermark, out)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        self._fire(MAX_WATERMARK, out)

    def _fire(self, watermark: int, out: Output) -> None:
        if not self.buffer:
            return
        ts = np.concatenate(self.times)
        due = ts <= watermark
        if not due.any():
            return
        table = pa.Table.from_batches(self.buffer).combine_chunks()
        if due.all():
            self.buffer, self.times = [], []
        else:
            self.buffer = table.filter(pa.array(~due)).to_batches()
            self.times = [ts[~due]]
            table = table.filter(pa.array(due))
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.order, None, np.arange(table.num_rows, dtype=np.int64))
        out.emit(make_batch(self.node, take_rows(table, idx), np.zeros(len(idx), dtype=np.int8)))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack({"buffer": self.buffer, "times": self.times})

    def restore_state(self, handles: Any) -> None:
        if handles is None:  # a subtask the "single" exchange sends no row
            return
        d = state_format.unpack(handles)
        self.buffer, self.times = d["buffer"], d["times"]

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Every row reaches subtask 0 (a "single" exchange): it keeps the waiting rows."""
        from runtime.checkpoint.rescale import key_group_zero_state

        return key_group_zero_state(old, new_range)


# ---------------------------------------------------------------------- specs
class _InsertOnlySpec(OperatorSpec[Any]):
    """Consumes an insert-only input and emits one (every row at most once)."""

    input_distribution = SINGLE
    rescalable = True  # all state in subtask 0 (`key_group_zero_state`)

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if any(i.changelog_mode != "I" for i in inputs):
            raise PlanRefusedError(f"{self.name} doesn't support consuming update and delete changes")
        return "I"


class SortSpec(OperatorSpec[SortParams]):
    """Batch ORDER BY over all rows (one subtask); planned in BATCH mode only."""

    name = "Sort"
    params_type = SortParams
    operator_class = SortOperator
    input_distribution = SINGLE
    rescalable = True  # generic state, `state_merge`
    spark = SparkCapability(True, False, "Batch: `orderBy`.")

    def explain(self, node: PlanView) -> list[str]:
        return [f"orderBy=[{format_order(SortParams.of(node).order, input_names(node))}]"]


class LimitSpec(_InsertOnlySpec):
    """LIMIT / OFFSET without ORDER BY (one subtask: arrival order)."""

    name = "Limit"
    params_type = LimitParams
    operator_class = LimitOperator
    spark = SparkCapability(
        True,
        False,
        "Batch: LIMIT without ORDER BY keeps the first rows to arrive, which Spark does not define: the job runs "
        "only where the result cannot depend on it (at most FETCH rows, at most OFFSET rows, or all rows equal; "
        "checked at run time, the job fails naming the operator otherwise); over a Sort it is a SortLimit. "
        "Streaming: arrival order again.",
    )

    def explain(self, node: PlanView) -> list[str]:
        p = LimitParams.of(node)
        return offset_fetch(p.offset, p.fetch) + (["global=[true]"] if is_batch_node(node) else [])


class TemporalSortSpec(_InsertOnlySpec):
    """Streaming ORDER BY a time attribute (one subtask)."""

    name = "TemporalSort"
    params_type = TemporalSortParams
    operator_class = TemporalSortOperator
    spark = SparkCapability(False, False, "Structured Streaming cannot sort a stream.")

    def explain(self, node: PlanView) -> list[str]:
        return [f"orderBy=[{format_order(TemporalSortParams.of(node).order, input_names(node))}]"]


SORT = register_spec(SortSpec())
LIMIT = register_spec(LimitSpec())
TEMPORAL_SORT = register_spec(TemporalSortSpec())
