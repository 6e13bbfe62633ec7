"""Connectors and catalog types from other packages: found through the `streamsql.connectors`
and `streamsql.catalogs` entry points of an installed distribution, read only when a name
is not built in (start-up: a job of built-in connectors never scans the installed packages).

Each test installs a real distribution (a `.dist-info` directory with its entry points and
a module) on the path of a fresh interpreter, as `pip install` of a plugin package would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PLUGIN_MODULE = """
from planner.catalog_store import CatalogFactory, InMemoryCatalogStore
from runtime.connectors.base import ConnectorFactory, Sink

ROWS = []


class RecordingSink(Sink):
    def __init__(self, options, schema, ctx):
        pass

    def write(self, batch):
        ROWS.extend(batch.column(0).to_pylist())


SINK = ConnectorFactory(name="recording", description="Keeps the rows", options=(), create_sink=RecordingSink)


def catalog_type():
    return CatalogFactory("plugin_memory", InMemoryCatalogStore, description="In memory, from a plugin")


NOT_A_FACTORY = 42
CLASHING = ConnectorFactory(name="print", description="Takes a built-in name", options=())
"""


def _install(site: Path, entry_points: str) -> None:
    (site / "ssql_test_plugin.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    dist = site / "ssql_test_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ssql-test-plugin\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


def _run(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": path},
    )


def test_plugin_connector_and_catalog_type_are_found_by_name(tmp_path: Path) -> None:
    _install(
        tmp_path,
        """
        [streamsql.connectors]
        recording = ssql_test_plugin:SINK
        [streamsql.catalogs]
        plugin_memory = ssql_test_plugin:catalog_type
        """,
    )
    run = _run(
        tmp_path,
        """
        import sys
        from streamsql import EnvironmentSettings, TableEnvironment

        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        print(env.execute_sql("SELECT 1").collect() is not None, "ssql_test_plugin" in sys.modules)
        env.execute_sql("CREATE TABLE out (x INT) WITH ('connector' = 'recording')")
        env.execute_sql("INSERT INTO out VALUES (1), (2), (3)").wait()
        import ssql_test_plugin
        print(sorted(ssql_test_plugin.ROWS))
        env.execute_sql("CREATE CATALOG c WITH ('type' = 'plugin_memory')")
        env.execute_sql("USE CATALOG c")
        print(env.get_current_catalog())
        """,
    )
    assert run.returncode == 0, run.stderr
    # built-in work does not load the plugin; naming it does
    assert run.stdout.splitlines() == ["True False", "[1, 2, 3]", "c"], run.stdout


def test_a_bad_or_clashing_plugin_is_a_clear_error(tmp_path: Path) -> None:
    _install(
        tmp_path,
        """
        [streamsql.connectors]
        broken = ssql_test_plugin:NOT_A_FACTORY
        """,
    )
    code = """
        from streamsql import EnvironmentSettings, TableEnvironment

        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        env.execute_sql("CREATE TABLE out (x INT) WITH ('connector' = 'nowhere')")
        try:
            env.execute_sql("INSERT INTO out VALUES (1)").wait()
        except Exception as e:
            print(type(e).__name__, e)
        """
    run = _run(tmp_path, code)
    assert run.returncode == 0, run.stderr
    assert "The entry point 'broken' of group 'streamsql.connectors' is not a ConnectorFactory" in run.stdout

    clash = tmp_path / "clash"
    clash.mkdir()
    _install(
        clash,
        """
        [streamsql.connectors]
        print2 = ssql_test_plugin:CLASHING
        """,
    )
    run = _run(clash, code)
    assert run.returncode == 0, run.stderr
    assert "Multiple factories for identifier 'print'" in run.stdout, run.stdout
