"""CURRENT_WATERMARK(rowtime): the watermark in effect for each row (NULL before the
first), typed as the rowtime with precision 3; refused on a non-rowtime argument and in
BATCH mode, as Flink does."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from planner.errors import SqlValidationError
from streamsql import EnvironmentSettings, TableEnvironment

DDL = (
    "CREATE TABLE tw (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
    "WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')"
)


def _env(tmp_path: Path, streaming: bool) -> TableEnvironment:
    rows = [{"id": i, "ts": f"2024-01-01 00:00:{s:02d}"} for i, s in ((1, 10), (2, 20), (3, 5), (4, 30))]
    (tmp_path / "t.json").write_text("\n".join(json.dumps(r) for r in rows))
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(DDL.format(path=tmp_path / "t.json"))
    return env


def test_watermark_per_row_null_before_the_first(tmp_path: Path) -> None:
    env = _env(tmp_path, streaming=True)
    rows = sorted(tuple(r) for r in env.execute_sql("SELECT id, CURRENT_WATERMARK(ts) FROM tw").collect())
    assert rows[0] == (1, None)
    assert rows[1] == (2, dt.datetime(2024, 1, 1, 0, 0, 9))
    # the watermark never goes back: the out-of-order row 3 still sees 00:00:19
    assert rows[2] == (3, dt.datetime(2024, 1, 1, 0, 0, 19))
    (typ,) = [r[0] for r in env.execute_sql("SELECT TYPEOF(CURRENT_WATERMARK(ts)) FROM tw").collect()][:1]
    assert typ == "TIMESTAMP(3)"


def test_late_rows_filter(tmp_path: Path) -> None:
    env = _env(tmp_path, streaming=True)
    sql = "SELECT id FROM tw WHERE CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts)"
    assert sorted(r[0] for r in env.execute_sql(sql).collect()) == [1, 2, 4]


def test_refused_without_a_rowtime_attribute(tmp_path: Path) -> None:
    with pytest.raises(SqlValidationError, match="must be a rowtime attribute, but was 'TIMESTAMP\\(3\\)'"):
        _env(tmp_path, streaming=False).execute_sql("SELECT CURRENT_WATERMARK(ts) FROM tw")
    with pytest.raises(SqlValidationError, match="must be a rowtime attribute"):
        _env(tmp_path, streaming=True).execute_sql("SELECT CURRENT_WATERMARK(CAST(ts AS TIMESTAMP(3))) FROM tw")
