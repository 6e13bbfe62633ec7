"""The sink table's declared PRIMARY KEY reaches the Sink node (Flink: an upsert sink keys
on it), so the duckdb sink upserts without 'sink.primary-key'; an updating query into the
append-only filesystem sink is refused at planning, as Flink refuses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from planner.errors import SqlError
from streamsql import TableEnvironment

SRC = """CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{path}',
  'format' = 'csv')"""


def _env(tmp_path: Path, mode: str = "streaming") -> TableEnvironment:
    src = tmp_path / "src.csv"
    src.write_text("a,1\nb,2\na,3\nc,4\nb,5\n")
    env = TableEnvironment.create({"execution.runtime-mode": mode})
    env.execute_sql(SRC.format(path=src))
    return env


def _sink_node(env: TableEnvironment, sql: str) -> Any:
    graph = env._planner().plan_inserts(env.parse(sql))
    (sink,) = [n for n in graph.nodes if n.operator == "Sink"]
    return sink.params


def test_declared_primary_key_is_passed_to_the_sink_node(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.execute_sql(
        f"""CREATE TABLE out_t (k STRING, total INT, PRIMARY KEY (k) NOT ENFORCED) WITH (
        'connector' = 'duckdb', 'path' = '{tmp_path / "db.duckdb"}', 'table-name' = 'totals')"""
    )
    params = _sink_node(env, "INSERT INTO out_t SELECT k, SUM(v) FROM src GROUP BY k")
    assert params.primary_key == ("k",)
    env.execute_sql("CREATE TABLE nokey (k STRING, total INT) WITH ('connector' = 'blackhole')")
    assert _sink_node(env, "INSERT INTO nokey SELECT k, v FROM src").primary_key == ()


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_duckdb_sink_upserts_on_the_ddl_primary_key_only(tmp_path: Path, mode: str) -> None:
    db = tmp_path / "db.duckdb"
    env = _env(tmp_path, mode)
    env.execute_sql(
        f"""CREATE TABLE out_t (k STRING, total INT, PRIMARY KEY (k) NOT ENFORCED) WITH (
        'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 'totals')"""
    )
    env.execute_sql("INSERT INTO out_t SELECT k, SUM(v) FROM src GROUP BY k").wait()
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT k, total FROM totals ORDER BY k").fetchall()
    pk = con.execute(
        "SELECT constraint_column_names FROM duckdb_constraints() "
        "WHERE table_name = 'totals' AND constraint_type = 'PRIMARY KEY'"
    ).fetchall()
    con.close()
    assert rows == [("a", 4), ("b", 7), ("c", 4)]
    assert pk == [(["k"],)]  # the table it created carries the key


def test_sink_primary_key_option_still_wins(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    env = _env(tmp_path)
    env.execute_sql(
        f"""CREATE TABLE out_t (k STRING, total INT) WITH ('connector' = 'duckdb', 'path' = '{db}',
        'table-name' = 'totals', 'sink.primary-key' = 'k')"""
    )
    env.execute_sql("INSERT INTO out_t SELECT k, SUM(v) FROM src GROUP BY k").wait()
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT k, total FROM totals ORDER BY k").fetchall()
    con.close()
    assert rows == [("a", 4), ("b", 7), ("c", 4)]


def test_updating_query_into_filesystem_sink_is_refused_even_with_a_key(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.execute_sql(
        f"""CREATE TABLE fs_out (k STRING, total INT, PRIMARY KEY (k) NOT ENFORCED) WITH (
        'connector' = 'filesystem', 'path' = '{tmp_path / "out"}', 'format' = 'csv')"""
    )
    with pytest.raises(SqlError, match="doesn't support consuming update changes"):
        env.execute_sql("INSERT INTO fs_out SELECT k, SUM(v) FROM src GROUP BY k")
