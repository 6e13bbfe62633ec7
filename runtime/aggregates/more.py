"""ARRAY_AGG and the aggregates of Flink 2.3's bitmap and percentile families: BITMAP_BUILD_AGG,
BITMAP_AND_AGG, BITMAP_OR_AGG, BITMAP_XOR_AGG (and their *_CARDINALITY_AGG forms, which
return the set's size as BIGINT), and PERCENTILE.

Their result types live here too (`infer_more_aggregate`), next to the accumulators, so the
binder and the operators agree. Same contract as `accumulators.py`: `update(slots, signs,
args)` folds a batch; the batch is reduced with numpy over all rows, then merged into the
stored per-key state once per touched key. None of these retract (as Flink's, which have no
retract method): a changelog input fails the job with a clear error.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.accumulators import Accumulator, _drop_nulls, _grow
from runtime.distinct import sorted_distinct, sorted_distinct_first
from runtime.errors import EvaluationError
from runtime.functions.registry import FunctionTypeError
from runtime.plan_params import AggCallParams
from runtime.types import BIGINT, BOOLEAN, DOUBLE, FLOAT, STRING, DataType

BITMAP_SET_AGGS = {
    "bitmap_and_agg": "and",
    "bitmap_or_agg": "or",
    "bitmap_xor_agg": "xor",
    "bitmap_and_cardinality_agg": "and",
    "bitmap_or_cardinality_agg": "or",
    "bitmap_xor_cardinality_agg": "xor",
}
BITMAP_BUILD_AGGS = ("bitmap_build_agg", "bitmap_build_cardinality_agg")
MORE_AGGREGATES = (*BITMAP_SET_AGGS, *BITMAP_BUILD_AGGS, "percentile", "array_agg", "json_arrayagg", "json_objectagg")


def infer_more_aggregate(name: str, arg_types: list[DataType]) -> DataType | None:
    """Result type of one of this module's aggregates (None: not one of them)."""
    if name not in MORE_AGGREGATES:
        return None
    shown = ", ".join(f"<{t}>" for t in arg_types)
    bad = FunctionTypeError(f"Invalid input arguments. Invalid function call:\n{name.upper()}({shown})")
    cardinality = name.endswith("_cardinality_agg")
    if name == "json_arrayagg" and len(arg_types) == 1:
        return STRING(False)
    if name == "json_objectagg":
        if len(arg_types) != 2 or not arg_types[0].is_string:
            raise bad
        return STRING(False)
    if name == "array_agg":
        if len(arg_types) != 1:
            raise bad
        return DataType("ARRAY", True, children=(arg_types[0].with_nullable(True).as_time_attr(None),))
    if name in BITMAP_SET_AGGS:
        if len(arg_types) != 1 or arg_types[0].name != "BITMAP":
            raise bad
        return BIGINT() if cardinality else DataType("BITMAP", True)
    if name in BITMAP_BUILD_AGGS:
        if len(arg_types) != 1 or arg_types[0].name not in ("INT", "SMALLINT", "TINYINT"):
            raise bad
        return BIGINT() if cardinality else DataType("BITMAP", True)
    # PERCENTILE(value, percentage | ARRAY of percentages [, frequency])
    if not 2 <= len(arg_types) <= 3 or not arg_types[0].is_numeric:
        raise bad
    p = arg_types[1]
    if len(arg_types) == 3 and not arg_types[2].is_integer:
        raise bad
    if p.name == "ARRAY" and p.children[0].is_numeric:
        return DataType("ARRAY", True, children=(DOUBLE(),))
    if not p.is_numeric:
        raise bad
    return DOUBLE()


