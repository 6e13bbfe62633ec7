"""Flink scalar functions mapped to Spark (runtime/executor/spark/functions_more.py) against
the local runner on edge values: NULLs, text that does not parse, times before 1970, a
non-UTC `table.local-time-zone`, day-of-month clamping, Calcite's INITCAP words; and the
forms refused before the job runs (nondeterministic functions, formats Java and Spark read
differently)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from harness import final_table
from spark_util import run_script

from runtime.errors import JobError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

DDL = """
CREATE TABLE t (id INT, s STRING, ts TIMESTAMP(3), n BIGINT, p STRING) WITH (
  'connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
"""
ROWS = (
    "1,2024-02-29 13:45:59.1239,2024-02-29 13:45:59.123,1709214359,-\n"
    "2,1999-12-31 23:59:59,1969-12-31 23:59:59.999,-1,NULL\n"
    "3,abc,2024-01-31 00:00:00,0,\n"
    "4,NULL,NULL,NULL,NULL\n"
    "5,2024-02-30 25:61:00,2000-03-26 02:30:00.5,951532200,ab\n"
    "6,12-34 hello-wORLD x9y,2024-12-30 12:00:00,1735560000,xyz\n"
    "7,,2021-01-03 08:00:00,1609660800,\n"
)
SQL = (
    DDL
    + """
SELECT id, HOUR(ts), MINUTE(ts), SECOND(ts), EXTRACT(YEAR FROM ts), EXTRACT(DOW FROM ts),
  EXTRACT(MINUTE FROM ts), EXTRACT(WEEK FROM ts), EXTRACT(DOY FROM ts), EXTRACT(QUARTER FROM ts),
  EXTRACT(DAY FROM ts), EXTRACT(MONTH FROM ts), HOUR(CAST(ts AS TIMESTAMP_LTZ(3))),
  DATE_FORMAT(CAST(ts AS TIMESTAMP_LTZ(3)), 'yyyy-MM-dd HH:mm:ss'),
  TO_TIMESTAMP(s), FROM_UNIXTIME(n), FROM_UNIXTIME(n, 'yyyy/MM/dd hh:mm a'), TO_TIMESTAMP_LTZ(n, 0),
  TO_TIMESTAMP_LTZ(n * 1000 + 7, 3), DATE_FORMAT(ts, 'EEE dd MMM yyyy, HH''h'''), DATE_FORMAT(ts, 'EEEE MMMM yy'),
  REGEXP_EXTRACT(s, '(\\d+)-(\\d+)', 2), REGEXP_EXTRACT(s, '(\\d+)', 3), REGEXP_EXTRACT(s, '\\d+'),
  CONCAT_WS('~', s, CAST(NULL AS STRING), 'z'), CONCAT_WS(p, 'a', 'b'), LOCATE('-', s), LOCATE('-', s, 6),
  LOCATE('-', s, -3), LOCATE('l', s, 30), LPAD(s, 12, 'ab'), RPAD(s, 3, 'x'), LPAD(s, -1, 'x'), RPAD(s, 4, ''),
  INITCAP(s), CHR(id * 40 - 100), TIMESTAMPADD(MONTH, 1, ts), TIMESTAMPADD(HOUR, -5, ts),
  TIMESTAMPADD(YEAR, 1, CAST(ts AS DATE)), TIMESTAMPADD(HOUR, 25, CAST(ts AS DATE)),
  TIMESTAMPADD(MONTH, 1, CAST(ts AS TIMESTAMP_LTZ(3))), TIMESTAMPADD(SECOND, 90, CAST(ts AS TIMESTAMP_LTZ(3)))
FROM t
"""
)


@pytest.mark.parametrize("zone", ["UTC", "Asia/Shanghai", "America/New_York"])
def test_time_and_text_functions_match_local_runner(spark: Any, tmp_path: Path, zone: str) -> None:
    (tmp_path / "in.csv").write_text(ROWS)
    conf = {"table.local-time-zone": zone}
    local = run_script(SQL, "batch", "local", tmp_path, conf)
    on_spark = run_script(SQL, "batch", "spark", tmp_path, conf)
    assert len(local) == 7
    assert final_table(on_spark) == final_table(local)
    rows = {r["row"][0]: r["row"] for r in on_spark}
    assert rows["1"][14] == "2024-02-29 13:45:59.123"  # TO_TIMESTAMP truncates the fraction to ms
    assert rows["5"][14] is None and rows["3"][14] is None  # Feb 30 / garbage: NULL, not an error
    assert rows["6"][21] == "34" and rows["6"][22] is None  # a group beyond the pattern's: NULL
    assert rows["6"][34] == "12-34 Hello-World X9y"  # Calcite's words, not Spark's space-split ones
    assert rows["4"][1] is None and rows["4"][24] == "z"  # NULL in, NULL out; CONCAT_WS skips NULLs


def test_streaming_mode_gives_the_same_values(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text(ROWS)
    sql = DDL + (
        "SELECT id, HOUR(ts), YEAR(ts), QUARTER(ts), MONTH(ts), WEEK(ts), DAYOFYEAR(ts), DAYOFMONTH(ts), "
        "DAYOFWEEK(ts), INITCAP(s), REGEXP_EXTRACT(s, '(\\d+)-', 1), LPAD(s, 4, '*') FROM t"
    )
    assert final_table(run_script(sql, "streaming", "spark", tmp_path)) == final_table(
        run_script(sql, "streaming", "local", tmp_path)
    )


UNIX_DDL = """
CREATE TABLE u (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' = 'u.csv', 'format' = 'csv',
  'csv.null-literal' = 'NULL');
"""


def test_unix_timestamp_lenient_overflow_and_unparsable(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "u.csv").write_text(
        "1,2024-02-30 00:00:00\n2,1969-12-31 23:59:59\n3,garbage\n4,NULL\n5,2024-01-01 24:00:60\n"
    )
    sql = UNIX_DDL + "SELECT id, UNIX_TIMESTAMP(s), UNIX_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss') FROM u"
    for zone in ("UTC", "Europe/Berlin"):
        conf = {"table.local-time-zone": zone}
        local = run_script(sql, "batch", "local", tmp_path, conf)
        assert final_table(run_script(sql, "batch", "spark", tmp_path, conf)) == final_table(local)
    rows = {r["row"][0]: r["row"] for r in local}
    assert rows["3"][1] == str(-(2**63))  # Long.MIN_VALUE for text SimpleDateFormat cannot parse


def test_unix_timestamp_partial_text_fails_rather_than_guess(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "u.csv").write_text("1,2024-1-5 10:00:00\n")
    with pytest.raises(JobError, match="lenient parse"):
        run_script(UNIX_DDL + "SELECT UNIX_TIMESTAMP(s) FROM u", "batch", "spark", tmp_path)


def test_locate_is_null_for_null_arguments_as_in_flink(spark: Any, tmp_path: Path) -> None:
    """Flink: NULL when any argument is NULL (Spark's locate gives 0 for a NULL start)."""
    (tmp_path / "u.csv").write_text("1,NULL\n2,ab-c\n")
    sql = UNIX_DDL + "SELECT id, LOCATE('', s, 0), LOCATE('-', s, CAST(NULL AS INT)), LOCATE('', s, 1) FROM u"
    rows = {r["row"][0]: r["row"] for r in run_script(sql, "batch", "spark", tmp_path)}
    assert rows["1"][1:] == [None, None, None]
    assert rows["2"][1:] == ["1", None, "1"]


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP is nondeterministic"),
        ("EXTRACT(MILLISECOND FROM TIMESTAMP '2024-01-01 00:00:00')", "EXTRACT unit MILLISECOND"),
        ("NOW()", "nondeterministic"),
        ("UNIX_TIMESTAMP()", "nondeterministic"),
        ("TO_TIMESTAMP(s, 'yyyy-ww')", "TO_TIMESTAMP with pattern 'yyyy-ww'"),
        ("UNIX_TIMESTAMP(s, 'dd.MM.yyyy')", "UNIX_TIMESTAMP with a format"),
        ("FROM_UNIXTIME(id, 'D')", "FROM_UNIXTIME with a non-literal format or one whose letters differ"),
        ("DATE_FORMAT(TIMESTAMP '2024-01-01 00:00:00', 'S')", "DATE_FORMAT pattern"),
        ("REGEXP_EXTRACT(s, s)", "REGEXP_EXTRACT with a non-literal pattern"),
        ("TO_TIMESTAMP_LTZ(s)", "TO_TIMESTAMP_LTZ of a string"),
    ],
)
def test_refused_before_running(spark: Any, tmp_path: Path, expr: str, message: str) -> None:
    from planner.errors import SqlError

    (tmp_path / "u.csv").write_text("1,a\n")
    with pytest.raises(SqlError, match=message):
        run_script(UNIX_DDL + f"SELECT {expr} FROM u", "batch", "spark", tmp_path)
