"""The examples of Flink 2.x's "Time Zone" page (docs/dev/table/timezone.md), run through
the SQL client's statement path (`streamsql -f`'s runner, in process) and compared with the
tables the page prints, cell by cell (the page's tables are hand-trimmed: widths are not
compared, the client's own layout is tests/unit/streamsql's business).

Where the page departs from what Flink 2.3 prints, the test follows Flink and says so:

- Column names: Calcite names an unaliased call `EXPR$<i>`; only a niladic function written
  without parentheses (`LOCALTIME`, `CURRENT_TIMESTAMP`) is named after itself, being an
  identifier until validation. The page labels `TO_TIMESTAMP_LTZ(4001, 3)`, `NOW()`,
  `CAST(ltz AS STRING)` ... by their text; Flink's client prints `EXPR$<i>` (as a run of
  Flink's client shows for MyView1: `EXPR$5` .. `EXPR$7`). `RENAMED` maps each.
- DESCRIBE's `null` column: the page shows 1.13's `true`/`false`; Flink 2.x prints
  `TRUE`/`FALSE` (describe.md). Its legacy-window nullabilities are Flink's own
  (`SqlGroupedWindowFunction`: start/end keep a TIMESTAMP time column's nullability and are
  TIMESTAMP(3) NOT NULL over a TIMESTAMP_LTZ; the rowtime keeps the column's).
- The page's constant queries print without the `op` column: the client's BATCH layout, so
  they run in batch mode. The window queries run in streaming mode (their `op` is +I).
- Processing time comes from the fixed clock `runtime.state.ttl.set_clock`, which PROCTIME(),
  CURRENT_TIMESTAMP & co and processing-time windows read, set to the instants the page shows.
- A `filesystem` CSV table with the page's rows stands in for its `socket` source.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runtime.state.ttl import set_clock
from streamsql import EnvironmentSettings, TableEnvironment
from tests.e2e.flink_docs_client import cells, sql_client

# Flink's names for the columns the page labels by their text.
RENAMED = {
    "TO_TIMESTAMP_LTZ(4001, 3)": "EXPR$0",
    "CURRENT_ROW_TIMESTAMP()": "EXPR$5",
    "NOW()": "EXPR$6",
    "PROCTIME()": "EXPR$7",
    "CAST(ltz AS TIMESTAMP(3))": "EXPR$1",
    "CAST(ltz AS STRING)": "EXPR$2",
    "CAST(ntz AS TIMESTAMP_LTZ(3))": "EXPR$4",
}


def ms(text: str) -> int:
    """Epoch milliseconds of a UTC wall clock `YYYY-MM-DD HH:MM:SS.fff`."""
    import datetime as dt

    return int(dt.datetime.fromisoformat(text + "+00:00").timestamp() * 1000)


@pytest.fixture
def clock() -> Iterator[list[int]]:
    """The processing-time clock: a cell the test sets (epoch ms)."""
    now = [ms("2021-04-15 15:18:36.384")]
    prev = set_clock(lambda: now[0])
    yield now
    set_clock(prev)


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """Runs one statement as the SQL client does and returns what it printed."""
    monkeypatch.chdir(tmp_path)
    return sql_client()


# ------------------------------------------------------------------ TIMESTAMP vs TIMESTAMP_LTZ


def test_timestamp_literal(client: Callable[[str], str]) -> None:
    client("SET 'execution.runtime-mode' = 'batch'")
    page = """
+-------------------------+
| 1970-01-01 00:00:04.001 |
+-------------------------+"""
    # the page prints the value only; Flink's client heads the column EXPR$0
    assert cells(client("SELECT TIMESTAMP '1970-01-01 00:00:04.001'")) == [["EXPR$0"], *cells(page)]


def test_timestamp_ltz_is_shown_in_the_session_zone(client: Callable[[str], str]) -> None:
    client("SET 'execution.runtime-mode' = 'batch'")
    client("CREATE VIEW T1 AS SELECT TO_TIMESTAMP_LTZ(4001, 3)")
    client("SET 'table.local-time-zone' = 'UTC'")
    assert cells(client("SELECT * FROM T1")) == cells(
        """
+---------------------------+
| TO_TIMESTAMP_LTZ(4001, 3) |
+---------------------------+
|   1970-01-01 00:00:04.001 |
+---------------------------+""",
        RENAMED,
    )
    client("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    assert cells(client("SELECT * FROM T1")) == cells(
        """
