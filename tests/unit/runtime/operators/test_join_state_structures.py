"""The regular join's state structures: the chunked value store (row_chunks.py) gathers the
same rows as one flat array would, and the by-key runs (join_index.py) give the same pairs,
in the same order, as one sorted array rebuilt after every change; JoinSide keeps its index
current across appends, retractions and slot reuse."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa

from runtime.operators.join_index import KeyRuns
from runtime.operators.join_state import JoinSide, candidate_pairs
from runtime.operators.row_chunks import FANOUT, ChunkedColumns
from runtime.state import create_backend


def test_chunked_columns_gather_like_a_flat_array() -> None:
    rnd = np.random.default_rng(1)
    store = ChunkedColumns()
    flat_s: list[str | None] = []
    flat_i: list[int] = []
    for b in range(70):
        n = int(rnd.integers(1, 40))
        s = [None if rnd.random() < 0.1 else f"v{b}-{i}" for i in range(n)]
        ints = rnd.integers(0, 1000, n).tolist()
        start = store.append([pa.array(s, pa.string()), pa.array(ints, pa.int64())])
        assert start == len(flat_s)
        flat_s += s
        flat_i += ints
        assert len(store.chunks) <= (FANOUT - 1) * 8  # O(log n) chunks, never one per batch
        pos = rnd.integers(0, len(flat_s), 50)
        null = rnd.random(50) < 0.2
        got_s, got_i = store.take(pos, null)
        assert got_s.to_pylist() == [None if z else flat_s[p] for p, z in zip(pos, null, strict=True)]
        assert got_i.to_pylist() == [None if z else flat_i[p] for p, z in zip(pos, null, strict=True)]
    assert len(store.chunks) < 70
    assert store.columns()[0].to_pylist() == flat_s and len(store.chunks) == 1


def _naive_pairs(probe: np.ndarray, slots: np.ndarray, keys: np.ndarray) -> list[tuple[int, int]]:
    order = np.lexsort((slots, keys))
    s, k = slots[order], keys[order]
    return [(i, int(x)) for i, p in enumerate(probe.tolist()) if p >= 0 for x in s[k == p]]


def test_key_runs_pairs_match_one_sorted_array() -> None:
    rnd = np.random.default_rng(2)
    runs = KeyRuns()
    all_slots = np.zeros(0, dtype=np.int64)
    all_keys = np.zeros(0, dtype=np.int64)
    alive = np.zeros(0, dtype=bool)
    nxt = 0
    for _ in range(60):
        n = int(rnd.integers(1, 30))
        new = np.arange(nxt, nxt + n, dtype=np.int64)
        keys = rnd.integers(0, 12, n).astype(np.int64)
        nxt += n
        assert runs.can_add(new)
        runs.add(new, keys)
        all_slots, all_keys = np.concatenate([all_slots, new]), np.concatenate([all_keys, keys])
        alive = np.concatenate([alive, np.ones(n, dtype=bool)])
        if rnd.random() < 0.3:  # some rows die
            alive[rnd.integers(0, nxt, 5)] = False
            runs.keep(alive)
        probe = rnd.integers(-1, 14, 20).astype(np.int64)
        p, s = runs.pairs(probe)
        live = alive[all_slots]
        assert list(zip(p.tolist(), s.tolist(), strict=True)) == _naive_pairs(probe, all_slots[live], all_keys[live])
    assert len(runs.runs) < 20
    assert not runs.can_add(np.array([3], dtype=np.int64))


def _side(append_only: bool) -> JoinSide:
    side = JoinSide(create_backend({}), [pa.int64(), pa.string()])
    side.append_only = append_only
    return side


def test_join_side_index_stays_current() -> None:
    """Probing after every change equals a rebuild from scratch, with retractions and
    re-inserted rows (the row index may hand out a freed slot again)."""
    rnd = random.Random(5)
    for append_only in (True, False):
        side = _side(append_only)
        rows: list[tuple[int, str]] = []
        for _ in range(40):
            n = rnd.randint(1, 12)
            batch_rows = [(rnd.randint(0, 6), f"s{rnd.randint(0, 5)}") for _ in range(n)]
            signs = np.ones(n, dtype=np.int64)
            if not append_only and rows:
                for i in range(n):
                    if rnd.random() < 0.3:
                        batch_rows[i] = rnd.choice(rows)
                        signs[i] = -1
            data = pa.RecordBatch.from_pylist(
                [{"k": k, "s": s} for k, s in batch_rows],
                schema=pa.schema([("k", pa.int64()), ("s", pa.string())]),
            )
            key_slots = np.array([k if k != 6 else -1 for k, _ in batch_rows], dtype=np.int64)
            side.index()  # the index exists, so apply() has to keep it current
            side.apply(data, signs, key_slots, None)
            for (k, s), sign in zip(batch_rows, signs.tolist(), strict=True):
                if sign > 0:
                    rows.append((k, s))
                elif (k, s) in rows:
                    rows.remove((k, s))
            probe = np.arange(-1, 7, dtype=np.int64)
            got_p, got_s = candidate_pairs(probe, side)
            fresh_p, fresh_s = KeyRuns.build(*_live_keyed(side)).pairs(probe)
            assert got_p.tolist() == fresh_p.tolist() and got_s.tolist() == fresh_s.tolist()
            vals = side.take(got_s)
            multiset = sorted((p - 1, v) for p, v in zip(got_p.tolist(), vals[1].to_pylist(), strict=True))
            want = sorted((k, s) for k, s in set(rows) if k != 6)
            assert sorted(set(multiset)) == want


def _live_keyed(side: JoinSide) -> tuple[np.ndarray, np.ndarray]:
    live = side.live()
    live = live[side.key[live] >= 0]
    return live, side.key[live]
