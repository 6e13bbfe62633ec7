"""The state file format (runtime/checkpoint/format.py): every value kind operators keep
round-trips exactly, and reading a crafted file can construct nothing but data: the pickle
trick and other object-construction tricks fail cleanly without running anything."""

from __future__ import annotations

import datetime as dt
import os
import pickle
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.checkpoint import format as state_format
from runtime.checkpoint.format import Ext, StateFormatError
from runtime.types import DataType


@state_format.register_state_type
@dataclass
class _Point:
    x: int
    y: list[int]


class _WithState:
    def __init__(self) -> None:
        self.a = 1
        self.transient = "dropped"

    def __getstate__(self) -> dict[str, Any]:
        return {"a": self.a}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.transient = "rebuilt"


state_format.register_state_type(_WithState)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
            if a.dtype != object
            else list(a.ravel()) == list(b.ravel())
        )
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    if isinstance(a, (pa.Array, pa.ChunkedArray, pa.RecordBatch, pa.Table)):
        return type(a) is type(b) and a.equals(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -(2**63),
    2**64 - 1,
    2**100,
    -(3**90),
    1.5,
    float("nan"),
    float("-inf"),
    "",
    "ünïcode",
    b"\x00\xff",
    [],
    (),
    (1, "a", None),
    [(1, "a"), (2, "b")] * 10,  # rows: the columnar layout
    [(1,), (2, 3)] * 5,  # rows of differing widths
    [()] * 9,
    {"a": 1, 2: "b", None: [1]},
    {(i, str(i)): i for i in range(20)},  # tuple keys: the columnar layout
    {(1, 2): {(3,): [(4, 5)]}},
    {str(i): i for i in range(20)},  # int values: one int64 buffer
    {i: [i] for i in range(20)},
    list(range(-5, 50)),  # ints: the int64 layout
    [2**63 - 1, -(2**63)] * 5,
    [2**64, 1, 2, 3, 4, 5, 6, 7, 8],  # beyond int64: the general layout
    [0.5, float("inf"), -0.0] * 4,
    [1, 2.0, 3, 4, 5, 6, 7, 8, True],  # mixed: the general layout
    {1, 2, 3},
    frozenset({"x"}),
    Decimal("12345678901234567890.123456789"),
    Decimal("-0.00"),
    dt.datetime(2024, 2, 29, 23, 59, 59, 999999),
    dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-3, minutes=-30))),
    dt.date(1, 1, 1),
    dt.time(12, 30, 1, 5),
    dt.timedelta(days=-2, seconds=5, microseconds=7),
    np.arange(10, dtype=np.int64),
    np.array([1.5, np.nan], dtype=">f8"),
    np.zeros((3, 4), dtype=np.int8),
    np.array([True, False]),
    np.array(["ab", "c"]),
    np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
    np.array([Decimal("1.1"), None, (1, 2)], dtype=object),
    np.empty(0, dtype=object),
    np.int32(7),
    np.float64(2.5),
    np.dtype("<u2"),
    pa.array([1, None, 3]),
    pa.array(["x", None]),
    pa.chunked_array([[1, 2], [3]]),
    pa.record_batch([pa.array([1, 2]), pa.array(["a", "b"])], names=["k", "v"]),
    pa.record_batch([pa.array([], pa.int64())], names=["k"]),
    pa.table({"a": [1, 2], "b": [[1], None]}),
    pa.int64(),
    pa.list_(pa.struct([("x", pa.timestamp("ms", "UTC"))])),
    pa.field("f", pa.decimal128(10, 2), nullable=False),
    pa.schema([("a", pa.int8())]),
    DataType("INT", True),
    _Point(3, [1, 2]),
]


@pytest.mark.parametrize("value", VALUES, ids=[f"{i}-{type(v).__name__}" for i, v in enumerate(VALUES)])
def test_round_trip(value: Any) -> None:
    back = state_format.decode(state_format.encode(value))
    assert _same(value, back), (value, back)
    assert _same(value, state_format.unpack(state_format.pack(value)))


def test_registered_types_use_their_own_state_methods() -> None:
    back = state_format.decode(state_format.encode(_WithState()))
    assert type(back) is _WithState and back.a == 1 and back.transient == "rebuilt"


