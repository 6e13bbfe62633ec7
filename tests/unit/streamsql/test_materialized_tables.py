"""Materialized tables beyond what the statement scripts show: a FULL table's embedded
scheduler refreshes it on its own, a materialized table in a persistent catalog survives a
restart (its pipeline SUSPENDED until RESUME), a CONTINUOUS job resumes from the savepoint
SUSPEND took."""

from __future__ import annotations

import time
from pathlib import Path

from streamsql.environment import EnvironmentSettings, TableEnvironment
from streamsql.materialized_tables import pipelines, status


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in env.execute_sql(sql).collect())


def _eventually(check: object, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the refresh never happened"
        time.sleep(0.05)


def _orders(env: TableEnvironment, tmp_path: Path) -> None:
    env.execute_sql(
        f"CREATE TABLE orders (user_id BIGINT, amount BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'orders'}', 'format' = 'csv')"
    )
    env.execute_sql("INSERT INTO orders VALUES (1, 5), (1, 7), (2, 1)").wait()


def test_full_mode_refreshes_on_its_schedule(tmp_path: Path) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql("SET 'workflow-scheduler.type' = 'embedded'")
    _orders(env, tmp_path)
    env.execute_sql(
        "CREATE MATERIALIZED TABLE totals "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'totals'}', 'format' = 'csv') "
        "FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL "
        "AS SELECT user_id, SUM(amount) AS total FROM orders GROUP BY user_id"
    )
    schedule = pipelines(env)[("default_catalog", "default_database", "totals")].schedule
    assert schedule is not None
    _eventually(lambda: schedule.runs >= 1)
    assert _rows(env, "SELECT * FROM totals") == [(1, 12), (2, 1)]
    # New input shows up at a later run: every run overwrites the table with the query's answer.
    env.execute_sql("INSERT INTO orders VALUES (3, 4)").wait()
    seen = schedule.runs
    _eventually(lambda: schedule.runs > seen)
    assert _rows(env, "SELECT * FROM totals") == [(1, 12), (2, 1), (3, 4)]
    env.execute_sql("ALTER MATERIALIZED TABLE totals SUSPEND")
    assert schedule.stop.is_set() and schedule.last_error is None
    env.execute_sql("DROP MATERIALIZED TABLE totals")


def test_a_materialized_table_survives_a_restart_of_a_persistent_catalog(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    open_catalog = f"CREATE CATALOG shop WITH ('type' = 'sqlite', 'path' = '{db}')"
    first = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    first.execute_sql(open_catalog)
    first.execute_sql("USE CATALOG shop")
    _orders(first, tmp_path)
    first.execute_sql("SET 'execution.checkpointing.savepoint-dir' = '" + str(tmp_path / "sp") + "'")
    first.execute_sql(
        "CREATE MATERIALIZED TABLE big "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'big'}', 'format' = 'csv') "
        "FRESHNESS = INTERVAL '10' SECOND "
        "AS SELECT user_id, amount FROM orders WHERE amount > 1"
    )
    path = ("shop", "default", "big")
    job = pipelines(first)[path].job
    assert job is not None and job.name == "Materialized_table_`shop`.`default`.`big`_continuous_refresh_job"
    job.wait()  # the source is bounded: the streaming job ends after the last row
    assert _rows(first, "SELECT * FROM big") == [(1, 5), (1, 7)]
    ddl = next(iter(first.execute_sql("SHOW CREATE MATERIALIZED TABLE big").collect()))[0]
    del first

    second = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    second.execute_sql(open_catalog)
    second.execute_sql("USE CATALOG shop")
    assert [r[0] for r in second.execute_sql("SHOW MATERIALIZED TABLES").collect()] == ["big"]
    assert next(iter(second.execute_sql("SHOW CREATE MATERIALIZED TABLE big").collect()))[0] == ddl
    assert status(second, path) == "SUSPENDED"  # the pipeline lived in the first session
    second.execute_sql("INSERT INTO orders VALUES (3, 9)").wait()
    second.execute_sql("ALTER MATERIALIZED TABLE big RESUME")
    resumed = pipelines(second)[path].job
    assert resumed is not None
    resumed.wait()
    # The new job starts without state: it reads the bounded source again (Flink's RESUME of a
    # job that has no savepoint starts fresh as well).
    assert (3, 9) in _rows(second, "SELECT * FROM big")
    second.execute_sql("DROP MATERIALIZED TABLE big")
    assert list(second.execute_sql("SHOW MATERIALIZED TABLES").collect()) == []


