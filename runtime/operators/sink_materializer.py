"""SinkMaterializer: Flink's SinkUpsertMaterializer, in front of an upsert sink whose
PRIMARY KEY is not an upsert key of its input.

Why: an upsert sink applies each change by its PRIMARY KEY (+I/+U write the key's row, -D
deletes it). When several input rows share a sink key (a join, a projection that drops the
updates' key), a -U/-D of one of them would delete the sink row that another input row still
backs, and the final table misses a row or keeps a stale one. The materializer keeps, per
sink key, the list of input rows that currently back it, in arrival order, and tells the sink
what the key's row is now:

- +I / +U: the row replaces the list's entry it matches (same upsert key of the input, or
  the same whole row without one) or is appended; it goes out as +I when the list was
  empty, else +U;
- -U / -D: the first matching entry is removed (nothing when none matches: Flink logs
  "state cleared"); when the list is now empty the key is deleted (-D); when the removed
  entry was the last, the new last entry goes out as +U; otherwise nothing (the sink row
  still shows a live row).

The output has no -U rows ("I,UA,D"). The planner plans it as Flink does
(`table.exec.sink.upsert-materialize`, planner/optimizer/sink_keyed_shuffle.py), with a
hash shuffle on the sink's PRIMARY KEY in front, and lowers it as its own node in front of
the Sink (planner/lower.py); EXPLAIN shows it as `upsertMaterialize=[true]` on the Sink.

Vectorized: a batch is processed in rounds, round r taking the r-th row of every key of the
batch (one row per key, so the keys' lists change independently, with array operations);
a batch usually needs one round per change of its busiest key. The entries matching a row
are found by one dense id per (sink key, compared columns) (`encode_rows` over the working
set and the batch). State: the keyed backend's slots for the sink keys and an Arrow table of
the live entries with their slot and arrival sequence, checkpointed and re-split by key
group on restore with another parallelism. State TTL (`table.exec.state.ttl`) forgets the
list of a key not written for the TTL, as Flink's state TTL does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, data_columns, row_kinds
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import OldStates, load_state, max_parallelism_of, merge_ttl, merged_keyed, plan_slots
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, UpsertKeys, register_spec
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.backend import encode_rows
from runtime.state.ttl import StateTtl, now_ms, operator_ttl, state_bytes


@frozen_dataclass
class SinkMaterializerParams(OperatorParams):
    """`keys`: the input columns of the sink's PRIMARY KEY (the state's key); `upsert_key`:
    the columns of the input's smallest upsert key, by which a change finds the entry it
    replaces or retracts (empty: the whole row, as Flink compares rows without one)."""

    keys: tuple[int, ...]
    upsert_key: tuple[int, ...] = ()


def _comparable(col: pa.Array) -> pa.Array:
    """`col` as an array `encode_rows` can dictionary-encode: nested values (ARRAY, MAP,
    ROW) have no hash kernel and are compared by their text."""
    t = col.type
    if pa.types.is_nested(t):
        return pa.array([None if v is None else repr(v) for v in col.to_pylist()], pa.string())
    return col


def _plain(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


class SinkMaterializerOperator(Operator):
    """See the module docstring."""

    checkpointing = "custom"  # key index, the entries' rows, slots and sequence numbers

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = SinkMaterializerParams.of(node)
        self.keys = list(p.keys)
        self.compare = list(p.upsert_key) or list(range(len(node.schema)))
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.store: pa.Table | None = None  # the entries' rows (live and dead)
        self.e_slot = np.zeros(0, dtype=np.int64)  # each entry's sink key (slot)
        self.e_seq = np.zeros(0, dtype=np.int64)  # its place in its key's list (arrival order)
        self.e_alive = np.zeros(0, dtype=bool)
        self.next_seq = 0
        self._ttl_ms = operator_ttl(ctx.config, None)
        self.ttl = StateTtl(self._ttl_ms)  # a key's list expires when not written for the TTL, as in Flink

    def state_size(self) -> dict[str, int]:
        """Sink keys, the rows backing them and approximate bytes (metrics)."""
        alive = int(self.e_alive.sum())
        keys = len(np.unique(self.e_slot[self.e_alive])) if alive else 0
        return {"keys": keys, "rows": alive, "bytes": state_bytes(self.e_slot, self.e_seq, self.e_alive, self.store)}

    # ------------------------------------------------------------------ processing
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        kinds = row_kinds(batch)
        acc = (kinds == INSERT) | (kinds == UPDATE_AFTER)
        now = now_ms() if self.ttl.enabled else 0
        if self.ttl.enabled:
            self._expire(now)
        slots = self.state.lookup([data.column(i) for i in self.keys], n)
        keys = np.unique(slots)
        # the working set: the live entries of the batch's keys, then the batch's rows
        w_old = np.flatnonzero(self.e_alive & np.isin(self.e_slot, keys))
        held = len(w_old)
        rows = pa.Table.from_batches([data])
        if held:
            assert self.store is not None
            rows = pa.concat_tables([self.store.take(pa.array(w_old, pa.int64())), rows]).combine_chunks()
        all_slots = np.concatenate([self.e_slot[w_old], slots])
        ids, _ = encode_rows(
            [pa.array(all_slots), *(_comparable(_plain(rows.column(c))) for c in self.compare)], held + n
        )
        local = np.searchsorted(keys, all_slots)  # each entry's / row's key among the batch's keys
        cap = held + n
        w_id = np.full(cap, -1, dtype=np.int64)
        w_key = np.zeros(cap, dtype=np.int64)
        w_seq = np.zeros(cap, dtype=np.int64)
        w_src = np.zeros(cap, dtype=np.int64)  # the entry's row in `rows`
        w_alive = np.zeros(cap, dtype=bool)
        w_id[:held], w_key[:held], w_seq[:held] = ids[:held], local[:held], self.e_seq[w_old]
        w_src[:held] = np.arange(held)
        w_alive[:held] = True
        used = held
        entry_of = np.full(int(ids.max()) + 1, -1, dtype=np.int64)  # id -> its live entry
        entry_of[ids[:held]] = np.arange(held)
        count = np.bincount(local[:held], minlength=len(keys)).astype(np.int64)
        last = np.full(len(keys), -1, dtype=np.int64)  # each key's entry with the highest sequence
        self._refresh_last(last, np.arange(len(keys)), w_key, w_seq, w_alive, used)
        # rounds: the r-th row of every key
        r_ids, r_key = ids[held:], local[held:]
        order = np.lexsort((np.arange(n), slots))
        sorted_keys = slots[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        group_start = np.repeat(starts, np.diff(np.r_[starts, n]))
        round_of = np.empty(n, dtype=np.int64)
        round_of[order] = np.arange(n) - group_start
        out_src = np.full(n, -1, dtype=np.int64)
        out_kind = np.zeros(n, dtype=np.int8)
        by_round = np.argsort(round_of, kind="stable")
        bounds = np.searchsorted(round_of[by_round], np.arange(int(round_of.max()) + 2))
        for r in range(len(bounds) - 1):  # a loop over rounds, not rows
            rows_r = by_round[bounds[r] : bounds[r + 1]]
            adds = rows_r[acc[rows_r]]
            if len(adds):
                k = r_key[adds]
                out_kind[adds] = np.where(count[k] > 0, UPDATE_AFTER, INSERT)
                out_src[adds] = held + adds
                e = entry_of[r_ids[adds]]
                found = e >= 0
                w_src[e[found]] = held + adds[found]  # replaces the entry it matches, in place
                new = adds[~found]
                if len(new):
                    idx = used + np.arange(len(new))
                    used += len(new)
                    w_id[idx], w_key[idx], w_src[idx] = r_ids[new], r_key[new], held + new
                    w_seq[idx] = self.next_seq + np.arange(len(new))
                    self.next_seq += len(new)
                    w_alive[idx] = True
                    entry_of[r_ids[new]] = idx
                    count[r_key[new]] += 1
                    last[r_key[new]] = idx
            drops = rows_r[~acc[rows_r]]
            if len(drops):
                e = entry_of[r_ids[drops]]
                hit = e >= 0  # a retraction of nothing kept: ignored (Flink: state cleared)
                drops, e = drops[hit], e[hit]
                k = r_key[drops]
                was_last = last[k] == e
                w_alive[e] = False
                entry_of[w_id[e]] = -1
                count[k] -= 1
                gone = count[k] == 0
                out_kind[drops[gone]] = DELETE
                out_src[drops[gone]] = held + drops[gone]
                moved = ~gone & was_last
                if moved.any():
                    self._refresh_last(last, k[moved], w_key, w_seq, w_alive, used)
                    out_kind[drops[moved]] = UPDATE_AFTER
                    out_src[drops[moved]] = w_src[last[k[moved]]]
                last[k[gone]] = -1
        emitted = np.flatnonzero(out_src >= 0)
        if len(emitted):
            take = pa.array(out_src[emitted], pa.int64())
            out.emit(make_batch(self.node, [_plain(c).take(take) for c in rows.columns], out_kind[emitted]))
        self._write_back(w_old, rows, w_key, w_seq, w_src, w_alive, used, keys, count)
        if self.ttl.enabled:
            self.ttl.touch(keys[count > 0], now)
            self.ttl.forget(keys[count == 0])

    def _expire(self, now: int) -> None:
        """State TTL: forget the lists of keys not written for the TTL."""
        slots = self.ttl.expired(now)
        if len(slots):
            slots = slots[self.state.contains(slots)]
        if not len(slots):
            return
        self.e_alive &= ~np.isin(self.e_slot, slots)
        self.state.remove(slots)
        extra = self.ctx.metrics.extra
        extra["state_ttl_expired_keys"] = extra.get("state_ttl_expired_keys", 0) + len(slots)

    @staticmethod
    def _refresh_last(
        last: np.ndarray, which: np.ndarray, w_key: np.ndarray, w_seq: np.ndarray, w_alive: np.ndarray, used: int
    ) -> None:
        """`last[k]` for the keys `which`: their live entry with the highest sequence."""
        cand = np.flatnonzero(w_alive[:used] & np.isin(w_key[:used], which))
        if not len(cand):
            return
        o = cand[np.lexsort((w_seq[cand], w_key[cand]))]
        ends = np.r_[w_key[o][1:] != w_key[o][:-1], True]
        last[w_key[o][ends]] = o[ends]

    def _write_back(
        self,
        w_old: np.ndarray,
        rows: pa.Table,
        w_key: np.ndarray,
        w_seq: np.ndarray,
        w_src: np.ndarray,
        w_alive: np.ndarray,
        used: int,
        keys: np.ndarray,
        count: np.ndarray,
    ) -> None:
        """The batch keys' entries after the batch replace those before it in the state."""
        self.e_alive[w_old] = False
        live = np.flatnonzero(w_alive[:used])
        if len(live):
            kept = rows.take(pa.array(w_src[live], pa.int64()))
            self.store = kept if self.store is None else pa.concat_tables([self.store, kept])
            self.e_slot = np.concatenate([self.e_slot, keys[w_key[live]]])
            self.e_seq = np.concatenate([self.e_seq, w_seq[live]])
            self.e_alive = np.concatenate([self.e_alive, np.ones(len(live), dtype=bool)])
        empty = keys[count == 0]
        if len(empty):
            self.state.remove(empty)
        alive = int(self.e_alive.sum())
        if len(self.e_alive) > 2 * alive + 1024:
            self._compact()

    def _compact(self) -> None:
        """Only the live entries (their order kept)."""
        keep = np.flatnonzero(self.e_alive)
        if self.store is not None:
            self.store = self.store.take(pa.array(keep, pa.int64())).combine_chunks()
        self.e_slot, self.e_seq = self.e_slot[keep], self.e_seq[keep]
        self.e_alive = np.ones(len(keep), dtype=bool)

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._compact()
        return state_format.pack(
            {
                "keys": self.state.snapshot(),
                "store": self.store,
                "slot": self.e_slot,
                "seq": self.e_seq,
                "next_seq": self.next_seq,
                "ttl": self.ttl,
            }
        )

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles) if isinstance(handles, bytes) else handles
        self.state.restore(d["keys"])
        self.store = d["store"]
        self.e_slot = np.asarray(d["slot"], dtype=np.int64)
        self.e_seq = np.asarray(d["seq"], dtype=np.int64)
        self.e_alive = np.ones(len(self.e_slot), dtype=bool)
        self.next_seq = int(d["next_seq"])
        self.ttl = d.get("ttl") or StateTtl(self._ttl_ms)
        self.ttl.reconfigure(self._ttl_ms)

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """The keys of `new_range` with their entries (each key's list comes from the one
        old subtask that held it, so its order is kept)."""
        snaps = [s for s in (load_state(s) for _, s in old) if s is not None]
        plans = plan_slots([s["keys"] for s in snaps], new_range)
        stores: list[pa.Table] = []
        slots: list[np.ndarray] = []
        seqs: list[np.ndarray] = []
        for s, p in zip(snaps, plans, strict=True):
            new = p.remap(np.asarray(s["slot"], dtype=np.int64))
            keep = new >= 0
            if keep.any() and s["store"] is not None:
                stores.append(s["store"].filter(pa.array(keep)))
                slots.append(new[keep])
                seqs.append(np.asarray(s["seq"], dtype=np.int64)[keep])
        result = {
            "keys": merged_keyed(plans, max_parallelism_of(self.state)),
            "store": pa.concat_tables(stores).combine_chunks() if stores else None,
            "slot": np.concatenate(slots) if slots else np.zeros(0, dtype=np.int64),
            "seq": np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64),
            "next_seq": max((int(s["next_seq"]) for s in snaps), default=0),
        }
        if any(s.get("ttl") is not None for s in snaps):
            result["ttl"] = merge_ttl([s.get("ttl") for s in snaps], plans, self.ttl)
        return state_format.pack(result)


class SinkMaterializerSpec(OperatorSpec[SinkMaterializerParams]):
    """Flink's SinkUpsertMaterializer (see the module docstring): an upsert changelog of the
    sink's key, without -U rows. Keyed by the sink's PRIMARY KEY: the planner's shuffle in
    front of the sink hashes on exactly those columns."""

    name = "SinkMaterializer"
    params_type = SinkMaterializerParams
    operator_class = SinkMaterializerOperator
    parallel = True
    rescalable = True
    state_ttl = True
    spark = SparkCapability(
        False,
        False,
        "Planned in STREAMING only, in front of a sink with a PRIMARY KEY that is not an upsert key of its "
        "input (`table.exec.sink.upsert-materialize`).",
    )

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I" if inputs[0].changelog_mode == "I" else "I,UA,D"

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        return frozenset({frozenset(self.params(node).keys)})

    def explain(self, node: PlanView) -> list[str]:
        names = [f.name for f in node.fields]
        return [f"pk=[{', '.join(names[k] for k in self.params(node).keys)}]"]


SINK_MATERIALIZER = register_spec(SinkMaterializerSpec())
