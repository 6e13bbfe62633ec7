"""The CLI keeps pyarrow from importing pandas (start-up), and pandas UDFs still work there."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, cwd=cwd, check=False
    )


def test_cli_select_does_not_import_pandas(tmp_path: Path) -> None:
    run = _run(
        """
        import sys
        from streamsql.cli import main
        code = main(["-e", "SELECT 1 AS one, 'x' AS s, CAST(NULL AS DOUBLE) AS d"])
        print("pandas imported:", "pandas" in sys.modules, "exit:", code)
        """,
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "pandas imported: False exit: 0" in run.stdout, run.stdout


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
