"""The 'jdbc' connector on the Spark runner, against the real PostgreSQL server
(tests/servers/postgres.py): no PostgreSQL JDBC jar, psycopg from Spark's Python workers
(runtime/connectors/jdbc_spark.py). BATCH: a partitioned scan (one Spark partition per
split) into an upsert and an append table; STREAMING: the scan as a one-batch stream, a
GROUP BY changelog into an upsert table through foreachBatch, one transaction per
micro-batch recorded in the commit markers; postgres-cdc refused."""

from __future__ import annotations

import datetime as dt
import importlib.util
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from servers.postgres import PostgresServer
from spark_util import SPARK

from runtime.executor.spark.types import SparkUnsupportedError
from streamsql import TableEnvironment

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)


def _with(pg: PostgresServer, table: str, extra: str = "") -> str:
    return f"'connector' = 'jdbc', 'url' = '{pg.jdbc_url}', 'table-name' = '{table}', 'username' = 'postgres'{extra}"


def _run(sql: str, mode: str, **conf: str) -> None:
    env = TableEnvironment.create({"execution.runtime-mode": mode, "execution.target": "spark", **SPARK, **conf})
    for stmt in env.parse(sql):
        env.execute_statement(stmt).wait()


def test_batch_partitioned_scan_into_upsert_and_append_tables(postgres_server: PostgresServer) -> None:
    pg = postgres_server
    src, agg, copy = pg.new_name("src"), pg.new_name("agg"), pg.new_name("copy")
    pg.execute(
        f"CREATE TABLE {src} (id int PRIMARY KEY, k int, v numeric(10, 2), ts timestamp, name text, tags text[])"
    )
    pg.execute(
        f"INSERT INTO {src} SELECT i, i % 7, i / 4.0, timestamp '2024-01-01' + i * interval '1 minute', "
        f"'n' || i, ARRAY['a', 'b' || i] FROM generate_series(1, 400) i"
    )
    pg.execute(f"INSERT INTO {src} VALUES (401, NULL, NULL, NULL, NULL, NULL)")
    pg.execute(f"CREATE TABLE {agg} (k int PRIMARY KEY, c bigint, s numeric(20, 2))")
    pg.execute(f"INSERT INTO {agg} VALUES (3, -1, -1)")  # replaced by the upsert
    pg.execute(f"CREATE TABLE {copy} (id int, k int, v numeric(10, 2), ts timestamp, name text, tags text[])")
    parts = (
        ", 'scan.partition.column' = 'id', 'scan.partition.num' = '3', "
        "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '401'"
    )
    cols = "id INT, k INT, v DECIMAL(10, 2), ts TIMESTAMP(3), name STRING, tags ARRAY<STRING>"
    _run(
        f"CREATE TABLE s ({cols}) WITH ({_with(pg, src, parts)});\n"
        f"CREATE TABLE a (k INT, c BIGINT, s DECIMAL(20, 2), PRIMARY KEY (k) NOT ENFORCED) WITH ({_with(pg, agg)});\n"
        f"CREATE TABLE c ({cols}) WITH ({_with(pg, copy)});\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO a SELECT k, COUNT(*), SUM(v) FROM s WHERE k IS NOT NULL GROUP BY k;\n"
        "INSERT INTO c SELECT * FROM s;\n"
        "END;\n",
        "batch",
    )
    expected = pg.execute(f"SELECT k, count(*), sum(v) FROM {src} WHERE k IS NOT NULL GROUP BY k ORDER BY k")
    assert pg.execute(f"SELECT k, c, s FROM {agg} ORDER BY k") == expected
    assert pg.execute(f"SELECT * FROM {copy} ORDER BY id") == pg.execute(f"SELECT * FROM {src} ORDER BY id")
    assert pg.execute(f"SELECT * FROM {copy} WHERE id = 5") == [
        (5, 5, Decimal("1.25"), dt.datetime(2024, 1, 1, 0, 5), "n5", ["a", "b5"])
    ]


