"""Flink 2.3's BITMAP functions: BITMAP_BUILD, BITMAP_AND / OR / XOR / ANDNOT,
BITMAP_CARDINALITY, BITMAP_TO_ARRAY, BITMAP_TO_STRING, BITMAP_TO_BYTES, BITMAP_FROM_BYTES.

A BITMAP is Flink's RoaringBitmap: a set of 32-bit integers read as unsigned (-1 is
4294967295). Here it is carried as a list<uint32> of the sorted distinct values, so set
operations are vectorized over all rows at once: each element becomes the key
`row << 32 | value`, and AND / OR / XOR / ANDNOT are numpy's sorted set operations on the
keys. BITMAP_TO_BYTES / BITMAP_FROM_BYTES speak RoaringBitmap's portable format (cookie
12346, array containers up to 4096 values, bitmap containers above), so bytes round-trip
with Flink's; they loop over rows (serialization is per value by nature).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import null_mask, to_array
from runtime.functions._lists import flatten
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.render import render_array
from runtime.types import BIGINT, BYTES, INT, STRING, DataType

BITMAP_ARROW = pa.list_(pa.uint32())
_COOKIE = 12346  # SERIAL_COOKIE_NO_RUNCONTAINER
_ARRAY_MAX = 4096


def BITMAP(nullable: bool = True) -> DataType:  # noqa: N802 - Flink's spelling
    return DataType("BITMAP", nullable)


def _invalid(name: str, types: list[DataType], form: str) -> FunctionTypeError:
    shown = ", ".join(f"<{t}>" for t in types)
    return FunctionTypeError(
        f"Invalid input arguments. Invalid function call:\n{name.upper()}({shown})\nSupported form(s): {form}"
    )


def keys_of(arr: pa.Array) -> np.ndarray:
    """`row << 32 | value` for every element of a bitmap column (sorted, as stored)."""
    values, rows = flatten(arr)
    v = values.to_numpy(zero_copy_only=False).astype(np.int64)
    return (rows << 32) | v


def from_keys(n: int, keys: np.ndarray, nulls: np.ndarray) -> pa.Array:
    """A bitmap column from sorted distinct `row << 32 | value` keys."""
    rows = keys >> 32
    if nulls.any() and len(rows):
        keep = ~nulls[rows]
        keys, rows = keys[keep], rows[keep]
    counts = np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    values = pa.array((keys & 0xFFFFFFFF).astype(np.uint32), pa.uint32())
    return pa.ListArray.from_arrays(
        pa.array(offsets), values, type=BITMAP_ARROW, mask=pa.array(nulls) if nulls.any() else None
    )


# ---------------------------------------------------------------------- BITMAP_BUILD
def _infer_build(types: list[DataType]) -> DataType:
    if len(types) != 1 or types[0].name != "ARRAY" or types[0].children[0].name not in ("INT", "SMALLINT", "TINYINT"):
        raise _invalid("bitmap_build", types, "BITMAP_BUILD(ARRAY<INT>)")
    return BITMAP(types[0].nullable)


@scalar("bitmap_build", _infer_build)
def _bitmap_build(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The set of the array's non-NULL values, each read as an unsigned 32-bit int."""
    n = ctx.num_rows
    arr = to_array(args[0], n)
    values, rows = flatten(arr)
    ok = ~null_mask(values)
    v = pc.fill_null(pc.cast(values, pa.int32()), 0).to_numpy(zero_copy_only=False).view(np.uint32)
    keys = np.unique((rows[ok] << 32) | v[ok].astype(np.int64))
    return from_keys(n, keys, null_mask(arr))


# ---------------------------------------------------------------------- set operations
_SET_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "bitmap_and": np.intersect1d,
    "bitmap_or": np.union1d,
    "bitmap_xor": np.setxor1d,
    "bitmap_andnot": np.setdiff1d,
}


def _infer_pair(name: str):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        if len(types) != 2 or any(t.name not in ("BITMAP", "NULL") for t in types):
            raise _invalid(name, types, f"{name.upper()}(BITMAP, BITMAP)")
        return BITMAP(any(t.nullable for t in types))

    return infer


