"""Further accumulators: the STDDEV / VARIANCE family, COLLECT (MULTISET), and the
retractable variants of LISTAGG and FIRST_VALUE / LAST_VALUE used when the input is a
changelog (Flink's *WithRetractAggFunction).

Same contract as `accumulators.py`: `update(slots, signs, args)` folds a whole batch,
state lives in arrays indexed by slot.
"""

from __future__ import annotations

import decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.accumulators import Accumulator, _drop_nulls, _grow, _ObjectAcc
from runtime.aggregates.more import create_more_accumulator
from runtime.distinct import sorted_distinct_inverse
from runtime.functions._common import java_int_from_double
from runtime.plan_params import AggCallParams
from runtime.types import DataType


# ---------------------------------------------------------------------- variance
class VarianceAcc(Accumulator):
    """STDDEV_POP / STDDEV_SAMP (STDDEV) / VAR_POP / VAR_SAMP (VARIANCE), retractable.

    Per slot: count, mean and M2 (sum of squared deviations) in float64. A batch is
    reduced per slot with a two-pass mean/M2 (numpy bincount), then merged into the stored
    statistics with Chan et al.'s parallel formula; retractions are merged with the
    inverse formula. On a single batch this is the exact two-pass result, which matches
    Flink's printed values (e.g. VAR_POP(1, 2, 4) = 1.5555555555555554). The result is
    cast to the call's type: INT truncates and saturates (Flink keeps the argument type), DECIMAL
    rounds half-up to the result scale."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, kind: str) -> None:
        super().__init__(arg_types, result_type)
        kind = {"stddev": "stddev_samp", "variance": "var_samp"}.get(kind, kind)
        self.sqrt = kind.startswith("stddev")
        self.sample = kind.endswith("samp")
        self.n = np.zeros(0, dtype=np.int64)
        self.mean = np.zeros(0, dtype=np.float64)
        self.m2 = np.zeros(0, dtype=np.float64)

    def grow(self, n: int) -> None:
        self.n = _grow(self.n, n, 0)
        self.mean = _grow(self.mean, n, 0.0)
        self.m2 = _grow(self.m2, n, 0.0)

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        slots, signs, a = _drop_nulls(slots, signs, args, args[:1])
        if len(slots) == 0:
            return
        x = pc.cast(a, pa.float64()).to_numpy(zero_copy_only=False)
        for sign in (1, -1):  # inserts first, then retractions
            sel = signs == sign
            if sel.any():
                self._merge(slots[sel], x[sel], sign)

    def _merge(self, slots: np.ndarray, x: np.ndarray, sign: int) -> None:
        uniq, inv = sorted_distinct_inverse(slots)
        nb = np.bincount(inv).astype(np.float64)
        mb = np.bincount(inv, weights=x) / nb
        # Deviations beyond sqrt(DBL_MAX) (~1.3e154) square to inf: the variance is then
        # Infinity, which is Flink's answer too (VAR_SAMP/VARIANCE of 1.0E308 and 1.0E-10
        # print Infinity: conformance aggregate_agg_06a/06e). Expected, so not warned about.
        with np.errstate(over="ignore"):
            m2b = np.bincount(inv, weights=(x - mb[inv]) ** 2)
        na = self.n[uniq].astype(np.float64)
        ma, m2a = self.mean[uniq], self.m2[uniq]
        if sign > 0:
            n = na + nb
            delta = mb - ma
            mean = np.where(na == 0, mb, ma + delta * nb / n)
            # as above, a huge spread merges to inf; and where na == 0 (a new group) the
            # merged term is inf * 0 = NaN in lanes np.where discards (it takes m2b there)
            with np.errstate(over="ignore", invalid="ignore"):
                m2 = np.where(na == 0, m2b, m2a + m2b + delta * delta * na * nb / n)
        else:
            n = na - nb
            safe = np.where(n > 0, n, 1.0)
            mean = np.where(n > 0, (na * ma - nb * mb) / safe, 0.0)
            delta = mb - mean
            with np.errstate(over="ignore"):  # as above: a huge spread merges to inf
                m2 = np.where(n > 0, m2a - m2b - delta * delta * n * nb / np.where(na > 0, na, 1.0), 0.0)
            m2 = np.maximum(m2, 0.0)
        self.n[uniq] = n.astype(np.int64)
        self.mean[uniq] = mean
        self.m2[uniq] = m2

    def results(self, slots: np.ndarray) -> pa.Array:
        n = self.n[slots].astype(np.float64)
        m2 = self.m2[slots]
        denom = n - 1 if self.sample else n
        empty = denom <= 0
        with np.errstate(invalid="ignore", divide="ignore"):
            v = np.where(empty, 0.0, m2 / np.where(empty, 1.0, denom))
            if self.sqrt:
                v = np.sqrt(v)
        rt = self.result_type
        if rt.name == "DECIMAL":
            quantum = decimal.Decimal(1).scaleb(-(rt.scale or 0))
            vals = [
                None if e else decimal.Decimal(repr(float(f))).quantize(quantum, rounding=decimal.ROUND_HALF_UP)
                for f, e in zip(v.tolist(), empty.tolist(), strict=True)
            ]
            return pa.array(vals, type=self.arrow_type)
        if rt.is_integer:  # Java's (int) of the double: truncates and saturates
            bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[rt.name]
            ints = java_int_from_double(v, bits)
            return pa.array(ints, mask=empty).cast(self.arrow_type, safe=False)
        return pa.array(v, mask=empty).cast(self.arrow_type)

    def reset(self, slots: np.ndarray) -> None:
        self.n[slots] = 0
        self.mean[slots] = 0.0
        self.m2[slots] = 0.0


# ---------------------------------------------------------------------- COLLECT
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    x &= _M32
    return ((x << r) | (x >> (32 - r))) & _M32


def _mix_k1(k: int) -> int:
    k = (k * 0xCC9E2D51) & _M32
    return (_rotl(k, 15) * 0x1B873593) & _M32


def _mix_h1(h: int, k: int) -> int:
    h = _rotl(h ^ k, 13)
    return (h * 5 + 0xE6546B64) & _M32


def _fmix(h: int, length: int) -> int:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


def flink_string_hash(s: str) -> int:
    """BinaryStringData.hashCode: Flink's MurmurHashUtil.hashBytes (seed 42) of UTF-8."""
    b = s.encode("utf-8")
    h = 42
    aligned = len(b) - len(b) % 4
    for i in range(0, aligned, 4):
        h = _mix_h1(h, _mix_k1(int.from_bytes(b[i : i + 4], "little")))
    for i in range(aligned, len(b)):
        v = b[i] - 256 if b[i] > 127 else b[i]
        h = _mix_h1(h, _mix_k1(v & _M32))
    return _fmix(h, len(b))


