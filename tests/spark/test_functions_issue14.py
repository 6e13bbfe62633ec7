"""Spark mappings of issue 14's functions (SHA2, HEX, BIN) on edge values against the local
runner, and the refusals where Spark cannot give Flink's answer (SIN: Spark calls the JVM's
Math.sin intrinsic, whose last digit differs from Java's fdlibm in ~3% of values)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from harness import final_table
from spark_util import run_script

from planner.errors import SqlError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

DDL = """
CREATE TABLE t (id INT, s STRING, b BIGINT) WITH (
  'connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
"""
ROWS = "1,abc,255\n2,,-1\n3,NULL,NULL\n4,é😀,-9223372036854775808\n5,x y,0\n"
SQL = (
    DDL
    + """
SELECT id, SHA2(s, 256), SHA2(s, 224), SHA2(s, 512), SHA2(s, 0), HEX(s), HEX(b), HEX(id), BIN(b), BIN(id) FROM t
"""
)


def test_sha2_hex_bin_match_local(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text(ROWS)
    local = run_script(SQL, "batch", "local", tmp_path)
    on_spark = run_script(SQL, "batch", "spark", tmp_path)
    assert final_table(on_spark) == final_table(local)
    rows = {r["row"][0]: r["row"] for r in on_spark}
    assert rows["2"][6] == "FFFFFFFFFFFFFFFF" and rows["2"][8] == "1" * 64


@pytest.mark.parametrize(
    ("call", "message"),
    [("SHA2(s, id)", "SHA2 with a bit length that is not a literal"), ("SIN(CAST(b AS DOUBLE))", "SIN")],
)
def test_refused_before_the_job_starts(spark: Any, tmp_path: Path, call: str, message: str) -> None:
    (tmp_path / "in.csv").write_text(ROWS)
    with pytest.raises(SqlError, match=message):
        run_script(DDL + f"SELECT {call} FROM t", "batch", "spark", tmp_path)
