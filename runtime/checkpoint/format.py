"""The state file format of checkpoints and savepoints: versioned, checksummed, no pickle.

A state file is `MAGIC` (4 bytes), the format version (2 bytes, big-endian), two zero
bytes (from version 4) and one value in MessagePack (docs/state-format.md). MessagePack carries None, bool, int (64-bit),
float, str, bytes, list and dict natively; everything else an operator keeps is an
*extension* with a fixed code (`Ext`), never a class name to import:

- tuple, set, frozenset: the elements as a MessagePack array;
- a list of equally long tuples (rows, keys): column by column (`ROWS`); a dict whose keys
  are all tuples: its keys as `ROWS` and its values (`TUPLE_KEYED_DICT`). Both are only
  faster layouts of the same values (MessagePack packs a column of scalars natively);
- an int beyond 64 bits, a Decimal: its decimal text;
- numpy arrays: dtype text, shape and the raw bytes (object arrays: their elements);
  numpy scalars: dtype text and bytes; a dtype: its text;
- Arrow arrays, chunked arrays, record batches and tables: Arrow IPC stream bytes; Arrow
  data types, fields and schemas: an Arrow IPC schema message;
- date, time, datetime, timedelta: their numeric fields;
- a *registered state type* (`register_state_type`): the registered name and the values of
  its declared fields. Only classes registered in this process can be read back, by the
  name they were registered under; reading never imports a module or calls anything
  other than the registered class's `__new__` and plain attribute assignment.

So reading a state file can construct nothing but data and the few state classes
streamsql declares: a crafted file cannot run code (the worst it can do is fail to
decode, which `decode` reports as `StateFormatError`). Integrity is checked separately:
`_metadata` records each file's SHA-256 (`digest`), verified before anything is decoded.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import struct
import threading
from decimal import Decimal
from operator import itemgetter
from typing import Any

import msgpack
import numpy as np

MAGIC = b"SSQS"
# 4: out-of-band buffers 8-byte aligned (read in place, no copy); 3: MessagePack with large
# array buffers out of band, unaligned; 2 kept every buffer inside the MessagePack value;
# 1 was pickle and is refused (not safe to read).
FORMAT_VERSION = 4
# versions this reader accepts: a version 2 file is a version 3 file without out-of-band buffers
READABLE_VERSIONS = (2, 3, 4)
_HEADER = len(MAGIC) + 2  # up to version 3; version 4 adds two zero bytes (`_header_size`)
# A packed value whose first byte is this (a byte MessagePack never uses) is a MessagePack
# body followed by out-of-band buffers: OOB_TAG, buffer count (u32), body length (u64), body,
# then per buffer its length (u64) and bytes (all little-endian). With `ALIGNED` set in the
# count, zero bytes pad each buffer to start at a multiple of 8 from the value's start.
OOB_TAG = 0xC1
ALIGNED = 1 << 31
_ALIGN = 8
# numpy arrays of at least this many bytes are written out of band (one copy into the file,
# one out of it), smaller ones inside the MessagePack value
_OOB_MIN_BYTES = 1 << 14


class StateFormatError(ValueError):
    """A state file or value that is not in this format (corrupt, foreign, or too new)."""


class Ext(enum.IntEnum):
    """MessagePack extension codes (stable: they are part of the file format)."""

    TUPLE = 1
    SET = 2
    FROZENSET = 3
    BIGINT = 4
    DECIMAL = 5
    NDARRAY = 6
    NPSCALAR = 7
    ARROW = 8
    DATETIME = 9
    DATE = 10
    TIME = 11
    TIMEDELTA = 12
    RECORD = 13
    DTYPE = 14
    ROWS = 15
    TUPLE_KEYED_DICT = 16
    INT_LIST = 17
    FLOAT_LIST = 18
    BUFFER_ARRAY = 19
    BUFFER_EXT = 20
    STR_ARRAY = 21


_ARROW_KINDS = ("batch", "table", "array", "chunked", "type", "field", "schema")

# name -> class, and class -> (name, field names): the only classes `decode` constructs.
_TYPES: dict[str, type] = {}
_FIELDS: dict[type, tuple[str, tuple[str, ...]]] = {}


def register_state_type(cls: type, name: str | None = None, fields: tuple[str, ...] | None = None) -> type:
    """Allow instances of `cls` in operator state. They are written as their fields' values
    (dataclass fields, `__slots__`, or `fields`; else the instance `__dict__`) and read back
    by `cls.__new__` plus attribute assignment: no `__init__`, no `__setstate__`. Usable as
    a class decorator. `name` (default: the class's qualified name) is what the file records."""
    key = name or f"{cls.__module__}.{cls.__qualname__}"
    if fields is None:
        if dataclasses.is_dataclass(cls):
            fields = tuple(f.name for f in dataclasses.fields(cls))
        elif "__slots__" in cls.__dict__:
            slots = cls.__dict__["__slots__"]
            fields = (slots,) if isinstance(slots, str) else tuple(slots)
    _TYPES[key] = cls
    _FIELDS[cls] = (key, fields or ())
    return cls


def registered_types() -> list[str]:
    """Names of the registered state types (docs, tests)."""
    return sorted(_TYPES)


# ------------------------------------------------------------------------------ write
def _ext(code: int, data: bytes) -> msgpack.ExtType:
    """An extension value; a large payload (inside `_pack_value`) goes out of band, so the
    values enclosing it do not copy it again at every level of nesting."""
    buffers = _LOCAL.buffers
    if buffers is not None and len(data) >= _OOB_MIN_BYTES:
        buffers.append(np.frombuffer(data, dtype=np.uint8))
        return msgpack.ExtType(Ext.BUFFER_EXT, msgpack.packb([int(code), len(buffers) - 1]))
    return msgpack.ExtType(code, data)


def _default(obj: Any) -> Any:
    t = type(obj)
    if t is tuple:
        return _ext(Ext.TUPLE, _pack(list(obj)))
    if t is np.ndarray:
        buffers = _LOCAL.buffers
        if buffers is not None and obj.nbytes >= _OOB_MIN_BYTES and not obj.dtype.hasobject:
            buffers.append(np.ascontiguousarray(obj))
            return _ext(Ext.BUFFER_ARRAY, _pack([len(buffers) - 1, _dtype_text(obj.dtype), list(obj.shape)]))
        strings = _str_array_fields(obj)
        if strings is not None:
            return _ext(Ext.STR_ARRAY, _pack(strings))
        return _ext(Ext.NDARRAY, _pack(_ndarray_fields(obj)))
    if t is set:
        return _ext(Ext.SET, _pack(list(obj)))
    if t is frozenset:
        return _ext(Ext.FROZENSET, _pack(list(obj)))
    if t is Decimal:
        return _ext(Ext.DECIMAL, str(obj).encode())
    if isinstance(obj, np.generic):
        return _ext(Ext.NPSCALAR, _pack([obj.dtype.str, obj.tobytes()]))
    if isinstance(obj, np.dtype):
        return _ext(Ext.DTYPE, _pack(_dtype_text(obj)))
    if t is _dt.datetime:
        tz = obj.utcoffset()
        fields = [obj.year, obj.month, obj.day, obj.hour, obj.minute, obj.second, obj.microsecond]
        return _ext(Ext.DATETIME, _pack([*fields, None if tz is None else tz // _dt.timedelta(microseconds=1)]))
    if t is _dt.date:
        return _ext(Ext.DATE, _pack(obj.toordinal()))
    if t is _dt.time:
        return _ext(Ext.TIME, _pack([obj.hour, obj.minute, obj.second, obj.microsecond]))
    if t is _dt.timedelta:
        return _ext(Ext.TIMEDELTA, _pack([obj.days, obj.seconds, obj.microseconds]))
    if t is int or isinstance(obj, int) and not isinstance(obj, enum.Enum):
        return _ext(Ext.BIGINT, str(int(obj)).encode())
    arrow = _arrow_fields(obj)
    if arrow is not None:
        return _ext(Ext.ARROW, _pack(arrow))
    reg = _FIELDS.get(t)
    if reg is not None:
        name, declared = reg
        if isinstance(obj, enum.Enum):
            values: Any = obj.value
        elif _custom(t, "__getstate__"):
            values = obj.__getstate__()
        elif declared:
            values = {f: getattr(obj, f) for f in declared if hasattr(obj, f)}
        else:
            values = dict(vars(obj))
        return _ext(Ext.RECORD, _pack([name, values]))
    raise StateFormatError(
        f"cannot write a {t.__module__}.{t.__qualname__} into a state file: not a state type "
        "(runtime.checkpoint.format.register_state_type)"
    )


def _custom(cls: type, method: str) -> bool:
    """`cls` defines `method` itself (not only `object`'s default)."""
    return getattr(cls, method, None) is not getattr(object, method, None)


def _dtype_text(dt: np.dtype) -> Any:
    return dt.descr if dt.fields is not None else dt.str


def _ndarray_fields(a: np.ndarray) -> list[Any]:
    if a.dtype.hasobject:
        return ["O", list(a.shape), a.ravel().tolist()]
    return [_dtype_text(a.dtype), list(a.shape), np.ascontiguousarray(a).tobytes()]


def _str_array_fields(a: np.ndarray) -> list[Any] | None:
    """`[shape, Arrow IPC stream]` of an object array holding only strings (and None):
    an Arrow string column reads back into Python strings in C, without a MessagePack
    value per element. None for any other object array, or a small one."""
    if not a.dtype.hasobject or a.size < 8:
        return None
    values = a.ravel().tolist()
    if not set(map(type, values)) <= _STR_OR_NONE:
        return None
    import pyarrow as pa

    try:
        col = pa.array(values, type=pa.string())
    except (pa.ArrowException, OverflowError, UnicodeEncodeError):  # over 2 GiB of text, lone surrogates
        return None
    b = pa.record_batch([col], names=["c"])
    return [list(a.shape), _ipc(pa, b.schema, [b])]


_STR_OR_NONE = frozenset({str, type(None)})


def _arrow_fields(obj: Any) -> list[Any] | None:
    import sys

    pa = sys.modules.get("pyarrow")
    if pa is None:
        return None
    if isinstance(obj, pa.DataType):
        return ["type", pa.schema([pa.field("t", obj)]).serialize().to_pybytes()]
    if isinstance(obj, pa.Field):
        return ["field", pa.schema([obj]).serialize().to_pybytes()]
    if isinstance(obj, pa.Schema):
        return ["schema", obj.serialize().to_pybytes()]
    if isinstance(obj, pa.RecordBatch):
        return ["batch", _ipc(pa, obj.schema, [obj])]
    if isinstance(obj, pa.Table):
        return ["table", _ipc(pa, obj.schema, obj.to_batches())]
    if isinstance(obj, pa.ChunkedArray):
        t = pa.table({"c": obj})
        return ["chunked", _ipc(pa, t.schema, t.to_batches())]
    if isinstance(obj, pa.Array):
        b = pa.record_batch([obj], names=["c"])
        return ["array", _ipc(pa, b.schema, [b])]
    return None


def _ipc(pa: Any, schema: Any, batches: list[Any]) -> bytes | int:
    """The Arrow IPC stream of `batches`: its bytes, or (inside `_pack_value`, when large)
    the index of the out-of-band buffer that holds them, written without a copy."""
    size = pa.MockOutputStream()  # measured first: written once into a buffer of its size
    with pa.ipc.new_stream(size, schema) as w:
        for b in batches:
            w.write_batch(b)
    buf = pa.allocate_buffer(size.size())
    with pa.ipc.new_stream(pa.FixedSizeBufferWriter(buf), schema) as w:
        for b in batches:
            w.write_batch(b)
    buffers = _LOCAL.buffers
    if buffers is not None and buf.size >= _OOB_MIN_BYTES:
        buffers.append(np.frombuffer(buf, dtype=np.uint8))
        return len(buffers) - 1
    return bytes(buf)


_SCALARS = frozenset({int, float, str, bytes, bool, type(None)})
# INT_LIST element width in bytes (one ASCII digit at the payload's start: little-endian
# signed ints of that width follow) and the range each holds
_INT_WIDTHS = {
    "1": (-(2**7), 2**7 - 1),
    "2": (-(2**15), 2**15 - 1),
    "4": (-(2**31), 2**31 - 1),
    "8": (-(2**63), 2**63 - 1),
}
_NESTED = frozenset({list, dict, tuple})


def _prepare(obj: Any) -> Any:
    """`obj` with its lists of rows and tuple-keyed dicts in their columnar layouts (the
    per-element work happens in C: type sets, zip); everything else is left as is."""
    t = type(obj)
    if t is list:
        if len(obj) < 8:
            return [_prepare(x) for x in obj] if any(type(x) in _NESTED for x in obj) else obj
        types = set(map(type, obj))
        if types == {int}:  # slots, key groups, counters: one int64 buffer
            try:
                arr = np.array(obj, dtype="<i8")
            except OverflowError:
                return obj
            lo, hi = int(arr.min()), int(arr.max())
            code = next(c for c, (a, b) in _INT_WIDTHS.items() if a <= lo and hi <= b)
            return _ext(Ext.INT_LIST, code.encode() + arr.astype(f"<i{code}").tobytes())
        if types == {float}:
            return _ext(Ext.FLOAT_LIST, np.array(obj, dtype="<f8").tobytes())
        if types == {tuple}:
            rows = _rows(obj)
            if rows is not None:
                return rows
        if types & _NESTED:
            return [_prepare(x) for x in obj]
        return obj
    if t is dict:
        if not obj:
            return obj
        values = list(obj.values())
        if len(obj) >= 8 and set(map(type, obj)) == {tuple}:
            keys = _rows(list(obj))
            if keys is not None:  # the values list takes its own layout in _pack
                return _ext(Ext.TUPLE_KEYED_DICT, _pack([keys, values]))
        if not set(map(type, values)) & _NESTED:
            return obj
        return dict(zip(obj, [_prepare(v) for v in values], strict=True))
    return obj


def _rows(rows: list[tuple[Any, ...]]) -> msgpack.ExtType | None:
    """Equally long tuples as columns (None when their lengths differ)."""
    widths = set(map(len, rows))
    if len(widths) != 1 or 0 in widths:
        return None
    (width,) = widths
    cols = [_pack(list(map(itemgetter(i), rows))) for i in range(width)]
    return _ext(Ext.ROWS, msgpack.packb([len(rows), width, cols], use_bin_type=True))


def _pack(obj: Any) -> bytes:
    obj = _prepare(obj)
    try:
        return msgpack.packb(obj, default=_default, strict_types=True, use_bin_type=True, datetime=False)  # type: ignore[no-any-return]
    except OverflowError:  # an int beyond 64 bits somewhere: MessagePack has no hook for it
        return msgpack.packb(_big_ints(obj), default=_default, strict_types=True, use_bin_type=True)  # type: ignore[no-any-return]


def _big_ints(obj: Any) -> Any:
    """`obj` with every int outside MessagePack's range as a BIGINT extension."""
    t = type(obj)
    if t is int:
        return obj if -(2**63) <= obj < 2**64 else _ext(Ext.BIGINT, str(obj).encode())
    if t is list:
        return [_big_ints(x) for x in obj]
    if t is tuple:
        return _ext(Ext.TUPLE, _pack([_big_ints(x) for x in obj]))
    if t is dict:
        return {_big_ints(k): _big_ints(v) for k, v in obj.items()}
    return obj


# ------------------------------------------------------------------------------- read
def _ext_hook(code: int, data: bytes | memoryview) -> Any:
    if code == Ext.BUFFER_EXT:
        return _buffer_ext(_unpack(data))
    if code == Ext.TUPLE:
        return tuple(_unpack(data))
    if code == Ext.NDARRAY:
        return _ndarray(_unpack(data))
    if code == Ext.SET:
        return set(_unpack(data))
    if code == Ext.FROZENSET:
        return frozenset(_unpack(data))
    if code == Ext.DECIMAL:
        return Decimal(bytes(data).decode("ascii"))
    if code == Ext.BIGINT:
        return int(bytes(data).decode("ascii"))
    if code == Ext.NPSCALAR:
        dt, raw = _unpack(data)
        return np.frombuffer(raw, dtype=_dtype(dt), count=1)[0]
    if code == Ext.DTYPE:
        return _dtype(_unpack(data))
    if code == Ext.ARROW:
        return _arrow(_unpack(data))
    if code == Ext.DATETIME:
        y, mo, d, h, mi, sec, us, offset = _unpack(data)
        tz = None if offset is None else _dt.timezone(_dt.timedelta(microseconds=offset))
        return _dt.datetime(y, mo, d, h, mi, sec, us, tzinfo=tz)
    if code == Ext.DATE:
        return _dt.date.fromordinal(_unpack(data))
    if code == Ext.TIME:
        return _dt.time(*_unpack(data))
    if code == Ext.TIMEDELTA:
        d, s, us = _unpack(data)
        return _dt.timedelta(days=d, seconds=s, microseconds=us)
    if code == Ext.RECORD:
        return _record(*_unpack(data))
    if code == Ext.ROWS:
        n, width, cols = msgpack.unpackb(data, raw=False)
        if width < 1 or len(cols) != width:
            raise StateFormatError("malformed rows in a state file")
        columns = [_unpack(c) for c in cols]
        if any(len(c) != n for c in columns):
            raise StateFormatError("rows whose columns differ in length in a state file")
        return list(zip(*columns, strict=True))
    if code == Ext.INT_LIST:
        width = bytes(data[:1]).decode("ascii", "replace")
        if width not in _INT_WIDTHS:
            raise StateFormatError(f"invalid int list width {width!r} in a state file")
        return np.frombuffer(data, dtype=f"<i{width}", offset=1).tolist()
    if code == Ext.FLOAT_LIST:
        return np.frombuffer(data, dtype="<f8").tolist()
    if code == Ext.BUFFER_ARRAY:
        return _buffer_array(_unpack(data))
    if code == Ext.STR_ARRAY:
        return _str_array(_unpack(data))
    if code == Ext.TUPLE_KEYED_DICT:
        keys, values = _unpack(data)
        return dict(zip(keys, values, strict=True))
    raise StateFormatError(f"unknown extension code {code} in a state file")


def _dtype(text: Any) -> np.dtype:
    """A dtype from its text; never one holding Python objects (those are read from their
    encoded elements, not from raw bytes, which would be pointers)."""
    try:
        dt = np.dtype([tuple(f) for f in text]) if isinstance(text, list) else np.dtype(text)
    except (TypeError, ValueError) as e:
        raise StateFormatError(f"invalid array dtype {text!r} in a state file ({e})") from None
    if not isinstance(text, (str, list)) or dt.hasobject:
        raise StateFormatError(f"invalid array dtype {text!r} in a state file")
    return dt


def _ndarray(fields: Any) -> np.ndarray:
    dt, shape, payload = fields
    if dt == "O":
        a = np.empty(len(payload), dtype=object)
        a[:] = payload
        return a.reshape(shape)
    return np.frombuffer(payload, dtype=_dtype(dt)).reshape(shape).copy()


def _str_array(fields: Any) -> np.ndarray:
    """An object array of strings (and None) from its Arrow string column."""
    shape, data = fields
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
        raise StateFormatError(f"invalid array shape {shape!r} in a state file")
    col = _arrow(["array", data])
    import pyarrow as pa

    if not pa.types.is_string(col.type):
        raise StateFormatError("a string array in a state file holds no strings")
    out = col.to_numpy(zero_copy_only=False)
    if not out.flags.writeable:
        out = out.copy()
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count != len(out):
        raise StateFormatError("a string array's length does not match its shape in a state file")
    return out.reshape(shape)


def _read_buffer(index: Any, what: str) -> memoryview:
    """Out-of-band buffer `index` of the state file being read (checked: it exists)."""
    buffers = _LOCAL.read_buffers
    if buffers is None or type(index) is not int or not 0 <= index < len(buffers):
        raise StateFormatError(f"{what} refers to a buffer the state file does not hold")
    return buffers[index]


def _buffer_ext(fields: Any) -> Any:
    """An extension value whose payload is out of band."""
    code, index = fields
    buf = _read_buffer(index, "a value")
    if type(code) is not int or code == Ext.BUFFER_EXT:
        raise StateFormatError(f"invalid out-of-band extension code {code!r} in a state file")
    return _ext_hook(code, buf)


def _buffer_array(fields: Any) -> np.ndarray:
    """An array whose bytes are out of band, checked against its dtype and shape: a view of
    the file's bytes when they are writable and the buffer is aligned (restore reads a file
    into its own bytearray: no copy), else a copy (so it is always writable and aligned)."""
    index, dt, shape = fields
    buf = _read_buffer(index, "an array")
    dtype = _dtype(dt)
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
        raise StateFormatError(f"invalid array shape {shape!r} in a state file")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count * dtype.itemsize != len(buf):
        raise StateFormatError("an array's buffer does not match its dtype and shape in a state file")
    out = np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
    if not (out.flags.writeable and out.flags.aligned):
        out = out.copy()
    return out


def _map_layout(schema: Any) -> Any:
    """`schema` with its Arrow maps in the MAP layout (`runtime.map_values.without_arrow_maps`):
    equal to `schema` unless the file was written by an older streamsql, which kept MAP values
    as Arrow maps."""
    import pyarrow as pa

    from runtime.map_values import without_arrow_maps

    return pa.schema([f.with_type(without_arrow_maps(f.type)) for f in schema], schema.metadata)


def _arrow(fields: Any) -> Any:
    import pyarrow as pa

    kind, data = fields
    if kind not in _ARROW_KINDS:
        raise StateFormatError(f"unknown Arrow value kind {kind!r} in a state file")
    if kind in ("type", "field", "schema"):
        schema = pa.ipc.read_schema(pa.py_buffer(data))
        schema = _map_layout(schema)
        return schema if kind == "schema" else schema.field(0) if kind == "field" else schema.field(0).type
    if type(data) is int:  # out of band: Arrow reads the file's bytes in place (immutable)
        data = _read_buffer(data, "an Arrow value")
    elif type(data) is not bytes:
        raise StateFormatError("malformed Arrow value in a state file")
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    layout = _map_layout(table.schema)
    if layout != table.schema:
        table = table.cast(layout)
    if kind == "table":
        return table
    if kind == "batch":
        return (
            table.combine_chunks().to_batches()[0] if table.num_rows else pa.RecordBatch.from_pylist([], table.schema)
        )
    col = table.column(0)
    return col if kind == "chunked" else col.combine_chunks()


def _record(name: str, values: Any) -> Any:
    cls = _TYPES.get(name)
    if cls is None:
        raise StateFormatError(f"state type {name!r} is not known to this streamsql")
    if issubclass(cls, enum.Enum):
        return cls(values)
    obj = cls.__new__(cls)
    if _custom(cls, "__setstate__"):
        obj.__setstate__(values)  # type: ignore[attr-defined]
        return obj
    if not isinstance(values, dict):
        raise StateFormatError(f"state type {name!r} with fields that are not a map")
    for k, v in values.items():
        object.__setattr__(obj, k, v)
    return obj


def _unpack(data: bytes | memoryview) -> Any:
    return msgpack.unpackb(data, ext_hook=_ext_hook, raw=False, strict_map_key=False, use_list=True, timestamp=0)


class _Local(threading.local):
    """The out-of-band buffers of the value being packed / unpacked on this thread (None:
    not inside `pack_value` / `unpack_value`, so arrays stay in band)."""

    buffers: list[np.ndarray] | None = None
    read_buffers: list[memoryview] | None = None


_LOCAL = _Local()
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def _pack_value(obj: Any) -> bytes:
    """`obj` packed with its large arrays out of band: the values nested in it share one
    buffer list, so an array's bytes are copied once into the result whatever its depth.
    The result is self-contained (a `pack` called while packing gets its own buffers)."""
    return b"".join(_value_parts(obj))


def _value_parts(obj: Any) -> list[Any]:
    """The pieces of `_pack_value(obj)` in order, not yet joined (so a file header joins
    in without copying the whole value a second time)."""
    outer = _LOCAL.buffers
    buffers: list[np.ndarray] = []
    _LOCAL.buffers = buffers
    try:
        body = _pack(obj)
    finally:
        _LOCAL.buffers = outer
    if not buffers:
        return [body]
    parts: list[Any] = [bytes([OOB_TAG]), _U32.pack(len(buffers) | ALIGNED), _U64.pack(len(body)), body]
    pos = 13 + len(body)
    for a in buffers:
        pos += 8
        pad = -pos % _ALIGN
        parts.append(_U64.pack(a.nbytes) + bytes(pad))
        parts.append(memoryview(a).cast("B"))  # type: ignore[arg-type]
        pos += pad + a.nbytes
    return parts


def _unpack_value(data: bytes | memoryview) -> Any:
    """Inverse of `_pack_value` (also reads values without out-of-band buffers)."""
    view = memoryview(data)
    if not len(view) or view[0] != OOB_TAG:
        return _unpack(view)
    try:
        (count,) = _U32.unpack_from(view, 1)
        aligned, count = bool(count & ALIGNED), count & ~ALIGNED
        (body_len,) = _U64.unpack_from(view, 5)
        pos = 13 + body_len
        body = view[13:pos]
        buffers = []
        for _ in range(count):
            (n,) = _U64.unpack_from(view, pos)
            pos += 8
            if aligned:
                pad = -pos % _ALIGN
                if view[pos : pos + pad] != bytes(pad):
                    raise StateFormatError("a state file's buffer padding is not zero")
                pos += pad
            if pos + n > len(view):
                raise StateFormatError("a state file's buffer runs past its end")
            buffers.append(view[pos : pos + n])
            pos += n
    except struct.error:
        raise StateFormatError("a state file's buffer table is truncated") from None
    if pos != len(view) or len(body) != body_len:
        raise StateFormatError("a state file's buffer table does not match its length")
    outer, _LOCAL.read_buffers = _LOCAL.read_buffers, buffers
    try:
        return _unpack(body)
    finally:
        _LOCAL.read_buffers = outer


# ---------------------------------------------------------------------------- public
def header(version: int = FORMAT_VERSION) -> bytes:
    """A state file's header: MAGIC, the version, and from version 4 two zero bytes (so the
    value starts 8 bytes in and its aligned buffers are aligned in the file)."""
    return MAGIC + version.to_bytes(2, "big") + bytes(_header_size(version) - _HEADER)


def _header_size(version: int) -> int:
    return _HEADER + 2 if version >= 4 else _HEADER


def encode(obj: Any) -> bytes:
    """A state file holding `obj` (header, then the value)."""
    return b"".join([header(), *_value_parts(obj)])


def decode(data: bytes | bytearray | memoryview, what: str = "state file") -> Any:
    """The value of a state file written by `encode`; `StateFormatError` naming `what` for
    anything else (another format, a newer version, a corrupt payload).

    Given the file's bytes in a writable buffer (as restore reads them), its
    aligned numpy arrays are views of that buffer, not copies (the buffer then lives as long
    as they do); from immutable bytes they are copied."""
    if data[: len(MAGIC)] != MAGIC:
        if data[:1] == b"\x80":
            raise StateFormatError(
                f"{what} is a Python pickle (written by streamsql before state format 2); "
                "pickles are never read, as reading one can run arbitrary code"
            )
        raise StateFormatError(f"{what} is not a streamsql state file (no '{MAGIC.decode()}' header)")
    version = int.from_bytes(data[len(MAGIC) : _HEADER], "big")
    if version not in READABLE_VERSIONS:
        newer = "newer" if version > FORMAT_VERSION else "older"
        raise StateFormatError(
            f"{what} has state format version {version}, {newer} than this streamsql's ({FORMAT_VERSION})"
        )
    size = _header_size(version)
    if data[_HEADER:size] != bytes(size - _HEADER):
        raise StateFormatError(f"{what} has a malformed header")
    try:
        return _unpack_value(memoryview(data)[size:])
    except StateFormatError as e:
        raise StateFormatError(f"{what}: {e}") from None
    except Exception as e:  # noqa: BLE001 - any decoding failure of untrusted bytes is "corrupt"
        raise StateFormatError(f"{what} is corrupt ({type(e).__name__}: {e})") from None


def pack(obj: Any) -> bytes:
    """`obj` without the file header (values inside other structures: RocksDB entries,
    operator snapshots)."""
    return _pack_value(obj)


def unpack(data: bytes) -> Any:
    """Inverse of `pack`."""
    return _unpack_value(data)


def pack_key(key: tuple[Any, ...]) -> bytes:
    """A key tuple as a MessagePack array (equal keys give equal bytes; never starts with
    0x00, which RocksDB value entries use as their tag)."""
    return _pack(list(key))


def unpack_key(data: bytes) -> tuple[Any, ...]:
    return tuple(_unpack(data))


class Digest:
    """The checksum `_metadata` records for a file, "sha256:<hex>", computed over chunks
    (a file streamed from checkpoint storage)."""

    def __init__(self) -> None:
        from hashlib import sha256  # here, not at import: hashlib loads OpenSSL (~4 ms of every start)

        self._h = sha256()

    def update(self, chunk: bytes | bytearray | memoryview) -> None:
        self._h.update(chunk)

    def text(self) -> str:
        return "sha256:" + self._h.hexdigest()


def digest(data: bytes | bytearray | memoryview) -> str:
    """The checksum `_metadata` records for a file: "sha256:<hex>"."""
    d = Digest()
    d.update(data)
    return d.text()
