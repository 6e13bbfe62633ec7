"""Restore with another parallelism: keyed state re-split by key group (checkpoint/rescale.py).

The main case runs a query to a savepoint, splits every operator's state into two
subtask states with `rescale_operator_states` (1 -> 2), checks each part holds exactly the
keys of its key-group range and that the parts partition the keys, writes them as a
2-subtask snapshot directory (metadata with `subtasks`) and restores that into a
LocalExecutor at parallelism 1 (2 -> 1, merging colliding slots): the changelog before
the savepoint plus the one after the restore is the uninterrupted run's.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from runtime.checkpoint import format as state_format
from runtime.checkpoint.metadata import CheckpointMetadata, SubtaskState
from runtime.checkpoint.rescale import load_state, merge_executor_state, rescale_operator_states
from runtime.checkpoint.restore import RestoreError, load_checkpoint
from runtime.executor.local import LocalExecutor
from runtime.graph import JobGraph, Node
from runtime.operators.base import Operator, OperatorContext, Output, create_operator
from runtime.operators.sink import SinkOperator
from runtime.state import create_backend
from runtime.state.keycolumns import SnapshotKeys
from runtime.state.keygroups import key_group_range, key_groups_of_rows
from tests.unit.runtime.checkpoint.test_operator_snapshots import _env, _graph, _inputs, _rows, _SavepointAt

MAXP = 128

CASES: dict[str, str] = {
    "window_group_join": (
        "SELECT w.k, w.c, g.s FROM "
        "(SELECT k, window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
        "GROUP BY k, window_start, window_end) w "
        "JOIN (SELECT k, SUM(v) AS s FROM b GROUP BY k) g ON w.k = g.k"
    ),
    "group_agg_distinct_minmax": "SELECT k, COUNT(DISTINCT v), MAX(v), MIN(v), AVG(v) FROM a GROUP BY k",
    "outer_join": "SELECT a.k, a.v, b.v FROM a FULL JOIN b ON a.k = b.k + 3 AND a.v = b.v",
    "interval_join": (
        "SELECT a.k, a.v, b.v FROM a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts"
    ),
    "topn": (
        "SELECT * FROM (SELECT k, v, ts_ms, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts_ms) AS rn "
        "FROM a) WHERE rn <= 3"
    ),
    "dedup_last": (
        "SELECT k, v, ts_ms FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, v % 3 ORDER BY ts DESC) AS rn "
        "FROM a) WHERE rn = 1"
    ),
    "window_topn": (
        "SELECT * FROM (SELECT window_start, k, v, ts_ms, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k "
        "ORDER BY v DESC, ts_ms) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND))) WHERE rn <= 2"
    ),
    "window_join": (
        "SELECT L.k, L.v, R.v, L.window_start FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), "
        "INTERVAL '2' SECOND))) L FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '2' SECOND))) R "
        "ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end"
    ),
    "over": "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM a",
    "over_unpartitioned": "SELECT k, v, MAX(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM a",
    "match_recognize": (
        "SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.v AS start_v, LAST(B.v) AS bottom, "
        "C.ts_ms AS end_ts ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) "
        "DEFINE B AS v < PREV(v), C AS v > PREV(v))"
    ),
    "temporal_sort": "SELECT k, v, ts_ms FROM a ORDER BY ts, v",
    "session": (
        "SELECT k, window_start, COUNT(*) FROM TABLE(SESSION(TABLE a PARTITION BY k, DESCRIPTOR(ts), "
        "INTERVAL '100' MILLISECOND)) GROUP BY k, window_start, window_end"
    ),
    "session_tvf": (
        "SELECT k, v, ts_ms, window_start, window_end FROM TABLE(SESSION(TABLE a PARTITION BY k, DESCRIPTOR(ts), "
        "INTERVAL '100' MILLISECOND))"
    ),
}


def _fresh(graph: JobGraph, node: Node, index: int, parallelism: int) -> Operator:
    """An open operator for subtask `index` of `parallelism` (what a restoring job builds)."""
    cfg = dict(graph.config or {})
    ctx = OperatorContext(
        mode=graph.mode,
        config=cfg,
        subtask_index=index,
        parallelism=parallelism,
        state=create_backend(cfg),
        checkpointing=True,
    )
    op = create_operator(node, ctx)
    op.input_changelog_modes = [graph.node(i).changelog_mode for i in node.inputs]
    op.open()
    return op


def _keyed(state: Any) -> dict[str, Any] | None:
    """The key index of a keyed operator's snapshot (generic or custom), or None."""
    d = state_format.unpack(state) if isinstance(state, bytes) else state
    if not isinstance(d, dict):
        return None
    k = d.get("keyed", d.get("keys"))
    return k if isinstance(k, dict) and "key_groups" in k else None


