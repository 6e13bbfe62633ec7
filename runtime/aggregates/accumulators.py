"""Vectorized accumulators: one object per aggregate call, holding that aggregate's
state for *all* keys in arrays indexed by slot (see runtime.state).

`update(slots, signs, args)` folds a batch: `slots[i]` is row i's key slot, `signs[i]`
+1 for an insert (+I/+U) and -1 for a retraction (-U/-D), `args` the argument columns
(already restricted to the rows that pass the FILTER clause). Folding is a scatter
(`np.add.at`) or an Arrow hash aggregation of the batch followed by an element-wise
combine with the stored values of the touched slots: work is per row in C, and per
distinct touched key at most in Python.
"""

from __future__ import annotations

import decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.distinct_pairs import DensePairs, PackedPairs, integer_values, values_array
from runtime.checkpoint.format import register_state_type
from runtime.distinct import sorted_distinct
from runtime.errors import JobError
from runtime.state.hashmap import HashMapStateBackend
from runtime.types import DataType


def _grow(arr: np.ndarray, n: int, fill: Any) -> np.ndarray:
    if len(arr) >= n:
        return arr
    size = max(n, 2 * len(arr), 16)
    out = np.empty(size, dtype=arr.dtype)
    out[: len(arr)] = arr
    out[len(arr) :] = fill
    return out


def _valid_mask(args: list[pa.Array]) -> np.ndarray | None:
    """Rows where every argument is non-NULL (None when all are)."""
    mask = None
    for a in args:
        if a.null_count:
            m = pc.is_valid(a).to_numpy(zero_copy_only=False)
            mask = m if mask is None else mask & m
    return mask


def _drop_nulls(
    slots: np.ndarray, signs: np.ndarray, args: list[pa.Array], checked: list[pa.Array] | None = None
) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Aggregates skip NULL input: the slots, signs and first argument of the rows where
    every array of `checked` (default: all `args`) is non-NULL."""
    a = args[0]
    m = _valid_mask(args if checked is None else checked)
    if m is not None:
        slots, signs, a = slots[m], signs[m], a.filter(pa.array(m))
    return slots, signs, a


def utf16_key(s: str) -> bytes:
    """Java's String.compareTo orders by UTF-16 code units."""
    return s.encode("utf-16-be")


class Accumulator:
    """Base class: per-slot state of one aggregate call. Every subclass is a state type
    (runtime/checkpoint/format.py): checkpoints write its attributes."""

    retractable = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_state_type(cls)

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType) -> None:
        self.arg_types = arg_types
        self.result_type = result_type
        self.arrow_type = result_type.to_arrow()
        self.capacity = 0

    def grow(self, n: int) -> None:
        self.capacity = max(self.capacity, n)

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        raise NotImplementedError

    def results(self, slots: np.ndarray) -> pa.Array:
        raise NotImplementedError

    def reset(self, slots: np.ndarray) -> None:
        """Clear the state of removed keys (their slots will be reused)."""

    def _no_retraction(self, signs: np.ndarray, name: str) -> None:
        if len(signs) and (signs < 0).any():
            raise JobError(f"The aggregate function {name.upper()} does not support retraction in this runtime yet")