class _SetAcc(Accumulator):
    """Per slot: the sorted distinct uint32 values (None: no non-NULL input yet)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, name: str) -> None:
        super().__init__(arg_types, result_type)
        self.name = name
        self.cardinality = name.endswith("_cardinality_agg")
        self.values = np.empty(0, dtype=object)

    def grow(self, n: int) -> None:
        self.values = _grow(self.values, n, None)

    def reset(self, slots: np.ndarray) -> None:
        self.values[slots] = None

    def results(self, slots: np.ndarray) -> pa.Array:
        sets = self.values[slots].tolist()
        if self.cardinality:
            return pa.array([None if s is None else len(s) for s in sets], pa.int64())
        return pa.array([None if s is None else s for s in sets], pa.list_(pa.uint32()))

    def _merge(self, slots: np.ndarray, keys: np.ndarray, combine: Any) -> None:
        """Merge the batch's per-slot sets (`slot << 32 | value` keys, sorted) into the
        state: one numpy set operation per touched slot."""
        key_slots = keys >> 32
        for s in sorted_distinct(slots):  # loop over the keys this batch touches
            lo, hi = np.searchsorted(key_slots, [s, s + 1])
            part = (keys[lo:hi] & 0xFFFFFFFF).astype(np.uint32)
            old = self.values[s]
            self.values[s] = part if old is None else combine(old, part).astype(np.uint32)


class BitmapSetAcc(_SetAcc):
    """BITMAP_AND_AGG / OR / XOR (and *_CARDINALITY_AGG) over BITMAP values."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, name: str) -> None:
        super().__init__(arg_types, result_type, name)
        self.op = BITMAP_SET_AGGS[name]

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, self.name)
        slots, _, a = _drop_nulls(slots, signs, args)
        if len(slots) == 0:
            return
        values = pc.list_flatten(a).to_numpy(zero_copy_only=False).astype(np.int64)
        rows = pc.list_parent_indices(a).to_numpy(zero_copy_only=False).astype(np.int64)
        keys = (slots[rows] << 32) | values
        uniq, counts = np.unique(keys, return_counts=True)
        if self.op == "or":
            batch = uniq
        elif self.op == "xor":
            batch = uniq[counts % 2 == 1]
        else:  # and: in every row of the slot
            rows_per_slot = np.bincount(slots, minlength=int(slots.max()) + 1)
            batch = uniq[counts == rows_per_slot[uniq >> 32]]
        combine = {"or": np.union1d, "xor": np.setxor1d, "and": np.intersect1d}[self.op]
        self._merge(slots, batch, combine)


class BitmapBuildAcc(_SetAcc):
    """BITMAP_BUILD_AGG / BITMAP_BUILD_CARDINALITY_AGG over INT values (read as unsigned)."""

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, self.name)
        slots, _, a = _drop_nulls(slots, signs, args)
        if len(slots) == 0:
            return
        v = pc.cast(a, pa.int32()).to_numpy(zero_copy_only=False).view(np.uint32).astype(np.int64)
        self._merge(slots, sorted_distinct((slots << 32) | v), np.union1d)


class PercentileAcc(Accumulator):
    """PERCENTILE(x, p [, frequency]): the p-th percentile of the values (each counted
    `frequency` times), interpolated linearly between the two nearest ranks, as a DOUBLE
    (an ARRAY<DOUBLE> for an array of percentages). p must be in [0, 1]."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType) -> None:
        super().__init__(arg_types, result_type)
        self.parts = np.empty(0, dtype=object)  # per slot: list of (values, counts) arrays
        self.percentages: list[float] | None = None
        self.is_array = result_type.name == "ARRAY"

    def grow(self, n: int) -> None:
        self.parts = _grow(self.parts, n, None)

    def reset(self, slots: np.ndarray) -> None:
        self.parts[slots] = None

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, "percentile")
        if self.percentages is None and len(args[1]):
            self._set_percentages(args[1])
        checked = [args[0]] + ([args[2]] if len(args) > 2 else [])
        m = None
        for c in checked:
            if c.null_count:
                mm = pc.is_valid(c).to_numpy(zero_copy_only=False)
                m = mm if m is None else m & mm
        x = pc.cast(args[0], pa.float64())
        freq = pc.cast(args[2], pa.int64()) if len(args) > 2 else None
        if m is not None:
            keep = pa.array(m)
            slots, x = slots[m], x.filter(keep)
            freq = freq.filter(keep) if freq is not None else None
        if len(slots) == 0:
            return
        xv = x.to_numpy(zero_copy_only=False)
        fv = np.ones(len(xv), dtype=np.int64) if freq is None else freq.to_numpy(zero_copy_only=False)
        fv = np.maximum(fv, 0)  # Flink skips rows whose frequency is not positive
        order = np.argsort(slots, kind="stable")
        slots, xv, fv = slots[order], xv[order], fv[order]
        uniq, starts = sorted_distinct_first(slots)
        ends = np.append(starts[1:], len(slots))
        for s, lo, hi in zip(uniq, starts, ends, strict=True):  # loop over touched keys
            lst = self.parts[s]
            if lst is None:
                lst = self.parts[s] = []
            lst.append((xv[lo:hi], fv[lo:hi]))

    def _set_percentages(self, col: pa.Array) -> None:
        first = col[0].as_py()
        ps = [float(v) for v in first] if isinstance(first, list) else [float(first)]
        if any(p is None or not 0.0 <= p <= 1.0 for p in ps):
            raise EvaluationError(f"PERCENTILE: the percentage must be between 0.0 and 1.0, got {first}")
        self.percentages = ps

    def results(self, slots: np.ndarray) -> pa.Array:
        out: list[Any] = []
        for lst in self.parts[slots].tolist():  # one sort per result key
            if not lst:
                out.append(None)
                continue
            xs = np.concatenate([p[0] for p in lst])
            fs = np.concatenate([p[1] for p in lst])
            values, inverse = np.unique(xs, return_inverse=True)
            counts = np.bincount(inverse, weights=fs).astype(np.int64)
            keep = counts > 0
            values, cum = values[keep], np.cumsum(counts[keep])
            if len(cum) == 0:
                out.append(None)
                continue
            vals = [self._at(values, cum, int(cum[-1]), p) for p in self.percentages or [0.5]]
            out.append(vals if self.is_array else vals[0])
        return pa.array(out, type=self.arrow_type)

    @staticmethod
    def _at(values: np.ndarray, cum: np.ndarray, total: int, p: float) -> float:
        """Flink's rule: the 1-based rank position p * (total - 1) + 1, interpolated
        between the distinct values around it as (higher - pos) * v + (pos - lower) * v'."""
        pos = p * (total - 1) + 1
        lower, higher = int(np.floor(pos)), int(np.ceil(pos))
        j = int(np.searchsorted(cum, lower))
        if cum[j] >= higher or j == len(values) - 1:
            return float(values[j])
        return (higher - pos) * float(values[j]) + (pos - lower) * float(values[j + 1])


