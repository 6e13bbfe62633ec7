"""StatementSet.add_insert_sql takes CREATE TABLE ... AS and REPLACE TABLE ... AS, as Flink's
`addInsertSql` takes any modifying statement: `execute()` creates (or replaces) the tables
first and runs every INSERT of the set as one job."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import UnsupportedSqlError
from streamsql import EnvironmentSettings, TableEnvironment


def _env(tmp_path: Path) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        f"CREATE TABLE a (x INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/a', 'format' = 'csv')"
    )
    env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1), (2), (3)) AS t(x)")
    return env


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in env.execute_sql(sql).collect())


def test_ctas_and_insert_run_as_one_job(tmp_path: Path) -> None:
    env = _env(tmp_path)
    stmt_set = env.create_statement_set()
    stmt_set.add_insert_sql(
        f"CREATE TABLE c WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/c', 'format' = 'csv') "
        "AS SELECT x, x * 10 AS y FROM v"
    )
    stmt_set.add_insert_sql("INSERT INTO a SELECT x FROM v WHERE x > 1")
    assert "c" not in env.list_tables()  # created by execute(), as Flink's executeInternal does
    with pytest.raises(UnsupportedSqlError, match=r"StatementSet.explain\(\) of a set holding CREATE"):
        stmt_set.explain()
    result = stmt_set.execute()
    assert (
        result.job is not None
        and result.job.name == "insert-into_default_catalog.default_database.c,default_catalog.default_database.a"
    )
    result.wait()
    assert _rows(env, "SELECT * FROM c") == [(1, 10), (2, 20), (3, 30)]
    assert _rows(env, "SELECT * FROM a") == [(2,), (3,)]
    # REPLACE TABLE ... AS, and CTAS IF NOT EXISTS of an existing table (nothing to run)
    again = env.create_statement_set()
    again.add_insert_sql(
        f"REPLACE TABLE c WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/c2', 'format' = 'csv') "
        "AS SELECT x AS z FROM v WHERE x = 2"
    )
    again.add_insert_sql("CREATE TABLE IF NOT EXISTS a AS SELECT 5 AS x")
    again.execute().wait()
    assert _rows(env, "SELECT * FROM c") == [(2,)]
    assert _rows(env, "SELECT * FROM a") == [(2,), (3,)]


def test_other_statements_are_refused(tmp_path: Path) -> None:
    stmt_set = _env(tmp_path).create_statement_set()
    with pytest.raises(UnsupportedSqlError, match="exactly one INSERT or CREATE / REPLACE TABLE ... AS statement"):
        stmt_set.add_insert_sql("CREATE TABLE d (x INT) WITH ('connector' = 'blackhole')")