def java_hash(v: Any) -> int | None:
    """hashCode() of the Java object Flink keeps for a value (None: unknown)."""
    if isinstance(v, bool):
        return 1231 if v else 1237
    if isinstance(v, int):
        if -(2**31) <= v < 2**31:
            return v & _M32
        u = v & 0xFFFFFFFFFFFFFFFF
        return (u ^ (u >> 32)) & _M32
    if isinstance(v, str):
        return flink_string_hash(v)
    if isinstance(v, float):
        import struct

        u = struct.unpack(">q", struct.pack(">d", v))[0] & 0xFFFFFFFFFFFFFFFF
        return (u ^ (u >> 32)) & _M32
    return None


def java_hashmap_order(keys: list[Any]) -> list[Any]:
    """Keys in java.util.HashMap iteration order (bucket = spread hash & (capacity - 1),
    capacity the power of two >= 16 that holds len(keys) at load factor 0.75); keys in the
    same bucket keep insertion order. Unknown hashes keep insertion order at the end."""
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2
    ranked = []
    for i, k in enumerate(keys):
        h = java_hash(k)
        bucket = cap if h is None else (h ^ (h >> 16)) & (cap - 1)
        ranked.append((bucket, i, k))
    ranked.sort(key=lambda t: (t[0], t[1]))
    return [k for _, _, k in ranked]