class ArrayAggAcc(Accumulator):
    """ARRAY_AGG(x [IGNORE NULLS]): the values in arrival order, NULLs included unless
    ignored; NULL when the key has no (kept) value. The batch is grouped per key by one
    Arrow hash aggregation; Python work is per touched key."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, ignore_nulls: bool) -> None:
        super().__init__(arg_types, result_type)
        self.ignore_nulls = ignore_nulls
        self.values = np.empty(0, dtype=object)

    def grow(self, n: int) -> None:
        self.values = _grow(self.values, n, None)

    def reset(self, slots: np.ndarray) -> None:
        self.values[slots] = None

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        self._no_retraction(signs, "array_agg")
        a = args[0]
        if self.ignore_nulls and a.null_count:
            keep = pc.is_valid(a)
            slots, a = slots[keep.to_numpy(zero_copy_only=False)], a.filter(keep)
        if len(slots) == 0:
            return
        part = pa.table({"s": pa.array(slots, type=pa.int64()), "v": a})
        grouped = part.group_by("s", use_threads=False).aggregate([("v", "list", pc.CountOptions(mode="all"))])
        for s, vals in zip(grouped.column("s").to_pylist(), grouped.column("v_list").to_pylist(), strict=True):
            cur = self.values[s]
            if cur is None:
                self.values[s] = list(vals)
            else:
                cur.extend(vals)

    def results(self, slots: np.ndarray) -> pa.Array:
        return pa.array([v if v else None for v in self.values[slots].tolist()], type=self.arrow_type)


class JsonAggAcc(Accumulator):
    """JSON_ARRAYAGG (values in arrival order) and JSON_OBJECTAGG (key -> value, keys in
    order as JSON_OBJECT prints them). Values are rendered to JSON text per batch,
    vectorized (json_text); `on_null` NULL writes `null`, ABSENT drops the entry. An empty
    group gives `[]` / `{}`. A key JSON_OBJECTAGG already holds fails the job, as Flink's
    JsonObjectAggFunction does; an entry ABSENT ON NULL dropped is not held, so its key may
    come again (and a NULL value for a held key fails too: Flink checks the key first)."""

    def __init__(self, arg_types: list[pa.DataType], result_type: DataType, name: str, call: AggCallParams) -> None:
        super().__init__(arg_types, result_type)
        self.object = name == "json_objectagg"
        self.absent = call.params.get("on_null") == "ABSENT"
        # The value's SQL type, which the planner records: a MAP, ARRAY or ROW value is
        # written as JSON by its type (an older plan without it: by the Arrow type).
        recorded = call.params.get("value_type")
        self.value_type = DataType.from_json(json.loads(recorded)) if recorded else None
        self.values = np.empty(0, dtype=object)

    def grow(self, n: int) -> None:
        self.values = _grow(self.values, n, None)

    def reset(self, slots: np.ndarray) -> None:
        self.values[slots] = None

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        from runtime.functions.json_functions import json_text

        self._no_retraction(signs, "json_objectagg" if self.object else "json_arrayagg")
        v = args[-1]
        text = pc.fill_null(json_text(v, getattr(self, "value_type", None) or _arrow_to_type(v.type)), "null")
        keep = np.ones(len(v), dtype=bool)
        if self.absent:
            keep &= pc.is_valid(v).to_numpy(zero_copy_only=False)
        if self.object:
            k = args[0]
            if k.null_count:
                raise EvaluationError("JSON_OBJECTAGG: a key is NULL (keys must not be NULL)")
        if self.object:
            # every row counts for the duplicate-key check, so none is filtered out here
            cols = {"s": pa.array(slots, type=pa.int64()), "t": text, "k": k, "keep": pa.array(keep)}
            aggs = [("t", "list"), ("k", "list"), ("keep", "list")]
        else:
            sel = pa.array(keep)
            cols = {"s": pa.array(slots, type=pa.int64()).filter(sel), "t": text.filter(sel)}
            aggs = [("t", "list")]
        grouped = pa.table(cols).group_by("s", use_threads=False).aggregate(aggs)
        for s in sorted_distinct(slots):  # every touched key has a value now, even if all were absent
            if self.values[s] is None:
                self.values[s] = {} if self.object else []
        if self.object:
            for s, texts, keys, kept in zip(  # loop over touched keys (a JSON object per key)
                grouped.column("s").to_pylist(),
                grouped.column("t_list").to_pylist(),
                grouped.column("k_list").to_pylist(),
                grouped.column("keep_list").to_pylist(),
                strict=True,
            ):
                self._put(self.values[s], keys, texts, kept)
            return
        for s, texts in zip(grouped.column("s").to_pylist(), grouped.column("t_list").to_pylist(), strict=True):
            self.values[s].extend(texts)

    @staticmethod
    def _put(obj: dict[str, str], keys: list[str], texts: list[str], kept: list[bool]) -> None:
        """Add one group's entries in arrival order; a key already held fails."""
        if len(set(keys)) == len(keys) and obj.keys().isdisjoint(keys):
            obj.update((key, t) for key, t, k in zip(keys, texts, kept, strict=True) if k)
            return
        for key, t, k in zip(keys, texts, kept, strict=True):
            if key in obj:
                raise EvaluationError(
                    f"Key '{key}' is already present. Duplicate keys are not allowed in JSON_OBJECTAGG. "
                    "Please ensure that keys are unique."
                )
            if k:
                obj[key] = t

    def results(self, slots: np.ndarray) -> pa.Array:
        import json as _json

        out = []
        for cur in self.values[slots].tolist():
            if self.object:
                items = sorted((cur or {}).items())
                out.append("{" + ",".join(_json.dumps(k, ensure_ascii=False) + ":" + v for k, v in items) + "}")
            else:
                out.append("[" + ",".join(cur or []) + "]")
        return pa.array(out, pa.string())


