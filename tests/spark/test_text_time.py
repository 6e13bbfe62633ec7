"""Text → DATE / TIMESTAMP on Spark (runtime/executor/spark/text_time.py) against the local
runner: CAST / TRY_CAST to TIMESTAMP, TIMESTAMP_LTZ (session zone) and DATE, TO_DATE,
TO_TIMESTAMP with a Java pattern and DATE_FORMAT of a string, on edge values (Feb 29 of a
non-leap year, month 13, ISO 'T', trailing text, lenient roll-over, 2-digit years, AM/PM)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from harness import final_table
from spark_util import run_script

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

ROWS = [
    "2024-01-05 07:08:09.123456789",
    "2024-02-30 00:00:00",
    "2024-2-3",
    "2024-01-05T07:08",
    "2024-13-01",
    "2023-02-29",
    "x",
    "2024-02-29",
    "12",
    "2024-02-29 garbage",
    "05.01.2024 07:08",
    "32.01.2024",
    "31/Dec/99 11:59 PM",
    "1999-12-31 23:59:59",
    "-5-01-01",
    "2024-01-05 7:8:9.5",
    "1969-12-31 23:59:59.999",
    # CAST to TIMESTAMP as Flink's DEFAULT_TIMESTAMP_FORMATTER + SMART resolver (cast.py)
    "2024-01-01T10:00:00",
    "2024-04-31 10:00:00",
    "2024-01-32 10:00:00",
    "2024-02-30 24:00:00",
    "2024-12-31 24:00:00",
    "2024-01-05 24:00:01",
    "2024-01-05 23:60:00",
    "2024-01-05 10:00",
    "2024-01-05 :5:",
    " 2024-01-05",
    "2024-01-05 ",
    "0000-01-01 00:00:00",
    "9999-12-31 23:59:59.999999999",
    "+12-01-01",
    "\t2024-1-2\x0b",
]
DDL = "CREATE TABLE t (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');\n"
QUERY = DDL + (
    "SELECT id, TRY_CAST(s AS TIMESTAMP(3)), TRY_CAST(s AS TIMESTAMP(6)), TRY_CAST(s AS TIMESTAMP(0)),\n"
    "  TRY_CAST(s AS DATE), TRY_CAST(s AS TIMESTAMP_LTZ(3)), TO_DATE(s), TO_DATE(s, 'dd.MM.yyyy'),\n"
    "  TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm'), TO_TIMESTAMP(s, 'dd/MMM/yy hh:mm a'), DATE_FORMAT(s, 'yyyyMMdd'),\n"
    "  TO_TIMESTAMP(s, 'dd.MM.yyyy HH:mm'), TO_DATE(s, 'yyyy-MM-dd'), TO_TIMESTAMP(s)\n"
    "FROM t"
)


def _write(tmp: Path, rows: list[str]) -> None:
    (tmp / "in.csv").write_text("".join(f"{i},{r}\n" for i, r in enumerate(rows)))


def test_text_to_time_matches_local_runner(spark: Any, tmp_path: Path) -> None:
    _write(tmp_path, ROWS)
    conf = {"table.local-time-zone": "Asia/Shanghai"}
    local = run_script(QUERY, "batch", "local", tmp_path, conf)
    on_spark = run_script(QUERY, "batch", "spark", tmp_path, conf)
    assert final_table(on_spark) == final_table(local)
    by_id = {r["row"][0]: r["row"] for r in local}
    assert by_id["0"][1:3] == ["2024-01-05 07:08:09.123", "2024-01-05 07:08:09.123456"]
    assert by_id["12"][9] == "2099-12-31 23:59:00.000"  # strict 2-digit year: 20yy
    assert by_id["11"][7] == "2024-02-01"  # lenient roll-over


def test_cast_of_bad_text_fails_on_both_runners_and_valid_text_casts(spark: Any, tmp_path: Path) -> None:
    good = DDL + "SELECT id, CAST(s AS TIMESTAMP(3)), CAST(s AS DATE), CAST(s AS TIMESTAMP_LTZ(3)) FROM t"
    _write(tmp_path, ["2024-02-29 10:00:00.5", "2024-1-2", "1999-12-31 23:59:59", "2024-02-29 24:00:00"])
    conf = {"table.local-time-zone": "America/New_York"}
    local = run_script(good, "batch", "local", tmp_path, conf)
    assert final_table(run_script(good, "batch", "spark", tmp_path, conf)) == final_table(local)
    _write(tmp_path, ["2024-01-01", "2023-02-29"])
    for runner in ("local", "spark"):
        with pytest.raises(Exception, match="2023-02-29"):
            run_script(DDL + "SELECT CAST(s AS DATE) FROM t", "batch", runner, tmp_path)
    _write(tmp_path, ["2024-01-01 10:00:00", "2024-01-01T10:00:00"])
    for runner in ("local", "spark"):
        with pytest.raises(Exception, match="DateTimeParseException: Text '2024-01-01T10:00:00' could not be parsed"):
            run_script(DDL + "SELECT CAST(s AS TIMESTAMP(3)) FROM t", "batch", runner, tmp_path)


def test_pattern_the_spark_runner_does_not_parse_is_refused(spark: Any, tmp_path: Path) -> None:
    from planner.errors import SqlError

    _write(tmp_path, ["2024-01-05"])
    with pytest.raises(SqlError, match="'yyyy-ww'.*letters w"):
        run_script(DDL + "SELECT TO_DATE(s, 'yyyy-ww') FROM t", "batch", "spark", tmp_path)


def test_cast_of_text_to_time_matches_local_runner(spark: Any, tmp_path: Path) -> None:
    """CAST / TRY_CAST(text AS TIME) read as Flink's parseTime ('123' is 123 hours and prints
    23:00:00, '12:60' is 13:00, a -h:m / +h zone, the fraction rounded by its fourth digit),
    as text; Spark has no TIME type, so a TIME value used otherwise is refused."""
    from planner.errors import SqlError

    times = ["123", "12:60", "10:00:00", " 7 : 8 : 9 . 1239", "10:00-01:30", "1+2", "25:00:00.5", "12:00:", "x"]
    times += ["-1", "99999999999", "2147483647", "10:20:30.12345", "1:2:3-4"]
    _write(tmp_path, times)
    query = DDL + (
        "SELECT id, CAST(TRY_CAST(s AS TIME) AS STRING), CAST(TRY_CAST(s AS TIME(3)) AS STRING),\n"
        "  CAST(TRY_CAST(s AS TIME(1)) AS VARCHAR(20)) FROM t"
    )
    local = run_script(query, "batch", "local", tmp_path)
    assert final_table(run_script(query, "batch", "spark", tmp_path)) == final_table(local)
    by_id = {r["row"][0]: r["row"][1:] for r in local}
    assert by_id["0"][0] == "23:00:00" and by_id["1"][0] == "13:00:00" and by_id["8"] == [None] * 3
    _write(tmp_path, ["10:00", "12:x"])
    for runner in ("local", "spark"):
        with pytest.raises(Exception, match="For input string: '12:x'"):
            run_script(DDL + "SELECT CAST(CAST(s AS TIME) AS STRING) FROM t", "batch", runner, tmp_path)
    with pytest.raises(SqlError, match="TIME"):
        run_script(DDL + "SELECT CAST(s AS TIME) FROM t", "batch", "spark", tmp_path)
