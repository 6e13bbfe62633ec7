"""The parallel executor (runtime.executor.parallel): key routing, credit-based
back-pressure, worker failures and teardown, metrics."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from runtime.executor.parallel.plan import DistributionError, Edge, plan_parallel
from runtime.executor.parallel.transport import partition
from runtime.state.keygroups import key_group_range, key_groups_of_rows
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.udf import DataTypes, udf

ROWS = 200_000  # datagen splits in blocks of 65,536 rows: both subtasks read some


def _env(mode: str = "batch", parallelism: int = 2, **conf: str) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if mode == "batch" else EnvironmentSettings.in_streaming_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(f"SET 'parallelism.default' = '{parallelism}'")
    for k, v in conf.items():
        env.execute_sql(f"SET '{k}' = '{v}'")
    env.execute_sql(
        "CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'datagen', "
        f"'number-of-rows' = '{ROWS}', 'rows-per-second' = '100000000', "
        "'fields.k.min' = '1', 'fields.k.max' = '50', "
        f"'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '{ROWS}')"
    )
    return env


def _final(rows: list[Any]) -> dict[Any, Any]:
    table: dict[Any, Any] = {}
    for r in rows:
        kind = str(r.get_row_kind()) if hasattr(r, "get_row_kind") else "+I"
        if kind.endswith(("INSERT", "UPDATE_AFTER")) or kind in ("+I", "+U"):
            table[r[0]] = tuple(r)
        else:
            table.pop(r[0], None)
    return table


def test_partition_routes_by_key_group() -> None:
    keys = pa.array(np.arange(1000) % 37, pa.int64())
    batch = pa.RecordBatch.from_arrays([keys, pa.array(np.arange(1000))], names=["k", "v"])
    parts = partition(batch, Edge(0, 0, 1, 0, "hash", (0,)), 2, 128)
    assert sum(p.num_rows for _, p in parts) == 1000
    seen: dict[int, int] = {}
    for target, part in parts:
        lo, hi = key_group_range(target, 2, 128)
        groups = key_groups_of_rows([part.column(0)], part.num_rows, 128)
        assert ((groups >= lo) & (groups <= hi)).all()
        for k in part.column(0).to_pylist():
            assert seen.setdefault(k, target) == target  # a key lives in one subtask
    assert len({t for t, _ in parts}) == 2
    single = partition(batch, Edge(0, 0, 1, 0, "single"), 2, 128)
    assert [(t, p.num_rows) for t, p in single] == [(0, 1000)]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_group_by_has_one_row_per_key_and_same_result(mode: str) -> None:
    sql = "SELECT k, COUNT(*) AS c, SUM(v) AS s FROM src GROUP BY k"
    par = _final(list(_env(mode).execute_sql(sql).collect()))
    one = _final(list(_env(mode, parallelism=1).execute_sql(sql).collect()))
    assert len(par) == 50 and par == one
    assert sum(r[1] for r in par.values()) == ROWS
    assert sum(r[2] for r in par.values()) == ROWS * (ROWS + 1) // 2
    if mode == "batch":  # final rows only: a key computed in two workers would show twice
        rows = list(_env(mode).execute_sql(sql).collect())
        assert len(rows) == 50
    assert not multiprocessing.active_children()


def test_unkeyed_state_runs_in_subtask_0() -> None:
    env = _env()
    graph = env._planner().plan_query(env.parse("SELECT v FROM src ORDER BY v LIMIT 3")[0]).graph  # noqa: SLF001
    plan = plan_parallel(graph)
    top = next(n.id for n in graph.nodes if n.operator == "SortLimit")
    assert top in plan.single_nodes  # the planner's single Exchange sends all rows to subtask 0
    assert [tuple(r) for r in env.execute_sql("SELECT v FROM src ORDER BY v LIMIT 3").collect()] == [(1,), (2,), (3,)]


def test_graph_without_the_needed_exchange_is_refused() -> None:
    """The executor follows the JobGraph's Exchanges and re-decides nothing: a global
    SortLimit without its Exchange cannot run in parallel, and the error names it."""
    env = _env()
    graph = env._planner().plan_query(env.parse("SELECT v FROM src ORDER BY v LIMIT 3")[0]).graph  # noqa: SLF001
    top = next(n.id for n in graph.nodes if n.operator == "SortLimit")
    bare = type(graph)(  # the same graph without the planner's Exchange
        nodes=tuple(
            n if n.operator != "SortLimit" else type(n)(n.id, n.operator, (1,), n.schema, n.params)
            for n in graph.nodes
            if n.operator != "Exchange"
        ),
        mode=graph.mode,
        config=graph.config,
        result_node=graph.result_node,
    )
    with pytest.raises(DistributionError, match=f"operator SortLimit \\(node {top}, .*no hash or single Exchange"):
        plan_parallel(bare)


@udf(result_type=DataTypes.BIGINT())
def slow(x: int) -> int:
    time.sleep(0.0005)
    return x


def test_slow_consumer_back_pressures_producers() -> None:
    env = _env("streaming", **{"taskmanager.network.credits": "2", "table.exec.source.batch-rows": "1000"})
    env.create_temporary_function("slow", slow)
    result = env.execute_sql("SELECT k, slow(c) FROM (SELECT k, COUNT(*) AS c FROM src GROUP BY k)")
    rows = list(result.collect())
    ex = result._executor()  # noqa: SLF001 - the job's executor, for its counters
    assert ex is not None and ex.max_in_flight and ex.max_queued
    assert max(ex.max_in_flight.values()) <= 2
    assert max(ex.max_queued.values()) <= 2
    counts = _final(rows)
    assert len(counts) == 50  # nothing dropped: every key's final count arrived
    bp = sum(m.extra.get("backpressured_ns", 0) for m in ex.metrics.values())
    assert bp > 0  # the producers waited for credits
    assert not multiprocessing.active_children()


@udf(result_type=DataTypes.BIGINT())
def boom(x: int) -> int:
    if x > 150_000:
        raise ValueError(f"boom at {x}")
    return x


def test_worker_error_is_raised_in_parent_and_no_process_is_left() -> None:
    env = _env()
    env.create_temporary_function("boom", boom)
    with pytest.raises(Exception, match="boom at"):
        list(env.execute_sql("SELECT k, SUM(boom(v)) FROM src GROUP BY k").collect())
    assert not multiprocessing.active_children()


def test_closing_the_result_early_tears_the_workers_down() -> None:
    env = _env("streaming")
    it = iter(env.execute_sql("SELECT k, v FROM src").collect())
    next(it)
    it.close()  # type: ignore[attr-defined]
    deadline = time.monotonic() + 120
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not multiprocessing.active_children()


def test_kind_requiring_single_input_refuses_a_hash_exchange(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind whose spec requires the SINGLE input distribution must be fed by a single
    Exchange: a keyed one would split its input, so the graph is refused."""
    import runtime.executor.parallel.plan as plan_module
    from runtime.operators.spec import SINGLE

    env = _env()
    graph = env._planner().plan_query(env.parse("SELECT k, COUNT(*) FROM src GROUP BY k")[0]).graph  # noqa: SLF001
    agg = next(n for n in graph.nodes if n.operator == "GroupAggregate")
    plan_parallel(graph)  # fed by a hash Exchange on k: fine for a keyed kind

    class _Single:
        parallel = False
        input_distribution = SINGLE

        def params(self, node: Any) -> Any:
            return node.params

        def runs_in_parent(self, params: Any) -> bool:
            return False

    real = plan_module.spec_for
    monkeypatch.setattr(plan_module, "spec_for", lambda name: _Single() if name == agg.operator else real(name))
    with pytest.raises(DistributionError, match=f"operator GroupAggregate \\(node {agg.id}, .*no single Exchange"):
        plan_parallel(graph)
