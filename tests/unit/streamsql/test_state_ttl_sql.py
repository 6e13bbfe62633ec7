"""State TTL end to end: SQL planned by a TableEnvironment, run by the local executor with
a fake processing-time clock that advances 10 minutes per source batch (one row each).

Covers `table.exec.state.ttl` on a GROUP BY, the STATE_TTL hint on one side of a join,
keys that expire and restart while others live on, and TTL timestamps carried through a
savepoint (stop, restore, continue: same changelog as the uninterrupted run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds
from runtime.executor.local import LocalExecutor
from runtime.graph import JobGraph
from runtime.operators.join import JoinParams
from runtime.state.ttl import set_clock
from streamsql.environment import TableEnvironment

STEP = 600_000  # 10 minutes of processing time per source poll


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    c = Clock()
    prev = set_clock(c)
    yield c
    set_clock(prev)


class _Ticking(LocalExecutor):
    """Advances the clock after every source poll; optionally stops with a savepoint after
    the n-th poll (what the barrier flushes belongs before it)."""

    def __init__(self, graph: JobGraph, clock: Clock, stop_after: int | None = None, directory: str = "") -> None:
        super().__init__(graph)
        self.clock, self.stop_after, self.directory = clock, stop_after, directory
        self.calls = 0
        self.location: str | None = None
        self.flushed: list[pa.RecordBatch] = []

    def _checkpoint_work(self) -> None:
        self.clock.now += STEP
        self.calls += 1
        if self.calls != self.stop_after:
            super()._checkpoint_work()
            return
        p = self.checkpoints.snapshot("savepoint", self.directory, stop=True)
        self.checkpoints.complete(self.coordinator.completed(wait=True))
        self.location = p.location
        self.flushed = self.results.drain()


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[str, tuple[Any, ...]]]:
    out = []
    for b in batches:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        out += [(ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return out


def _env(tmp_path: Path, tables: dict[str, list[str]], **config: str) -> TableEnvironment:
    env = TableEnvironment.create({"table.exec.source.batch-rows": "1", **config})
    for name, lines in tables.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "data.csv").write_text("".join(line + "\n" for line in lines))
        env.execute_sql(
            f"CREATE TABLE {name} (k INT, v STRING) "
            f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / name}', 'format' = 'csv')"
        )
    return env


def _graph(env: TableEnvironment, sql: str, **conf: str) -> JobGraph:
    (stmt,) = env.parse(sql)
    graph = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
    return dataclasses.replace(graph, config={**(graph.config or {}), **conf})


# One row per 10 minutes; TTL 1 h. Key 1 is written at t=0 only and comes back at t=60:
# expired, it restarts (+I, COUNT 1). Key 2 is written every 10 minutes: never expires.
EVENTS = ["1,a", "2,b", "2,c", "2,d", "2,e", "2,f", "1,g", "2,h"]
AGG = "SELECT k, COUNT(*) AS c, LISTAGG(v) AS vs FROM ev GROUP BY k"
AGG_EXPECTED = [
    ("+I", (1, 1, "a")),
    ("+I", (2, 1, "b")),
    ("-U", (2, 1, "b")),
    ("+U", (2, 2, "b,c")),
    ("-U", (2, 2, "b,c")),
    ("+U", (2, 3, "b,c,d")),
    ("-U", (2, 3, "b,c,d")),
    ("+U", (2, 4, "b,c,d,e")),
    ("-U", (2, 4, "b,c,d,e")),
    ("+U", (2, 5, "b,c,d,e,f")),
    ("+I", (1, 1, "g")),  # key 1 expired at t=60: from scratch, no retraction of (1, 1, a)
    ("-U", (2, 5, "b,c,d,e,f")),
    ("+U", (2, 6, "b,c,d,e,f,h")),
]


def test_group_by_keys_expire_and_restart(tmp_path: Path, clock: Clock) -> None:
    env = _env(tmp_path, {"ev": EVENTS}, **{"table.exec.state.ttl": "1 h"})
    ex = _Ticking(_graph(env, AGG), clock)
    assert _rows(list(ex.run())) == AGG_EXPECTED
    agg = next(n.id for n in ex.graph.nodes if n.operator == "GroupAggregate")
    assert ex.metrics[agg].extra["state_ttl_expired_keys"] == 1
    assert ex.operators[agg].state_size()["keys"] == 2


def test_without_ttl_the_key_accumulates(tmp_path: Path, clock: Clock) -> None:
    env = _env(tmp_path, {"ev": EVENTS})
    rows = _rows(list(_Ticking(_graph(env, AGG), clock).run()))
    assert ("-U", (1, 1, "a")) in rows and ("+U", (1, 2, "a,g")) in rows


def test_hint_overrides_the_config(tmp_path: Path, clock: Clock) -> None:
    env = _env(tmp_path, {"ev": EVENTS}, **{"table.exec.state.ttl": "1 h"})
    sql = AGG.replace("SELECT", "SELECT /*+ STATE_TTL('ev' = '2 h') */")
    rows = _rows(list(_Ticking(_graph(env, sql), clock).run()))
    assert ("+U", (1, 2, "a,g")) in rows  # 2 h: key 1 did not expire


@pytest.mark.parametrize("stop_after", [3, 6])
def test_ttl_survives_a_savepoint(tmp_path: Path, clock: Clock, stop_after: int) -> None:
    env = _env(tmp_path, {"ev": EVENTS}, **{"table.exec.state.ttl": "1 h"})
    first = _Ticking(_graph(env, AGG), clock, stop_after, str(tmp_path / "sp"))
    before = list(first.run()) + first.flushed
    assert first.location is not None
    rest = _Ticking(_graph(env, AGG, **{"execution.savepoint.path": first.location}), clock)
    after = list(rest.run())
    assert rest.restored_from == first.location
    assert _rows(before) + _rows(after) == AGG_EXPECTED


def test_join_hint_expires_one_side(tmp_path: Path, clock: Clock) -> None:
    # Sources are polled in turn: l0 t=0, r0 t=10, l1 t=20, r1 t=30, l2 t=40, r2 t=50 (minutes).
    env = _env(tmp_path, {"l": ["1,a", "2,c", "1,a2"], "r": ["1,x", "2,z", "1,y"]})
    sql = "SELECT /*+ STATE_TTL('l' = '30 min') */ l.v, r.v FROM l JOIN r ON l.k = r.k"
    expected = [
        ("+I", ("a", "x")),
        ("+I", ("c", "z")),  # c is 10 minutes old
        ("+I", ("a2", "x")),  # right rows never expire
        ("+I", ("a2", "y")),  # a (written at t=0) expired at t=30: no (a, y)
    ]
    ex = _Ticking(_graph(env, sql), clock)
    assert _rows(list(ex.run())) == expected
    join = next(n.id for n in ex.graph.nodes if n.operator == "Join")
    assert JoinParams.of(ex.graph.node(join)).state_ttl_ms == (1_800_000, None)
    size = ex.operators[join].state_size()
    assert size["rows"] >= 3 and size["bytes"] > 0
    no_ttl = _rows(list(_Ticking(_graph(env, sql.replace("'30 min'", "'0'")), clock).run()))
    assert ("+I", ("a", "y")) in no_ttl


def test_spark_runs_state_ttl_inside_its_operators(tmp_path: Path) -> None:
    """STREAMING on Spark runs streamsql's own operators (runtime/executor/spark/stateful.py),
    so `table.exec.state.ttl` and the STATE_TTL hint reach the operator there as they do
    locally (tests/spark: the same result as the local runner)."""
    from runtime.executor.spark.capabilities import check_graph
    from runtime.executor.spark.stateful import _operator

    env = _env(tmp_path, {"ev": EVENTS})
    sql = "SELECT k, COUNT(*) AS c FROM ev GROUP BY k"
    for graph in (
        _graph(env, sql, **{"table.exec.state.ttl": "1 h"}),
        _graph(env, sql.replace("SELECT", "SELECT /*+ STATE_TTL('ev' = '1h') */")),
    ):
        check_graph(graph)  # accepted, not ignored:
        agg = next(n for n in graph.nodes if n.operator == "GroupAggregate")
        modes = [graph.node(i).changelog_mode for i in agg.inputs]
        op = _operator(agg, dict(graph.config or {}), modes)  # the operator the Spark processor hosts
        assert op.ttl.enabled and op._ttl_ms == 3_600_000
