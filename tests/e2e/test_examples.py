"""Every example in examples/ runs (so none can rot): Python examples as scripts, SQL
files through the CLI, in both runtime modes where the example takes one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from clitools import ROOT, run_cli

EXAMPLES = ROOT / "examples"
PY = sorted(EXAMPLES.glob("*.py"))
SQL = sorted(EXAMPLES.glob("*.sql"))
# A line each example's output must contain (so an example that prints nothing fails).
EXPECT = {
    "table_api_windowed.py": "alice",
    "sql_windowed.py": "window_start",
    "python_udf.py": "example.com",
    "kappa_backfill_live.py": "orders=",
}


def test_every_example_is_covered() -> None:
    assert {p.name for p in PY} == set(EXPECT), "add the new example to EXPECT"
    assert len(SQL) >= 4
    # SQL files in subdirectories are driven by a Python example (e.g. an unbounded job).
    drivers = " ".join(p.read_text() for p in PY)
    for sql in EXAMPLES.glob("*/*.sql"):
        assert sql.name in drivers, f"{sql} is run by no example"


def test_kappa_example_goes_live() -> None:
    """Streaming: the backfill result, then the result with the new file's orders."""
    p = subprocess.run(
        [sys.executable, str(EXAMPLES / "kappa_backfill_live.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    backfill, live = p.stdout.split("live, after a new file arrived:")
    assert "alice  orders=2 revenue=27.25" in backfill and "dave" not in backfill
    assert "alice  orders=3 revenue=57.25" in live and "dave   orders=1 revenue=12.00" in live


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_fraud_pattern_example_finds_the_frauds(mode: str) -> None:
    p = run_cli("-f", str(EXAMPLES / "fraud_pattern.sql"), "--format", "jsonl", "--mode", mode)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line)["row"] for line in p.stdout.splitlines() if line.startswith("{")]
    assert sorted((r[0], r[2], r[4]) for r in rows) == [("card-1", "2", "950.00"), ("card-3", "1", "700.00")]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("script", PY, ids=lambda p: p.name)
def test_python_example_runs(script: object, mode: str) -> None:
    args = [sys.executable, str(script)] + (["--batch"] if mode == "batch" else [])
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert EXPECT[script.name] in p.stdout  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("script", SQL, ids=lambda p: p.name)
def test_sql_example_runs(script: object, mode: str) -> None:
    p = run_cli("-f", str(script), "--format", "jsonl", "--mode", mode)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert rows, p.stdout


def test_table_api_and_sql_examples_agree() -> None:
    """The windowed aggregation gives the same final table with the Table API and SQL."""
    sys.path.insert(0, str(EXAMPLES))
    from streamsql import EnvironmentSettings, TableEnvironment
    from streamsql.expressions import col, lit
    from streamsql.window import Tumble

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(
        (EXAMPLES / "clicks_per_minute.sql").read_text().split(";")[0].replace("'examples/", f"'{ROOT}/examples/")
    )
    sql = t_env.sql_query(
        "SELECT window_start, window_end, user_name, COUNT(*) AS clicks, COUNT(DISTINCT url) AS pages "
        "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, user_name"
    )
    api = (
        t_env.from_path("clicks")
        .window(Tumble.over(lit(1).minutes).on(col("ts")).alias("w"))
        .group_by(col("w"), col("user_name"))
        .select(col("w").start, col("w").end, col("user_name"), lit(1).count, col("url").count.distinct)
    )
    as_rows = lambda t: sorted(tuple(r.values()) for r in t.to_arrow().to_pylist())  # noqa: E731
    assert as_rows(api) == as_rows(sql) and len(as_rows(sql)) == 20
