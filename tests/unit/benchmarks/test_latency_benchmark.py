"""benchmarks/latency.py: per-row latencies from the updates of a keyed aggregation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]


def _latency_module():
    spec = importlib.util.spec_from_file_location("bench_latency", ROOT / "benchmarks" / "latency.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_latency"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_each_row_gets_the_first_update_reflecting_it() -> None:
    lat = _latency_module()
    # 2 keys, rate 1000 rows/s (row i ingested at t0 + i ms), t0 = 10 s.
    # key 0 rows 0, 2, 4; key 1 rows 1, 3.  Updates (arrival s, MAX(seq)):
    arrival = np.array([10.010, 10.020, 10.050, 10.030])
    newest = np.array([2, 1, 4, 3])
    got = lat.row_latencies(arrival, newest, 2, 10.0, 1000)
    # key 0: rows 0, 2 at 10.010 (10 ms, 8 ms), row 4 at 10.050 (46 ms);
    # key 1: row 1 at 10.020 (19 ms), row 3 at 10.030 (27 ms)
    assert sorted(np.round(got, 6).tolist()) == [8.0, 10.0, 19.0, 27.0, 46.0]


def test_a_repeated_update_reflects_nothing_new() -> None:
    lat = _latency_module()
    got = lat.row_latencies(np.array([1.0, 2.0]), np.array([0, 0]), 1, 0.0, 1000)
    assert got.tolist() == [1000.0]