def test_streaming_jdbc_scan_changelog_into_upsert_table(postgres_server: PostgresServer, tmp_path: Path) -> None:
    """STREAMING: the bounded jdbc scan as a one-micro-batch stream (two splits), a GROUP BY
    changelog into an upsert table through foreachBatch, each micro-batch one transaction
    recorded in the commit markers."""
    pg = postgres_server
    raw, agg = pg.new_name("raw"), pg.new_name("agg")
    pg.execute(f"CREATE TABLE {raw} (id int PRIMARY KEY, k int, v bigint)")
    pg.execute(f"INSERT INTO {raw} SELECT i, i % 5, i FROM generate_series(1, 200) i")
    pg.execute(f"CREATE TABLE {agg} (k int PRIMARY KEY, c bigint, s bigint)")
    pg.execute("CREATE TABLE IF NOT EXISTS _streamsql_commits (txn text PRIMARY KEY)")
    before = pg.execute("SELECT count(*) FROM _streamsql_commits WHERE txn LIKE 'spark-%'")[0][0]
    parts = (
        ", 'scan.partition.column' = 'id', 'scan.partition.num' = '2', "
        "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '200'"
    )
    _run(
        f"CREATE TABLE src (id INT, k INT, v BIGINT) WITH ({_with(pg, raw, parts)});\n"
        f"CREATE TABLE a (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ({_with(pg, agg)});\n"
        "INSERT INTO a SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;\n",
        "streaming",
        **{"execution.checkpointing.dir": f"file://{tmp_path / 'cp'}"},
    )
    expected = pg.execute(f"SELECT k, count(*), sum(v) FROM {raw} GROUP BY k ORDER BY k")
    assert pg.execute(f"SELECT k, c, s FROM {agg} ORDER BY k") == expected
    assert pg.execute("SELECT count(*) FROM _streamsql_commits WHERE txn LIKE 'spark-%'")[0][0] > before


def test_a_replayed_micro_batch_is_applied_once(postgres_server: PostgresServer) -> None:
    """What foreachBatch relies on: a transaction id already recorded is skipped, so an append
    table gets a replayed micro-batch's rows once."""
    from runtime.connectors.jdbc_spark import write_rows
    from runtime.types import BIGINT, Field

    pg = postgres_server
    log = pg.new_name("log")
    pg.execute(f"CREATE TABLE {log} (v bigint)")
    options = {"url": pg.jdbc_url, "table-name": log, "username": "postgres"}
    rows = pa.table({"v": pa.array([1, 2, 3], pa.int64()), "__op": pa.array([0, 0, 0], pa.int8())})
    for _ in range(2):
        write_rows(rows, options, (Field("v", BIGINT()),), (), f"spark-test-{log}-7")
    write_rows(rows, options, (Field("v", BIGINT()),), (), f"spark-test-{log}-8")
    assert pg.execute(f"SELECT v, count(*) FROM {log} GROUP BY v ORDER BY v") == [(1, 2), (2, 2), (3, 2)]


def test_refusals_name_the_reason(postgres_server: PostgresServer) -> None:
    from runtime.executor.spark.capabilities import check_graph

    pg = postgres_server
    t = pg.new_name("spark")
    pg.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v text)")
    pg.execute(f"ALTER TABLE {t} REPLICA IDENTITY FULL")
    env = TableEnvironment.create({"execution.runtime-mode": "streaming"})
    env.execute_sql(
        f"CREATE TABLE s (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'postgres-cdc', "
        f"'hostname' = '{pg.host}', 'port' = '{pg.port}', 'username' = 'postgres', 'password' = 'x', "
        f"'database-name' = '{pg.database}', 'schema-name' = 'public', 'table-name' = '{t}', 'slot.name' = '{t}')"
    )
    (stmt,) = env.parse("SELECT * FROM s")
    with pytest.raises(SparkUnsupportedError, match="connector 'postgres-cdc' reads a PostgreSQL replication slot"):
        check_graph(env._planner().plan_query(stmt).graph)  # noqa: SLF001 - planning only
