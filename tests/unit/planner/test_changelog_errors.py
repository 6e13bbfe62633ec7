"""Queries Flink cannot run fail at planning time with an error naming the node and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.errors import UnsupportedSqlError
from streamsql import EnvironmentSettings, TableEnvironment


def test_window_aggregate_over_an_updating_input_names_the_producer(tmp_path: Path) -> None:
    rows = [{"before": None, "after": {"k": "a", "v": 1, "ts": "2024-01-01 00:00:01"}, "op": "c"}]
    (tmp_path / "cdc.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE cdc (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'cdc.json'}', 'format' = 'debezium-json')"
    )
    with pytest.raises(UnsupportedSqlError) as info:
        env.sql_query(
            "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE cdc, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
            "GROUP BY window_start, window_end"
        ).execute()
    msg = info.value.message
    assert "WindowAggregate doesn't support consuming update and delete changes" in msg
    assert "TableSourceScan(table=[[default_catalog, default_database, cdc" in msg
    assert "[I,UB,UA,D]" in msg
