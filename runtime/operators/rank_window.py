"""WindowRank / WindowDeduplicate: Top-N and dedup per window, over the rows of a window
TVF or the results of a window aggregate (partitioned by window_start, window_end, ...).

Rows are buffered per window (an Arrow table with each row's window end and arrival
sequence). A row whose window already fired when it arrived (`window_end - 1 <= __wm`)
is late and dropped (counted). When the watermark reaches `window_end - 1` the windows
due are ranked at once (vectorized sort by partition, order keys, arrival) and the rows
in the rank range are emitted as +I, then forgotten: the output is insert-only. Window
dedup is the ROW_NUMBER range [1, 1] case (keep first: ORDER BY rowtime ASC, ties keep
the first arrived; keep last: DESC, ties keep the last arrived, as Flink's dedup does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, MAX_WATERMARK, data_columns, row_kinds, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import OldStates, exchange_keys, load_state, operator_max_parallelism, owned_rows
from runtime.errors import JobError
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.rank import RankParams, input_names, rank_range, rank_select
from runtime.operators.rank_common import SortKey, format_order, rank_numbers, take_rows
from runtime.operators.spec import KEYED, OperatorSpec, PlanRefusedError, PlanView, SparkCapability, register_spec
from runtime.operators.window_assign import rowtime_ms
from runtime.plan_params import WindowParams
from runtime.plan_text import format_window
from runtime.state.backend import encode_rows

BIG = np.iinfo(np.int64).max


@frozen_dataclass
class WindowRankParams(RankParams):
    """A Top-N per window: `partition_keys` include the window columns `window_start_index`
    and `window_end_index` (input columns) of `window` (the window TVF's or window
    aggregate's, for EXPLAIN)."""

    window: WindowParams
    window_start_index: int
    window_end_index: int


@frozen_dataclass
class WindowDeduplicateParams(WindowRankParams):
    """A window Top-1 on the rowtime (ROW_NUMBER, range [1, 1], `order[0]` the rowtime:
    ascending keeps the first row, descending the last)."""


class WindowRankOperator(Operator):
    """WindowRank and WindowDeduplicate (the module docstring)."""

    checkpointing = "custom"  # the rows of windows not fired yet

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = WindowRankParams.of(node)
        self.partition_keys: list[int] = list(p.partition_keys)
        self.order: list[SortKey] = list(p.order)
        self.rank_type = p.rank_type
        self.start = p.rank_start
        self.end = BIG if p.rank_end is None else p.rank_end
        self.output_rank = p.output_rank
        self.end_index = p.window_end_index
        self.buffer: list[pa.RecordBatch] = []
        self.ends: list[np.ndarray] = []
        self.seqs: list[np.ndarray] = []
        self.next_seq = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        if (row_kinds(batch) != INSERT).any():
            raise JobError(f"{self.node.operator} doesn't support consuming update and delete changes")
        ends, _ = rowtime_ms(data.column(self.end_index), self.ctx.time_zone)
        wms = None if self.ctx.is_batch else row_watermarks(batch)
        if wms is not None:
            ok = ends - 1 > wms
            if not ok.all():
                self.ctx.metrics.late_rows_dropped += int((~ok).sum())
                data, ends = data.filter(pa.array(ok)), ends[ok]
                n = data.num_rows
        self.buffer.append(data)
        self.ends.append(ends)
        self.seqs.append(np.arange(self.next_seq, self.next_seq + n, dtype=np.int64))
        self.next_seq += n

    def on_watermark(self, watermark: int, out: Output) -> None:
        self._fire(watermark, out)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        self._fire(MAX_WATERMARK, out)

    def _fire(self, watermark: int, out: Output) -> None:
        if not self.buffer:
            return
        ends = np.concatenate(self.ends)
        due = ends - 1 <= watermark
        if not due.any():
            return
        table = pa.Table.from_batches(self.buffer).combine_chunks()
        seqs = np.concatenate(self.seqs)
        if not due.all():
            keep = ~due
            rest = table.filter(pa.array(keep))
            self.buffer = rest.to_batches() or []
            self.ends, self.seqs = [ends[keep]], [seqs[keep]]
            table = table.filter(pa.array(due))
            seqs, ends = seqs[due], ends[due]
        else:
            self.buffer, self.ends, self.seqs = [], [], []
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        part, _ = encode_rows([cols[i] for i in self.partition_keys], table.num_rows)
        tie = seqs
        if self.node.operator == "WindowDeduplicate" and self.order and self.order[0].descending:
            tie = -seqs  # keep the last row: on equal row times the later arrival wins (Flink's <=)
        idx, ranks = rank_numbers(cols, self.order, self.rank_type, part, tie)
        sel = (ranks >= self.start) & (ranks <= self.end)
        rows, ranks = idx[sel], ranks[sel]
        # windows in end order, then partitions in arrival order, then rank
        first_seq = np.full(int(part.max()) + 1 if len(part) else 0, BIG, dtype=np.int64)
        np.minimum.at(first_seq, part, seqs)
        o = np.lexsort((ranks, first_seq[part[rows]], ends[rows]))
        rows, ranks = rows[o], ranks[o]
        out_cols = take_rows(table, rows)
        if self.output_rank:
            out_cols.append(pa.array(ranks, type=pa.int64()))
        out.emit(make_batch(self.node, out_cols, np.zeros(len(rows), dtype=np.int8)))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack({"buffer": self.buffer, "ends": self.ends, "seqs": self.seqs, "seq": self.next_seq})

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.buffer, self.ends, self.seqs, self.next_seq = d["buffer"], d["ends"], d["seqs"], d["seq"]

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """The buffered rows whose exchange key (the partition keys without the window
        columns, `input_keys` of the spec) is in range, so each window of a key fires in
        the subtask its later rows reach. Arrival numbers of each old subtask are shifted
        past the previous one's, keeping the order within every partition."""
        keys, max_par = exchange_keys(self), operator_max_parallelism(self)
        buffer: list[pa.RecordBatch] = []
        ends: list[np.ndarray] = []
        seqs: list[np.ndarray] = []
        offset = 0
        for _, state in old:
            d = load_state(state)
            if d is None:
                continue
            if d["buffer"]:
                table = pa.Table.from_batches(d["buffer"]).combine_chunks()
                keep = owned_rows(table, keys, new_range, max_par)
                if keep.any():
                    buffer.extend(table.filter(pa.array(keep)).to_batches())
                    ends.append(np.concatenate(d["ends"])[keep])
                    seqs.append(np.concatenate(d["seqs"])[keep] + offset)
            offset += int(d["seq"])
        return state_format.pack({"buffer": buffer, "ends": ends, "seqs": seqs, "seq": offset})


# ---------------------------------------------------------------------- specs
def _window_text(node: PlanView, p: WindowRankParams) -> str:
    names = input_names(node)
    w = format_window(p.window, "x")
    inner = w[w.index("(") + 1 : -1].replace("time_col=[x]", "")
    inner = f"win_start=[{names[p.window_start_index]}], win_end=[{names[p.window_end_index]}]" + (
        ", " + inner.lstrip(", ") if inner.strip(", ") else ""
    )
    return f"window=[{p.window.kind}({inner})]"


def _partition(node: PlanView, p: WindowRankParams) -> str:
    names = input_names(node)
    skip = (p.window_start_index, p.window_end_index)
    return ", ".join(names[k] for k in p.partition_keys if k not in skip)


class _WindowTopNSpec(OperatorSpec[Any]):
    operator_class = WindowRankOperator
    input_distribution = KEYED
    rescalable = True

    def input_keys(self, params: WindowRankParams, input_index: int) -> tuple[int, ...]:
        # The window columns are not hashed on: every window of a key on one subtask.
        return tuple(k for k in params.partition_keys if k not in (params.window_start_index, params.window_end_index))

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if any(i.changelog_mode != "I" for i in inputs):
            raise PlanRefusedError(f"{self.name} doesn't support consuming update and delete changes")
        return "I"


class WindowRankSpec(_WindowTopNSpec):
    """Top-N per window, emitted once when the watermark passes the window end."""

    name = "WindowRank"
    params_type = WindowRankParams
    spark = SparkCapability(
        True,
        False,
        "Batch: as `Rank`, partitioned by window_start, window_end and the keys. Streaming: Structured Streaming "
        "rejects ranking window functions over a stream, and a per-window Top-N through `applyInPandasWithState` "
        "is not implemented.",
    )

    def explain(self, node: PlanView) -> list[str]:
        p = WindowRankParams.of(node)
        return [
            _window_text(node, p),
            f"rankType=[{p.rank_type}]",
            rank_range(p.rank_start, p.rank_end),
            f"partitionBy=[{_partition(node, p)}]",
            f"orderBy=[{format_order(p.order, input_names(node))}]",
            f"select=[{rank_select(node, p.output_rank)}]",
        ]


class WindowDeduplicateSpec(_WindowTopNSpec):
    """The first / last row per window and key on the rowtime."""

    name = "WindowDeduplicate"
    params_type = WindowDeduplicateParams
    spark = SparkCapability(
        True,
        False,
        "Batch: as `Deduplicate`, per window and keys (the planner plans both as Rank in batch). Streaming: "
        "refused, as `WindowRank`.",
    )

    def explain(self, node: PlanView) -> list[str]:
        p = WindowDeduplicateParams.of(node)
        order = p.order[0]
        return [
            _window_text(node, p),
            f"keep=[{'LastRow' if order.descending else 'FirstRow'}]",
            f"partitionKeys=[{_partition(node, p)}]",
            f"orderKey=[{input_names(node)[order.index]}]",
            "order=[ROWTIME]",
        ]


WINDOW_RANK = register_spec(WindowRankSpec())
WINDOW_DEDUPLICATE = register_spec(WindowDeduplicateSpec())
