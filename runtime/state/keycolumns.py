"""Key values in a canonical columnar form, for the `hashmap` backend's vectorized index.

The index (runtime/state/hashindex.py) finds a key by its 64-bit hash and then has to
confirm that the stored key really equals the batch's key (64-bit collisions are rare,
not impossible). To make that confirmation numpy work instead of a Python comparison
per key, every key column is reduced to one of a few *kinds* with a canonical form:

- `int`: booleans, integers of every width and temporal values, as int64 (their
  storage value; `keygroups` hashes them the same way, so int32 5 and int64 5 are one key);
- `float`: float64 bit patterns with -0.0 folded into 0.0 and every NaN into one NaN
  (NaN is a key equal to itself, as Flink's key serializers treat it);
- `bytes`: string / binary values as their bytes (string and large_string are one key);
- `fixed`: fixed-size binary and decimals as their fixed-width bytes;
- `null`: the NULL type (every value NULL);
- `object`: anything else (lists, structs, maps): the slow exact path, Python values
  normalised to hashable tuples, compared in Python (rare as keys).

NULL is a value: each form carries a validity mask and NULL compares equal to NULL only.

`RowKeys` is one batch column in that form; `KeyColumnStore` keeps the known keys' values
per slot (numpy arrays; a byte heap for `bytes`) and rebuilds Arrow arrays of the
column's first-seen type for `keys_of`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
import pyarrow as pa

from runtime.checkpoint.format import register_state_type
from runtime.state.keygroups import column_hash

_CANONICAL_NAN = np.float64("nan")


def normalize_value(v: Any) -> Any:
    """Dict-safe, comparable key value (NaN never equals itself; lists are unhashable).

    The format keys have in snapshots, shared with the rocksdb backend."""
    if isinstance(v, float) and v != v:
        return ("__nan__",)
    if isinstance(v, list):
        return tuple(normalize_value(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, normalize_value(x)) for k, x in v.items()))
    return v


def denormalize_value(v: Any) -> Any:
    """Inverse of `normalize_value` for scalars: the NaN marker back to a float NaN."""
    if isinstance(v, tuple) and len(v) == 1 and v[0] == "__nan__":
        return float("nan")
    return v


def kind_of(t: pa.DataType) -> str:
    """The canonical form of a key column of Arrow type `t` (module docstring)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_null(t):
        return "null"
    if (
        pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_timestamp(t)
        or pa.types.is_date(t)
        or pa.types.is_time(t)
        or pa.types.is_duration(t)
    ):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t):
        return "fixed"
    return "object"


def _validity(col: pa.Array) -> np.ndarray:
    if col.null_count == 0:
        return np.ones(len(col), dtype=bool)
    return col.is_valid().to_numpy(zero_copy_only=False)


def _int64_values(col: pa.Array) -> np.ndarray:
    t = col.type
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        col = col.cast(pa.int32())
    col = col.cast(pa.int64(), safe=False)
    return (col.fill_null(0) if col.null_count else col).to_numpy(zero_copy_only=False)


def _float_bits(col: pa.Array) -> np.ndarray:
    col = col.cast(pa.float64())
    f = (col.fill_null(0.0) if col.null_count else col).to_numpy(zero_copy_only=False).copy()
    f[f == 0.0] = 0.0
    f[np.isnan(f)] = _CANONICAL_NAN
    return f.view(np.uint64)


def _fixed_bytes(col: pa.Array, valid: np.ndarray) -> np.ndarray:
    width = col.type.byte_width
    n = len(col)
    raw = np.frombuffer(col.buffers()[1], dtype=np.uint8)[col.offset * width : (col.offset + n) * width]
    rows = raw.reshape(n, width).copy()
    rows[~valid] = 0
    return rows


def _binary_parts(col: pa.Array, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, lengths, data) of a binary-like column (via large_binary), with `data`
    the column's value bytes only and `starts` relative to it (NULL: length 0)."""
    c = col.cast(pa.large_binary())
    n = len(c)
    bufs = c.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[c.offset : c.offset + n + 1]
    base, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(bufs[2], dtype=np.uint8)[base:end] if end > base else np.zeros(0, dtype=np.uint8)
    lengths = np.diff(offsets)
    lengths[~valid] = 0
    return offsets[:-1] - base, lengths, data


