"""Keyed-state lookups per second: the vectorized `hashmap` index against the former
dict-of-tuples index, for int64 / string / (string, int) keys.

    python benchmarks/state_lookup.py [--keys 10000,1000000] [--batch 8192] [--batches 30]

Each case first inserts every key (batches of `--batch` rows), then times `--batches`
batches of keys drawn uniformly from them (the steady state of a stateful operator: keys
exist). Prints one table row per case: key count, key type, lookups (rows) per second
for the old and the new index and the speed-up. Compare figures from one machine only.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.state.backend import encode_rows
from runtime.state.hashmap import HashMapStateBackend, distinct_keys


class DictIndex:
    """The former `hashmap` key index (a dict from Python key tuples to slots), kept
    here as the baseline: vectorized grouping, then one dict probe per distinct key."""

    def __init__(self) -> None:
        self.index: dict[tuple[Any, ...], int] = {}
        self.groups: list[int] = []

    def lookup(self, keys: Sequence[pa.Array], num_rows: int, create: bool = True) -> np.ndarray:
        inverse, distinct, groups = distinct_keys(keys, num_rows)
        slots = np.empty(len(distinct), dtype=np.int64)
        for i, key in enumerate(distinct):
            s = self.index.get(key)
            if s is None:
                s = len(self.index)
                self.index[key] = s
                self.groups.append(int(groups[i]))
            slots[i] = s
        return slots[inverse]


def make_keys(kind: str, ids: np.ndarray) -> list[pa.Array]:
    if kind == "int64":
        return [pa.array(ids * 7919 + 13, type=pa.int64())]
    names = pa.array(np.char.add("customer-", ids.astype(str)))
    if kind == "string":
        return [names]
    return [pa.array(np.char.add("region-", (ids % 1000).astype(str))), pa.array(ids // 1000, type=pa.int32())]


def timed(
    lookup: Callable[[Sequence[pa.Array], int], np.ndarray], kind: str, n_keys: int, batch: int, batches: int
) -> float:
    rng = np.random.default_rng(42)
    for start in range(0, n_keys, batch):  # insert every key
        ids = np.arange(start, min(start + batch, n_keys))
        lookup(make_keys(kind, ids), len(ids))
    work = [make_keys(kind, rng.integers(0, n_keys, batch)) for _ in range(batches)]
    t0 = time.perf_counter()
    for cols in work:
        lookup(cols, batch)
    return batch * batches / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--keys", default="10000,1000000")
    p.add_argument("--batch", type=int, default=8192)
    p.add_argument("--batches", type=int, default=30)
    p.add_argument("--kinds", default="int64,string,string+int")
    args = p.parse_args()
    encode_rows([pa.array([1])], 1)  # warm imports
    print(f"{'keys':>10} {'key type':<11} {'old lookups/s':>14} {'new lookups/s':>14} {'speed-up':>9}")
    for n_keys in (int(k) for k in args.keys.split(",")):
        for kind in args.kinds.split(","):
            old = timed(DictIndex().lookup, kind, n_keys, args.batch, args.batches)
            new = timed(HashMapStateBackend().lookup, kind, n_keys, args.batch, args.batches)
            print(f"{n_keys:>10,} {kind:<11} {old:>14,.0f} {new:>14,.0f} {new / old:>8.1f}x")


if __name__ == "__main__":
    main()
