"""Property test: the vectorized `hashmap` key index against a dict model, under random
lookups (with and without create), removes and slot reuse, for int, string, NULL, float
(NaN, -0.0) and composite keys, with the real hash and with a deliberately weak one
(every key colliding with many others, so exact comparison and probing past 64-bit
collisions are exercised)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.state import HashMapStateBackend, hashindex, key_groups_of_rows

INTS = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([2**40, -(2**62)]))
STRS = st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab", "ba", "x" * 9, "x" * 17, "é", "a\x00"]))
FLOATS = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), -1.5, float("inf")]))

KEY_TYPES: dict[str, tuple[list[pa.DataType], Any]] = {
    "int": ([pa.int64()], st.tuples(INTS)),
    "string": ([pa.string()], st.tuples(STRS)),
    "float": ([pa.float64()], st.tuples(FLOATS)),
    "composite": (
        [pa.string(), pa.int32(), pa.float64()],
        st.tuples(STRS, INTS.filter(lambda v: v is None or abs(v) < 2**31), FLOATS),
    ),
}


def model_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key as the model compares it: NaN equals NaN, -0.0 equals 0.0 (Python does)."""
    return tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in key)


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b) and type(a) is type(b)


def ops_strategy(key_strategy: Any) -> Any:
    batch = st.lists(key_strategy, min_size=1, max_size=12)
    op = st.one_of(
        st.tuples(st.just("lookup"), batch, st.booleans()),
        st.tuples(st.just("remove"), st.lists(st.integers(0, 30), max_size=6), st.none()),
        st.tuples(st.just("restore"), st.none(), st.none()),
    )
    return st.lists(op, min_size=1, max_size=25)


def weak_mix(h: np.ndarray) -> np.ndarray:
    """A hash with four values: nearly every pair of keys collides."""
    return (np.asarray(h, dtype=np.uint64) % np.uint64(4)) * np.uint64(0x4000000000000001)


def run_model(types: list[pa.DataType], ops: list[Any]) -> None:
    backend = HashMapStateBackend(max_parallelism=8)
    model: dict[tuple[Any, ...], int] = {}
    order: list[int] = []  # live slots in insertion order
    for kind, arg, create in ops:
        if kind == "lookup":
            cols = [pa.array([k[j] for k in arg], type=t) for j, t in enumerate(types)]
            slots = backend.lookup(cols, len(arg), create=create).tolist()
            for key, slot in zip(arg, slots, strict=True):
                mk = model_key(key)
                if mk in model:
                    assert slot == model[mk]
                elif create:
                    assert slot not in order  # a free or fresh slot
                    model[mk] = slot
                    order.append(slot)
                else:
                    assert slot == -1
            if create:
                groups = backend.key_groups(np.array(slots, dtype=np.int64))
                assert groups.tolist() == key_groups_of_rows(cols, len(arg), 8).tolist()
        elif kind == "remove":
            live = list(order)
            victims = [live[i % len(live)] for i in arg] if live else [-1]
            backend.remove(np.array(victims, dtype=np.int64))
            for s in set(victims):
                if s in order:
                    order.remove(s)
                    model = {k: v for k, v in model.items() if v != s}
        else:  # checkpoint: snapshot and restore into a fresh backend
            snap = backend.snapshot()
            backend = HashMapStateBackend(max_parallelism=8)
            backend.restore(snap)
        assert backend.live_slots().tolist() == order
        assert len(backend) == len(order)
        by_slot = {v: k for k, v in model.items()}
        for slot, key in zip(order, backend.keys_of(np.array(order, dtype=np.int64)), strict=True):
            want = by_slot[slot]
            assert len(key) == len(want)
            assert all(same_value(a, b) or (b == "NaN" and a != a) for a, b in zip(key, want, strict=True)), (key, want)
        if order:
            assert backend.contains(np.array(order, dtype=np.int64)).all()


@pytest.mark.parametrize("weak_hash", [False, True])
@pytest.mark.parametrize("key_type", sorted(KEY_TYPES))
def test_index_matches_a_dict_model(key_type: str, weak_hash: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    types, key_strategy = KEY_TYPES[key_type]
    if weak_hash:
        monkeypatch.setattr(hashindex, "probe_hash", weak_mix)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(ops_strategy(key_strategy))
    def check(ops: list[Any]) -> None:
        run_model(types, ops)

    check()