+---------------------------+
| TO_TIMESTAMP_LTZ(4001, 3) |
+---------------------------+
|   1970-01-01 08:00:04.001 |
+---------------------------+""",
        RENAMED,
    )


# ------------------------------------------------------------------ time zone usage


def test_python_api_sets_the_session_zone() -> None:
    """The page's Python tab: `t_env.get_config().set_local_timezone(...)`."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    shown = []
    for zone in ("UTC", "Asia/Shanghai", "America/Los_Angeles"):
        t_env.get_config().set_local_timezone(zone)
        shown += [str(r[0]) for r in t_env.execute_sql("SELECT CAST(TO_TIMESTAMP_LTZ(4001, 3) AS STRING)").collect()]
    assert shown == ["1970-01-01 00:00:04.001", "1970-01-01 08:00:04.001", "1969-12-31 16:00:04.001"]


@pytest.mark.parametrize(
    ("zone", "shown"),
    [
        ("GMT-08:00", "1969-12-31 16:00:04.001"),  # Flink's fixed offsets: GMT+h[h][[:]mm]
        ("GMT+8", "1970-01-01 08:00:04.001"),
        ("GMT+0530", "1970-01-01 05:30:04.001"),
        ("GMT", "1970-01-01 00:00:04.001"),
        ("Etc/GMT-8", "1970-01-01 08:00:04.001"),
        ("CET", "1970-01-01 01:00:04.001"),
    ],
)
def test_session_zone_forms(client: Callable[[str], str], zone: str, shown: str) -> None:
    client("SET 'execution.runtime-mode' = 'batch'")
    client(f"SET 'table.local-time-zone' = '{zone}'")
    assert cells(client("SELECT CAST(TO_TIMESTAMP_LTZ(4001, 3) AS STRING)"))[1] == [shown]