def _set_kernel(name: str):  # noqa: ANN202 - a Kernel
    op = _SET_OPS[name]

    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        n = ctx.num_rows
        if any(t.name == "NULL" for t in types):
            return pa.nulls(n, BITMAP_ARROW)
        a, b = to_array(args[0], n), to_array(args[1], n)
        keys = op(keys_of(a), keys_of(b))
        return from_keys(n, keys.astype(np.int64), null_mask(a) | null_mask(b))

    return kernel


for _name in _SET_OPS:
    scalar(_name, _infer_pair(_name))(_set_kernel(_name))


# ---------------------------------------------------------------------- conversions
def _infer_from_bitmap(name: str, result: DataType):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        if len(types) != 1 or types[0].name not in ("BITMAP", "NULL"):
            raise _invalid(name, types, f"{name.upper()}(BITMAP)")
        return result.with_nullable(types[0].nullable)

    return infer


@scalar("bitmap_cardinality", _infer_from_bitmap("bitmap_cardinality", BIGINT()))
def _bitmap_cardinality(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr = to_array(args[0], ctx.num_rows)
    if types[0].name == "NULL":
        return pa.nulls(ctx.num_rows, pa.int64())
    return pc.cast(pc.list_value_length(arr), pa.int64())


@scalar(
    "bitmap_to_array",
    _infer_from_bitmap("bitmap_to_array", DataType("ARRAY", True, children=(INT(False),))),
)
def _bitmap_to_array(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The values as signed INTs, in unsigned order ({1, 4294967295} is [1, -1])."""
    arr = to_array(args[0], ctx.num_rows)
    if types[0].name == "NULL":
        return pa.nulls(ctx.num_rows, rt.to_arrow())
    return pc.cast(arr, pa.list_(pa.int32()), safe=False)


@scalar("bitmap_to_string", _infer_from_bitmap("bitmap_to_string", STRING()))
def _bitmap_to_string(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr = to_array(args[0], ctx.num_rows)
    if types[0].name == "NULL":
        return pa.nulls(ctx.num_rows, pa.string())
    return render_array(arr, types[0])


def serialize(values: np.ndarray) -> bytes:
    """RoaringBitmap's portable serialization of sorted distinct uint32 values."""
    high = (values >> 16).astype(np.uint32)
    keys, starts, counts = np.unique(high, return_index=True, return_counts=True)
    header = struct.pack("<II", _COOKIE, len(keys))
    desc = b"".join(struct.pack("<HH", int(k), int(c) - 1) for k, c in zip(keys, counts, strict=True))
    bodies = []
    for s, c in zip(starts, counts, strict=True):
        low = (values[s : s + c] & 0xFFFF).astype(np.uint16)
        if c <= _ARRAY_MAX:
            bodies.append(low.astype("<u2").tobytes())
        else:
            bits = np.zeros(65536, dtype=bool)
            bits[low] = True
            bodies.append(np.packbits(bits, bitorder="little").tobytes())
    offset = 8 + 8 * len(keys)
    offsets = []
    for body in bodies:
        offsets.append(struct.pack("<I", offset))
        offset += len(body)
    return header + desc + b"".join(offsets) + b"".join(bodies)


def deserialize(data: bytes) -> list[int]:
    """The values of a portable RoaringBitmap (array and bitmap containers)."""
    try:
        cookie, size = struct.unpack_from("<II", data, 0)
        if cookie != _COOKIE:
            raise ValueError("not a serialized RoaringBitmap without run containers")
        pos = 8
        heads = [struct.unpack_from("<HH", data, pos + 4 * i) for i in range(size)]
        pos += 4 * size
        offsets = [struct.unpack_from("<I", data, pos + 4 * i)[0] for i in range(size)]
        out: list[int] = []
        for (key, card_minus_1), off in zip(heads, offsets, strict=True):
            card = card_minus_1 + 1
            if card <= _ARRAY_MAX:
                low = np.frombuffer(data, dtype="<u2", count=card, offset=off).astype(np.int64)
            else:
                raw = np.frombuffer(data, dtype=np.uint8, count=8192, offset=off)
                low = np.flatnonzero(np.unpackbits(raw, bitorder="little"))
            out.extend(((key << 16) | low).tolist())
        return out
    except (struct.error, ValueError) as e:
        raise EvaluationError(f"BITMAP_FROM_BYTES: the bytes are not a serialized bitmap ({e})") from None


@scalar("bitmap_to_bytes", _infer_from_bitmap("bitmap_to_bytes", BYTES()))
def _bitmap_to_bytes(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr = to_array(args[0], ctx.num_rows)
    if types[0].name == "NULL":
        return pa.nulls(ctx.num_rows, pa.binary())
    out = [
        None if v is None else serialize(np.asarray(v, dtype=np.uint32)) for v in arr.to_pylist()
    ]  # one serialization per row
    return pa.array(out, pa.binary())


def _infer_from_bytes(types: list[DataType]) -> DataType:
    if len(types) != 1 or types[0].name not in ("BINARY", "VARBINARY", "NULL"):
        raise _invalid("bitmap_from_bytes", types, "BITMAP_FROM_BYTES(BYTES)")
    return BITMAP(types[0].nullable)


@scalar("bitmap_from_bytes", _infer_from_bytes)
def _bitmap_from_bytes(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr = to_array(args[0], ctx.num_rows)
    if types[0].name == "NULL":
        return pa.nulls(ctx.num_rows, BITMAP_ARROW)
    return pa.array([None if b is None else deserialize(b) for b in arr.to_pylist()], BITMAP_ARROW)


document(
    {
        "bitmap_build": ("BITMAP_BUILD(ARRAY<INT>)", "BITMAP_BUILD(ARRAY[3, 1, -1])"),
        "bitmap_and": (
            "BITMAP_AND(bitmap1, bitmap2)",
            "BITMAP_AND(BITMAP_BUILD(ARRAY[1, 2]), BITMAP_BUILD(ARRAY[2, 3]))",
        ),
        "bitmap_or": ("BITMAP_OR(bitmap1, bitmap2)", "BITMAP_OR(BITMAP_BUILD(ARRAY[1, 2]), BITMAP_BUILD(ARRAY[2, 3]))"),
        "bitmap_xor": (
            "BITMAP_XOR(bitmap1, bitmap2)",
            "BITMAP_XOR(BITMAP_BUILD(ARRAY[1, 2]), BITMAP_BUILD(ARRAY[2, 3]))",
        ),
        "bitmap_andnot": (
            "BITMAP_ANDNOT(bitmap1, bitmap2)",
            "BITMAP_ANDNOT(BITMAP_BUILD(ARRAY[1, 2]), BITMAP_BUILD(ARRAY[2, 3]))",
        ),
        "bitmap_cardinality": ("BITMAP_CARDINALITY(bitmap)", "BITMAP_CARDINALITY(BITMAP_BUILD(ARRAY[1, 1, 2]))"),
        "bitmap_to_array": ("BITMAP_TO_ARRAY(bitmap)", "BITMAP_TO_ARRAY(BITMAP_BUILD(ARRAY[3, -1, 1]))"),
        "bitmap_to_string": ("BITMAP_TO_STRING(bitmap)", "BITMAP_TO_STRING(BITMAP_BUILD(ARRAY[2, 1]))"),
        "bitmap_to_bytes": ("BITMAP_TO_BYTES(bitmap)", "BITMAP_TO_BYTES(BITMAP_BUILD(ARRAY[1]))"),
        "bitmap_from_bytes": (
            "BITMAP_FROM_BYTES(bytes)",
            "BITMAP_TO_STRING(BITMAP_FROM_BYTES(BITMAP_TO_BYTES(BITMAP_BUILD(ARRAY[1, 2]))))",
        ),
    }
)