def _split_snapshot(graph: JobGraph, location: str, target: Path) -> dict[str, list[dict[str, Any]]]:
    """Write `location` re-split into 2 subtasks as a snapshot directory at `target`;
    returns each keyed operator's two key indexes (for the partition checks)."""
    snap = load_checkpoint(location)
    meta = snap.metadata
    target.mkdir(parents=True)
    nodes = {n.id: n for n in graph.nodes}
    keyed: dict[str, list[dict[str, Any]]] = {}
    for o in meta.operators:
        old = snap.subtask_states(o.uid)
        if o.file is None:
            continue
        subtasks = []
        parts: list[dict[str, Any] | None] = []
        for i in range(2):
            rng = key_group_range(i, 2, MAXP)
            state = rescale_operator_states(_fresh(graph, nodes[o.node_id], i, 2), old, rng, i, 2)
            file = f"op-{o.uid}-{i}.state"
            data = state_format.encode(state)
            (target / file).write_bytes(data)
            subtasks.append(
                SubtaskState(
                    index=i,
                    key_group_range=list(rng),
                    file=file,
                    bytes=len(data),
                    checksum=state_format.digest(data),
                )
            )
            parts.append(_keyed(state))
        if any(k is not None and len(k["key_groups"]) for k in parts):  # a subtask without state holds no keys
            keyed[o.uid] = [k or {"slots": [], "keys": [], "key_groups": []} for k in parts]
        if o.uid in keyed:  # the original key index last, for the partition check
            orig = _keyed(old[0][1])
            assert orig is not None
            keyed[o.uid].append(orig)
        o.subtasks, o.file = subtasks, None
        o.executor = {"subtasks": [dict(o.executor), dict(o.executor)]}
    meta.parallelism = 2
    (target / "_metadata").write_bytes(meta.to_json())
    return keyed


# the operators keeping a key index of their own, with the rocksdb backend too
ROCKSDB_CASES = ("group_agg_distinct_minmax", "over", "match_recognize", "session")


@pytest.mark.parametrize(
    ("case", "backend"), [(c, "hashmap") for c in sorted(CASES)] + [(c, "rocksdb") for c in ROCKSDB_CASES]
)
def test_split_in_two_then_restore_at_one_continues_exactly(tmp_path: Path, case: str, backend: str) -> None:
    sql = CASES[case]
    _inputs(tmp_path)
    env = _env(tmp_path, backend)
    graph = _graph(env, sql)
    expected = _rows(list(LocalExecutor(graph).run()))
    assert expected
    first = _SavepointAt(_graph(env, sql), 10, str(tmp_path / "sp"))
    before = _rows(list(first.run()) + first.flushed)
    assert first.location is not None and 0 < len(before) < len(expected)

    keyed = _split_snapshot(graph, first.location, tmp_path / "sp2")
    # (operators that keep rows, not a key index, are re-split by their rows' exchange keys)
    unindexed = {"interval_join", "window_topn", "window_join", "over_unpartitioned", "temporal_sort"}
    assert keyed or case in unindexed, "no keyed operator in the plan: the case tests nothing"
    for uid, (p0, p1, orig) in keyed.items():
        for i, part in enumerate((p0, p1)):
            lo, hi = key_group_range(i, 2, MAXP)
            g = np.asarray(part["key_groups"])
            assert ((g >= lo) & (g <= hi)).all(), f"{uid}: subtask {i} holds keys of another range"
            assert part["slots"] == list(range(len(part["slots"]))), "slots are re-numbered densely"
        got = sorted(map(repr, p0["keys"] + p1["keys"]))
        assert got == sorted(map(repr, orig["keys"])), f"{uid}: the two parts do not partition the keys"

    rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": str(tmp_path / "sp2")}))
    after = _rows(list(rest.run()))
    # a merged key index lists keys part by part: results per key are the same, the
    # interleaving of different keys may differ (as between parallel subtasks)
    assert sorted(before + after, key=repr) == sorted(expected, key=repr)


# ---------------------------------------------------------------------- state algebra
def _group_agg(tmp_path: Path) -> tuple[JobGraph, Node]:
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    graph = _graph(env, "SELECT k, SUM(v), COUNT(DISTINCT v) FROM a GROUP BY k")
    node = next(n for n in graph.nodes if n.operator == "GroupAggregate")
    return graph, node


def _batch(keys: list[int], vals: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(keys, pa.int32()), pa.array(vals, pa.int32())], names=["k", "v"])


