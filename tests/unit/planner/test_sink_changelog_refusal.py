"""An updating input into a sink whose connector cannot take it is refused when the job is
planned, as Flink's FlinkChangelogModeInferenceProgram refuses it: "Table sink '<table>'
doesn't support consuming update changes which is produced by node <node>", with the
connector's hint. Each connector declares what its sink takes (`sink_changelog_mode`,
given its options and PRIMARY KEY); INSERT, EXPLAIN, STATEMENT SET and the Table API's
`execute_insert` all go through the one check (planner/changelog.py). No server is
contacted (the JDBC sink's refusal is tested against PostgreSQL in
tests/e2e/test_postgres_jdbc.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from planner.errors import SqlError
from streamsql import EnvironmentSettings, TableEnvironment

AGG = "SELECT k, COUNT(*) AS n FROM src GROUP BY k"
KAFKA = "'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:1'"


def _env(tmp_path: Path) -> TableEnvironment:
    (tmp_path / "src.csv").write_text("a,1\nb,2\na,3\n")
    rows = [
        {"before": None, "after": {"k": "a", "v": 1}, "op": "c"},
        {"before": {"k": "a", "v": 1}, "after": None, "op": "d"},
    ]
    (tmp_path / "cdc.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'src.csv'}', "
        "'format' = 'csv')"
    )
    env.execute_sql(
        f"CREATE TABLE cdc (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'cdc.json'}', "
        "'format' = 'debezium-json')"
    )
    return env


def _refusal(env: TableEnvironment, sql: str) -> SqlError:
    with pytest.raises(SqlError) as info:
        env.execute_sql(sql)
    return info.value


def _sink(env: TableEnvironment, name: str, columns: str, options: str) -> None:
    env.execute_sql(f"CREATE TABLE {name} ({columns}) WITH ({options})")


@pytest.mark.parametrize(
    ("options", "hint"),
    [
        ("'connector' = 'filesystem', 'path' = '{tmp}/out', 'format' = 'csv'", "only appends rows"),
        (f"'connector' = 'kafka', {KAFKA}, 'format' = 'json'", "'upsert-kafka'"),
        ("'connector' = 'duckdb', 'path' = '{tmp}/db.duckdb', 'table-name' = 't'", "'sink.primary-key'"),
    ],
    ids=["filesystem", "kafka", "duckdb-without-key"],
)
def test_append_only_sink_refuses_an_aggregate_at_planning(tmp_path: Path, options: str, hint: str) -> None:
    env = _env(tmp_path)
    _sink(env, "out_t", "k STRING, n BIGINT", options.format(tmp=tmp_path))
    e = _refusal(env, f"INSERT INTO out_t {AGG}")
    assert e.message == (
        "Table sink 'default_catalog.default_database.out_t' doesn't support consuming update changes which is "
        "produced by node GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS n])"
    )
    assert hint in (e.hint or "")
    assert not (tmp_path / "out").exists()  # nothing ran


def test_a_cdc_source_names_update_and_delete_and_the_scan(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _sink(env, "out_t", "k STRING, v INT", f"'connector' = 'kafka', {KAFKA}, 'format' = 'json'")
    e = _refusal(env, "INSERT INTO out_t SELECT k, v + 1 FROM cdc")
    assert "doesn't support consuming update and delete changes which is produced by node TableSourceScan(" in (
        e.message
    )
    assert "cdc" in e.message


@pytest.mark.parametrize(
    "options",
    [
        f"'connector' = 'kafka', {KAFKA}, 'format' = 'debezium-json'",
        f"'connector' = 'upsert-kafka', {KAFKA}, 'key.format' = 'json', 'value.format' = 'json'",
        "'connector' = 'duckdb', 'path' = '{tmp}/db.duckdb', 'table-name' = 't'",
        "'connector' = 'print'",
        "'connector' = 'blackhole'",
    ],
    ids=["kafka-debezium", "upsert-kafka", "duckdb-with-key", "print", "blackhole"],
)
def test_sinks_that_take_updates_are_planned(tmp_path: Path, options: str) -> None:
    env = _env(tmp_path)
    key = "" if "debezium" in options or "print" in options else ", PRIMARY KEY (k) NOT ENFORCED"
    _sink(env, "out_t", f"k STRING, n BIGINT{key}", options.format(tmp=tmp_path))
    plan = env.explain_sql(f"INSERT INTO out_t {AGG}")
    assert "Sink(table=[default_catalog.default_database.out_t]" in plan


def test_duckdb_key_from_the_option_or_the_existing_table(tmp_path: Path) -> None:
    env = _env(tmp_path)
    db = tmp_path / "db.duckdb"
    _sink(
        env,
        "opt",
        "k STRING, n BIGINT",
        f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 't', 'sink.primary-key' = 'k'",
    )
    assert "Sink(" in env.explain_sql(f"INSERT INTO opt {AGG}")
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE keyed (k VARCHAR PRIMARY KEY, n BIGINT)")
    con.execute("CREATE TABLE plain (k VARCHAR, n BIGINT)")
    con.close()
    _sink(env, "keyed", "k STRING, n BIGINT", f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 'keyed'")
    _sink(env, "plain", "k STRING, n BIGINT", f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 'plain'")
    env.execute_sql(f"INSERT INTO keyed {AGG}").wait()  # the sink upserts on the table's own key
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT k, n FROM keyed ORDER BY k").fetchall() == [("a", 2), ("b", 1)]
    con.close()
    assert "doesn't support consuming update changes" in _refusal(env, f"INSERT INTO plain {AGG}").message


def test_insert_only_input_into_an_append_only_sink_is_planned(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _sink(env, "out_t", "k STRING, v INT", f"'connector' = 'filesystem', 'path' = '{tmp_path}/o', 'format' = 'csv'")
    env.execute_sql("INSERT INTO out_t SELECT k, v FROM src").wait()
    assert sorted(p.read_text() for p in (tmp_path / "o").iterdir()) == ["a,1\nb,2\na,3\n"]


def test_explain_statement_set_and_table_api_refuse_alike(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _sink(env, "out_t", "k STRING, n BIGINT", f"'connector' = 'filesystem', 'path' = '{tmp_path}/o', 'format' = 'csv'")
    _sink(env, "ok", "k STRING, v INT", "'connector' = 'blackhole'")
    expected = "Table sink 'default_catalog.default_database.out_t' doesn't support consuming update changes"
    assert expected in _refusal(env, f"EXPLAIN INSERT INTO out_t {AGG}").message
    assert expected in _refusal(env, f"EXPLAIN CHANGELOG_MODE INSERT INTO out_t {AGG}").message
    stmts = env.create_statement_set()
    stmts.add_insert_sql("INSERT INTO ok SELECT k, v FROM src")
    stmts.add_insert_sql(f"INSERT INTO out_t {AGG}")
    with pytest.raises(SqlError, match=expected):
        stmts.execute()
    with pytest.raises(SqlError, match=expected):
        env.sql_query(AGG).execute_insert("out_t")
    with pytest.raises(SqlError, match=expected):
        env.execute_sql(
            f"EXECUTE STATEMENT SET BEGIN INSERT INTO ok SELECT k, v FROM src; INSERT INTO out_t {AGG}; END"
        )
