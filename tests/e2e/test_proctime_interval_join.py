"""A processing-time interval join end to end (STREAMING, in process): insert-only, so an
outer one feeds an append-only sink (a regular join there would be updating and refused).
The processing-time clock is fixed (`runtime.state.ttl.set_clock`, which PROCTIME() and the
join both read), so every row has the same processing time and the result is exact. At the
end of the bounded input nothing more is emitted: Flink cancels pending processing-time
timers then, so the left row without a shipment is not NULL-padded (it would be once the
clock passed its bound, tests/unit/runtime/operators/test_time_joins_operators.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.state.ttl import set_clock
from streamsql import EnvironmentSettings, TableEnvironment


@pytest.fixture
def fixed_clock() -> Iterator[int]:
    now = 1_700_000_000_000
    prev = set_clock(lambda: now)
    yield now
    set_clock(prev)


def test_left_proctime_interval_join_into_an_append_only_sink(tmp_path: Path, fixed_clock: int) -> None:
    (tmp_path / "orders.csv").write_text("1,10\n2,20\n3,30\n")
    (tmp_path / "shipments.csv").write_text("1,a\n3,c\n3,cc\n9,z\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.local-time-zone", "UTC")
    env.execute_sql(
        "CREATE TABLE orders (id INT, amount INT, proc_time AS PROCTIME()) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'orders.csv'}', 'format' = 'csv')"
    )
    env.execute_sql(
        "CREATE TABLE shipments (order_id INT, ship STRING, proc_time AS PROCTIME()) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'shipments.csv'}', 'format' = 'csv')"
    )
    out = tmp_path / "out"
    env.execute_sql(
        "CREATE TABLE sink (id INT, amount INT, ship STRING, pt TIMESTAMP_LTZ(3)) "
        f"WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')"
    )
    env.execute_sql(
        "INSERT INTO sink SELECT o.id, o.amount, s.ship, o.proc_time FROM orders o LEFT JOIN shipments s "
        "ON o.id = s.order_id AND o.proc_time BETWEEN s.proc_time - INTERVAL '4' HOUR AND s.proc_time"
    ).wait()
    lines = sorted(line for f in out.rglob("*") if f.is_file() for line in f.read_text().splitlines() if line)
    # PROCTIME() read the same fixed clock the join timed the rows with
    # the CSV sink quotes a timestamp (its space is below ','), as Flink's Jackson writer does
    assert lines == ['1,10,a,"2023-11-14 22:13:20"', '3,30,c,"2023-11-14 22:13:20"', '3,30,cc,"2023-11-14 22:13:20"']


def test_current_timestamp_reads_the_same_processing_time_clock(fixed_clock: int) -> None:
    # in STREAMING, CURRENT_TIMESTAMP is the processing time of the record (Flink evaluates it
    # per record): the clock PROCTIME() and the time-based operators read, not a second one
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.local-time-zone", "UTC")
    rows = list(
        env.execute_sql(
            "SELECT CAST(CURRENT_TIMESTAMP AS STRING), CAST(NOW() AS STRING) FROM (VALUES (1)) t(x)"
        ).collect()
    )
    assert [tuple(r) for r in rows] == [("2023-11-14 22:13:20.000", "2023-11-14 22:13:20.000")]
