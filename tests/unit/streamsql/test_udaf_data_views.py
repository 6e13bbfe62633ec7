"""ListView / MapView in aggregate function accumulators (PyFlink's DataViews): the
accumulator API PyFlink's documentation uses (`acc[0].add(x)`, `acc[0][k] = v`, `k in
acc[0]`), results, and a savepoint in the middle of the stream restoring them exactly."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pyarrow as pa

from runtime.batch import data_width, row_kinds
from runtime.checkpoint import format as state_format
from runtime.executor.local import LocalExecutor
from runtime.graph import JobGraph
from streamsql import DataTypes, Row, TableEnvironment
from streamsql.udf import AggregateFunction, ListView, MapView, udaf


class Concat(AggregateFunction):
    """PyFlink's ListView example: joins the values with the last separator seen."""

    def create_accumulator(self) -> Row:
        return Row(ListView(), "")

    def accumulate(self, acc: Row, value: str, sep: str) -> None:
        acc[1] = sep
        acc[0].add(value)

    def get_value(self, acc: Row) -> str:
        return acc[1].join(acc[0])

    def get_accumulator_type(self) -> Any:
        return DataTypes.ROW(
            [DataTypes.FIELD("f0", DataTypes.LIST_VIEW(DataTypes.STRING())), DataTypes.FIELD("f1", DataTypes.STRING())]
        )

    def get_result_type(self) -> Any:
        return DataTypes.STRING()


class CountDistinct(AggregateFunction):
    """PyFlink's MapView example: distinct values with their counts, retractable."""

    def create_accumulator(self) -> list[Any]:
        return [MapView(), 0]

    def accumulate(self, acc: list[Any], value: str) -> None:
        if value not in acc[0] or acc[0][value] is None:
            acc[0][value] = 1
            acc[1] += 1
        else:
            acc[0][value] += 1

    def retract(self, acc: list[Any], value: str) -> None:
        if value not in acc[0]:
            return
        acc[0].put_all({value: acc[0][value] - 1})
        if acc[0][value] <= 0:
            acc[1] -= 1
            del acc[0][value]

    def get_value(self, acc: list[Any]) -> int:
        return acc[1]

    def get_accumulator_type(self) -> Any:
        return DataTypes.ROW(
            [
                DataTypes.FIELD("f0", DataTypes.MAP_VIEW(DataTypes.STRING(), DataTypes.BIGINT())),
                DataTypes.FIELD("f1", DataTypes.BIGINT()),
            ]
        )

    def get_result_type(self) -> Any:
        return DataTypes.BIGINT()


def _env(root: Path) -> TableEnvironment:
    rng = random.Random(5)
    lines = [f"{rng.randrange(4)},{'abcdef'[rng.randrange(6)]},{'-+'[rng.randrange(2)]}" for _ in range(300)]
    (root / "t.csv").write_text("\n".join(lines) + "\n")
    env = TableEnvironment.create({"table.exec.source.batch-rows": "20"})
    env.execute_sql(
        f"CREATE TABLE t (k INT, s STRING, sep STRING) WITH ('connector'='filesystem','path'='{root}/t.csv','format'='csv')"
    )
    env.create_temporary_function("concat_view", udaf(Concat()))
    env.create_temporary_function("count_distinct_view", udaf(CountDistinct()))
    return env


# an updating input: LAST_VALUE's retractions reach count_distinct_view's retract
SQL = (
    "SELECT k % 2 AS p, count_distinct_view(s) AS d FROM "
    "(SELECT k, LAST_VALUE(s) AS s FROM t GROUP BY k) GROUP BY k % 2"
)
QUERIES = {
    "list_view": "SELECT k, concat_view(s, sep) AS c FROM t GROUP BY k",
    "map_view_retracting": SQL,
}


def test_data_view_accumulators_give_pyflinks_results(tmp_path: Path) -> None:
    env = _env(tmp_path)
    final = {
        r[0]: r[1] for r in env.sql_query(QUERIES["list_view"]).execute().collect() if r.get_row_kind().value in (0, 2)
    }
    rows = [line.split(",") for line in (tmp_path / "t.csv").read_text().split()]
    for k, value in final.items():
        mine = [r for r in rows if int(r[0]) == k]
        assert value == mine[-1][2].join(r[1] for r in mine)
    distinct = dict(
        tuple(r)
        for r in env.execute_sql("SELECT k, count_distinct_view(s) FROM t GROUP BY k").collect()
        if r.get_row_kind().value in (0, 2)
    )
    assert distinct == {k: len({r[1] for r in rows if int(r[0]) == k}) for k in distinct}


class _SavepointAt(LocalExecutor):
    """Takes a savepoint after the n-th source batch and stops there."""

    def __init__(self, graph: JobGraph, after: int, directory: str) -> None:
        super().__init__(graph)
        self.after, self.directory, self.calls = after, directory, 0
        self.location: str | None = None
        self.flushed: list[pa.RecordBatch] = []

    def _checkpoint_work(self) -> None:
        self.calls += 1
        if self.calls != self.after:
            super()._checkpoint_work()
            return
        p = self.checkpoints.snapshot("savepoint", self.directory, stop=True)
        self.checkpoints.complete(self.coordinator.completed(wait=True))
        self.location = p.location
        self.flushed = self.results.drain()


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[int, tuple[Any, ...]]]:
    out = []
    for b in batches:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        out += [(int(kinds[i]), tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return out


def _graph(env: TableEnvironment, sql: str, **conf: str) -> JobGraph:
    (stmt,) = env.parse(sql)
    graph = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
    return dataclasses.replace(graph, config={**(graph.config or {}), **conf})


def test_savepoint_restores_data_views_exactly(tmp_path: Path) -> None:
    env = _env(tmp_path)
    for name, sql in QUERIES.items():
        expected = _rows(list(LocalExecutor(_graph(env, sql)).run()))
        first = _SavepointAt(_graph(env, sql), 7, str(tmp_path / f"sp_{name}"))
        before = list(first.run()) + first.flushed
        assert first.location is not None
        rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": first.location}))
        after = _rows(list(rest.run()))
        assert after and rest.restored_from == first.location
        assert _rows(before) + after == expected, name


def test_data_views_are_state_types() -> None:
    lv, mv = ListView(), MapView()
    lv.add_all(["a", "b"])
    mv.put("x", 1)
    acc = Row(lv, [mv, 2])
    back = state_format.decode(state_format.encode(acc))
    assert back == acc
    assert list(back[0].get()) == ["a", "b"] and dict(back[1][0].items()) == {"x": 1}