class CountAcc(Accumulator):
    """COUNT(*) (no args) and COUNT(x, ...) (rows where all args are non-NULL)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType) -> None:
        super().__init__(arg_types, result_type)
        self.counts = np.zeros(0, dtype=np.int64)

    def grow(self, n: int) -> None:
        self.counts = _grow(self.counts, n, 0)

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        m = _valid_mask(args)
        if m is not None:
            slots, signs = slots[m], signs[m]
        np.add.at(self.counts, slots, signs)

    def results(self, slots: np.ndarray) -> pa.Array:
        return pa.array(self.counts[slots], type=self.arrow_type)

    def reset(self, slots: np.ndarray) -> None:
        self.counts[slots] = 0


def average(sums: np.ndarray, counts: np.ndarray, empty: np.ndarray, result_type: DataType) -> pa.Array:
    """AVG of per-slot `sums` (int64, float64 or Decimal objects) over `counts` of
    non-NULL values, NULL where `empty`, as Flink divides: integers truncate toward zero like
    Java's long division, DECIMALs round half up to the result's scale. Shared by the
    one-phase AVG and the global phase of a two-phase AVG."""
    safe = np.where(empty, 1, counts)
    arrow_type = result_type.to_arrow()
    if sums.dtype.kind in "iu":
        # Java long division truncates toward zero: avg(-2, -3, -2) = -7 / 3 = -2.
        q = np.abs(sums) // safe * np.sign(sums)
        return pa.array(q, mask=empty).cast(arrow_type, safe=False)
    if sums.dtype.kind == "f":
        return pa.array(sums / safe, mask=empty).cast(arrow_type)
    scale = result_type.scale or 0
    quantum = decimal.Decimal(1).scaleb(-scale)
    ctx = decimal.Context(prec=76, rounding=decimal.ROUND_HALF_UP)
    out = [
        None if e else (s / decimal.Decimal(c)).quantize(quantum, context=ctx)
        for s, c, e in zip(sums.tolist(), counts.tolist(), empty.tolist(), strict=True)
    ]
    return pa.array(out, type=arrow_type)


class SumAcc(Accumulator):
    """SUM, SUM0 and AVG: a running sum and a count of non-NULL values per slot.

    Integers sum in int64 (wrapping to the result width like Java), floats in float64,
    DECIMALs as Python Decimals in an object array (np.add.at works on objects)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, kind: str) -> None:
        super().__init__(arg_types, result_type)
        self.kind = kind
        t = arg_types[0]
        if pa.types.is_decimal(t):
            self.num = "decimal"
            self.sums = np.zeros(0, dtype=object)
            self.zero: Any = decimal.Decimal(0)
        elif pa.types.is_floating(t):
            self.num = "float"
            self.sums = np.zeros(0, dtype=np.float64)
            self.zero = 0.0
        else:
            self.num = "int"
            self.sums = np.zeros(0, dtype=np.int64)
            self.zero = 0
        self.counts = np.zeros(0, dtype=np.int64)

    def grow(self, n: int) -> None:
        self.sums = _grow(self.sums, n, self.zero)
        self.counts = _grow(self.counts, n, 0)

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        slots, signs, a = _drop_nulls(slots, signs, args)
        if self.num == "decimal":
            vals = np.array(a.to_pylist(), dtype=object)
            neg = signs < 0
            if neg.any():
                vals[neg] = -vals[neg]
        elif self.num == "float":
            vals = a.to_numpy(zero_copy_only=False).astype(np.float64) * signs
        else:
            vals = a.to_numpy(zero_copy_only=False).astype(np.int64) * signs
        np.add.at(self.sums, slots, vals)
        np.add.at(self.counts, slots, signs)

    def results(self, slots: np.ndarray) -> pa.Array:
        sums, counts = self.sums[slots], self.counts[slots]
        empty = counts <= 0
        if self.kind == "avg":
            return self._avg(sums, counts, empty)
        if self.kind == "sum0":
            empty = np.zeros(len(slots), dtype=bool)
        if self.num == "decimal":
            return pa.array(
                [None if e else v for v, e in zip(sums.tolist(), empty.tolist(), strict=True)], type=self.arrow_type
            )
        mask = empty if empty.any() else None  # no validity bitmap to build when nothing is NULL
        if self.num == "int":
            return pa.array(sums, mask=mask).cast(self.arrow_type, safe=False)
        return pa.array(sums, mask=mask).cast(self.arrow_type)

    def _avg(self, sums: np.ndarray, counts: np.ndarray, empty: np.ndarray) -> pa.Array:
        return average(sums, counts, empty, self.result_type)

    def reset(self, slots: np.ndarray) -> None:
        self.sums[slots] = self.zero
        self.counts[slots] = 0


