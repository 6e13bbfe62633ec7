"""The CLI and a TableEnvironment keep pyarrow from importing pandas for streamsql's own
conversions (start-up); pandas UDFs still work there; every other import of pandas (the
program's, a library's from C, pyarrow converting for the program) works and gives pyarrow
its pandas back; from_pandas / to_pandas round trips keep values and types."""

from __future__ import annotations

import datetime
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from runtime.pandas_interop import _asked_by_streamsql
from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.expressions import col


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


# Modules `streamsql -e "SELECT 1"` must not load (start-up; benchmarks/startup.py): pandas
# (pyarrow's own import), the REST server, asyncio (async UDFs), sqlglot's optimizer (SHOW
# CREATE VIEW), the rule and operator modules of families the query does not use, the
# function modules of functions it does not call.
NOT_AT_START_UP = (
    "pandas",
    "http.server",
    "asyncio",
    "sqlglot.optimizer.qualify",
    "planner.rules.match",
    "runtime.operators.match",
    "runtime.operators.lookup_join",
    "planner.rules.joins",
    "planner.rules.ranking",
    "planner.rules.over",
    "planner.rules.setops",
    "planner.rules.correlate",
    "planner.rules.grouping_sets",
    "planner.rules.changelog_ptf",
    "runtime.operators.join",
    "runtime.operators.rank",
    "runtime.operators.over",
    "runtime.operators.group_agg",
    "runtime.operators.two_phase_agg",
    "runtime.operators.window_agg",
    "runtime.operators.window_two_phase",
    "runtime.operators.changelog_normalize",
    "runtime.operators.mini_batch",
    "runtime.operators.expand",
    "runtime.functions.strings",
    "runtime.functions.arrays",
    "runtime.functions.temporal",
    "planner.statements_catalog",
    "planner.statements_dml",
    "planner.statements_materialized",
    "streamsql.materialized_tables",
)


