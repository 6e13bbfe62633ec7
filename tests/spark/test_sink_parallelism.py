"""'sink.parallelism' on the Spark runner: the sink's rows are repartitioned into that many
Spark partitions, so a filesystem sink writes one part file per writer, every row once."""

from __future__ import annotations

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