class CollectAcc(_ObjectAcc):
    """COLLECT(x): a MULTISET {value: count} per slot, NULLs skipped, retractable. The
    batch is reduced to net counts per distinct (slot, value) first; dict updates loop over
    those distinct pairs. The result (Arrow: a list with each value repeated `count`
    times) lists values in Java HashMap order, as Flink's GenericMapData prints them."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType) -> None:
        super().__init__(arg_types, result_type)

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        slots, signs, a = _drop_nulls(slots, signs, args, args[:1])
        if len(slots) == 0:
            return
        t = pa.table({"s": pa.array(slots, type=pa.int64()), "v": a, "n": pa.array(signs, type=pa.int64())})
        part = t.group_by(["s", "v"], use_threads=False).aggregate([("n", "sum")])
        for s, v, n in zip(  # loop over distinct (key, value) pairs of the batch
            part.column("s").to_pylist(), part.column("v").to_pylist(), part.column("n_sum").to_pylist(), strict=True
        ):
            bag = self.values[s]
            if bag is None:
                bag = self.values[s] = {}
            c = bag.get(v, 0) + n
            if c != 0:
                bag[v] = c
            else:
                bag.pop(v, None)

    def results(self, slots: np.ndarray) -> pa.Array:
        out = []
        for bag in self.values[slots].tolist():  # loop over result keys
            items: list[Any] = []
            if bag:
                for k in java_hashmap_order(list(bag)):
                    items.extend([k] * max(bag[k], 0))
            out.append(items)
        return pa.array(out, type=self.arrow_type)


# ---------------------------------------------------------------------- ordered bags
class OrderedBagAcc(_ObjectAcc):
    """Values per slot as a Python list in arrival order (Flink's ListView): inserts are
    appended (grouped per slot by an Arrow hash aggregation, so the Python work is per
    touched slot); a retraction removes the first equal value (List.remove), looping over
    the retracted rows only. Base of the retractable LISTAGG / FIRST_VALUE / LAST_VALUE."""

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        slots, signs, a = _drop_nulls(slots, signs, args, args[:1])
        if len(slots) == 0:
            return
        ins = signs > 0
        if ins.any():
            part = pa.table({"s": pa.array(slots[ins], type=pa.int64()), "v": a.filter(pa.array(ins))})
            grouped = part.group_by("s", use_threads=False).aggregate([("v", "list")])
            for s, vals in zip(grouped.column("s").to_pylist(), grouped.column("v_list").to_pylist(), strict=True):
                cur = self.values[s]
                if cur is None:
                    self.values[s] = list(vals)
                else:
                    cur.extend(vals)
        if not ins.all():
            rs = slots[~ins].tolist()
            rv = a.filter(pa.array(~ins)).to_pylist()
            for s, v in zip(rs, rv, strict=True):  # loop over retracted rows
                cur = self.values[s]
                if cur is not None and v in cur:
                    cur.remove(v)

    def _lists(self, slots: np.ndarray) -> list[list[Any] | None]:
        return list(self.values[slots].tolist())


class RetractListAggAcc(OrderedBagAcc):
    """LISTAGG over a changelog (ListAggWithRetractAggFunction / ListAggWs...)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, separator: str) -> None:
        super().__init__(arg_types, result_type)
        self.sep = separator
        self.to_str = not pa.types.is_string(arg_types[0]) if arg_types else False

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        if self.to_str and args:
            args = [args[0].cast(pa.string()), *args[1:]]
        super().update(slots, signs, args)

    def results(self, slots: np.ndarray) -> pa.Array:
        lists = self._lists(slots)
        offsets, flat, valid = [0], [], []
        for lst in lists:
            items = lst or []
            flat.extend(items)
            offsets.append(len(flat))
            valid.append(bool(items))
        la = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(flat, pa.string()))
        joined = pc.binary_join(la, self.sep)
        return pc.if_else(pa.array(valid), joined, pa.scalar(None, pa.string())).cast(self.arrow_type)


class RetractFirstLastAcc(OrderedBagAcc):
    """FIRST_VALUE / LAST_VALUE over a changelog: the first / last remaining value in
    arrival order (Flink's FirstValueWithRetractAggFunction orders by arrival)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, kind: str) -> None:
        super().__init__(arg_types, result_type)
        self.first = kind == "first_value"

    def results(self, slots: np.ndarray) -> pa.Array:
        out = [(lst[0] if self.first else lst[-1]) if lst else None for lst in self._lists(slots)]
        return pa.array(out, type=self.arrow_type)


def create_extra_accumulator(
    name: str, call: AggCallParams, arg_types: list[pa.DataType], retract: bool
) -> Accumulator | None:
    """The accumulator for the aggregates of this module (None: not one of them)."""
    rtype: DataType = call.type
    params = call.params
    if name in ("stddev_pop", "stddev_samp", "stddev", "var_pop", "var_samp", "variance"):
        return VarianceAcc(arg_types, rtype, name)
    if name == "collect":
        return CollectAcc(arg_types, rtype)

    more = create_more_accumulator(name, call, arg_types)
    if more is not None:
        return more
    if not retract:
        return None
    if name == "listagg":
        sep = params.get("separator", ",")
        return RetractListAggAcc(arg_types, rtype, "," if sep is None else str(sep))
    if name in ("first_value", "last_value"):
        return RetractFirstLastAcc(arg_types, rtype, name)
    return None


__all__ = [
    "CollectAcc",
    "OrderedBagAcc",
    "RetractFirstLastAcc",
    "RetractListAggAcc",
    "VarianceAcc",
    "create_extra_accumulator",
    "flink_string_hash",
    "java_hashmap_order",
]
