"""Two-phase window aggregation and checkpoints: LocalWindowAggregate is stateless (it keeps
nothing between batches), GlobalWindowAggregate keeps WindowAggregate's generic state.
A savepoint taken mid-stream and restored (both backends, and re-split into two subtasks
and merged back, runtime/checkpoint/rescale.py) continues exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runtime.executor.local import LocalExecutor
from runtime.state.keygroups import key_group_range
from tests.unit.runtime.checkpoint.test_operator_snapshots import _env, _graph, _inputs, _rows, _SavepointAt
from tests.unit.runtime.checkpoint.test_rescale import MAXP, _split_snapshot

SQL = (
    "SELECT k, window_start, window_end, COUNT(*), SUM(v), MAX(v) "
    "FROM TABLE(HOP(TABLE a, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) "
    "GROUP BY k, window_start, window_end"
)


def _two_phase_env(tmp_path: Path, backend: str):  # type: ignore[no-untyped-def]
    _inputs(tmp_path)
    env = _env(tmp_path, backend)
    env.get_config().set("table.optimizer.agg-phase-strategy", "TWO_PHASE")
    return env


def test_operators_declare_checkpointing() -> None:
    from runtime.operators.window_two_phase import GlobalWindowAggregateOperator, LocalWindowAggregateOperator

    assert LocalWindowAggregateOperator.checkpointing == "stateless"
    assert GlobalWindowAggregateOperator.checkpointing == "generic"
    assert set(GlobalWindowAggregateOperator.state_merge) == set(GlobalWindowAggregateOperator.state_attributes)


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_savepoint_restore_continues_exactly(tmp_path: Path, backend: str) -> None:
    env = _two_phase_env(tmp_path, backend)
    graph = _graph(env, SQL)
    assert {"LocalWindowAggregate", "GlobalWindowAggregate"} <= {n.operator for n in graph.nodes}
    expected = _rows(list(LocalExecutor(graph).run()))
    assert expected
    first = _SavepointAt(_graph(env, SQL), 8, str(tmp_path / "sp"))
    before = list(first.run()) + first.flushed
    assert first.location is not None
    rest = LocalExecutor(_graph(env, SQL, **{"execution.savepoint.path": first.location}))
    after = _rows(list(rest.run()))
    assert 0 < len(_rows(before)) < len(expected)
    assert _rows(before) + after == expected


def test_split_in_two_then_restore_at_one(tmp_path: Path) -> None:
    env = _two_phase_env(tmp_path, "hashmap")
    graph = _graph(env, SQL)
    expected = _rows(list(LocalExecutor(graph).run()))
    first = _SavepointAt(_graph(env, SQL), 10, str(tmp_path / "sp"))
    before = _rows(list(first.run()) + first.flushed)
    assert first.location is not None and 0 < len(before) < len(expected)
    keyed = _split_snapshot(graph, first.location, tmp_path / "sp2")
    assert keyed, "the global window aggregate's keyed state was not re-split"
    for p0, p1, orig in keyed.values():
        for i, part in enumerate((p0, p1)):
            lo, hi = key_group_range(i, 2, MAXP)
            g = np.asarray(part["key_groups"])
            assert ((g >= lo) & (g <= hi)).all()
        assert sorted(map(repr, p0["keys"] + p1["keys"])) == sorted(map(repr, orig["keys"]))
    rest = LocalExecutor(_graph(env, SQL, **{"execution.savepoint.path": str(tmp_path / "sp2")}))
    after = _rows(list(rest.run()))
    assert sorted(before + after, key=repr) == sorted(expected, key=repr)