def test_suspend_takes_a_savepoint_and_resume_restores_it(tmp_path: Path) -> None:
    env = TableEnvironment.create({})
    env.execute_sql("SET 'execution.checkpointing.savepoint-dir' = '" + str(tmp_path / "sp") + "'")
    env.execute_sql("CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100')")
    env.execute_sql(
        "CREATE MATERIALIZED TABLE counted WITH ('connector' = 'blackhole') "
        "AS SELECT x % 3 AS k, COUNT(*) AS n FROM gen GROUP BY x % 3"
    )
    path = ("default_catalog", "default_database", "counted")
    pipeline = pipelines(env)[path]
    first_job = pipeline.job
    assert first_job is not None and first_job.is_running()
    env.execute_sql("ALTER MATERIALIZED TABLE counted SUSPEND")
    assert not first_job.is_running() and pipeline.savepoint is not None
    assert (Path(pipeline.savepoint) / "_metadata").exists()
    assert status(env, path) == "SUSPENDED"
    env.execute_sql("ALTER MATERIALIZED TABLE counted RESUME")
    assert pipeline.job is not None and pipeline.job is not first_job and status(env, path) == "ACTIVATED"
    env.execute_sql("DROP MATERIALIZED TABLE counted")
    assert path not in pipelines(env)


def test_stop_job_and_describe_job_statements(tmp_path: Path) -> None:
    from planner.errors import SqlError

    env = TableEnvironment.create({})
    env.execute_sql("CREATE TABLE g (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50')")
    env.execute_sql("CREATE TABLE b (x BIGINT) WITH ('connector' = 'blackhole')")
    job = env.execute_sql("INSERT INTO b SELECT x FROM g").job
    assert job is not None
    row = next(iter(env.execute_sql(f"DESCRIBE JOB '{job.job_id}'").collect()))
    assert (row[0], row[1], row[2]) == (job.job_id, "insert-into_default_catalog.default_database.b", "RUNNING")
    try:
        env.execute_sql("STOP JOB 'ffffffffffffffffffffffffffffffff'")
        raise AssertionError("an unknown job was stopped")
    except SqlError as e:
        assert e.flink_class == "org.apache.flink.runtime.messaging.FlinkJobNotFoundException"
    env.execute_sql("SET 'execution.checkpointing.savepoint-dir' = '" + str(tmp_path / "sp") + "'")
    rows = list(env.execute_sql(f"STOP JOB '{job.job_id}' WITH SAVEPOINT").collect())
    assert len(rows) == 1 and (Path(rows[0][0]) / "_metadata").exists()
    assert not job.is_running()
    job2 = env.execute_sql("INSERT INTO b SELECT x FROM g").job
    assert job2 is not None
    env.execute_sql(f"STOP JOB '{job2.job_id}'")
    assert job2.get_job_status() == "CANCELED"


def test_explain_json_execution_plan_shows_the_job_graph() -> None:
    import json

    env = TableEnvironment.create({})
    env.execute_sql("CREATE TABLE t (a INT) WITH ('connector' = 'datagen')")
    text = next(iter(env.execute_sql("EXPLAIN JSON_EXECUTION_PLAN SELECT a FROM t WHERE a > 1").collect()))[0]
    head, _, plan = text.partition("\n\n== Physical Execution Plan ==\n")
    assert head.startswith("== Abstract Syntax Tree ==") and "== Optimized Execution Plan ==" in head
    nodes = json.loads(plan)["nodes"]
    assert [n["operator"] for n in nodes][:2] == ["TableSourceScan", "Calc"]


