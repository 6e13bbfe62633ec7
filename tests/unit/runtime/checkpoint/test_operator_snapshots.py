"""Every stateful operator family round-trips through a snapshot exactly.

Each case plans a streaming query, runs it once uninterrupted, then runs it again, takes a
savepoint after the n-th source batch (the barrier goes through the whole DAG), stops,
restores a *fresh* executor (fresh operators, fresh state backends) from that savepoint
and runs the rest. The changelog before the barrier plus the changelog after the restore
must equal the uninterrupted changelog row for row, with both state backends.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from runtime.batch import data_width, row_kinds
from runtime.executor.local import LocalExecutor
from runtime.graph import JobGraph
from streamsql.environment import TableEnvironment

BASE = 1_700_000_000_000


class _SavepointAt(LocalExecutor):
    """Takes a savepoint after the n-th source batch, waits for it and stops there."""

    def __init__(self, graph: JobGraph, after: int, directory: str) -> None:
        super().__init__(graph)
        self.after = after
        self.directory = directory
        self.calls = 0
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
        # what the barrier flushed out belongs before it
        self.flushed = self.results.drain()


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[int, tuple[Any, ...]]]:
    out = []
    for b in batches:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        out += [(int(kinds[i]), tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return out


def _inputs(root: Path) -> None:
    rng = random.Random(3)
    (root / "a").mkdir()
    (root / "b").mkdir()
    with open(root / "a" / "a.csv", "w") as f:
        for i in range(600):
            f.write(f"{rng.randrange(7)},{rng.randrange(50)},{BASE + i * 37}\n")
    with open(root / "b" / "b.csv", "w") as f:
        for i in range(300):
            f.write(f"{rng.randrange(9)},{rng.randrange(50)},{BASE + i * 71}\n")


def _env(root: Path, backend: str) -> TableEnvironment:
    env = TableEnvironment.create(
        {
            "table.exec.source.batch-rows": "25",
            "state.backend.type": backend,
            "state.backend.rocksdb.localdir": str(root / "rocks"),
        }
    )
    for t in ("a", "b"):
        env.execute_sql(
            f"CREATE TABLE {t} (k INT, v INT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), "
            f"pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
            f"WITH ('connector'='filesystem','path'='{root}/{t}','format'='csv')"
        )
    return env


def _graph(env: TableEnvironment, sql: str, **conf: str) -> JobGraph:
    (stmt,) = env.parse(sql)
    graph = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
    return dataclasses.replace(graph, config={**(graph.config or {}), **conf})


CASES: dict[str, tuple[str, set[str]]] = {
    "inner_join_updating": (
        "SELECT a.k, a.v, g.m FROM a JOIN (SELECT k, MAX(v) AS m FROM b GROUP BY k) g ON a.k = g.k AND a.v < g.m",
        {"Join"},
    ),
    "full_outer_join": ("SELECT a.k, a.v, b.v FROM a FULL JOIN b ON a.k = b.k + 3 AND a.v = b.v", {"Join"}),
    "semi_anti_join": (
        "SELECT k, v FROM a WHERE v IN (SELECT v FROM b WHERE k < 4) AND k NOT IN (SELECT k FROM b WHERE v > 45)",
        {"Join"},
    ),
    "topn_append": (
        "SELECT * FROM (SELECT k, v, ts_ms, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts_ms) AS rn "
        "FROM a) WHERE rn <= 3",
        {"Rank"},
    ),
    "topn_updating_rank": (
        "SELECT * FROM (SELECT k, c, RANK() OVER (ORDER BY c DESC) AS r "
        "FROM (SELECT k, COUNT(*) AS c FROM a GROUP BY k)) WHERE r <= 2",
        {"Rank"},
    ),
    "sort_limit": ("SELECT k, v FROM a ORDER BY v DESC, k LIMIT 5", {"SortLimit"}),
    "limit": ("SELECT k, v FROM a LIMIT 130", {"Limit"}),
    "dedup_first_rowtime": (
        "SELECT k, v, ts_ms FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn FROM a) "
        "WHERE rn = 1",
        {"Deduplicate"},
    ),
    "dedup_last_rowtime": (
        "SELECT k, v, ts_ms FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, v % 3 ORDER BY ts DESC) AS rn "
        "FROM a) WHERE rn = 1",
        {"Deduplicate"},
    ),
    "window_topn": (
        "SELECT * FROM (SELECT window_start, k, v, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
        "ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND))) WHERE rn <= 2",
        {"WindowRank"},
    ),
    "window_dedup": (
        "SELECT * FROM (SELECT window_start, k, v, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k "
        "ORDER BY window_time DESC) AS rn FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND))) WHERE rn <= 1",
        {"WindowDeduplicate", "WindowRank"},  # one class; the planner picks by the ORDER BY
    ),
    "temporal_sort": ("SELECT k, v, ts_ms FROM a ORDER BY ts, v", {"TemporalSort"}),
    "match_recognize": (
        "SELECT * FROM a MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.v AS start_v, "
        "FIRST(B.v) AS first_down, LAST(B.v) AS bottom, C.ts_ms AS end_ts ONE ROW PER MATCH "
        "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) DEFINE B AS v < PREV(v), C AS v > PREV(v))",
        {"Match"},
    ),
    "correlate_unnest": (
        "SELECT k, x FROM a CROSS JOIN UNNEST(ARRAY[v, v + 1]) AS t(x) WHERE k = 1",
        {"Correlate"},
    ),
    # kept rows holding MAP values with a NULL key (runtime/map_values.py)
    "topn_null_key_map": (
        "SELECT * FROM (SELECT k, m, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, ts_ms) AS rn "
        "FROM (SELECT k, v, ts_ms, MAP[IF(v % 2 = 0, CAST(NULL AS STRING), 'odd'), v] AS m FROM a)) WHERE rn <= 2",
        {"Rank"},
    ),
    "dedup_null_key_map": (
        "SELECT k, m FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn "
        "FROM (SELECT k, ts, MAP[IF(v % 2 = 0, CAST(NULL AS STRING), 'odd'), v] AS m FROM a)) WHERE rn = 1",
        {"Deduplicate"},
    ),
}


# Families whose state goes through the keyed backend also run with `rocksdb`.
KEYED = {
    "inner_join_updating",
    "semi_anti_join",
    "topn_updating_rank",
    "dedup_last_rowtime",
    "match_recognize",
    "dedup_null_key_map",
}
PARAMS = [(c, "hashmap") for c in sorted(CASES)] + [(c, "rocksdb") for c in sorted(KEYED)]


@pytest.mark.parametrize(("case", "backend"), PARAMS)
def test_snapshot_restore_continues_exactly(tmp_path: Path, case: str, backend: str) -> None:
    sql, operators = CASES[case]
    _inputs(tmp_path)
    env = _env(tmp_path, backend)
    graph = _graph(env, sql)
    present = {n.operator for n in graph.nodes}
    assert operators & present, f"the plan has none of {operators}: {sorted(present)}"
    expected = _rows(list(LocalExecutor(graph).run()))
    assert expected, "the query produces nothing: the case tests nothing"

    sources = sum(1 for n in graph.nodes if not n.inputs)
    # a barrier after a whole round over the sources keeps their interleaving after the restore
    after = sources * (8 if sources == 1 else 5)
    first = _SavepointAt(_graph(env, sql, **{"table.exec.source.batch-rows": "25"}), after, str(tmp_path / "sp"))
    before = list(first.run()) + first.flushed
    assert first.location is not None, "the savepoint was never taken"
    rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": first.location}))
    after_rows = _rows(list(rest.run()))
    assert rest.restored_from == first.location
    got = _rows(before) + after_rows
    assert len(_rows(before)) < len(expected) or not after_rows
    assert got == expected


def test_every_registered_operator_declares_checkpointing() -> None:
    """No operator is left undeclared (a checkpointed job containing it would be refused)."""
    from runtime.operators.spec import all_specs

    undeclared = sorted(
        s.name for s in all_specs() if s.operator_class is not None and s.operator_class.checkpointing is None
    )
    assert not undeclared


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_sink_materializer_restores_into_the_same_final_table(tmp_path: Path, backend: str) -> None:
    """A CDC table written to a DuckDB sink keyed by a non-key column (the SinkMaterializer
    in front of the sink): 300 rows, then deletes from the newest down, savepoint after 200
    rows, restore. A delete after the restore of a row kept before it must find it in the
    restored state, or the sink row it backs is not handed back to the row before it."""
    import json

    import duckdb

    changes = [{"before": None, "after": {"id": i, "k": i % 10}, "op": "c"} for i in range(300)]
    changes += [{"before": {"id": i, "k": i % 10}, "after": None, "op": "d"} for i in range(299, 49, -1)]
    (tmp_path / "cdc.json").write_text("".join(json.dumps(c) + "\n" for c in changes))
    env = _env(tmp_path, backend)
    env.get_config().set("table.exec.source.batch-rows", "100")
    env.execute_sql(
        f"CREATE TABLE cdc (id INT, k INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'cdc.json'}', "
        "'format' = 'debezium-json')"
    )

    def final_table(db: Path, savepoint_after: int | None) -> list[tuple[Any, ...]]:
        env.execute_sql("DROP TABLE IF EXISTS out_t")
        env.execute_sql(
            f"CREATE TABLE out_t (k INT, id INT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
            f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 't')"
        )
        (stmt,) = env.parse("INSERT INTO out_t SELECT k, id FROM cdc")
        graph = env._planner().plan_inserts([stmt])  # noqa: SLF001 - the test drives the executor itself
        assert "SinkMaterializer" in {n.operator for n in graph.nodes}
        if savepoint_after is None:
            list(LocalExecutor(graph).run())
        else:
            first = _SavepointAt(graph, savepoint_after, str(tmp_path / f"sp-{db.stem}"))
            list(first.run())
            assert first.location is not None, "the savepoint was never taken"
            conf = {**(graph.config or {}), "execution.savepoint.path": first.location}
            list(LocalExecutor(dataclasses.replace(graph, config=conf)).run())
        con = duckdb.connect(str(db), read_only=True)
        rows = con.execute("SELECT k, id FROM t ORDER BY k").fetchall()
        con.close()
        return rows

    expected = final_table(tmp_path / "whole.duckdb", None)
    assert expected == [(k, 40 + k) for k in range(10)]
    assert final_table(tmp_path / "restored.duckdb", 2) == expected
