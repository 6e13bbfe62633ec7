"""'sink.parallelism' on the Spark runner: the sink's rows are repartitioned into that many
Spark partitions, so a filesystem sink writes one part file per writer, every row once."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest
from spark_util import SPARK

from streamsql import TableEnvironment

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)


def test_filesystem_sink_writes_one_part_file_per_writer(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("".join(f"{i}\n" for i in range(1, 301)))
    env = TableEnvironment.create({"execution.runtime-mode": "batch", "execution.target": "spark", **SPARK})
    env.execute_sql(
        f"CREATE TABLE src (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'in.csv'}', 'format' = 'csv')"
    )
    env.execute_sql(
        f"CREATE TABLE out_t (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', "
        "'format' = 'csv', 'sink.parallelism' = '3')"
    )
    env.execute_sql("INSERT INTO out_t SELECT v FROM src").wait()
    files = [f for f in (tmp_path / "out").glob("part-*") if f.read_text()]
    assert len(files) == 3
    assert sorted(int(line) for f in files for line in f.read_text().split()) == list(range(1, 301))


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_file_sink_writes_timestamps_as_the_local_runner(tmp_path: Path, fmt: str) -> None:
    """TIMESTAMP and TIMESTAMP_LTZ text in a csv / json file sink is the local runner's (Flink's):
    the fraction in as few digits as it needs, none for a whole second; json's LTZ ends in 'Z'."""
    (tmp_path / "in.csv").write_text(
        "2024-01-01 00:00:10,1\n2024-01-01 00:00:10.5,2\n1969-12-31 23:59:59.123,3\n2024-02-29 12:00:00.010,4\nNULL,5\n"
    )
    lines = {}
    for runner in ("local", "spark"):
        env = TableEnvironment.create({"execution.runtime-mode": "batch", "execution.target": runner, **SPARK})
        env.execute_sql(
            f"CREATE TABLE src (ts TIMESTAMP(3), i INT) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / 'in.csv'}', 'format' = 'csv', 'csv.null-literal' = 'NULL')"
        )
        out = tmp_path / runner
        env.execute_sql(
            f"CREATE TABLE snk (ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), i INT) WITH ('connector' = 'filesystem', "
            f"'path' = '{out}', 'format' = '{fmt}')"
        )
        env.execute_sql("INSERT INTO snk SELECT ts, CAST(ts AS TIMESTAMP_LTZ(3)), i FROM src").wait()
        files = [f for f in out.rglob("*") if f.is_file() and not f.name.startswith((".", "_"))]
        lines[runner] = sorted(line for f in files for line in f.read_text().splitlines() if line.strip())
    if fmt == "csv":  # the fields' text; the quoting differs (docs/spark.md: Spark's CSV writer)
        assert sorted(csv.reader(lines["spark"])) == sorted(csv.reader(lines["local"]))
    else:
        assert lines["spark"] == lines["local"]
    assert any("00:00:10," in line or '00:00:10"' in line for line in lines["spark"])