def test_key_encoding_is_deterministic_and_never_starts_with_the_value_tag() -> None:
    for key in [(0,), (1, "a"), (None,), (b"",), tuple(range(20)), (Decimal("1.0"), dt.date(2020, 1, 1))]:
        data = state_format.pack_key(key)
        assert data[0] != 0 and data == state_format.pack_key(tuple(key))
        assert state_format.unpack_key(data) == key


def test_unregistered_objects_are_refused_when_writing() -> None:
    class Foreign:
        pass

    with pytest.raises(StateFormatError, match="not a state type"):
        state_format.encode({"x": Foreign()})


def test_header_version_and_pickle_are_refused_with_a_reason() -> None:
    good = state_format.encode([1])
    assert good[:4] == b"SSQS"
    with pytest.raises(StateFormatError, match="newer"):
        state_format.decode(state_format.header(state_format.FORMAT_VERSION + 1) + good[8:])
    with pytest.raises(StateFormatError, match="older"):
        state_format.decode(state_format.header(1) + good[8:])
    with pytest.raises(StateFormatError, match="malformed header"):
        state_format.decode(good[:6] + b"\x00\x01" + good[8:])
    with pytest.raises(StateFormatError, match="pickle"):
        state_format.decode(pickle.dumps({"a": 1}))
    with pytest.raises(StateFormatError, match="not a streamsql state file"):
        state_format.decode(b"PK\x03\x04")


