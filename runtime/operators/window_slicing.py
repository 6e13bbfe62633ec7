"""Slice-local pre-aggregation for WindowAggregate (TUMBLE / HOP / CUMULATE): a helper,
not an operator.

Flink's window aggregation splits time into *slices* (the window for TUMBLE, the slide for
HOP, the step for CUMULATE) and aggregates each row once into its slice, merging slices
into windows when they fire (`SliceAssigners`, `table.optimizer.agg-phase-strategy`'s
local/global window aggregate). Here each input batch is first pre-aggregated per
(slice, grouping keys) with one Arrow hash aggregation into partial accumulators (the
layout of LocalGroupAggregate: counts, sums, min/max, `count1`); only those partial rows
are then replicated into their windows and merged into the per-(window, key) state by a
`MergedAggregateSet`. A HOP row is thus hashed and copied once instead of once per
window, and a hot key costs one state access per slice and batch instead of one per row.
All rows of a slice belong to the same windows, which needs `size % slide == 0` (HOP) and
`size % step == 0` (CUMULATE), as in Flink.

Exactness: lateness is decided per (row, window) against the row's `__wm`. A row none of
whose windows is late (its earliest window's timer is above its `__wm`) is pre-aggregated
freely; a row late for some window keeps its own partial row (grouped with nothing) and
its own watermark, so every (row, window) pair is judged exactly as before. Only calls
whose merge does not depend on the order of rows are sliced: COUNT, SUM / $SUM0 of
integers, MIN / MAX, none DISTINCT; anything else keeps the row-at-a-time fold.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates import dense_group
from runtime.operators.two_phase_agg import MergedAggregateSet
from runtime.operators.window_assign import floor_start
from runtime.plan_params import AggCallParams, WindowParams
from runtime.spill import SpillFiles

_MIN_WM = np.iinfo(np.int64).min


def slice_unit(spec: WindowParams) -> int | None:
    """The slice length of a window spec, or None when its windows are not unions of slices."""
    kind = spec.kind.upper()
    size = int(spec.size_ms or 0)
    if kind == "TUMBLE":
        return size or None
    if kind == "HOP":
        slide = int(spec.slide_ms or 0)
        return slide if slide and size % slide == 0 else None
    if kind == "CUMULATE":
        step = int(spec.step_ms or 0)
        return step if step and size % step == 0 else None
    return None


def _groupable(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_dictionary(t) or pa.types.is_null(t))


def can_slice(
    spec: WindowParams, calls: Sequence[AggCallParams], input_types: list[pa.DataType], grouping: Sequence[int]
) -> bool:
    """Whether the batch pre-aggregation applies (see the module docstring)."""
    if slice_unit(spec) is None or not calls:
        return False
    if not all(_groupable(input_types[g]) for g in grouping):
        return False
    for c in calls:
        name = c.name.lower()
        if c.distinct or c.params.get("udf"):
            return False
        args = list(c.args)
        if name == "count":
            continue
        if name in ("sum", "sum0"):
            if len(args) != 1 or not pa.types.is_integer(input_types[args[0]]):
                return False
        elif name in ("min", "max"):
            if len(args) != 1 or not _groupable(input_types[args[0]]) or pa.types.is_boolean(input_types[args[0]]):
                return False
        else:
            return False
    return True


class SlicedFold:
    """Pre-aggregates batches per (slice, key) and folds the partials into a
    MergedAggregateSet (owned by the WindowAggregate operator as its `aggset`)."""

    def __init__(self, spec: WindowParams, calls: Sequence[AggCallParams], grouping: Sequence[int]) -> None:
        unit = slice_unit(spec)
        assert unit is not None
        self.unit = unit
        self.kind = spec.kind.upper()
        self.offset = int(spec.offset_ms or 0)
        self.calls = list(calls)
        self.grouping = list(grouping)
        # BATCH: batches left to pass through without pre-aggregation after one whose
        # partial rows were not much fewer than its rows (`partials(reduce=...)`)
        self.skip_reduce = 0

    def slice_start(self, ts: np.ndarray) -> np.ndarray:
        """The start of each rowtime's slice."""
        return floor_start(ts, self.offset, self.unit)

    def first_end(self, slice_start: np.ndarray) -> np.ndarray:
        """The end of the earliest-ending window containing a slice."""
        return slice_start + self.unit

    def partials(
        self,
        data: pa.RecordBatch,
        ts: np.ndarray,
        wms: np.ndarray | None,
        late_for_some: np.ndarray | None,
        adaptive: bool = False,
        slice_start: np.ndarray | None = None,
    ) -> tuple[pa.RecordBatch, np.ndarray, np.ndarray]:
        """(partial rows: grouping columns, partial accumulators, count1; their slice start;
        their watermark (MIN for merged groups, the row's own for a row late for some
        window)).

        `adaptive` (BATCH, whose partials are merged again later): when a batch's groups
        were nearly as many as its rows (one row per (slice, key): many windows of few
        rows), the next batches' rows become partial rows one for one, without the hash
        aggregation that would not shrink them; a batch in 16 is aggregated to check again.
        `slice_start`: `self.slice_start(ts)` when the caller has it already."""
        n = data.num_rows
        reduce = True
        if adaptive:
            if self.skip_reduce > 0:
                self.skip_reduce -= 1
                reduce = False
        if slice_start is None:
            slice_start = self.slice_start(ts)
        # numpy columns go to dense_group as they are (no round trip through Arrow)
        cols: dict[str, pa.Array | np.ndarray] = {"sl": slice_start}
        if wms is not None and late_for_some is not None and late_for_some.any():
            cols["tag"] = pa.array(np.where(late_for_some, np.arange(n), -1))
            cols["wm"] = pa.array(np.where(late_for_some, wms, _MIN_WM))
        for j, g in enumerate(self.grouping):
            cols[f"k{j}"] = data.column(g)
        aggs: list[tuple[str, str]] = []
        for i, c in enumerate(self.calls):
            name = c.name.lower()
            args = [data.column(a) for a in c.args]
            valid: np.ndarray | None = None
            if c.filter is not None:
                valid = pc.fill_null(data.column(c.filter), False).to_numpy(zero_copy_only=False).astype(bool)
            if name in ("count", "sum", "sum0"):
                every = valid is None and not any(a.null_count for a in args)
                nonnull = np.ones(n, dtype=bool) if valid is None else valid.copy()
                for a in args:
                    if a.null_count:
                        nonnull &= a.is_valid().to_numpy(zero_copy_only=False)
                if name in ("sum", "sum0"):
                    x = args[0]
                    cols[f"s{i}"] = x if nonnull.all() else pc.if_else(pa.array(nonnull), x, pa.nulls(n, x.type))
                    aggs.append((f"s{i}", "sum"))
                if name != "sum0" and not every:  # counting every row: the row count `r` is that count
                    cols[f"c{i}"] = nonnull.astype(np.int64)
                    aggs.append((f"c{i}", "sum"))
            else:
                x = args[0]
                cols[f"m{i}"] = x if valid is None else pc.if_else(pa.array(valid), x, pa.nulls(n, x.type))
                aggs.append((f"m{i}", name))
        cols["r"] = np.ones(n, dtype=np.int64)
        aggs.append(("r", "sum"))
        keys = ["sl"] + (["tag"] if "tag" in cols else []) + [f"k{j}" for j in range(len(self.grouping))]
        if "wm" in cols:
            aggs.append(("wm", "max"))
        if not reduce:
            grouped = _one_for_one({k: pa.array(v) if isinstance(v, np.ndarray) else v for k, v in cols.items()}, aggs)
        else:
            steps = [self.unit] + [1] * (len(keys) - 1)
            grouped = dense_group.group_by(cols, keys, aggs, steps)
            if grouped is None:
                table = pa.table({k: pa.array(v) if isinstance(v, np.ndarray) else v for k, v in cols.items()})
                grouped = table.group_by(keys, use_threads=False).aggregate(aggs)
            if adaptive and grouped.num_rows * 4 > n * 3:
                self.skip_reduce = 15
        res = [grouped.column(f"k{j}").combine_chunks() for j in range(len(self.grouping))]

        def count(i: int) -> pa.Array:
            return grouped.column(f"c{i}_sum" if f"c{i}" in cols else "r_sum").combine_chunks()

        for i, c in enumerate(self.calls):
            name = c.name.lower()
            if name == "sum":
                res += [grouped.column(f"s{i}_sum").combine_chunks(), count(i)]
            elif name == "count":
                res.append(count(i))
            elif name == "sum0":
                res.append(grouped.column(f"s{i}_sum").combine_chunks())
            else:
                res.append(grouped.column(f"m{i}_{name}").combine_chunks())
        res.append(grouped.column("r_sum").combine_chunks())
        batch = pa.RecordBatch.from_arrays(res, names=[f"p{i}" for i in range(len(res))])
        sl = grouped.column("sl").to_numpy().astype(np.int64)
        pwm = (
            grouped.column("wm_max").to_numpy().astype(np.int64)
            if "wm" in cols
            else np.full(len(sl), _MIN_WM, dtype=np.int64)
        )
        return batch, sl, pwm

    def aggset(self, partial_types: list[pa.DataType]) -> MergedAggregateSet:
        """The state's aggregate set over partial rows (layout as `partials` builds it)."""
        layout: list[list[int]] = []
        col = len(self.grouping)
        for c in self.calls:
            width = 2 if c.name.lower() == "sum" else 1
            layout.append(list(range(col, col + width)))
            col += width
        return MergedAggregateSet(self.calls, layout, col, partial_types)


