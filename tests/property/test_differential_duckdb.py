"""Property: over random small inputs, streaming, batch and DuckDB agree on a filter, a
TUMBLE window aggregate and a COUNT(DISTINCT) per key.

The rows arrive in event-time order with a 1 ms watermark bound, so no row is late and
streaming must give batch's table (whatever the source batch size); DuckDB is the
independent reference for the same SQL semantics (NULLs skipped by COUNT(v) / SUM /
COUNT(DISTINCT), SUM of no value is NULL)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EPOCH = dt.datetime(2024, 1, 1)
COLUMNS = "k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND"

QUERIES = {
    "filter": (
        "SELECT k, v * 2 AS v2 FROM t WHERE v > 0 OR k = 1",
        "SELECT k, v * 2 AS v2 FROM t WHERE v > 0 OR k = 1",
    ),
    "window": (
        "SELECT window_start, k, COUNT(*) AS c, COUNT(v) AS cv, SUM(v) AS s "
        "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k",
        "SELECT time_bucket(INTERVAL 10 SECOND, ts) AS window_start, k, COUNT(*) AS c, COUNT(v) AS cv, "
        "CAST(SUM(v) AS INTEGER) AS s FROM t GROUP BY ALL",
    ),
    "distinct": (
        "SELECT k, COUNT(DISTINCT v) AS dv, COUNT(*) AS c FROM t GROUP BY k",
        "SELECT k, COUNT(DISTINCT v) AS dv, COUNT(*) AS c FROM t GROUP BY k",
    ),
}

ROW = st.tuples(
    st.integers(0, 3),  # k
    st.one_of(st.none(), st.integers(-3, 6)),  # v
    st.integers(0, 3_000),  # gap to the previous row, ms (0: same millisecond)
)


def _rows(raw: list[tuple[int, int | None, int]]) -> list[tuple[int, int | None, dt.datetime]]:
    out, t = [], 9_000  # starts 1 s before a window edge, so the windows' last milliseconds are hit
    for k, v, gap in raw:
        t += gap if gap > 2_000 else gap % 7  # mostly the same or nearby milliseconds
        out.append((k, v, EPOCH + dt.timedelta(milliseconds=t)))
    return out


def _duckdb(sql: str, rows: list[tuple[int, int | None, dt.datetime]]) -> Counter[tuple[Any, ...]]:
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.execute("CREATE TABLE t (k INTEGER, v INTEGER, ts TIMESTAMP)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    return Counter(tuple(r) for r in con.execute(sql).fetchall())


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(raw=st.lists(ROW, min_size=1, max_size=25), batch_rows=st.integers(1, 4))
def test_streaming_batch_and_duckdb_agree(run_both_modes, raw: list, batch_rows: int) -> None:  # noqa: ANN001
    rows = _rows(raw)
    table_rows = [(k, v, ts.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]) for k, v, ts in rows]
    for name, (flink_sql, duck_sql) in QUERIES.items():
        r = run_both_modes(flink_sql, {"t": (COLUMNS, table_rows)}, batch_rows)
        assert r.streaming == r.batch, name
        assert r.batch == _duckdb(duck_sql, rows), name