@pytest.mark.parametrize("zone", ["Foo/Bar", "UTC+8", "+08:00", "PST", "EST", "GMT+24"])
def test_invalid_session_zone(zone: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Flink's `validateTimeZone`: a zone java.util.TimeZone and java.time.ZoneId read
    alike, else its message; SET takes it, the next query is refused; the Python API's
    `set_local_timezone` refuses it at once."""
    monkeypatch.chdir(tmp_path)
    run = sql_client()
    run(f"SET 'table.local-time-zone' = '{zone}'")
    out = run("SELECT TO_TIMESTAMP_LTZ(4001, 3)", errors=True)
    assert "[ERROR]" in out and "Invalid time zone. The value should be a Time Zone Database (TZDB) ID" in out
    assert "internal error" not in out
    with pytest.raises(ValueError, match="Fixed offsets are supported using 'GMT-03:00' or 'GMT\\+03:00'"):
        TableEnvironment.create(EnvironmentSettings.in_batch_mode()).get_config().set_local_timezone(zone)


# ------------------------------------------------------------------ time functions


MY_VIEW1 = (
    "CREATE VIEW MyView1 AS SELECT LOCALTIME, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME, "
    "CURRENT_TIMESTAMP, CURRENT_ROW_TIMESTAMP(), NOW(), PROCTIME()"
)


def test_time_functions_follow_the_session_zone(client: Callable[[str], str], clock: list[int]) -> None:
    client("SET 'execution.runtime-mode' = 'batch'")
    client(MY_VIEW1)
    assert cells(client("DESC MyView1")) == cells(
        """
+------------------------+-----------------------------+-------+-----+--------+-----------+
|                   name |                        type |  null | key | extras | watermark |
+------------------------+-----------------------------+-------+-----+--------+-----------+
|              LOCALTIME |                     TIME(0) | false |     |        |           |
|         LOCALTIMESTAMP |                TIMESTAMP(3) | false |     |        |           |
|           CURRENT_DATE |                        DATE | false |     |        |           |
|           CURRENT_TIME |                     TIME(0) | false |     |        |           |
|      CURRENT_TIMESTAMP |            TIMESTAMP_LTZ(3) | false |     |        |           |
|CURRENT_ROW_TIMESTAMP() |            TIMESTAMP_LTZ(3) | false |     |        |           |
|                  NOW() |            TIMESTAMP_LTZ(3) | false |     |        |           |
|             PROCTIME() | TIMESTAMP_LTZ(3) *PROCTIME* | false |     |        |           |
+------------------------+-----------------------------+-------+-----+--------+-----------+""",
        RENAMED,
    )
    client("SET 'table.local-time-zone' = 'UTC'")
    assert cells(client("SELECT * FROM MyView1")) == cells(
        """
+-----------+-------------------------+--------------+--------------+-------------------------+-------------------------+-------------------------+-------------------------+
| LOCALTIME |          LOCALTIMESTAMP | CURRENT_DATE | CURRENT_TIME |       CURRENT_TIMESTAMP | CURRENT_ROW_TIMESTAMP() |                   NOW() |              PROCTIME() |
+-----------+-------------------------+--------------+--------------+-------------------------+-------------------------+-------------------------+-------------------------+
|  15:18:36 | 2021-04-15 15:18:36.384 |   2021-04-15 |     15:18:36 | 2021-04-15 15:18:36.384 | 2021-04-15 15:18:36.384 | 2021-04-15 15:18:36.384 | 2021-04-15 15:18:36.384 |
+-----------+-------------------------+--------------+--------------+-------------------------+-------------------------+-------------------------+-------------------------+""",
        RENAMED,
    )
    client("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    assert cells(client("SELECT * FROM MyView1")) == cells(
        """
+-----------+-------------------------+--------------+--------------+-------------------------+-------------------------+-------------------------+-------------------------+
| LOCALTIME |          LOCALTIMESTAMP | CURRENT_DATE | CURRENT_TIME |       CURRENT_TIMESTAMP | CURRENT_ROW_TIMESTAMP() |                   NOW() |              PROCTIME() |
+-----------+-------------------------+--------------+--------------+-------------------------+-------------------------+-------------------------+-------------------------+
|  23:18:36 | 2021-04-15 23:18:36.384 |   2021-04-15 |     23:18:36 | 2021-04-15 23:18:36.384 | 2021-04-15 23:18:36.384 | 2021-04-15 23:18:36.384 | 2021-04-15 23:18:36.384 |
+-----------+-------------------------+--------------+--------------+-------------------------+-------------------------+-------------------------+-------------------------+""",
        RENAMED,
    )


def test_unaliased_niladic_functions_keep_their_written_name(client: Callable[[str], str], clock: list[int]) -> None:
    # Calcite's identifier rule: as written (Flink keeps unquoted case), parentheses make a call
    got = cells(client("SELECT localtime, CURRENT_DATE AS d, CURRENT_TIMESTAMP + INTERVAL '1' SECOND, NOW()"))
    assert got[0] == ["localtime", "d", "EXPR$2", "EXPR$3"]


def test_timestamp_ltz_string_representation(client: Callable[[str], str]) -> None:
    client("SET 'execution.runtime-mode' = 'batch'")
    client(
        "CREATE VIEW MyView2 AS SELECT TO_TIMESTAMP_LTZ(4001, 3) AS ltz, TIMESTAMP '1970-01-01 00:00:01.001'  AS ntz"
    )
    assert cells(client("DESC MyView2")) == cells(
        """
+------+------------------+-------+-----+--------+-----------+
| name |             type |  null | key | extras | watermark |
+------+------------------+-------+-----+--------+-----------+
|  ltz | TIMESTAMP_LTZ(3) |  true |     |        |           |
|  ntz |     TIMESTAMP(3) | false |     |        |           |
+------+------------------+-------+-----+--------+-----------+"""
    )
    client("SET 'table.local-time-zone' = 'UTC'")
    assert cells(client("SELECT * FROM MyView2")) == cells(
        """
+-------------------------+-------------------------+
|                     ltz |                     ntz |
+-------------------------+-------------------------+
| 1970-01-01 00:00:04.001 | 1970-01-01 00:00:01.001 |
+-------------------------+-------------------------+"""
    )
    client("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    assert cells(client("SELECT * FROM MyView2")) == cells(
        """
+-------------------------+-------------------------+
|                     ltz |                     ntz |
+-------------------------+-------------------------+
| 1970-01-01 08:00:04.001 | 1970-01-01 00:00:01.001 |
+-------------------------+-------------------------+"""
    )
    client(
        "CREATE VIEW MyView3 AS SELECT ltz, CAST(ltz AS TIMESTAMP(3)), CAST(ltz AS STRING), ntz, "
        "CAST(ntz AS TIMESTAMP_LTZ(3)) FROM MyView2"
    )
    assert cells(client("DESC MyView3")) == cells(
        """
+-------------------------------+------------------+-------+-----+--------+-----------+
|                          name |             type |  null | key | extras | watermark |
+-------------------------------+------------------+-------+-----+--------+-----------+
|                           ltz | TIMESTAMP_LTZ(3) |  true |     |        |           |
|     CAST(ltz AS TIMESTAMP(3)) |     TIMESTAMP(3) |  true |     |        |           |
|           CAST(ltz AS STRING) |           STRING |  true |     |        |           |
|                           ntz |     TIMESTAMP(3) | false |     |        |           |
| CAST(ntz AS TIMESTAMP_LTZ(3)) | TIMESTAMP_LTZ(3) | false |     |        |           |
+-------------------------------+------------------+-------+-----+--------+-----------+""",
        RENAMED,
    )
    assert cells(client("SELECT * FROM MyView3")) == cells(
        """
+-------------------------+---------------------------+-------------------------+-------------------------+-------------------------------+
|                     ltz | CAST(ltz AS TIMESTAMP(3)) |     CAST(ltz AS STRING) |                     ntz | CAST(ntz AS TIMESTAMP_LTZ(3)) |
+-------------------------+---------------------------+-------------------------+-------------------------+-------------------------------+
| 1970-01-01 08:00:04.001 |   1970-01-01 08:00:04.001 | 1970-01-01 08:00:04.001 | 1970-01-01 00:00:01.001 |       1970-01-01 00:00:01.001 |
+-------------------------+---------------------------+-------------------------+-------------------------+-------------------------------+""",
        RENAMED,
    )


# ------------------------------------------------------------------ processing time


def test_proctime_in_the_session_zone(client: Callable[[str], str], clock: list[int]) -> None:
    client("SET 'execution.runtime-mode' = 'batch'")
    clock[0] = ms("2021-04-15 14:48:31.387")
    client("SET 'table.local-time-zone' = 'UTC'")
    page_utc = """
+-------------------------+
|              PROCTIME() |
+-------------------------+
| 2021-04-15 14:48:31.387 |
+-------------------------+"""
    assert cells(client("SELECT PROCTIME()")) == cells(page_utc, {"PROCTIME()": "EXPR$0"})
    client("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    page_shanghai = """
+-------------------------+
|              PROCTIME() |
+-------------------------+
| 2021-04-15 22:48:31.387 |
+-------------------------+"""
    assert cells(client("SELECT PROCTIME()")) == cells(page_shanghai, {"PROCTIME()": "EXPR$0"})


PROCTIME_VIEW = """CREATE VIEW MyView3 AS
            SELECT
                TUMBLE_START(proctime, INTERVAL '10' MINUTES) AS window_start,
                TUMBLE_END(proctime, INTERVAL '10' MINUTES) AS window_end,
                TUMBLE_PROCTIME(proctime, INTERVAL '10' MINUTES) as window_proctime,
                item,
                MAX(price) as max_price
            FROM MyTable1
                GROUP BY TUMBLE(proctime, INTERVAL '10' MINUTES), item"""


def test_processing_time_window_describe(client: Callable[[str], str], tmp_path: Path) -> None:
    client(
        "CREATE TABLE MyTable1 (item STRING, price DOUBLE, proctime as PROCTIME()) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    client(PROCTIME_VIEW)
    assert cells(client("DESC MyView3")) == cells(
        """
+-----------------+-----------------------------+-------+-----+--------+-----------+
|           name  |                        type |  null | key | extras | watermark |
+-----------------+-----------------------------+-------+-----+--------+-----------+
|    window_start |                TIMESTAMP(3) | false |     |        |           |
|      window_end |                TIMESTAMP(3) | false |     |        |           |
| window_proctime | TIMESTAMP_LTZ(3) *PROCTIME* | false |     |        |           |
|            item |                      STRING | true  |     |        |           |
|       max_price |                      DOUBLE |  true |     |        |           |
+-----------------+-----------------------------+-------+-----+--------+-----------+"""
    )


@pytest.mark.parametrize(
    ("zone", "page"),
    [
        (
            "UTC",
            """
+-------------------------+-------------------------+-------------------------+------+-----------+
|            window_start |              window_end |          window_procime | item | max_price |
+-------------------------+-------------------------+-------------------------+------+-----------+
| 2021-04-15 14:00:00.000 | 2021-04-15 14:10:00.000 | 2021-04-15 14:10:00.005 |    A |       1.8 |
| 2021-04-15 14:00:00.000 | 2021-04-15 14:10:00.000 | 2021-04-15 14:10:00.007 |    B |       2.5 |
| 2021-04-15 14:00:00.000 | 2021-04-15 14:10:00.000 | 2021-04-15 14:10:00.007 |    C |       3.8 |
+-------------------------+-------------------------+-------------------------+------+-----------+""",
        ),
        (
            "Asia/Shanghai",
            """
+-------------------------+-------------------------+-------------------------+------+-----------+
|            window_start |              window_end |          window_procime | item | max_price |
+-------------------------+-------------------------+-------------------------+------+-----------+
| 2021-04-15 22:00:00.000 | 2021-04-15 22:10:00.000 | 2021-04-15 22:10:00.005 |    A |       1.8 |
| 2021-04-15 22:00:00.000 | 2021-04-15 22:10:00.000 | 2021-04-15 22:10:00.007 |    B |       2.5 |
| 2021-04-15 22:00:00.000 | 2021-04-15 22:10:00.000 | 2021-04-15 22:10:00.007 |    C |       3.8 |
+-------------------------+-------------------------+-------------------------+------+-----------+""",
        ),
    ],
    ids=["UTC", "Asia/Shanghai"],
)
def test_processing_time_window(zone: str, page: str, tmp_path: Path, clock: list[int]) -> None:
    """The page's `nc -lk 9999` stream: the rows arrive at 14:0x (UTC), the window
    [14:00, 14:10) fires when the clock passes 14:10 (the source stays open: a monitored
    directory), its rows' TUMBLE_PROCTIME the firing time. The page's B and C rows were
    emitted 2 ms after A's (`.007`): a processing-time window is not deterministic (the
    page says so); here all three fire at the one instant the clock shows (`.005`)."""
    clock[0] = ms("2021-04-15 14:05:00.000")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "rows.csv").write_text("A,1.1\nB,1.2\nA,1.8\nB,2.5\nC,3.8\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.local-time-zone", zone)
    env.execute_sql(
        "CREATE TABLE MyTable1 (item STRING, price DOUBLE, proctime as PROCTIME()) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'in'}', 'format' = 'csv', "
        "'source.monitor-interval' = '20 ms')"
    )
    env.execute_sql(PROCTIME_VIEW)
    result = env.execute_sql("SELECT * FROM MyView3")
    rows: list[list[str]] = []
    reader = threading.Thread(
        target=lambda: rows.extend([_text(v, zone) for v in r] for r in result.collect()), daemon=True
    )
    reader.start()
    try:
        _wait(lambda: any(m["operator"] == "WindowAggregate" and m["rows_in"] == 5 for m in result.metrics()))
        assert rows == []  # nothing before the window's end
        clock[0] = ms("2021-04-15 14:10:00.005")
        _wait(lambda: len(rows) >= 3)
    finally:
        result.cancel()
        reader.join(30)
    expected = cells(page)
    fired = expected[1][2]  # A's proctime: the firing instant
    assert [expected[0], *sorted(rows)] == [expected[0]] + [[*r[:2], fired, *r[3:]] for r in expected[1:]]


def _text(v: object, zone: str) -> str:
    """A value as the client prints it (timestamps with their milliseconds, a TIMESTAMP_LTZ
    in the session zone)."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(ZoneInfo(zone))
        return v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}"
    return str(v)