def _one_for_one(cols: dict[str, pa.Array], aggs: list[tuple[str, str]]) -> pa.Table:
    """What `group_by(...).aggregate(aggs)` gives when every row is its own group: each
    aggregate of one value, typed as the hash aggregation types it (sums widen to 64 bits)."""
    out = {name: col for name, col in cols.items() if name == "sl" or name.startswith("k")}
    for col, how in aggs:
        x = cols[col]
        if how == "sum" and pa.types.is_integer(x.type):
            x = x.cast(pa.uint64() if pa.types.is_unsigned_integer(x.type) else pa.int64())
        out[f"{col}_{how}"] = x
    return pa.table(out)


# BATCH partial rows are merged per partition of slices (runs of `_PARTITION_SLICES`
# consecutive slices, their run number mod `_PARTITIONS`): groups of different slices never
# merge, so a merge only rehashes the partitions the new rows touch.
_PARTITION_SLICES = 16
_PARTITIONS = 4096


class BoundedPartials:
    """BATCH mode's window state for sliced calls: the partial rows (`SlicedFold.partials`)
    of the batches so far, as Arrow tables keyed by (slice, grouping keys).

    A bounded input needs no watermark and no lateness, so nothing forces a hash index
    per (window, key): the partial tables are appended as they come and, whenever the
    pending rows exceed `compact_rows` and an eighth of the merged ones, merged by Arrow
    hash aggregations (COUNT / SUM partials summed, MIN / MAX of the partials, row counts
    summed) into one row per group. The merged rows are kept in tables by runs of slices, and a merge only re-aggregates the partitions the pending rows fall in:
    input in time order touches one or two, so each group is merged about once; in any
    order, each row is merged a bounded number of times. Memory is the merged groups
    (their columnar width) plus at most an eighth more pending rows, plus one partition's
    hash table while it merges; never a multiple of the number of input rows.

    The groups are as many as the input's rows at worst (one row per window and key), so
    past `memory_bytes` of merged rows (`taskmanager.memory.managed.size`) the partitions
    holding the earliest slices are written to disk (runtime/spill.py), each run of slices
    to its own file, until half the bound is left; `drain` then reads them back a run at a
    time, merging a run's pieces again (a spilled group may have been merged into memory
    anew since). Memory stays about the bound plus one run's groups."""

    def __init__(
        self, fold: SlicedFold, compact_rows: int = 1 << 20, memory_bytes: int = 0, spill_dir: str = ""
    ) -> None:
        self.fold = fold
        self.compact_rows = compact_rows
        self.memory_bytes = memory_bytes  # 0: never spill
        self.spill_dir = spill_dir
        self.spill: SpillFiles | None = None
        self.merged: dict[int, pa.Table] = {}
        self.merged_rows = 0
        self.merged_bytes = 0
        self.parts: list[pa.Table] = []
        self.pending = 0
        g = len(fold.grouping)
        self.keys = ["sl"] + [f"p{j}" for j in range(g)]
        merge: list[str] = []
        for c in fold.calls:
            name = c.name.lower()
            merge += ["sum", "sum"] if name == "sum" else [name if name in ("min", "max") else "sum"]
        merge.append("sum")  # the row count
        self.merge = [(f"p{g + i}", how) for i, how in enumerate(merge)]

    def add(self, partial: pa.RecordBatch, slice_start: np.ndarray) -> None:
        """Keep one batch's partial rows (merged into the others when they grow)."""
        table = pa.Table.from_batches([partial]).append_column("sl", pa.array(slice_start, type=pa.int64()))
        self.parts.append(table)
        self.pending += table.num_rows
        if self.pending > max(self.compact_rows, self.merged_rows // 8):
            self._compact()

    def _run(self, sl: np.ndarray) -> np.ndarray:
        """The run of `_PARTITION_SLICES` consecutive slices each slice start is in."""
        return np.floor_divide(np.floor_divide(sl - self.fold.offset, self.fold.unit), _PARTITION_SLICES)

    def _partition(self, sl: np.ndarray) -> np.ndarray:
        return self._run(sl) % _PARTITIONS

    def _merge_rows(self, rows: pa.Table) -> pa.Table:
        """One row per (slice, keys) of partial rows, in the partial tables' layout."""
        steps = [self.fold.unit] + [1] * (len(self.keys) - 1)
        grouped = dense_group.group_by(rows, self.keys, self.merge, steps)
        if grouped is None:
            grouped = rows.group_by(self.keys, use_threads=False).aggregate(self.merge)
        # the layout of the partial tables: grouping keys, partial accumulators, then `sl`
        names = self.keys[1:] + [c for c, _ in self.merge] + ["sl"]
        cols = [grouped.column(k) for k in self.keys[1:]]
        cols += [grouped.column(f"{c}_{how}") for c, how in self.merge] + [grouped.column("sl")]
        return pa.Table.from_arrays(cols, names=names)

    def _compact(self) -> None:
        if not self.parts:
            return
        new = pa.concat_tables(self.parts)
        self.parts, self.pending = [], 0
        part = self._partition(new.column("sl").to_numpy())
        if len(part) and (part[1:] < part[:-1]).any():
            order = np.argsort(part, kind="stable")  # the rows of each partition together
            part = part[order]
            new = new.take(pa.array(order)).combine_chunks()
        edges = np.ones(len(part) + 1, dtype=bool)
        np.not_equal(part[1:], part[:-1], out=edges[1:-1])
        bounds = np.flatnonzero(edges) if len(part) else np.zeros(0, dtype=np.int64)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            p = int(part[lo])
            rows = new.slice(int(lo), int(hi - lo))
            old = self.merged.pop(p, None)
            if old is not None:
                self.merged_rows -= old.num_rows
                self.merged_bytes -= old.nbytes
                rows = pa.concat_tables([old, rows])
            merged = self._merge_rows(rows)
            self.merged[p] = merged
            self.merged_rows += merged.num_rows
            self.merged_bytes += merged.nbytes
        if self.memory_bytes and self.merged_bytes > self.memory_bytes:
            self._spill()

    def _spill(self) -> None:
        """Write the partitions with the earliest slices to disk until half the bound is left
        (input in time order will not touch them again)."""
        if self.spill is None:
            self.spill = SpillFiles(self.spill_dir)
        first = {p: pc.min(t.column("sl")).as_py() for p, t in self.merged.items()}
        for p in sorted(first, key=first.__getitem__):
            if self.merged_bytes <= self.memory_bytes // 2:
                break
            table = self.merged.pop(p)
            self.merged_rows -= table.num_rows
            self.merged_bytes -= table.nbytes
            for run, piece in _by_run(table, self._run(table.column("sl").to_numpy())):
                self.spill.write(run, piece)

    def drain(self, chunk_rows: int) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
        """All groups, merged, ordered by slice start (stable: first appearance within a
        slice), in chunks: (partial rows as `partials` lays them out, their slice start).
        The state is released as it goes, a partition at a time when their slice ranges
        do not overlap (else all partitions are sorted together); a run at a time when
        some of it was spilled."""
        self._compact()
        if self.spill is not None:
            yield from self._drain_spilled(chunk_rows)
            return
        tables, self.merged, self.merged_rows = list(self.merged.values()), {}, 0
        self.merged_bytes = 0
        ranges = [(pc.min(t.column("sl")).as_py(), pc.max(t.column("sl")).as_py()) for t in tables]
        order = sorted(range(len(tables)), key=lambda i: ranges[i][0])
        disjoint = all(ranges[a][1] < ranges[b][0] for a, b in zip(order, order[1:], strict=False))
        groups = [[tables[i]] for i in order] if disjoint else [tables]
        del tables
        while groups:
            # one contiguous table: Arrow's take over many chunks is slow
            table = pa.concat_tables(groups.pop(0)).combine_chunks()
            yield from _sorted_chunks(table, chunk_rows)
            del table

    def _drain_spilled(self, chunk_rows: int) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
        """`drain` after a spill: runs of slices in order, each the union of its spilled
        pieces and its rows still in memory, merged again when there are several pieces."""
        spill = self.spill
        assert spill is not None
        in_memory: dict[int, list[pa.Table]] = {}
        while self.merged:
            _, table = self.merged.popitem()
            for run, piece in _by_run(table, self._run(table.column("sl").to_numpy())):
                in_memory.setdefault(run, []).append(piece)
            del table
        self.merged_rows, self.merged_bytes = 0, 0
        try:
            for run in sorted(set(in_memory) | set(spill.partitions())):
                pieces = list(spill.take(run)) + in_memory.pop(run, [])
                table = pa.concat_tables(pieces)
                del pieces
                table = (self._merge_rows(table) if table.num_rows else table).combine_chunks()
                yield from _sorted_chunks(table, chunk_rows)
                del table
        finally:
            spill.close()
            self.spill = None


def _by_run(table: pa.Table, run: np.ndarray) -> Iterator[tuple[int, pa.Table]]:
    """`table`'s rows split by run (zero-copy slices when they are already grouped)."""
    if len(run) == 0:
        return
    if (run[1:] < run[:-1]).any():
        order = np.argsort(run, kind="stable")
        run = run[order]
        table = table.take(pa.array(order))
    edges = np.flatnonzero(np.diff(run)) + 1
    bounds = [0, *edges.tolist(), len(run)]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        yield int(run[lo]), table.slice(lo, hi - lo)


def _sorted_chunks(table: pa.Table, chunk_rows: int) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
    """`table`'s rows ordered by `sl` (stable), as partial-row batches without `sl`."""
    # a slice's groups are all in one partition, in order of first appearance
    sl = table.column("sl").to_numpy().astype(np.int64, copy=False)
    order = np.argsort(sl, kind="stable")
    data = table.drop_columns(["sl"])
    for lo in range(0, len(order), chunk_rows):
        idx = order[lo : lo + chunk_rows]
        part = data.take(pa.array(idx))
        cols = [c.combine_chunks() for c in part.columns]
        yield pa.RecordBatch.from_arrays(cols, names=part.column_names), sl[idx]