def _python_codes(col: pa.Array) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Slow exact grouping for types Arrow cannot dictionary-encode (nested keys): a
    Python dict over the normalised values (a loop over rows, only for such keys).
    Returns each row's code, each code's first row and the codes' normalised values."""
    index: dict[Any, int] = {}
    codes = np.empty(len(col), dtype=np.int64)
    first: list[int] = []
    values: list[Any] = []
    for i, v in enumerate(col.to_pylist()):
        nv = normalize_value(v)
        c = index.get(nv)
        if c is None:
            c = index[nv] = len(values)
            values.append(nv)
            first.append(i)
        codes[i] = c
    return codes, np.asarray(first, dtype=np.int64), values


_NULL_HASH = np.uint64(0x9E3779B97F4A7C15)
_WORD_STEP = np.uint64(0xC2B2AE3D27D4EB4F)
_LENGTH_MUL = np.uint64(0x165667B19E3779F9)
# MASKS[r]: the low r bytes of a little-endian word (r = 8: all of it).
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def mix64(h: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, as `keygroups` has it (the int / float hashes must equal
    `keygroups.column_hash`): every input bit reaches every output bit."""
    with np.errstate(over="ignore"):
        h = h.astype(np.uint64, copy=True)
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def word_view(buf: np.ndarray) -> np.ndarray:
    """The (unaligned) little-endian 8-byte word starting at every byte of `buf`, which
    must end with 7 bytes of padding: strings are hashed and compared 8 bytes at a time."""
    return np.ndarray(shape=(max(len(buf) - 7, 0),), dtype=np.uint64, buffer=buf, strides=(1,))


def padded(data: np.ndarray) -> np.ndarray:
    out = np.zeros(len(data) + 8, dtype=np.uint8)
    out[: len(data)] = data
    return out


def string_words(
    words: np.ndarray, starts: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 8-byte words of each value (the last one masked to the value's bytes), each
    word's index within its value, and where each value's words begin."""
    nw = (lengths + 7) >> 3
    ends = np.cumsum(nw)
    begins = ends - nw
    total = int(ends[-1]) if len(ends) else 0
    k = np.arange(total, dtype=np.int64) - np.repeat(begins, nw)
    out = words[np.repeat(starts, nw) + 8 * k]
    rem = np.repeat(lengths, nw) - 8 * k
    out &= _MASKS[np.minimum(rem, 8)]
    return out, k, begins


_MATRIX_WORDS = 8  # values up to 64 bytes: one (values, words) matrix, no ragged arrays
_WORD_INDEX = np.arange(_MATRIX_WORDS, dtype=np.int64)


def word_matrix(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """(values, width) matrix of each value's 8-byte words, masked to its bytes and zero
    past its end (for values of at most 8 * width bytes): the short-value fast path of
    `string_words`."""
    k8 = 8 * _WORD_INDEX[:width]
    at = np.minimum(starts[:, None] + k8, max(len(words) - 1, 0))
    rem = np.clip(lengths[:, None] - k8, 0, 8)
    return words[at] & _MASKS[rem] if len(words) else np.zeros((len(starts), width), dtype=np.uint64)


def _matrix_width(lengths: np.ndarray) -> int:
    """Words per value of the matrix path, 0 when a value is too long for it."""
    longest = int(lengths.max()) if len(lengths) else 0
    return (longest + 7) >> 3 if longest <= 8 * _MATRIX_WORDS else 0


def _bytes_hash(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Sum of the mixed (word, word index) pairs of each value, mixed with its length.
    Both paths give the same sum (words past a value's end add nothing)."""
    width = _matrix_width(lengths)
    with np.errstate(over="ignore"):
        if width:
            w = word_matrix(words, starts, lengths, width)
            hw = mix64(w ^ (_WORD_INDEX[:width].astype(np.uint64) * _WORD_STEP))
            hw[lengths[:, None] <= 8 * _WORD_INDEX[:width]] = 0
            h = hw.sum(axis=1, dtype=np.uint64)
        else:
            w1, k, begins = string_words(words, starts, lengths)
            hw = mix64(w1 ^ (k.astype(np.uint64) * _WORD_STEP))
            h = np.zeros(len(lengths), dtype=np.uint64)
            nonempty = np.flatnonzero(lengths > 0)
            if len(nonempty):
                h[nonempty] = np.add.reduceat(hw, begins[nonempty])
        return mix64(h + lengths.astype(np.uint64) * _LENGTH_MUL)


class RowKeys:
    """One key column of a batch in canonical form, with a 64-bit hash per row.

    For every kind but `bytes` the hash is `keygroups.column_hash` (so the row hash gives
    the key group too: `exact`); strings get the index's own hash, 8 bytes at a time
    (several times faster than `keygroups`' byte-wise one), and the backend computes the
    key group of new string keys only. `codes` maps rows to *entries*: for every kind but `object` the entries are the rows
    themselves (codes is None); `object` values are grouped in Python once per batch."""

    def __init__(self, col: pa.Array | pa.ChunkedArray) -> None:
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        self.type: pa.DataType = col.type
        self.kind = kind_of(col.type)
        self.num_rows = len(col)
        self.codes: np.ndarray | None = None
        self.vals: np.ndarray = np.zeros(0, dtype=np.int64)  # int: int64; float: uint64 bits; fixed: (n, width) uint8
        self.starts = self.lengths = np.zeros(0, dtype=np.int64)  # bytes
        self.data = np.zeros(8, dtype=np.uint8)  # bytes, padded (word_view)
        self.objs: list[Any] = []  # object: normalised values
        self.raw: list[Any] = []  # object: Python values (for output)
        self.valid = _validity(col)
        self.exact = self.kind != "bytes"
        if self.kind == "int":  # keygroups: mix of the int64 storage value
            self.vals = _int64_values(col)
            h = mix64(self.vals.view(np.uint64))
        elif self.kind == "float":  # keygroups: mix of the folded float64 bits
            self.vals = _float_bits(col)
            h = mix64(self.vals)
        elif self.kind == "fixed":
            self.vals = _fixed_bytes(col, self.valid)
            h = column_hash(col)
        elif self.kind == "bytes":
            self.starts, self.lengths, data = _binary_parts(col, self.valid)
            self.data = padded(data)
            h = _bytes_hash(word_view(self.data), self.starts, self.lengths)
        elif self.kind == "object":
            self.codes, first, self.objs = _python_codes(col)
            entries = col.take(pa.array(first))
            self.raw = entries.to_pylist()
            self.valid = _validity(entries)
            h = column_hash(entries)[self.codes]
        else:  # null
            h = np.full(len(col), _NULL_HASH, dtype=np.uint64)
        valid_rows = self.valid if self.codes is None else self.valid[self.codes]
        if not valid_rows.all():
            h[~valid_rows] = _NULL_HASH
        self.hash = h

    def entries_of(self, rows: np.ndarray) -> np.ndarray:
        """Entry index of each row."""
        return rows if self.codes is None else self.codes[rows]


def _grow_to(arr: np.ndarray, n: int) -> np.ndarray:
    if len(arr) >= n:
        return arr
    new = np.zeros((max(n, 2 * len(arr), 16),) + arr.shape[1:], dtype=arr.dtype)
    new[: len(arr)] = arr
    return new


def _gather_bytes(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of data[starts[i] : starts[i] + lengths[i]] (vectorized)."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint8)
    ends = np.cumsum(lengths)
    within = np.arange(total, dtype=np.int64) - np.repeat(ends - lengths, lengths)
    return data[np.repeat(starts, lengths) + within]


class KeyColumnStore:
    """The values of one key column for every slot (module docstring).

    `bytes` values live in one growing byte heap addressed by (start, length) per slot;
    removed keys leave garbage that is compacted (vectorized) once it outweighs the live
    bytes."""

    def __init__(self, kind: str, arrow_type: pa.DataType) -> None:
        self.kind = kind
        self.type = arrow_type  # first-seen type: what keys_of / arrays rebuild
        self.valid = np.zeros(0, dtype=bool)
        self.vals = np.zeros(0, dtype=np.uint64 if kind == "float" else np.int64)
        self.starts = np.zeros(0, dtype=np.int64)
        self.lengths = np.zeros(0, dtype=np.int64)
        self.heap = np.zeros(8, dtype=np.uint8)  # always 8 bytes longer than used (word_view)
        self.heap_end = 0
        self.garbage = 0
        self.objs = np.zeros(0, dtype=object)
        self.raw = np.zeros(0, dtype=object)
        self.width = arrow_type.byte_width if kind == "fixed" else 0
        if kind == "fixed":
            self.vals = np.zeros((0, self.width), dtype=np.uint8)

    def _ensure(self, n: int) -> None:
        self.valid = _grow_to(self.valid, n)
        if self.kind in ("int", "float", "fixed"):
            self.vals = _grow_to(self.vals, n)
        elif self.kind == "bytes":
            self.starts = _grow_to(self.starts, n)
            self.lengths = _grow_to(self.lengths, n)
        elif self.kind == "object":
            self.objs = _grow_to(self.objs, n)
            self.raw = _grow_to(self.raw, n)

    # ------------------------------------------------------------------ writes
    def put(self, slots: np.ndarray, keys: RowKeys, rows: np.ndarray) -> None:
        """Store the keys of these batch rows at these (free) slots."""
        if not len(slots):
            return
        self._ensure(int(slots.max()) + 1)
        e = keys.entries_of(rows)
        self.valid[slots] = keys.valid[e]
        if self.kind in ("int", "float", "fixed"):
            self.vals[slots] = keys.vals[e]
        elif self.kind == "bytes":
            lengths = keys.lengths[e]
            chunk = _gather_bytes(keys.data, keys.starts[e], lengths)
            need = self.heap_end + len(chunk)
            if need + 8 > len(self.heap):
                self.heap = _grow_to(self.heap, need + 8)
            self.heap[self.heap_end : need] = chunk
            self.starts[slots] = self.heap_end + np.cumsum(lengths) - lengths
            self.lengths[slots] = lengths
            self.heap_end = need
        elif self.kind == "object":
            idx = e.tolist()
            self.objs[slots] = np.array([keys.objs[i] for i in idx] + [None], dtype=object)[:-1]
            self.raw[slots] = np.array([keys.raw[i] for i in idx] + [None], dtype=object)[:-1]

    def put_nulls(self, slots: np.ndarray) -> None:
        """Store NULL at these slots (a key column of the NULL type in this batch)."""
        if len(slots):
            self._ensure(int(slots.max()) + 1)
            self.valid[slots] = False
            if self.kind == "bytes":
                self.lengths[slots] = 0
            elif self.kind in ("int", "float", "fixed"):
                self.vals[slots] = 0

    def release(self, slots: np.ndarray) -> None:
        """These slots' keys were removed (account for the byte heap's garbage)."""
        if self.kind == "bytes" and len(slots):
            self.garbage += int(self.lengths[slots].sum())
            self.lengths[slots] = 0
        elif self.kind == "object" and len(slots):
            self.objs[slots] = None
            self.raw[slots] = None

    def needs_compaction(self) -> bool:
        """Removed keys' bytes outweigh the live ones (and are worth a rewrite)."""
        return self.kind == "bytes" and self.garbage > max(1 << 20, self.heap_end - self.garbage)

    def compact(self, live: np.ndarray) -> None:
        """Rewrite the byte heap with only the live slots' bytes."""
        lengths = self.lengths[live]
        self.heap = padded(_gather_bytes(self.heap, self.starts[live], lengths))
        self.starts[live] = np.cumsum(lengths) - lengths
        self.heap_end = len(self.heap) - 8
        self.garbage = 0

    # ------------------------------------------------------------------ reads
    def equal(self, slots: np.ndarray, keys: RowKeys, entries: np.ndarray) -> np.ndarray:
        """Whether the stored key of each slot equals the batch entry beside it."""
        same = self.valid[slots] == keys.valid[entries]
        if self.kind in ("int", "float"):
            same &= self.vals[slots] == keys.vals[entries]
        elif self.kind == "fixed":
            same &= (self.vals[slots] == keys.vals[entries]).all(axis=1)
        elif self.kind == "bytes":
            lengths = self.lengths[slots]
            same &= lengths == keys.lengths[entries]
            check = np.flatnonzero(same & (lengths > 0))
            if len(check):  # compare 8 bytes at a time
                ln = lengths[check]
                ours, theirs = word_view(self.heap), word_view(keys.data)
                width = _matrix_width(ln)
                if width:
                    a = word_matrix(ours, self.starts[slots[check]], ln, width)
                    b = word_matrix(theirs, keys.starts[entries[check]], ln, width)
                    same[check[(a != b).any(axis=1)]] = False
                else:
                    a, _, begins = string_words(ours, self.starts[slots[check]], ln)
                    b, _, _ = string_words(theirs, keys.starts[entries[check]], ln)
                    differs = np.not_equal(a, b).astype(np.int64)
                    same[check[np.add.reduceat(differs, begins) > 0]] = False
        elif self.kind == "object":  # slow exact path (nested keys): Python comparison
            stored = self.objs[slots].tolist()
            same &= np.array(
                [s == keys.objs[i] for s, i in zip(stored, entries.tolist(), strict=True)] + [True], dtype=bool
            )[:-1]
        return same

    def array(self, slots: np.ndarray) -> pa.Array:
        """These slots' values as an Arrow array of the column's first-seen type."""
        n = len(slots)
        valid = self.valid[slots]
        mask = None if valid.all() else ~valid
        if self.kind == "null":
            return pa.nulls(n, type=self.type)
        if self.kind == "object":
            return pa.array(self.raw[slots].tolist(), type=self.type)
        if self.kind == "int":
            ints = pa.array(self.vals[slots], type=pa.int64(), mask=mask)
            t = self.type
            if pa.types.is_date32(t) or pa.types.is_time32(t):
                ints = ints.cast(pa.int32())
            return ints.cast(t, safe=False)
        if self.kind == "float":
            return pa.array(self.vals[slots].view(np.float64), mask=mask).cast(self.type)
        validity = None if mask is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
        if self.kind == "fixed":
            data = pa.py_buffer(np.ascontiguousarray(self.vals[slots]))
            return pa.Array.from_buffers(self.type, n, [validity, data])
        lengths = self.lengths[slots]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = _gather_bytes(self.heap, self.starts[slots], lengths)
        binary = pa.Array.from_buffers(pa.large_binary(), n, [validity, pa.py_buffer(offsets), pa.py_buffer(data)])
        return binary.cast(self.type)

    def values(self, slots: np.ndarray, normalized: bool = False) -> list[Any]:
        """These slots' values as Python values; `normalized`: in the snapshot format
        (`normalize_value`: NaN as a marker, nested values as tuples)."""
        if self.kind == "object":
            return (self.objs if normalized else self.raw)[slots].tolist()
        plain_int = self.kind == "int" and pa.types.is_integer(self.type)
        if plain_int or self.kind == "float":  # numpy's tolist: far cheaper than Arrow scalars
            vals = self.vals[slots]
            values = (vals if plain_int else vals.view(np.float64)).tolist()
            for i in np.flatnonzero(~self.valid[slots]).tolist():  # loop over NULL keys only
                values[i] = None
        else:
            values = self.array(slots).to_pylist()
        if normalized and self.kind == "float":
            return [normalize_value(v) for v in values]
        return values


@register_state_type
class SnapshotKeys(Sequence[tuple[Any, ...]]):
    """The keys of a keyed-backend snapshot, column by column: one Arrow array per key
    column (the columns' first-seen types), so a state file holds them as one Arrow IPC
    stream and reading it back builds no Python object per key.

    It is also the sequence of normalised key tuples (`normalize_value`) that snapshots of
    the `rocksdb` backend hold, built on first use only: code that walks a snapshot's
    `keys` (rocksdb restore, rescaling of non-columnar operators) reads either form, and
    savepoints still move between backends. The `hashmap` backend restores it columnar."""

    __slots__ = ("batch", "_tuples")

    def __init__(self, columns: Sequence[pa.Array]) -> None:
        names = [f"k{i}" for i in range(len(columns))]
        self.batch = pa.RecordBatch.from_arrays(list(columns), names=names)
        self._tuples: list[tuple[Any, ...]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"batch": self.batch}

    def __setstate__(self, state: Any) -> None:
        batch = state.get("batch") if isinstance(state, dict) else None
        if not isinstance(batch, pa.RecordBatch) or batch.num_columns == 0:
            raise ValueError("malformed snapshot keys in a state file")
        self.batch = batch
        self._tuples = None

    @property
    def columns(self) -> list[pa.Array]:
        return list(self.batch.columns)

    def take(self, mask: np.ndarray) -> SnapshotKeys:
        """The keys where `mask` is true (a key-group range of a rescaled restore)."""
        return SnapshotKeys(self.batch.filter(pa.array(mask, type=pa.bool_())).columns)

    @staticmethod
    def concat(parts: Sequence[SnapshotKeys]) -> SnapshotKeys:
        """The keys of several snapshots of one operator, in order (columns as the first's types)."""
        first = parts[0].batch
        cols = [
            pa.concat_arrays([p.batch.column(j).cast(first.column(j).type) for p in parts])
            for j in range(first.num_columns)
        ]
        return SnapshotKeys(cols)

    def _rows(self) -> list[tuple[Any, ...]]:
        if self._tuples is None:  # the tuple view, built once on first use (not on the columnar path)
            cols = []
            for col in self.batch.columns:
                values = col.to_pylist()
                if kind_of(col.type) in ("float", "object"):
                    values = [normalize_value(v) for v in values]
                cols.append(values)
            self._tuples = list(zip(*cols, strict=True))
        return self._tuples

    def __len__(self) -> int:
        return self.batch.num_rows

    @overload
    def __getitem__(self, i: int) -> tuple[Any, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[Any, ...]]: ...
    def __getitem__(self, i: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        return self._rows()[i]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SnapshotKeys):
            return self.batch.equals(other.batch)
        if isinstance(other, (list, tuple)):
            return self._rows() == list(other)
        return NotImplemented

    def __add__(self, other: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [*self._rows(), *other]

    def __radd__(self, other: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [*other, *self._rows()]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SnapshotKeys({len(self)} keys, {self.batch.schema.types})"