def _final(op: Operator) -> dict[Any, tuple[Any, ...]]:
    """Current result per key of a GroupAggregate (from its state)."""
    slots = op.state.live_slots()  # type: ignore[attr-defined]
    keys = op.state.keys_of(slots)  # type: ignore[attr-defined]
    cols = op.aggset.results(slots)  # type: ignore[attr-defined]
    return {k[0]: tuple(c[i].as_py() for c in cols) for i, k in enumerate(keys)}


def test_merging_two_generic_snapshots_with_colliding_slots(tmp_path: Path) -> None:
    graph, node = _group_agg(tmp_path)
    node = dataclasses.replace(node, inputs=())
    a, b = _fresh(graph, node, 0, 1), _fresh(graph, node, 0, 1)
    a.process_batch(_batch([1, 2, 1], [10, 20, 10]), 0, Output())
    b.process_batch(_batch([3, 4, 3], [30, 40, 31]), 0, Output())
    # both used slots 0 and 1: merging must re-number one of them
    full = (0, MAXP - 1)
    old = [((0, 63), a.snapshot_state(1)), ((64, 127), b.snapshot_state(1))]
    merged = _fresh(graph, node, 0, 1)
    merged.restore_state(rescale_operator_states(merged, old, full, 0, 1))
    want = {**_final(a), **_final(b)}
    assert _final(merged) == want == {1: (20, 1), 2: (20, 1), 3: (61, 2), 4: (40, 1)}
    # and it keeps working: DISTINCT state followed its key
    merged.process_batch(_batch([3, 1], [30, 11]), 0, Output())
    assert _final(merged)[3] == (91, 2) and _final(merged)[1] == (31, 2)


def test_window_timers_of_foreign_keys_are_dropped(tmp_path: Path) -> None:
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    graph = _graph(
        env,
        "SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
        "GROUP BY k, window_start, window_end",
    )
    first = _SavepointAt(graph, 10, str(tmp_path / "sp"))
    list(first.run())
    assert first.location is not None
    snap = load_checkpoint(first.location)
    node = next(n for n in graph.nodes if n.operator == "WindowAggregate")
    uid = next(o.uid for o in snap.metadata.operators if o.node_id == node.id)
    old = snap.subtask_states(uid)
    whole = _fresh(graph, node, 0, 1)
    whole.restore_state(rescale_operator_states(whole, old, (0, MAXP - 1), 0, 1))
    out_whole = Output()
    whole.on_watermark(2**62, out_whole)
    fired_whole = sorted(r for b in out_whole.batches for r in zip(*b.to_pydict().values(), strict=False))
    assert fired_whole
    fired = []
    for i in range(2):
        rng = key_group_range(i, 2, MAXP)
        op = _fresh(graph, node, i, 2)
        op.restore_state(rescale_operator_states(op, old, rng, i, 2))
        live = op.state.live_slots()  # type: ignore[attr-defined]
        assert len(op.timers) == len(live)  # type: ignore[attr-defined]  # only its keys' timers
        out = Output()
        op.on_watermark(2**62, out)
        fired += [r for b in out.batches for r in zip(*b.to_pydict().values(), strict=False)]
    assert sorted(fired) == fired_whole  # every window fires once, in exactly one subtask


def test_same_parallelism_takes_its_own_entry_unchanged(tmp_path: Path) -> None:
    graph, node = _group_agg(tmp_path)
    op = _fresh(graph, node, 1, 2)
    old = [(key_group_range(0, 2, MAXP), b"zero"), (key_group_range(1, 2, MAXP), b"one")]
    assert rescale_operator_states(op, old, key_group_range(1, 2, MAXP), 1, 2) == b"one"


class _CustomWithoutRescale(Operator):
    """An operator with its own snapshot and no `rescale_snapshots`."""

    checkpointing = "custom"

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return b"state"


def test_unsupported_operator_raises_restore_error_naming_it(tmp_path: Path) -> None:
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    graph = _graph(env, "SELECT k, v FROM a LIMIT 3")
    node = next(n for n in graph.nodes if n.operator == "Limit")
    op = _CustomWithoutRescale(node, OperatorContext(mode=graph.mode, config={}))
    old = [((0, 63), op.snapshot_state(1)), ((64, 127), op.snapshot_state(1))]
    with pytest.raises(RestoreError, match="Limit .*cannot be restored with another parallelism yet"):
        rescale_operator_states(op, old, (0, MAXP - 1), 0, 1)