def _wait(condition: Callable[[], bool], deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("condition not reached before the deadline")
        time.sleep(0.02)


# ------------------------------------------------------------------ event time


MY_TABLE2_ROWS = (
    "A,1.1,2021-04-15 14:01:00\nB,1.2,2021-04-15 14:02:00\nA,1.8,2021-04-15 14:03:00\n"
    "B,2.5,2021-04-15 14:04:00\nC,3.8,2021-04-15 14:05:00\nC,3.8,2021-04-15 14:11:00\n"
)
MY_TABLE3_ROWS = (
    "A,1.1,1618495260000\nB,1.2,1618495320000\nA,1.8,1618495380000\n"
    "B,2.5,1618495440000\nC,3.8,1618495500000\nC,3.8,1618495860000\n"
)

WINDOW_VIEW = """CREATE VIEW {view} AS
            SELECT
                TUMBLE_START({t}, INTERVAL '10' MINUTES) AS window_start,
                TUMBLE_END({t}, INTERVAL '10' MINUTES) AS window_end,
                TUMBLE_ROWTIME({t}, INTERVAL '10' MINUTES) as window_rowtime,
                item,
                MAX(price) as max_price
            FROM {table}
                GROUP BY TUMBLE({t}, INTERVAL '10' MINUTES), item"""

WINDOW_HEADER = """
+-------------------------+-------------------------+-------------------------+------+-----------+
|            window_start |              window_end |          window_rowtime | item | max_price |
+-------------------------+-------------------------+-------------------------+------+-----------+"""

UTC_ROWS = """
| 2021-04-15 14:00:00.000 | 2021-04-15 14:10:00.000 | 2021-04-15 14:09:59.999 |    A |       1.8 |
| 2021-04-15 14:00:00.000 | 2021-04-15 14:10:00.000 | 2021-04-15 14:09:59.999 |    B |       2.5 |
| 2021-04-15 14:00:00.000 | 2021-04-15 14:10:00.000 | 2021-04-15 14:09:59.999 |    C |       3.8 |
+-------------------------+-------------------------+-------------------------+------+-----------+"""

SHANGHAI_ROWS = """
| 2021-04-15 22:00:00.000 | 2021-04-15 22:10:00.000 | 2021-04-15 22:09:59.999 |    A |       1.8 |
| 2021-04-15 22:00:00.000 | 2021-04-15 22:10:00.000 | 2021-04-15 22:09:59.999 |    B |       2.5 |
| 2021-04-15 22:00:00.000 | 2021-04-15 22:10:00.000 | 2021-04-15 22:09:59.999 |    C |       3.8 |
+-------------------------+-------------------------+-------------------------+------+-----------+"""


def _page_rows_then_last_window(got: list[list[str]], page: str, last: list[str]) -> None:
    """The page's socket stays open, so the window of its last row (14:11) never fires
    there; the bounded stand-in ends, and its end of input fires that window too (as Flink
    does for a bounded source): the page's rows, then that one."""
    assert got == [*cells(page), last]


def test_event_time_on_timestamp(client: Callable[[str], str], tmp_path: Path) -> None:
    (tmp_path / "t2.csv").write_text(MY_TABLE2_ROWS)
    client(
        "CREATE TABLE MyTable2 (item STRING, price DOUBLE, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '10' SECOND) "
        "WITH ('connector' = 'filesystem', 'path' = 't2.csv', 'format' = 'csv')"
    )
    client(WINDOW_VIEW.format(view="MyView4", t="ts", table="MyTable2"))
    assert cells(client("DESC MyView4")) == cells(
        """
+----------------+------------------------+------+-----+--------+-----------+
|           name |                   type | null | key | extras | watermark |
+----------------+------------------------+------+-----+--------+-----------+
|   window_start |           TIMESTAMP(3) | true |     |        |           |
|     window_end |           TIMESTAMP(3) | true |     |        |           |
| window_rowtime | TIMESTAMP(3) *ROWTIME* | true |     |        |           |
|           item |                 STRING | true |     |        |           |
|      max_price |                 DOUBLE | true |     |        |           |
+----------------+------------------------+------+-----+--------+-----------+"""
    )
    last = ["2021-04-15 14:10:00.000", "2021-04-15 14:20:00.000", "2021-04-15 14:19:59.999", "C", "3.8"]
    for zone in ("UTC", "Asia/Shanghai"):  # the same windows in every zone
        client(f"SET 'table.local-time-zone' = '{zone}'")
        _page_rows_then_last_window(cells(client("SELECT * FROM MyView4")), WINDOW_HEADER + UTC_ROWS, last)


def test_event_time_on_timestamp_ltz(client: Callable[[str], str], tmp_path: Path) -> None:
    (tmp_path / "t3.csv").write_text(MY_TABLE3_ROWS)
    client(
        "CREATE TABLE MyTable3 (item STRING, price DOUBLE, ts BIGINT, ts_ltz AS TO_TIMESTAMP_LTZ(ts, 3), "
        "WATERMARK FOR ts_ltz AS ts_ltz - INTERVAL '10' SECOND) "
        "WITH ('connector' = 'filesystem', 'path' = 't3.csv', 'format' = 'csv')"
    )
    client(WINDOW_VIEW.format(view="MyView5", t="ts_ltz", table="MyTable3"))
    assert cells(client("DESC MyView5")) == cells(
        """
+----------------+----------------------------+-------+-----+--------+-----------+
|           name |                       type |  null | key | extras | watermark |
+----------------+----------------------------+-------+-----+--------+-----------+
|   window_start |               TIMESTAMP(3) | false |     |        |           |
|     window_end |               TIMESTAMP(3) | false |     |        |           |
| window_rowtime | TIMESTAMP_LTZ(3) *ROWTIME* |  true |     |        |           |
|           item |                     STRING |  true |     |        |           |
|      max_price |                     DOUBLE |  true |     |        |           |
+----------------+----------------------------+-------+-----+--------+-----------+"""
    )
    client("SET 'table.local-time-zone' = 'UTC'")
    _page_rows_then_last_window(
        cells(client("SELECT * FROM MyView5")),
        WINDOW_HEADER + UTC_ROWS,
        ["2021-04-15 14:10:00.000", "2021-04-15 14:20:00.000", "2021-04-15 14:19:59.999", "C", "3.8"],
    )
    client("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    _page_rows_then_last_window(
        cells(client("SELECT * FROM MyView5")),
        WINDOW_HEADER + SHANGHAI_ROWS,
        ["2021-04-15 22:10:00.000", "2021-04-15 22:20:00.000", "2021-04-15 22:19:59.999", "C", "3.8"],
    )


# ------------------------------------------------------------------ daylight saving time


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_daylight_saving_time_window(client: Callable[[str], str], tmp_path: Path, mode: str) -> None:
    """The page's four epochs around Los Angeles' 2021-03-14 02:00 jump: the 4-hour window
    [00:00, 04:00) of a TIMESTAMP_LTZ rowtime collects 3 hours' rows there (00:00, 01:00,
    03:00), and all four hours' in a zone without DST."""
    (tmp_path / "dst.csv").write_text("1615708800000\n1615712400000\n1615716000000\n1615719600000\n")
    client(f"SET 'execution.runtime-mode' = '{mode}'")
    client(
        "CREATE TABLE T (ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts) "
        "WITH ('connector' = 'filesystem', 'path' = 'dst.csv', 'format' = 'csv')"
    )
    tvf = (
        "SELECT window_start, window_end, COUNT(*) AS cnt FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), "
        "INTERVAL '4' HOUR)) GROUP BY window_start, window_end"
    )
    legacy = (
        "SELECT TUMBLE_START(ts, INTERVAL '4' HOUR), TUMBLE_END(ts, INTERVAL '4' HOUR), COUNT(*) AS cnt "
        "FROM T GROUP BY TUMBLE(ts, INTERVAL '4' HOUR)"
    )
    client("SET 'table.local-time-zone' = 'America/Los_Angeles'")
    for sql in (tvf, legacy) if mode == "streaming" else (tvf,):
        assert cells(client(sql))[1:] == [
            ["2021-03-14 00:00:00.000", "2021-03-14 04:00:00.000", "3"],
            ["2021-03-14 04:00:00.000", "2021-03-14 08:00:00.000", "1"],
        ]
    client("SET 'table.local-time-zone' = 'UTC'")
    assert cells(client(tvf))[1:] == [["2021-03-14 08:00:00.000", "2021-03-14 12:00:00.000", "4"]]


# ------------------------------------------------------------------ batch vs streaming


def test_batch_evaluates_time_functions_once_per_query(client: Callable[[str], str], tmp_path: Path) -> None:
    """In BATCH, LOCALTIME .. NOW() are evaluated once as the query starts; PROCTIME() and
    CURRENT_ROW_TIMESTAMP() per record. A clock that moves 1 ms at each reading shows it."""
    ticks = iter(range(ms("2021-04-15 15:18:36.384"), ms("2021-04-16 00:00:00.000")))
    prev = set_clock(lambda: next(ticks))
    try:
        (tmp_path / "n.csv").write_text("1\n2\n3\n")
        client("SET 'execution.runtime-mode' = 'batch'")
        client("CREATE TABLE N (n INT) WITH ('connector' = 'filesystem', 'path' = 'n.csv', 'format' = 'csv')")
        got = cells(client("SELECT n, CURRENT_TIMESTAMP, NOW(), LOCALTIMESTAMP FROM N"))[1:]
    finally:
        set_clock(prev)
    assert len({tuple(r[1:]) for r in got}) == 1 and len(got) == 3