def _arrow_to_type(t: pa.DataType) -> DataType:
    """The SQL type json_text needs for an argument column (by its Arrow layout)."""
    if pa.types.is_boolean(t):
        return BOOLEAN()
    if pa.types.is_integer(t):
        return BIGINT()
    if pa.types.is_float64(t):
        return DOUBLE()
    if pa.types.is_float32(t):
        return FLOAT()
    if pa.types.is_decimal(t):
        return DataType("DECIMAL", True, precision=t.precision, scale=t.scale)
    return STRING()


def create_more_accumulator(name: str, call: AggCallParams, arg_types: list[pa.DataType]) -> Accumulator | None:
    """The accumulator for one of this module's aggregates (None: not one of them)."""
    rtype: DataType = call.type
    if name in BITMAP_SET_AGGS:
        return BitmapSetAcc(arg_types, rtype, name)
    if name in BITMAP_BUILD_AGGS:
        return BitmapBuildAcc(arg_types, rtype, name)
    if name == "percentile":
        return PercentileAcc(arg_types, rtype)
    if name in ("json_arrayagg", "json_objectagg"):
        return JsonAggAcc(arg_types, rtype, name, call)
    if name == "array_agg":
        return ArrayAggAcc(arg_types, rtype, bool(call.params.get("ignore_nulls")))
    return None
