"""FLOOR(x TO unit) / CEIL(x TO unit): SQL and the Table API's floor/ceil(TimeIntervalUnit)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from planner.errors import SqlValidationError
from runtime.functions.temporal_floor import round_temporal
from runtime.types import DATE, TIMESTAMP, TIMESTAMP_LTZ
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.expressions import TimeIntervalUnit, col

TS = dt.datetime(2024, 3, 5, 10, 37, 12, 345000)  # a Tuesday


@pytest.fixture(params=["streaming", "batch"])
def env(request: pytest.FixtureRequest) -> TableEnvironment:
    s = EnvironmentSettings.in_streaming_mode() if request.param == "streaming" else EnvironmentSettings.in_batch_mode()
    return TableEnvironment.create(s)


def _one(env: TableEnvironment, sql: str) -> dict:
    (row,) = env.execute_sql(sql).to_arrow().to_pylist()
    return row


def test_sql_floor_ceil_timestamp(env: TableEnvironment) -> None:
    row = _one(
        env,
        "SELECT FLOOR(TIMESTAMP '2024-03-05 10:37:12.345' TO HOUR) AS fh,"
        " CEIL(TIMESTAMP '2024-03-05 10:37:12.345' TO HOUR) AS ch,"
        " FLOOR(TIMESTAMP '2024-03-05 10:37:12.345' TO MINUTE) AS fm,"
        " CEIL(TIMESTAMP '2024-03-05 10:37:12' TO DAY) AS cd,"
        " CEIL(TIMESTAMP '2024-03-05 10:00:00' TO HOUR) AS on_boundary,"
        " FLOOR(TIMESTAMP '2024-03-05 10:37:12' TO MONTH) AS fmo,"
        " FLOOR(TIMESTAMP '2024-08-05 10:37:12' TO QUARTER) AS fq,"
        " FLOOR(TIMESTAMP '2024-03-05 10:37:12' TO YEAR) AS fy,"
        " FLOOR(TIMESTAMP '2024-03-05 10:37:12' TO WEEK) AS fw,"
        " FLOOR(2.5) AS num",
    )
    assert row["fh"] == dt.datetime(2024, 3, 5, 10)
    assert row["ch"] == dt.datetime(2024, 3, 5, 11)
    assert row["fm"] == dt.datetime(2024, 3, 5, 10, 37)
    assert row["cd"] == dt.datetime(2024, 3, 6)
    assert row["on_boundary"] == dt.datetime(2024, 3, 5, 10)
    assert row["fmo"] == dt.datetime(2024, 3, 1)
    assert row["fq"] == dt.datetime(2024, 7, 1)
    assert row["fy"] == dt.datetime(2024, 1, 1)
    assert row["fw"] == dt.datetime(2024, 3, 3)  # weeks start on Sunday
    assert float(row["num"]) == 2.0


def test_sql_floor_date_and_ltz_in_session_zone(env: TableEnvironment) -> None:
    env.get_config().set("table.local-time-zone", "Asia/Shanghai")
    row = _one(
        env,
        "SELECT FLOOR(DATE '2024-03-05' TO MONTH) AS dm, CEIL(DATE '2024-03-05' TO YEAR) AS dy,"
        " FLOOR(TO_TIMESTAMP_LTZ(0, 3) TO DAY) AS ld, CAST(FLOOR(TO_TIMESTAMP_LTZ(0, 3) TO DAY) AS STRING) AS ls",
    )
    assert row["dm"] == dt.date(2024, 3, 1)
    assert row["dy"] == dt.date(2025, 1, 1)
    # epoch 0 is 08:00 in Shanghai: local midnight is 16:00 UTC the day before
    assert row["ld"] == dt.datetime(1969, 12, 31, 16, tzinfo=dt.UTC)
    assert row["ls"].startswith("1970-01-01 00:00:00")


def test_sql_floor_on_columns_and_nulls(env: TableEnvironment) -> None:
    t = env.from_elements([(dt.datetime(2024, 3, 5, 10, 37, 12),), (None,)], ["ts"])
    env.create_temporary_view("v", t)
    got = env.execute_sql("SELECT FLOOR(ts TO HOUR) AS h FROM v").to_arrow().column("h").to_pylist()
    assert sorted(got, key=str) == [dt.datetime(2024, 3, 5, 10), None]


def test_sql_floor_to_unit_rejects_numbers(env: TableEnvironment) -> None:
    with pytest.raises(SqlValidationError, match="FLOOR"):
        env.execute_sql("SELECT FLOOR(1 TO HOUR)")


def test_table_api_floor_ceil(env: TableEnvironment) -> None:
    t = env.from_elements([(TS,)], ["ts"])
    r = t.select(
        col("ts").floor(TimeIntervalUnit.HOUR).alias("h"),
        col("ts").ceil(TimeIntervalUnit.DAY).alias("d"),
        col("ts").floor(TimeIntervalUnit.MINUTE).alias("m"),
    )
    assert "FLOOR(`ts` TO HOUR)" in r.to_sql()
    (row,) = r.to_arrow().to_pylist()
    assert row == {"h": dt.datetime(2024, 3, 5, 10), "d": dt.datetime(2024, 3, 6), "m": dt.datetime(2024, 3, 5, 10, 37)}


def test_table_api_floor_in_group_by(env: TableEnvironment) -> None:
    rows = [(TS, 1), (TS + dt.timedelta(minutes=10), 2), (TS + dt.timedelta(hours=1), 4)]
    t = env.from_elements(rows, ["ts", "v"])
    hour = col("ts").floor(TimeIntervalUnit.HOUR)
    r = t.group_by(hour).select(hour.alias("h"), col("v").sum.alias("s"))
    got = sorted((x["h"], x["s"]) for x in r.to_arrow().to_pylist())
    assert got == [(dt.datetime(2024, 3, 5, 10), 3), (dt.datetime(2024, 3, 5, 11), 4)]


def test_kernel_units_and_types() -> None:
    ts = pa.array([dt.datetime(2024, 3, 5, 10, 37, 12, 345678)], pa.timestamp("us"))
    assert round_temporal(ts, TIMESTAMP(6), "SECOND", False, "UTC").to_pylist() == [dt.datetime(2024, 3, 5, 10, 37, 12)]
    assert round_temporal(ts, TIMESTAMP(6), "MILLISECOND", True, "UTC").to_pylist() == [
        dt.datetime(2024, 3, 5, 10, 37, 12, 346000)
    ]
    ltz = pa.array([0], pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
    out = round_temporal(ltz, TIMESTAMP_LTZ(3), "HOUR", True, "+05:30")
    assert out.type == pa.timestamp("ms", tz="UTC")
    assert out.cast(pa.int64()).to_pylist() == [30 * 60 * 1000]  # 05:30 local -> 06:00 local
    d = pa.array([dt.date(2024, 5, 17)], pa.date32())
    assert round_temporal(d, DATE(), "QUARTER", False, "UTC").to_pylist() == [dt.date(2024, 4, 1)]