def test_a_periodic_refresh_targets_the_partition_of_its_schedule_time(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from planner.errors import SqlError
    from streamsql.materialized_tables import scheduled_partition

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql("SET 'workflow-scheduler.type' = 'embedded'")
    env.execute_sql("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    env.execute_sql(
        f"CREATE TABLE events (id INT, ds STRING, n INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'events'}', 'format' = 'csv')"
    )
    env.execute_sql(
        "CREATE MATERIALIZED TABLE daily PARTITIONED BY (ds) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'daily'}', 'format' = 'csv', "
        "'partition.fields.ds.date-formatter' = 'yyyy-MM-dd') "
        "FRESHNESS = INTERVAL '1' DAY AS SELECT ds, COUNT(*) AS c FROM events GROUP BY ds"
    )
    table = env.catalog.get(("daily",))
    # Scheduled at 2024-06-02 00:00 in Shanghai (16:00 UTC the day before): yesterday's partition.
    at = datetime(2024, 6, 1, 16, 0, tzinfo=UTC).timestamp()
    assert scheduled_partition(env, table, at) == (("ds", "2024-06-01"),)
    for bad, message in (
        ("'partition.fields.id.date-formatter' = 'yyyy'", "Column 'id' referenced by materialized table option"),
        ("'partition.fields.n.date-formatter' = 'yyyy'", "only supports referring to char, varchar and string"),
    ):
        try:
            env.execute_sql(
                f"CREATE MATERIALIZED TABLE bad PARTITIONED BY (n) WITH ('connector' = 'blackhole', {bad}) "
                "FRESHNESS = INTERVAL '1' DAY AS SELECT id, n FROM events"
            )
            raise AssertionError("created")
        except SqlError as e:
            assert message in e.message
    env.execute_sql("DROP MATERIALIZED TABLE daily")


def test_resume_with_options_applies_them_to_the_refresh_job_only(tmp_path: Path) -> None:
    """RESUME WITH (...): dynamic options of the restarted refresh job (here its sink writes
    JSON instead of the table's CSV), never stored in the catalog."""
    env = TableEnvironment.create({})
    env.execute_sql("SET 'execution.checkpointing.savepoint-dir' = '" + str(tmp_path / "sp") + "'")
    _orders(env, tmp_path)
    env.execute_sql(
        "CREATE MATERIALIZED TABLE big "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'big'}', 'format' = 'csv') "
        "FRESHNESS = INTERVAL '10' SECOND "
        "AS SELECT user_id, amount FROM orders WHERE amount > 1"
    )
    pipeline = pipelines(env)[("default_catalog", "default_database", "big")]
    assert pipeline.job is not None
    pipeline.job.wait()
    env.execute_sql("ALTER MATERIALIZED TABLE big SUSPEND")
    for f in (tmp_path / "big").rglob("*"):
        if f.is_file():
            f.unlink()
    env.execute_sql("ALTER MATERIALIZED TABLE big RESUME WITH ('format' = 'json')")
    assert pipeline.job is not None and pipeline.dynamic_options == {"format": "json"}
    pipeline.job.wait()
    written = "".join(f.read_text() for f in (tmp_path / "big").rglob("*") if f.is_file() and f.name[0] != ".")
    assert sorted(written.split()) == ['{"user_id":1,"amount":5}', '{"user_id":1,"amount":7}']
    ddl = next(iter(env.execute_sql("SHOW CREATE MATERIALIZED TABLE big").collect()))[0]
    assert "'format' = 'csv'" in ddl and "json" not in ddl


def test_schema_changes_of_a_materialized_table_survive_a_restart(tmp_path: Path) -> None:
    """ALTER MATERIALIZED TABLE ADD / MODIFY: SHOW CREATE prints the whole schema then, and
    a persistent catalog reads the computed column, the comment and the watermark back."""
    open_catalog = f"CREATE CATALOG shop WITH ('type' = 'sqlite', 'path' = '{tmp_path / 'catalog.db'}')"
    first = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    first.execute_sql(open_catalog)
    first.execute_sql("USE CATALOG shop")
    _orders(first, tmp_path)
    first.execute_sql(
        "CREATE MATERIALIZED TABLE t "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't'}', 'format' = 'csv') "
        "FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = CONTINUOUS AS SELECT user_id, amount FROM orders"
    )
    first.execute_sql(
        "ALTER MATERIALIZED TABLE t ADD (ts AS TO_TIMESTAMP('2024-01-01 00:00:00') FIRST, "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)"
    )
    first.execute_sql("ALTER MATERIALIZED TABLE t MODIFY amount BIGINT COMMENT 'cents'")
    job = pipelines(first)[("shop", "default", "t")].job
    assert job is not None
    job.wait()
    described = [tuple(r) for r in first.execute_sql("DESCRIBE t").collect()]
    del first

    second = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    second.execute_sql(open_catalog)
    second.execute_sql("USE CATALOG shop")
    assert [tuple(r) for r in second.execute_sql("DESCRIBE t").collect()] == described
    assert [r[0] for r in described] == ["ts", "user_id", "amount"]
    assert described[0][4] == "AS TO_TIMESTAMP('2024-01-01 00:00:00')" and described[2][-1] == "cents"
    assert _rows(second, "SELECT user_id, amount FROM t") == [(1, 5), (1, 7), (2, 1)]
