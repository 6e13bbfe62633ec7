"""The `sqlite` catalog: objects survive a restart, and processes share DDL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from streamsql.environment import EnvironmentSettings, TableEnvironment

HERE = Path(__file__).parent


def _env(path: Path) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(f"CREATE CATALOG shop WITH ('type' = 'sqlite', 'path' = '{path}')")
    env.execute_sql("USE CATALOG shop")
    return env


def test_tables_views_and_functions_survive_a_restart(tmp_path: Path) -> None:
    sys.path.insert(0, str(HERE))  # script_udfs
    db = tmp_path / "catalog.db"
    first = _env(db)
    first.execute_sql("CREATE DATABASE sales COMMENT 'sold'")
    first.execute_sql("USE sales")
    first.execute_sql(
        f"CREATE TABLE orders (id INT, item STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'orders'}', 'format' = 'csv')"
    )
    first.execute_sql("INSERT INTO orders VALUES (1, 'tea'), (2, 'cake')").wait()
    first.execute_sql("CREATE FUNCTION shout AS 'script_udfs.shout' LANGUAGE PYTHON")
    first.execute_sql("CREATE VIEW loud AS SELECT id, shout(item) AS item FROM orders")
    first.execute_sql("ALTER TABLE orders SET ('csv.ignore-parse-errors' = 'true')")
    del first

    second = _env(db)  # a new session: nothing but the file carries the objects
    second.execute_sql("USE sales")
    assert second.list_tables() == ["loud", "orders"]
    assert second.list_views() == ["loud"]
    assert "shout" in second.list_user_defined_functions()
    rows = sorted(tuple(r) for r in second.execute_sql("SELECT * FROM loud").collect())
    assert rows == [(1, "TEA!"), (2, "CAKE!")]
    ddl = next(iter(second.execute_sql("SHOW CREATE TABLE orders").collect()))[0]
    assert "'csv.ignore-parse-errors' = 'true'" in ddl and "`shop`.`sales`.`orders`" in ddl
    second.execute_sql("DROP VIEW loud")
    second.execute_sql("DROP FUNCTION shout")
    third = _env(db)
    third.execute_sql("USE sales")
    assert third.list_tables() == ["orders"] and "shout" not in third.list_user_defined_functions()


def test_two_processes_see_each_others_ddl(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    here = _env(db)
    create = f"CREATE CATALOG shop WITH ('type' = 'sqlite', 'path' = '{db}');"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}
    other = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamsql.cli",
            "-e",
            create + "CREATE TABLE shop.`default`.made_there (a INT) WITH ('connector' = 'datagen');",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert other.returncode == 0, other.stderr
    # This session opened the catalog before the other process wrote to it.
    assert here.list_tables() == ["made_there"]
    here.execute_sql("CREATE TABLE made_here (b STRING) WITH ('connector' = 'datagen')")
    shown = subprocess.run(
        [sys.executable, "-m", "streamsql.cli", "-e", create + "SHOW TABLES FROM shop.`default`;"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    assert "|  made_here |" in shown.stdout and "| made_there |" in shown.stdout, shown.stdout
