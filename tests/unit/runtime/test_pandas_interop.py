"""The CLI and a TableEnvironment keep pyarrow from importing pandas (start-up), pandas UDFs
still work there, and a program's own `import pandas` gives pyarrow its pandas back."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, cwd=cwd, check=False
    )


# Modules `streamsql -e "SELECT 1"` must not load (start-up; benchmarks/startup.py): pandas
# (pyarrow's own import), the REST server, asyncio (async UDFs), sqlglot's optimizer (SHOW
# CREATE VIEW), the rule and operator modules of families the query does not use.
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


def test_a_table_api_program_imports_pandas_only_when_it_does(tmp_path: Path) -> None:
    run = _run(
        """
        import sys
        from streamsql import EnvironmentSettings, TableEnvironment
        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        t = env.from_elements([(1, "a"), (2, None)], ["x", "y"])
        print("rows:", len(list(t.execute().collect())), "pandas:", "pandas" in sys.modules)
        import pandas as pd
        import pyarrow as pa
        # pyarrow's pandas integration is on again: a Series is array-like (NaN -> null)
        print("nulls:", pa.array(pd.Series([1.0, None])).null_count, "frame:", t.to_pandas().shape)
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "rows: 2 pandas: False" in run.stdout, run.stdout
    assert "nulls: 1 frame: (2, 2)" in run.stdout, run.stdout


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