class _ObjectAcc(Accumulator):
    """Base for accumulators that keep one Python value per slot (None = no value)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType) -> None:
        super().__init__(arg_types, result_type)
        self.values = np.empty(0, dtype=object)

    def grow(self, n: int) -> None:
        self.values = _grow(self.values, n, None)

    def results(self, slots: np.ndarray) -> pa.Array:
        return pa.array(self.values[slots].tolist(), type=self.arrow_type)

    def reset(self, slots: np.ndarray) -> None:
        self.values[slots] = None

    def _store(self, slots: np.ndarray, arr: pa.Array) -> None:
        vals = np.empty(len(arr), dtype=object)
        vals[:] = arr.to_pylist()
        self.values[slots] = vals


def _per_slot(
    slots: np.ndarray, value: pa.Array, agg: str, extra: list[tuple[str, pa.Array]] | None = None
) -> pa.Table:
    """Hash-aggregate `value` by slot in arrival order (use_threads=False keeps order)."""
    cols = {"s": pa.array(slots, type=pa.int64()), "v": value}
    for name, arr in extra or []:
        cols[name] = arr
    return pa.table(cols).group_by("s", use_threads=False).aggregate([("v", agg)])


def _has_supplementary(arr: pa.Array) -> bool:
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or len(arr) == 0:
        return False
    return bool(pc.any(pc.match_substring_regex(arr, "[\U00010000-\U0010ffff]")).as_py())


class MinMaxAcc(_ObjectAcc):
    """MIN / MAX without retraction: per-batch Arrow hash min/max, then an element-wise
    combine with the stored values of the touched slots."""

    retractable = False

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, kind: str) -> None:
        super().__init__(arg_types, result_type)
        self.kind = kind

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, self.kind)
        slots, signs, a = _drop_nulls(slots, signs, args)
        if len(slots) == 0:
            return
        if _has_supplementary(a):  # Java orders strings by UTF-16 code units
            self._update_py(slots, a)
            return
        part = _per_slot(slots, a, self.kind)
        touched = part.column("s").to_numpy()
        new = part.column(f"v_{self.kind}").combine_chunks()
        old = pa.array(self.values[touched].tolist(), type=a.type)
        fn = pc.min_element_wise if self.kind == "min" else pc.max_element_wise
        try:
            merged = fn(old, new, skip_nulls=True)
        except pa.ArrowNotImplementedError:
            self._update_py(slots, a)
            return
        self._store(touched, merged)

    def _update_py(self, slots: np.ndarray, a: pa.Array) -> None:
        pick = min if self.kind == "min" else max
        key = utf16_key if pa.types.is_string(a.type) else None
        for s, v in zip(slots.tolist(), a.to_pylist(), strict=True):  # rare fallback path
            cur = self.values[s]
            self.values[s] = v if cur is None else pick(cur, v, key=key)


class RetractMinMaxAcc(_ObjectAcc):
    """MIN / MAX over a changelog: a multiset {value: count} per slot. The batch is
    reduced to net counts per distinct (slot, value) first; the dict updates loop over
    those distinct pairs, the result over the touched slots."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, kind: str) -> None:
        super().__init__(arg_types, result_type)
        self.kind = kind
        self.bags = np.empty(0, dtype=object)
        self.key = utf16_key if pa.types.is_string(arg_types[0]) else None

    def grow(self, n: int) -> None:
        super().grow(n)
        self.bags = _grow(self.bags, n, None)

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        slots, signs, a = _drop_nulls(slots, signs, args)
        if len(slots) == 0:
            return
        t = pa.table({"s": pa.array(slots, type=pa.int64()), "v": a, "n": pa.array(signs, type=pa.int64())})
        part = t.group_by(["s", "v"], use_threads=False).aggregate([("n", "sum")])
        for s, v, n in zip(  # loop over distinct (key, value) pairs of the batch
            part.column("s").to_pylist(), part.column("v").to_pylist(), part.column("n_sum").to_pylist(), strict=True
        ):
            bag = self.bags[s]
            if bag is None:
                bag = self.bags[s] = {}
            c = bag.get(v, 0) + n
            if c > 0:
                bag[v] = c
            else:
                bag.pop(v, None)
        pick = min if self.kind == "min" else max
        for s in sorted_distinct(slots).tolist():  # loop over touched keys
            bag = self.bags[s]
            self.values[s] = pick(bag, key=self.key) if bag else None

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.bags[slots] = None


class ListAggAcc(_ObjectAcc):
    """LISTAGG(x [, sep]): values in arrival order, NULLs skipped."""

    retractable = False

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, separator: str) -> None:
        super().__init__(arg_types, result_type)
        self.sep = separator

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, "listagg")
        slots, signs, a = _drop_nulls(slots, signs, args, args[:1])
        if len(slots) == 0:
            return
        if not pa.types.is_string(a.type):
            a = a.cast(pa.string())
        part = _per_slot(slots, a, "list")
        touched = part.column("s").to_numpy()
        new = pc.binary_join(part.column("v_list").combine_chunks(), self.sep)
        old = pa.array(self.values[touched].tolist(), type=pa.string())
        merged = pc.binary_join_element_wise(old, new, self.sep, null_handling="skip")
        self._store(touched, merged)