def test_sink_pending_commits_go_to_subtask_zero_only(tmp_path: Path) -> None:
    sink = object.__new__(SinkOperator)  # the hook reads nothing of the operator itself
    old = [
        ((0, 63), {"pending": {5: ["a"]}, "sink": {"uuid": "u0", "count": 3}}),
        ((64, 127), {"pending": {5: ["b"], 6: ["c"]}, "sink": {"uuid": "u1", "count": 1}}),
    ]
    zero = sink.rescale_snapshots(old, (0, MAXP - 1), 0, 1)
    assert [zero["pending"][k] for k in sorted(zero["pending"])] == [["a"], ["b"], ["c"]]
    assert zero["sink"] == {"uuid": "u0", "count": 3}
    one = sink.rescale_snapshots(old[:1], (64, 127), 1, 2)
    assert one["pending"] == {} and one["sink"] is None


def test_executor_watermarks_take_the_minimum() -> None:
    got = merge_executor_state(
        [{"input_wm": [5, 9], "node_wm": 5, "ended": [0, 1]}, {"input_wm": [7, 3], "node_wm": 3, "ended": [1]}]
    )
    assert got == {"input_wm": [5, 3], "node_wm": 3, "ended": [1]}


def test_checkpoint_with_subtasks_restores_after_a_copy(tmp_path: Path) -> None:
    """A restore of a 2-subtask directory also works when copied elsewhere (files are
    relative to the snapshot directory)."""
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    sql = "SELECT k, SUM(v) FROM a GROUP BY k"
    graph = _graph(env, sql)
    first = _SavepointAt(_graph(env, sql), 10, str(tmp_path / "sp"))
    list(first.run())
    assert first.location is not None
    _split_snapshot(graph, first.location, tmp_path / "sp2")
    shutil.copytree(tmp_path / "sp2", tmp_path / "sp3")
    meta = CheckpointMetadata.from_json((tmp_path / "sp3" / "_metadata").read_bytes())
    assert meta.parallelism == 2 and any(o.subtasks for o in meta.operators)
    rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": str(tmp_path / "sp3")}))
    assert _rows(list(rest.run()))


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
@pytest.mark.parametrize(
    "window",
    [
        "TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND)",
        "HOP(TABLE a, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)",
        "SESSION(TABLE a PARTITION BY k, DESCRIPTOR(ts), INTERVAL '100' MILLISECOND)",
    ],
)
def test_window_state_key_groups_are_the_exchange_routing(tmp_path: Path, backend: str, window: str) -> None:
    """A window aggregate keeps its state under (window start, window end, key) but rows
    reach it by the key alone: the key group it records for each entry must be the one
    the hash exchange computes for the key (else a rescaled restore sends a window to a
    subtask its key's rows never reach), with both backends."""
    _inputs(tmp_path)
    env = _env(tmp_path, backend)
    graph = _graph(env, f"SELECT k, window_start, COUNT(*) FROM TABLE({window}) GROUP BY k, window_start, window_end")
    first = _SavepointAt(graph, 10, str(tmp_path / "sp"))
    list(first.run())
    assert first.location is not None
    snap = load_checkpoint(first.location)
    (meta,) = [o for o in snap.metadata.operators if o.operator == "WindowAggregate"]
    ((_, state),) = snap.subtask_states(meta.uid)
    keyed = load_state(state)["keyed"]
    keys = keyed["keys"]
    if isinstance(keys, SnapshotKeys):
        columns = keys.columns
    else:
        columns = [pa.array([key[j] for key in keys]) for j in range(len(keys[0]))]
    exchange = graph.node(graph.node(meta.node_id).inputs[0])
    assert exchange.operator == "Exchange"
    routed = columns[len(columns) - len(exchange.params.keys) :]  # the key columns follow the window's
    assert len(routed[0]) > 3, "too few keys to test anything"
    want = key_groups_of_rows(routed, len(routed[0]), MAXP)
    assert np.asarray(keyed["key_groups"]).tolist() == want.tolist()


def test_every_operator_kind_declares_how_it_rescales() -> None:
    """`rescalable` of every kind's spec says what its operator class does: a custom
    snapshot comes with its own `rescale_snapshots`, a generic one with a merge rule for
    every state attribute (a kind added without either fails here, not at a restore)."""
    from runtime.checkpoint.rescale import GENERIC_KINDS
    from runtime.operators.spec import all_specs

    kinds = [s for s in all_specs() if s.operator_class is not None]
    assert len(kinds) > 30
    for spec in kinds:
        cls = spec.operator_class
        assert cls is not None
        if cls.checkpointing == "custom":
            handled = cls.rescale_snapshots is not Operator.rescale_snapshots
        elif cls.checkpointing == "generic":
            handled = all(cls.state_merge.get(a) in GENERIC_KINDS for a in cls.state_attributes)
        else:
            handled = cls.checkpointing == "stateless"
        assert handled == spec.rescalable, f"{spec.name}: rescalable={spec.rescalable} but its class says {handled}"
