"""SQL features end to end in both modes: ROW constructor, INITCAP, cascaded window
aggregation through window_time, and the Table API's row()/init_cap() on top of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.expressions import col, lit, row

MODES = [EnvironmentSettings.in_streaming_mode(), EnvironmentSettings.in_batch_mode()]


@pytest.mark.parametrize("settings", MODES)
def test_row_constructor_and_initcap(settings: EnvironmentSettings) -> None:
    env = TableEnvironment.create(settings)
    result = env.execute_sql("SELECT INITCAP('hello wORLD') AS x, ROW(1, 'a') AS r")
    assert [f.name for f in result.fields] == ["x", "r"]
    assert str(result.fields[1].type) == "ROW<`EXPR$0` INT NOT NULL, `EXPR$1` CHAR(1) NOT NULL> NOT NULL"
    assert [tuple(r) for r in result.collect()] == [("Hello World", {"EXPR$0": 1, "EXPR$1": "a"})]


@pytest.mark.parametrize("settings", MODES)
def test_table_api_row_and_init_cap(settings: EnvironmentSettings) -> None:
    env = TableEnvironment.create(settings)
    t = env.from_elements([(1, "ann lee"), (2, "bo")], ["id", "name"])
    out = t.select(col("name").init_cap.alias("n"), row(col("id"), lit("x")).alias("r")).to_pandas()
    assert list(out["n"]) == ["Ann Lee", "Bo"]
    assert list(out["r"]) == [{"EXPR$0": 1, "EXPR$1": "x"}, {"EXPR$0": 2, "EXPR$1": "x"}]


@pytest.mark.parametrize("settings", MODES)
def test_cascaded_window_aggregation_through_window_time(settings: EnvironmentSettings, tmp_path: Path) -> None:
    lines = [f"{'abc'[i % 3]},2024-01-01 00:{i // 60:02d}:{i % 60:02d}" for i in range(0, 300, 3)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    env = TableEnvironment.create(settings)
    env.execute_sql(
        "CREATE TABLE t (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        f"WITH ('connector'='filesystem', 'path'='{tmp_path / 't.csv'}', 'format'='csv')"
    )
    inner = (
        "SELECT k, window_time AS wt, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end, window_time"
    )
    outer = (
        f"SELECT window_start, SUM(cnt) AS total FROM TABLE(TUMBLE(TABLE ({inner}), DESCRIPTOR(wt), "
        "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"
    )
    df = env.sql_query(outer).to_pandas()
    assert list(df["total"]) == [20, 20, 20, 20, 20]
