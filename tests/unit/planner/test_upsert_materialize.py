"""Where the planner puts Flink's SinkUpsertMaterializer (`table.exec.sink.upsert-materialize`,
Flink's analyzeUpsertMaterializeStrategy): AUTO for an updating input into a sink with a
PRIMARY KEY that contains none of the input's upsert keys; FORCE for any sink with a key
(the operator runs only for an updating input); NONE never; never in BATCH. EXPLAIN shows
`upsertMaterialize=[true]` on the Sink; the JobGraph has a SinkMaterializer node in front of
it, keyed on the PRIMARY KEY."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.operators.sink_materializer import SINK_MATERIALIZER, SinkMaterializerParams
from streamsql import TableEnvironment

KAFKA = "'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:1', 'key.format' = 'json', 'value.format' = 'json'"


def _env(tmp_path: Path, mode: str = "streaming", **config: str) -> TableEnvironment:
    (tmp_path / "src.csv").write_text("a,1\nb,2\na,3\n")
    env = TableEnvironment.create({"execution.runtime-mode": mode, **config})
    env.execute_sql(
        f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'src.csv'}', "
        "'format' = 'csv')"
    )
    for name, columns, key in (("by_k", "k STRING, n BIGINT", "k"), ("by_k_n", "k STRING, n BIGINT", "k, n")):
        env.execute_sql(
            f"CREATE TABLE {name} ({columns}, PRIMARY KEY ({key}) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
            f"{KAFKA})"
        )
    env.execute_sql("CREATE TABLE plain (k STRING, n BIGINT) WITH ('connector' = 'blackhole')")
    return env


def _sink_line(env: TableEnvironment, sql: str) -> str:
    plan = env.explain_sql(sql)
    return plan.split("== Optimized Execution Plan ==")[1].strip().splitlines()[0]


def _materializers(env: TableEnvironment, sql: str) -> list[SinkMaterializerParams]:
    graph = env._planner().plan_inserts(env.parse(sql))  # noqa: SLF001 - the JobGraph is what the test checks
    return [SinkMaterializerParams.of(n) for n in graph.nodes if n.operator == SINK_MATERIALIZER.name]


@pytest.mark.parametrize(
    ("sql", "planned"),
    [
        # upsert key {k} is the PRIMARY KEY: none
        ("INSERT INTO by_k SELECT k, COUNT(*) FROM src GROUP BY k", False),
        # upsert key {k} lies within the PRIMARY KEY (k, n): none (Flink's "pks contain an upsert key")
        ("INSERT INTO by_k_n SELECT k, COUNT(*) FROM src GROUP BY k", False),
        # upsert key {k, v} is not within the PRIMARY KEY (k): several groups write one sink row
        ("INSERT INTO by_k SELECT k, COUNT(*) FROM src GROUP BY k, v", True),
        # insert-only input: none
        ("INSERT INTO by_k SELECT k, CAST(v AS BIGINT) FROM src", False),
        # no PRIMARY KEY: none
        ("INSERT INTO plain SELECT k, COUNT(*) FROM src GROUP BY k, v", False),
    ],
)
def test_auto_follows_flinks_rule(tmp_path: Path, sql: str, planned: bool) -> None:
    env = _env(tmp_path)
    assert ("upsertMaterialize=[true]" in _sink_line(env, sql)) is planned
    assert bool(_materializers(env, sql)) is planned


def test_the_materializer_keys_on_the_primary_key_and_matches_by_the_upsert_key(tmp_path: Path) -> None:
    env = _env(tmp_path, **{"table.exec.sink.keyed-shuffle": "NONE"})
    sql = "INSERT INTO by_k SELECT k, COUNT(*) FROM src GROUP BY k, v"
    (params,) = _materializers(env, sql)
    assert params.keys == (0,)
    plan = env.explain_sql(sql)
    # its input is hashed on the PRIMARY KEY even with keyed-shuffle NONE, as Flink keys by it
    assert "+- Exchange(distribution=[hash[k]])" in plan.split("== Optimized Execution Plan ==")[1]


def test_force_none_and_batch(tmp_path: Path) -> None:
    insert_only = "INSERT INTO by_k SELECT k, CAST(v AS BIGINT) FROM src"
    forced = _env(tmp_path, **{"table.exec.sink.upsert-materialize": "FORCE"})
    assert "upsertMaterialize=[true]" in _sink_line(forced, insert_only)
    assert _materializers(forced, insert_only) == []  # an insert-only input needs no operator
    assert _materializers(forced, "INSERT INTO by_k SELECT k, COUNT(*) FROM src GROUP BY k")  # keyed alike: FORCE
    keyed_otherwise = "INSERT INTO by_k SELECT k, COUNT(*) FROM src GROUP BY k, v"
    none = _env(tmp_path, **{"table.exec.sink.upsert-materialize": "NONE"})
    assert "upsertMaterialize" not in _sink_line(none, keyed_otherwise)
    assert _materializers(none, keyed_otherwise) == []
    batch = _env(tmp_path, "batch")
    batch.execute_sql(
        "CREATE TABLE dk (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'duckdb', "
        f"'path' = '{tmp_path / 'db.duckdb'}', 'table-name' = 't')"
    )
    assert "upsertMaterialize" not in _sink_line(batch, "INSERT INTO dk SELECT k, COUNT(*) FROM src GROUP BY k, v")
