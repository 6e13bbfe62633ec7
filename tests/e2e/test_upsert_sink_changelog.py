"""Updating results into real upsert sinks, in process (TableEnvironment), small data.

- An `upsert-kafka` sink keyed like its updates: the planner leaves the -U rows out
  (planner/changelog.py `require_update_before`, as Flink plans it), so the topic gets one
  record per change and no tombstone for an update, which a -U arriving in another batch
  than its +U used to write (the session's tansu broker).
- A sink keyed otherwise than its input's updates (a projection that drops the CDC table's
  key, a join): Flink's SinkUpsertMaterializer keeps the rows that back each sink key, so
  a retraction of one of them leaves the row another still backs. Without it (the old
  plan, or `table.exec.sink.upsert-materialize` = NONE) the final table misses that row
  (DuckDB file; PostgreSQL through the session's server).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from servers.kafka import KafkaBroker
from servers.postgres import PostgresServer

from streamsql import EnvironmentSettings, TableEnvironment


def test_group_by_into_upsert_kafka_writes_no_update_before(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    rows = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5)]
    (tmp_path / "in.json").write_text("".join(json.dumps({"grp": g, "v": v}) + "\n" for g, v in rows))
    out = kafka_broker.new_topic("upsert-no-ub", 1)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.exec.source.batch-rows", "1")  # each row's change on its own
    env.execute_sql(
        f"CREATE TABLE src (grp STRING, v BIGINT) WITH ('connector'='filesystem','path'='{tmp_path / 'in.json'}',"
        "'format'='json')"
    )
    env.execute_sql(
        f"CREATE TABLE totals (grp STRING, n BIGINT, s BIGINT, PRIMARY KEY (grp) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{out}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json')"
    )
    insert = "INSERT INTO totals SELECT grp, COUNT(*), SUM(v) FROM src GROUP BY grp"
    plan = env.explain_sql(insert, "CHANGELOG_MODE")
    assert (
        "GroupAggregate(groupBy=[grp], select=[grp, COUNT(*) AS EXPR$1, SUM(v) AS EXPR$2], changelogMode=[I,UA])"
        in (plan)
    )
    env.execute_sql(insert).wait()
    records = [
        (json.loads(m.key())["grp"], None if m.value() is None else json.loads(m.value()))
        for m in kafka_broker.read(out, 1)
    ]
    assert records == [
        ("a", {"grp": "a", "n": 1, "s": 1}),
        ("b", {"grp": "b", "n": 1, "s": 2}),
        ("a", {"grp": "a", "n": 2, "s": 4}),
        ("a", {"grp": "a", "n": 3, "s": 8}),
        ("b", {"grp": "b", "n": 2, "s": 7}),
    ]


def _cdc_env(tmp_path: Path, rows: list[dict[str, object]], table: str = "cdc") -> TableEnvironment:
    (tmp_path / f"{table}.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.exec.source.batch-rows", "1")  # each change on its own
    env.execute_sql(
        f"CREATE TABLE {table} (id INT, k STRING, v INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / (table + '.json')}', 'format' = 'debezium-json')"
    )
    return env


def _c(id_: int, k: str, v: int) -> dict[str, object]:
    return {"before": None, "after": {"id": id_, "k": k, "v": v}, "op": "c"}


def _d(id_: int, k: str, v: int) -> dict[str, object]:
    return {"before": {"id": id_, "k": k, "v": v}, "after": None, "op": "d"}


@pytest.mark.parametrize(
    ("setting", "parallelism", "expected"),
    [("AUTO", "1", [("a", 1), ("b", 3)]), ("AUTO", "2", [("a", 1), ("b", 3)]), ("NONE", "1", [("b", 3)])],
)
def test_sink_keyed_otherwise_keeps_the_row_another_input_row_backs(
    tmp_path: Path, setting: str, parallelism: str, expected: list[tuple[str, int]]
) -> None:
    """Rows 1 and 2 both write sink key 'a'; deleting row 2 must show row 1 again (at
    parallelism 2 the materializer runs in the workers, keyed on the sink's key)."""
    env = _cdc_env(tmp_path, [_c(1, "a", 1), _c(2, "a", 2), _c(3, "b", 3), _d(2, "a", 2)])
    env.get_config().set("table.exec.sink.upsert-materialize", setting)
    env.get_config().set("parallelism.default", parallelism)
    db = tmp_path / "out.duckdb"
    env.execute_sql(
        f"CREATE TABLE out_t (k STRING, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'duckdb', "
        f"'path' = '{db}', 'table-name' = 't')"
    )
    insert = "INSERT INTO out_t SELECT k, v FROM cdc"
    sink_line = env.explain_sql(insert).split("== Optimized Execution Plan ==")[1].strip().splitlines()[0]
    materialized = "upsertMaterialize=[true]" in sink_line
    assert materialized is (setting == "AUTO")
    env.execute_sql(insert).wait()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT k, v FROM t ORDER BY k").fetchall() == expected
    con.close()


def test_join_into_jdbc_keyed_by_another_column(postgres_server: PostgresServer, tmp_path: Path) -> None:
    """A regular join's result into a PostgreSQL table keyed by the product name: two orders
    back 'apple'; deleting the later one leaves the earlier one in the table."""
    pg = postgres_server
    out = pg.new_name("by_product")
    pg.execute(f"CREATE TABLE {out} (name text PRIMARY KEY, order_id int)")
    env = _cdc_env(tmp_path, [_c(1, "p1", 10), _c(2, "p1", 20), _c(3, "p2", 30), _d(2, "p1", 20)], "orders")
    (tmp_path / "products.csv").write_text("p1,apple\np2,pear\n")
    env.execute_sql(
        f"CREATE TABLE products (pid STRING, name STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'products.csv'}', 'format' = 'csv')"
    )
    env.execute_sql(
        f"CREATE TABLE by_product (name STRING, order_id INT, PRIMARY KEY (name) NOT ENFORCED) WITH ("
        f"'connector' = 'jdbc', 'url' = '{pg.jdbc_url}', 'table-name' = '{out}', 'username' = 'postgres')"
    )
    insert = "INSERT INTO by_product SELECT p.name, o.id FROM orders o JOIN products p ON o.k = p.pid"
    assert "upsertMaterialize=[true]" in env.explain_sql(insert)
    env.execute_sql(insert).wait()
    assert pg.execute(f"SELECT name, order_id FROM {out} ORDER BY name") == [("apple", 1), ("pear", 3)]
