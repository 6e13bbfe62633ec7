"""The embedded Python entry point, as the README shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamsql import EnvironmentSettings, RowKind, TableEnvironment

ROOT = Path(__file__).resolve().parents[2]

DDL = f"""
CREATE TABLE clicks (
  user_name STRING, url STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{ROOT / "examples/data/clicks.csv"}', 'format' = 'csv')
"""
WINDOWED = """
SELECT window_start, user_name, COUNT(*) AS clicks
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, user_name
"""


@pytest.mark.parametrize("settings", [EnvironmentSettings.in_streaming_mode(), EnvironmentSettings.in_batch_mode()])
def test_window_query_collect_and_pandas(settings: EnvironmentSettings) -> None:
    t_env = TableEnvironment.create(settings)
    t_env.execute_sql(DDL)
    rows = list(t_env.sql_query(WINDOWED).execute().collect())
    assert rows and all(r.get_row_kind() is RowKind.INSERT for r in rows)
    assert sum(r.clicks for r in rows) == len((ROOT / "examples/data/clicks.csv").read_text().splitlines())
    df = t_env.sql_query(WINDOWED).to_pandas()
    assert list(df.columns) == ["window_start", "user_name", "clicks"]
    assert len(df) == len(rows)


def test_group_aggregate_is_a_retract_changelog_in_streaming() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    # Small source batches, so updates show in fine steps (the final table is the same).
    t_env.get_config().set("table.exec.source.batch-rows", "8")
    t_env.execute_sql(DDL)
    result = t_env.sql_query("SELECT user_name, COUNT(*) AS n FROM clicks GROUP BY user_name").execute()
    kinds = [r.get_row_kind() for r in result.collect()]
    assert RowKind.UPDATE_BEFORE in kinds and RowKind.UPDATE_AFTER in kinds
    final = t_env.sql_query("SELECT user_name, COUNT(*) AS n FROM clicks GROUP BY user_name").to_pandas()
    assert final["n"].sum() == 60


def test_print_and_set_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(DDL)
    t_env.execute_sql("SET 'table.local-time-zone' = 'Europe/Berlin'")
    assert t_env.get_config().get("table.local-time-zone") == "Europe/Berlin"
    assert t_env.list_tables() == ["clicks"]
    t_env.sql_query("SELECT user_name, COUNT(*) AS n FROM clicks GROUP BY user_name").execute().print()
    out = capsys.readouterr().out
    assert "user_name" in out and "4 rows in set" in out
