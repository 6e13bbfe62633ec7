"""runtime/state/ttl.py: last-write bookkeeping, expiry, configuration and the clock."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from runtime.checkpoint import format as state_format
from runtime.state import ttl as ttl_mod
from runtime.state.ttl import NEVER, StateTtl, now_ms, operator_ttl, set_clock, state_bytes, ttl_from_config


def test_touch_and_expire_exactly_at_ttl() -> None:
    t = StateTtl(100)
    t.touch(np.array([0, 3]), 1000)
    t.touch(np.array([1]), 1050)
    assert t.expired(1099).tolist() == []  # nothing due yet
    assert t.expired(1100).tolist() == [0, 3]  # last write + ttl <= now
    assert t.expired(1100).tolist() == []  # returned once, then untracked
    assert t.expired(1149).tolist() == []
    assert t.expired(1150).tolist() == [1]
    assert t.expired_total == 3


def test_a_write_restarts_the_ttl() -> None:
    t = StateTtl(100)
    t.touch(np.array([2]), 0)
    t.touch(np.array([2]), 90)
    assert t.expired(150).tolist() == []
    assert t.expired(190).tolist() == [2]


def test_forget_and_negative_slots_and_growth() -> None:
    t = StateTtl(10)
    t.touch(np.array([-1, 5, 40]), 0)
    assert len(t.last) >= 41 and t.last[0] == NEVER
    t.forget(np.array([5]))
    assert t.tracked() == 1
    assert t.expired(10).tolist() == [40]


def test_disabled_ttl_tracks_nothing() -> None:
    t = StateTtl(0)
    assert not t.enabled
    t.touch(np.array([1, 2]), 0)
    assert len(t.last) == 0
    assert t.expired(10**15).tolist() == []


def test_next_due_skips_the_scan_until_something_can_expire() -> None:
    t = StateTtl(1000)
    t.touch(np.arange(10), 5)
    assert t.next_due == 1005
    t.touch(np.arange(10), 500)  # all rewritten later: the bound is stale-low, still correct
    assert t.expired(1005).tolist() == []
    assert t.next_due == 1500  # recomputed from the oldest tracked write
    assert t.expired(1499).tolist() == []


def test_state_file_round_trip_and_reconfigure_keep_timestamps() -> None:
    t = StateTtl(100)
    t.touch(np.array([0, 1]), 10)
    t.touch(np.array([2]), 50)
    r = state_format.decode(state_format.encode(t))
    r.reconfigure(20)  # the restored job's TTL applies to the restored timestamps
    assert r.next_due == 30
    assert r.expired(35).tolist() == [0, 1]
    r.reconfigure(0)
    assert r.expired(10**9).tolist() == []


def test_config_and_hint_precedence() -> None:
    assert ttl_from_config({}) == 0
    assert ttl_from_config({"table.exec.state.ttl": "1 h"}) == 3_600_000
    assert ttl_from_config({"table.exec.state.ttl": "1d"}) == 86_400_000
    assert ttl_from_config({"table.exec.state.ttl": "250"}) == 250
    with pytest.raises(ValueError, match=r"table\.exec\.state\.ttl"):
        ttl_from_config({"table.exec.state.ttl": "soon"})
    cfg = {"table.exec.state.ttl": "10 s"}
    assert operator_ttl(cfg, {}) == 10_000
    assert operator_ttl(cfg, {"state_ttl_ms": 5}) == 5
    assert operator_ttl(cfg, {"state_ttl_ms": 0}) == 0  # a hint of 0 disables it
    assert operator_ttl(cfg, {"state_ttl_ms": [7, None]}, side=0) == 7
    assert operator_ttl(cfg, {"state_ttl_ms": [7, None]}, side=1) == 10_000


def test_clock_is_injectable() -> None:
    prev = set_clock(lambda: 42)
    try:
        assert now_ms() == 42
    finally:
        set_clock(prev)
    assert ttl_mod._clock is prev  # noqa: SLF001 - restored
    set_clock(None)
    assert abs(now_ms() - ttl_mod._system_clock()) < 10_000  # noqa: SLF001


def test_state_bytes_walks_arrays_tables_and_objects() -> None:
    class Holder:
        def __init__(self) -> None:
            self.a = np.zeros(10, dtype=np.int64)
            self.parts = [pa.array([1, 2, 3], pa.int64())]
            self.name = "x"

    assert state_bytes(np.zeros(4, dtype=np.int64)) == 32
    assert state_bytes(Holder()) == 80 + 24
    assert state_bytes(None, 3, "s") == 0
    assert state_bytes(pa.table({"x": pa.array([1, 2], pa.int64())})) == 16