class FirstLastAcc(_ObjectAcc):
    """FIRST_VALUE / LAST_VALUE: the first / last non-NULL value in arrival order."""

    retractable = False

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, kind: str) -> None:
        super().__init__(arg_types, result_type)
        self.kind = kind

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, self.kind)
        slots, signs, a = _drop_nulls(slots, signs, args, args[:1])
        if len(slots) == 0:
            return
        idx = pa.array(np.arange(len(slots), dtype=np.int64))
        part = _per_slot(slots, idx, "min" if self.kind == "first_value" else "max")
        touched = part.column("s").to_numpy()
        rows = part.column(part.column_names[1]).combine_chunks()
        vals = a.take(rows)
        if self.kind == "first_value":
            empty = np.array([v is None for v in self.values[touched].tolist()], dtype=bool)
            touched, vals = touched[empty], vals.filter(pa.array(empty))
        self._store(touched, vals)


class DistinctAcc(Accumulator):
    """The DISTINCT flag: counts each (slot, value) and forwards a value to the inner
    accumulator only when its count goes 0 -> positive (+1) or positive -> 0 (-1).

    While the argument is one integer-like column of a small value range, the counts live
    in a flat array indexed by (slot, value) (`DensePairs`): a batch costs a gather and a
    scatter-add over its rows. Otherwise a batch costs one Arrow hash aggregation (its
    distinct pairs and their summed signs) and one vectorized look-up of those pairs: no
    Python per pair. The pairs are kept packed in sorted uint64 runs while the argument is
    one integer-like column whose values fit the packing (runtime/aggregates/distinct_pairs.py),
    else in a hash index keyed by the slot and the argument columns (`HashMapStateBackend`'s),
    with a count per pair. The stores are tried in that order and only ever left for a
    later one (a value or key out of range moves every pair on).
    Checkpoints keep the pairs as `seen`, a dict (slot, *values) -> count (the format
    rescaling re-keys by slot); a restored `seen` is loaded on first use."""

    def __init__(self, inner: Accumulator) -> None:
        super().__init__(inner.arg_types, inner.result_type)
        self.inner = inner
        self.retractable = inner.retractable
        self.seen: dict[tuple[Any, ...], int] | None = {}

    def grow(self, n: int) -> None:
        self.inner.grow(n)

    # ------------------------------------------------------------------ the pair store
    def _store(self) -> None:
        """Set up the pair store on first use (loading a restored `seen`)."""
        if getattr(self, "_ready", False):
            return
        self._ready = True
        packable = len(self.arg_types) == 1 and integer_values(pa.array([], self.arg_types[0])) is not None
        self._packed: PackedPairs | None = PackedPairs() if packable else None
        self._dense: DensePairs | None = None
        self._dense_ok = packable and not self.seen  # until the first batch decides
        self._pairs: HashMapStateBackend | None = None
        self._counts = np.zeros(0, dtype=np.int64)  # per pair slot of `_pairs`
        self._owner = np.zeros(0, dtype=np.int64)  # the key slot of each pair slot
        seen, self.seen = self.seen, None
        if seen:
            keys = list(seen)
            slots = pa.array([k[0] for k in keys], pa.int64())
            values = [pa.array([k[i + 1] for k in keys], t) for i, t in enumerate(self.arg_types)]
            self._add(slots, values, np.array([seen[k] for k in keys], dtype=np.int64))

    def _to_index(self) -> HashMapStateBackend:
        """The general hash index, taking over the packed pairs if there were any."""
        if self._pairs is None:
            self._pairs = HashMapStateBackend()
            packed, self._packed = self._packed, None
            if packed is not None:
                slots, values, counts = packed.items()
                if len(slots):
                    self._add(pa.array(slots), [values_array(values, self.arg_types[0])], counts)
        return self._pairs

    def _dense_update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> bool:
        """Fold the batch through the dense store; False when it does not fit (the pairs
        were moved on to the runs, the caller folds it the general way)."""
        ints = integer_values(args[0])
        if self._dense is None:
            self._dense_ok = False  # decided by this first batch, for good
            self._dense = None if ints is None else DensePairs.plan(slots, ints)
            if self._dense is None:
                return False
        if ints is None or not self._dense.fits(slots, ints):
            self._leave_dense()
            return False
        got = self._dense.add_rows(self._dense.cells(slots, ints), signs)
        if got is None:
            self._leave_dense()
            return False
        rows, changed = got
        if len(rows):
            self.inner.update(slots[rows], changed, [args[0].take(pa.array(rows, type=pa.int64()))])
        return True

    def _leave_dense(self) -> None:
        """Move the dense store's pairs to the runs (or the hash index)."""
        dense, self._dense = self._dense, None
        if dense is not None:
            slots, ints, counts = dense.items()
            if len(slots):
                self._add(pa.array(slots), [values_array(ints, self.arg_types[0])], counts)

    def _add(self, slots: pa.Array, values: list[pa.Array], delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add `delta` to the counts of the distinct pairs (slots, values): their old and
        new counts. A pair whose count drops to 0 is forgotten."""
        s = slots.to_numpy()
        if self._packed is not None:
            ints = integer_values(values[0])
            if ints is not None and self._packed.fits(s, ints):
                return self._packed.add(s, ints, delta)
        pairs = self._to_index()
        pid = pairs.lookup([slots, *values], len(delta))
        self._counts = _grow(self._counts, pairs.capacity, 0)
        self._owner = _grow(self._owner, pairs.capacity, -1)
        old = self._counts[pid]
        new = old + delta
        self._counts[pid] = np.maximum(new, 0)
        self._owner[pid] = s
        gone = new <= 0
        if gone.any():
            pairs.remove(pid[gone])
        return old, new

    # ------------------------------------------------------------------ accumulator
    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        m = _valid_mask(args)
        if m is not None:
            mm = pa.array(m)
            slots, signs, args = slots[m], signs[m], [a.filter(mm) for a in args]
        if len(slots) == 0:
            return
        self._store()
        if (self._dense is not None or self._dense_ok) and self._dense_update(slots, signs, args):
            return
        cols = {"s": pa.array(slots, type=pa.int64()), "n": pa.array(signs, type=pa.int64())}
        names = [f"a{i}" for i in range(len(args))]
        cols.update(zip(names, args, strict=True))
        part = pa.table(cols).group_by(["s", *names], use_threads=False).aggregate([("n", "sum")])
        ps = part.column("s").combine_chunks()
        values = [part.column(n).combine_chunks() for n in names]
        old, new = self._add(ps, values, part.column("n_sum").to_numpy())
        rising = (old <= 0) & (new > 0)
        falling = (new <= 0) & (old > 0)
        changed = np.flatnonzero(rising | falling)
        if len(changed) == 0:
            return
        take = pa.array(changed, type=pa.int64())
        self.inner.update(
            ps.to_numpy()[changed],
            np.where(rising[changed], 1, -1).astype(np.int64),
            [v.take(take) for v in values],
        )

    def results(self, slots: np.ndarray) -> pa.Array:
        return self.inner.results(slots)

    def reset(self, slots: np.ndarray) -> None:
        self.inner.reset(slots)
        if len(slots) == 0:
            return
        self._store()
        if self._dense is not None:
            self._dense.drop_slots(slots)
        if self._packed is not None:
            self._packed.drop_slots(slots)
        if self._pairs is not None:
            live = self._pairs.live_slots()
            drop = live[np.isin(self._owner[live], np.asarray(slots, dtype=np.int64))]
            if len(drop):
                self._counts[drop] = 0
                self._pairs.remove(drop)

    def __getstate__(self) -> dict[str, Any]:
        """The checkpointed fields: the pairs become `seen` again (see the class docstring)."""
        store = ("_ready", "_dense", "_dense_ok", "_packed", "_pairs", "_counts", "_owner")
        state = {k: v for k, v in vars(self).items() if k not in store}
        if not getattr(self, "_ready", False):
            return state
        seen: dict[tuple[Any, ...], int] = {}
        if self._dense is not None:
            slots, ints, counts = self._dense.items()
            values = values_array(ints, self.arg_types[0]).to_pylist()  # checkpoint time only
            seen.update(zip(zip(slots.tolist(), values, strict=True), counts.tolist(), strict=True))
        if self._packed is not None:
            slots, ints, counts = self._packed.items()
            values = values_array(ints, self.arg_types[0]).to_pylist()  # checkpoint time only
            seen.update(zip(zip(slots.tolist(), values, strict=True), counts.tolist(), strict=True))
        if self._pairs is not None:
            live = np.sort(self._pairs.live_slots())
            keys = self._pairs.key_arrays(live, [pa.int64(), *self.arg_types])
            tuples = zip(*(k.to_pylist() for k in keys), strict=True)
            seen.update(zip(tuples, self._counts[live].tolist(), strict=True))
        state["seen"] = seen
        return state


__all__ = [
    "Accumulator",
    "CountAcc",
    "DistinctAcc",
    "FirstLastAcc",
    "ListAggAcc",
    "MinMaxAcc",
    "RetractMinMaxAcc",
    "SumAcc",
    "utf16_key",
]