def test_cli_select_does_not_import_pandas(tmp_path: Path) -> None:
    run = _run(
        f"""
        import sys
        from streamsql.cli import main
        code = main(["-e", "SELECT 1 AS one, 'x' AS s, CAST(NULL AS DOUBLE) AS d"])
        print("loaded:", [m for m in {NOT_AT_START_UP!r} if m in sys.modules], "exit:", code)
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "loaded: [] exit: 0" in run.stdout, run.stdout


# What `from streamsql import TableEnvironment` must not load: the planner's binder, logical
# plan and the runtime's functions come with the first statement (TableEnvironment.create or
# the first query), not with the import (benchmarks/startup.py's "import" row).
NOT_ON_IMPORT = ("pandas", "planner.binder", "planner.logical", "runtime.functions.registry", "runtime.aggregates")


def test_importing_the_table_environment_loads_no_planner_binder(tmp_path: Path) -> None:
    run = _run(
        f"""
        import sys
        from streamsql import TableEnvironment
        print("loaded:", [m for m in {NOT_ON_IMPORT!r} if m in sys.modules])
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "loaded: []" in run.stdout, run.stdout


def test_split_distinct_runs_without_pandas(tmp_path: Path) -> None:
    # HASH_CODE buckets split-distinct aggregation; it used pandas' hash, which the guard
    # refuses to streamsql's own code, so such a job failed in any process that had not
    # imported pandas itself
    run = _run(
        """
        import sys
        from streamsql.cli import main
        code = main(["-e", "SET 'table.optimizer.distinct-agg.split.enabled' = 'true';",
                     "-e", "SELECT k, COUNT(DISTINCT v) FROM (VALUES (1, 'a'), (1, 'b'), (2, 'a'), (1, 'a')) t(k, v) GROUP BY k"])
        print("exit:", code, "pandas:", "pandas" in sys.modules)
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "exit: 0 pandas: False" in run.stdout, run.stdout + run.stderr
    assert "|           1 |                    2 |" in run.stdout, run.stdout


def test_a_table_api_program_imports_pandas_only_when_it_does(tmp_path: Path) -> None:
    run = _run(
        """
        import sys
        from streamsql import EnvironmentSettings, TableEnvironment
        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        t = env.from_elements([(1, "a"), (2, None)], ["x", "y"])
        print("rows:", len(list(t.execute().collect())), "pandas:", "pandas" in sys.modules)
        # the memory connector is found without loading the others (Kafka, JDBC, pyarrow.fs)
        others = ["runtime.connectors.kafka", "runtime.connectors.jdbc", "pyarrow.fs"]
        print("other connectors:", [m for m in others if m in sys.modules])
        import pandas as pd
        import pyarrow as pa
        # pyarrow's pandas integration is on again: a Series is array-like (NaN -> null)
        print("nulls:", pa.array(pd.Series([1.0, None])).null_count, "frame:", t.to_pandas().shape)
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "rows: 2 pandas: False" in run.stdout, run.stdout
    assert "other connectors: []" in run.stdout, run.stdout
    assert "nulls: 1 frame: (2, 2)" in run.stdout, run.stdout


def test_libraries_and_dynamic_imports_get_pandas_in_a_session(tmp_path: Path) -> None:
    """A library importing pandas from C (DuckDB's `.df()`) and `__import__('pandas')` work
    after a session has run a job (the guard refuses only streamsql's own conversions)."""
    run = _run(
        """
        import sys
        from streamsql import EnvironmentSettings, TableEnvironment
        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        print("rows:", len(list(env.from_elements([(1,), (2,)], ["x"]).execute().collect())))
        import duckdb
        df = duckdb.sql("SELECT 42 AS answer").df()
        print("duckdb:", type(df).__name__, df["answer"].tolist(), "pandas:", "pandas" in sys.modules)
        print("dynamic:", __import__("pandas").__name__)
        import pyarrow as pa
        print("nulls:", pa.array(df["answer"].astype("float64").where(df["answer"] < 0)).null_count)
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "rows: 2" in run.stdout, run.stdout
    assert "duckdb: DataFrame [42] pandas: True" in run.stdout, run.stdout
    assert "dynamic: pandas" in run.stdout, run.stdout
    assert "nulls: 1" in run.stdout, run.stdout


def _asked_from(*modules: str) -> bool:
    """`_asked_by_streamsql` as seen from code of the last of `modules`, called by code of
    the one before it, and so on (each a function whose module `__name__` is that name)."""
    call: Callable[[], bool] = lambda: _asked_by_streamsql(sys._getframe(1))  # noqa: E731
    for module in reversed(modules):
        namespace: dict[str, Any] = {"__name__": module, "inner": call}
        exec("def f():\n    return inner()\n", namespace)
        call = namespace["f"]
    return call()


def test_the_guard_refuses_only_imports_streamsql_causes() -> None:
    """Who asked: the first frame past the import machinery and pyarrow's Python code."""
    assert _asked_from("runtime.operators.values")
    assert _asked_from("streamsql.table_env_api")
    assert not _asked_from("__main__")
    assert not _asked_from("my_udfs")
    assert not _asked_from("duckdb")
    assert not _asked_from("runtimes")  # a user's package with a similar name
    # pyarrow's Python code (pyarrow.compute, pandas_compat) is skipped: its caller decides
    assert _asked_from("runtime.functions.cast", "pyarrow.compute")
    assert not _asked_from("__main__", "pyarrow.compute")
    # streamsql calling the program's code (a UDF): the program asked
    assert not _asked_from("runtime.functions.python_udf", "my_udfs")


def _env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def test_from_pandas_to_pandas_round_trip() -> None:
    """Every column type comes back with its values, its nulls (NaN, None, NaT) and its dtype."""
    pdf = pd.DataFrame(
        {
            "i": pd.Series([1, 2, 3], dtype="int64"),
            "f": [1.5, np.nan, -2.0],
            "s": ["a", None, "ü"],
            "b": [True, False, None],
            "ts": pd.to_datetime(["2024-01-01 10:00:00.123", None, "1969-12-31 23:59:59.000"]),
            "d": [datetime.date(2024, 1, 1), None, datetime.date(1970, 1, 2)],
        }
    )
    table = _env().from_pandas(pdf)
    assert [str(t) for t in table.get_schema().get_field_data_types()] == [
        "BIGINT",
        "DOUBLE",
        "STRING",
        "BOOLEAN",
        "TIMESTAMP(6)",
        "DATE",
    ]
    back = table.to_pandas()
    pd.testing.assert_frame_equal(back, pdf)


def test_from_pandas_with_a_schema_then_a_query() -> None:
    """A declared row type converts the columns (BIGINT data into INT); a query's result
    comes back as a DataFrame with the query's column names."""
    pdf = pd.DataFrame({"k": ["x", "y", "x", None], "v": [1, 2, 3, 4]})
    schema = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.STRING()), DataTypes.FIELD("v", DataTypes.INT())])
    table = _env().from_pandas(pdf, schema)
    assert table.to_pandas()["v"].dtype == np.int32
    out = table.where(col("v") > 1).group_by(col("k")).select(col("k"), col("v").sum.alias("total")).to_pandas()
    rows = sorted(out.itertuples(index=False), key=lambda r: (r.k is None or r.k != r.k, str(r.k)))
    assert list(out.columns) == ["k", "total"]
    assert [(r.k, r.total) for r in rows[:2]] == [("x", 3), ("y", 2)]
    assert pd.isna(rows[2].k) and rows[2].total == 4


def test_to_pandas_needs_no_import_of_pandas_by_the_program(tmp_path: Path) -> None:
    run = _run(
        """
        from streamsql import EnvironmentSettings, TableEnvironment
        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        df = env.from_elements([(1, 2.5)], ["a", "b"]).to_pandas()
        print(type(df).__name__, df.to_dict("records"))
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "DataFrame [{'a': 1, 'b': 2.5}]" in run.stdout, run.stdout


def test_pandas_udf_in_the_cli_still_gets_series(tmp_path: Path) -> None:
    (tmp_path / "my_udfs.py").write_text(
        textwrap.dedent(
            """
            import pandas as pd
            from streamsql.udf import udf
            from streamsql.types import DataTypes

            @udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
            def half(v):
                assert isinstance(v, pd.Series)
                return v / 2
            """
        )
    )
    run = _run(
        """
        import sys
        sys.path.insert(0, ".")
        from streamsql.cli import main
        sql = ("CREATE TEMPORARY FUNCTION half AS 'my_udfs.half' LANGUAGE PYTHON; "
               "SELECT half(CAST(v AS DOUBLE)) AS h FROM (VALUES (1), (3), (CAST(NULL AS INT))) AS t(v)")
        sys.exit(main(["-e", sql, "--mode", "batch"]))
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr + run.stdout
    assert "0.5" in run.stdout and "1.5" in run.stdout and "<NULL>" in run.stdout, run.stdout