# --------------------------------------------------------------- code execution tricks
class _Boom:
    """What an attacker's pickle would construct: a call to os.system on load."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def _tricks(marker: Path) -> list[bytes]:
    header = state_format.header()

    def ext(code: int, payload: Any) -> bytes:
        return header + msgpack.packb(msgpack.ExtType(code, msgpack.packb(payload, use_bin_type=True)))

    evil = pickle.dumps(_Boom(marker))
    return [
        evil,  # a plain pickle
        header + evil,  # a pickle behind a valid header
        ext(Ext.RECORD, ["os.system", f"touch {marker}"]),  # a class by module path
        ext(Ext.RECORD, ["builtins.eval", {"x": f"__import__('os').system('touch {marker}')"}]),
        ext(Ext.RECORD, ["subprocess.Popen", {"args": ["touch", str(marker)]}]),
        ext(Ext.NDARRAY, ["O", [1], evil]),  # an object array from raw bytes
        ext(Ext.NDARRAY, ["|O", [1], evil]),
        ext(Ext.NPSCALAR, ["O", evil]),
        ext(Ext.DTYPE, [["a", "O"]]),  # a structured dtype with objects
        ext(Ext.ARROW, ["pickle", evil]),
        ext(Ext.DECIMAL, "__import__('os')"),
        ext(99, evil),  # an unknown extension
        header + msgpack.packb(msgpack.ExtType(Ext.BIGINT, b"1" * 100_000)),
        header + msgpack.packb(msgpack.ExtType(Ext.ROWS, msgpack.packb([10**9, 1, []]))),
    ]


def test_crafted_files_cannot_run_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for i, data in enumerate(_tricks(marker)):
        try:
            value = state_format.decode(data, f"trick {i}")
        except StateFormatError:
            continue
        # anything that decodes is plain data (e.g. a big int), never a callable's result
        assert isinstance(value, (int, str, bytes, list, dict, Decimal, np.ndarray)), (i, type(value))
    assert not marker.exists()


def test_numpy_object_arrays_in_state_hold_decoded_values_only() -> None:
    a = np.array([1, "x", None], dtype=object)
    data = state_format.encode(a)
    assert b"\x80\x04" not in data and b"\x80\x05" not in data  # no pickle inside
    assert list(state_format.decode(data)) == [1, "x", None]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes_decode_or_fail_cleanly(data: bytes) -> None:
    header = state_format.header()
    for blob in (data, header + data):
        try:
            state_format.decode(blob)
        except StateFormatError:
            pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=255))
def test_a_flipped_byte_decodes_or_fails_cleanly(pos: int, value: int) -> None:
    data = bytearray(state_format.encode(VALUES))
    data[pos % len(data)] = value
    try:
        state_format.decode(bytes(data))
    except StateFormatError:
        pass


# ------------------------------------------------------------------ out-of-band buffers
_BIG = np.arange(50_000, dtype=np.int64)  # 400 kB: over the out-of-band threshold


def test_large_arrays_go_out_of_band_at_any_depth_and_come_back_writable() -> None:
    value = {"slots": _BIG, "nested": [(_BIG[::-1].copy(), {"p": _Point(1, [2])})], "f": _BIG.astype("<f4")}
    data = state_format.encode(value)
    assert data[len(state_format.header())] == state_format.OOB_TAG
    assert data.count(_BIG.tobytes()) == 1  # copied into the file once, not once per level
    back = state_format.decode(data)
    assert back["slots"].tolist() == _BIG.tolist() and back["slots"].flags.writeable
    assert back["nested"][0][0].tolist() == _BIG[::-1].tolist()
    assert back["nested"][0][1]["p"] == _Point(1, [2])
    assert back["f"].dtype == np.dtype("<f4") and back["f"].tolist() == _BIG.astype("<f4").tolist()


def test_a_packed_value_inside_a_state_file_keeps_its_own_buffers() -> None:
    inner = state_format.pack({"a": _BIG})  # what an operator's snapshot_state returns
    back = state_format.unpack(state_format.decode(state_format.encode({"op": inner, "b": _BIG}))["op"])
    assert back["a"].tolist() == _BIG.tolist()


def test_aligned_arrays_are_read_in_place_from_a_writable_buffer() -> None:
    """Restore reads a state file into its own bytearray: its arrays are aligned views of it
    (no copy) and writable; from immutable bytes they are copies."""
    value = {"a": _BIG, "b": _BIG[:20_001].astype("<i2"), "c": _BIG.astype("<f8")}
    data = state_format.encode(value)
    buf = bytearray(data)
    back = state_format.decode(buf)
    for name, arr in back.items():
        assert arr.tolist() == value[name].tolist()
        assert arr.flags.writeable and arr.flags.aligned and not arr.flags.owndata, name
        assert np.shares_memory(arr, np.frombuffer(buf, dtype=np.uint8)), name
    back["a"][0] = 99  # writing one array touches no other
    assert back["c"][0] == 0 and back["b"][0] == 0
    copied = state_format.decode(data)["a"]
    assert copied.flags.writeable and copied.flags.owndata


def test_version_3_files_with_unaligned_buffers_are_still_read() -> None:
    packed = msgpack.packb(_ref(0, shape=(3,)), use_bin_type=True)
    body = bytes([state_format.OOB_TAG]) + (1).to_bytes(4, "little") + len(packed).to_bytes(8, "little") + packed
    v3 = state_format.header(3) + body + (24).to_bytes(8, "little") + np.arange(3, dtype="<i8").tobytes()
    assert len(state_format.header(3)) == 6
    back = state_format.decode(bytearray(v3))
    assert back.tolist() == [0, 1, 2] and back.flags.writeable and back.flags.aligned


def test_nonzero_buffer_padding_is_refused() -> None:
    data = bytearray(state_format.encode({"a": _BIG}))
    start = data.index(_BIG.tobytes())
    assert data[start - 1] == 0  # the padding in front of the aligned buffer
    data[start - 1] = 7
    with pytest.raises(StateFormatError, match="padding|corrupt|does not match"):
        state_format.decode(data)


def test_version_2_files_are_still_read() -> None:
    v2 = state_format.MAGIC + (2).to_bytes(2, "big") + msgpack.packb({"k": [1, 2]})
    assert state_format.decode(v2) == {"k": [1, 2]}


def _oob(body: Any, buffers: list[bytes], count: int | None = None) -> bytes:
    packed = msgpack.packb(body, use_bin_type=True)
    parts = [bytes([state_format.OOB_TAG]), (len(buffers) if count is None else count).to_bytes(4, "little")]
    parts += [len(packed).to_bytes(8, "little"), packed]
    for b in buffers:
        parts += [len(b).to_bytes(8, "little"), b]
    return state_format.header() + b"".join(parts)


def _ref(index: Any, dtype: Any = "<i8", shape: Any = (2,)) -> msgpack.ExtType:
    return msgpack.ExtType(Ext.BUFFER_ARRAY, msgpack.packb([index, dtype, list(shape)]))


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (_oob(_ref(1), [bytes(16)]), "buffer the state file does not hold"),
        (_oob(_ref(-1), [bytes(16)]), "buffer the state file does not hold"),
        (_oob(_ref(0), [bytes(15)]), "does not match its dtype and shape"),
        (_oob(_ref(0, shape=(3,)), [bytes(16)]), "does not match its dtype and shape"),
        (_oob(_ref(0, dtype="O"), [bytes(16)]), "invalid array dtype"),
        (_oob(_ref(0), [bytes(16)], count=2), "runs past its end|truncated"),
        (_oob(_ref(0), [bytes(16)]) + b"x", "does not match its length"),
        (_oob(_ref(0), [bytes(16)])[:-20], "runs past its end|truncated"),
    ],
)
def test_malformed_buffer_tables_are_refused(blob: bytes, message: str) -> None:
    with pytest.raises(StateFormatError, match=message):
        state_format.decode(blob)
    assert state_format.decode(_oob(_ref(0), [bytes(16)])).tolist() == [0, 0]


def test_large_arrow_values_go_out_of_band_and_round_trip() -> None:
    table = pa.table({"k": pa.array(range(20_000)), "s": pa.array([str(i) for i in range(20_000)])})
    data = state_format.encode({"rows": table, "small": pa.array([1, 2])})
    assert data[len(state_format.header())] == state_format.OOB_TAG
    back = state_format.decode(data)
    assert back["rows"].equals(table) and back["small"].to_pylist() == [1, 2]


def test_large_extension_payloads_go_out_of_band_once() -> None:
    strings = np.array([f"s{i}" for i in range(20_000)], dtype=object)
    keys = [(i, f"k{i}") for i in range(20_000)]
    value = [{"acc": _Point(1, list(range(5000))), "strings": strings, "keys": keys}]
    data = state_format.encode(value)
    assert data.count(b"s19999") == 1 and data.count(b"k19999") == 1
    back = state_format.decode(data)
    assert back[0]["strings"].tolist() == strings.tolist() and back[0]["keys"] == keys
    assert back[0]["acc"] == _Point(1, list(range(5000)))


def test_out_of_band_extensions_cannot_nest_or_point_outside() -> None:
    ref = msgpack.ExtType(Ext.BUFFER_EXT, msgpack.packb([Ext.BUFFER_EXT, 0]))
    with pytest.raises(StateFormatError, match="invalid out-of-band extension code"):
        state_format.decode(_oob(ref, [bytes(16)]))
    ref = msgpack.ExtType(Ext.BUFFER_EXT, msgpack.packb([Ext.TUPLE, 3]))
    with pytest.raises(StateFormatError, match="does not hold"):
        state_format.decode(_oob(ref, [bytes(16)]))


def test_arrow_maps_of_an_older_streamsql_are_read_as_the_map_layout() -> None:
    """Savepoints written before MAP values took `runtime.map_values`' layout hold Arrow maps
    (at any depth); reading gives the layout, so today's operators restore them."""
    from runtime.map_values import map_arrow_type

    old = pa.map_(pa.string(), pa.int64())
    maps = pa.array([[("a", 1)], None, [("b", 2), ("c", None)]], type=old)
    batch = pa.record_batch(
        [maps, pa.array([[[("x", 5)]], []], type=pa.list_(old)).take([0, 1, 1])], names=["m", "nested"]
    )
    got = state_format.decode(state_format.encode({"batch": batch, "schema": batch.schema, "column": maps}))
    layout = map_arrow_type(pa.string(), pa.int64())
    assert got["batch"].schema.field("m").type == layout
    assert got["batch"].schema.field("nested").type == pa.list_(layout)
    assert got["schema"].field("m").type == layout
    assert got["column"].type == layout
    assert got["column"].to_pylist() == [
        [{"key": "a", "value": 1}],
        None,
        [{"key": "b", "value": 2}, {"key": "c", "value": None}],
    ]
    assert got["batch"].column(1).to_pylist()[0] == [[{"key": "x", "value": 5}]]
