"""streamsql against the limit of one vectorized core: DuckDB with one thread (issue 21).

    python benchmarks/limit.py [--rows 10000000] [--runs 3] [--jobs filter,window,distinct,window_degenerate]
                               [--engines streaming,batch,duckdb] [--data-dir /tmp/streamsql-limit]
                               [--spill-memory 16mb]

`--rows` takes a comma-separated list (`--rows 1000000,10000000,50000000`): a table per row
count, then a memory sweep (peak RSS MB / wall s per job, engine and row count), which shows
whether a job's memory follows its state or its input.

The input is generated once per row count and kept in --data-dir as Parquet:

- `uniform`: `id` 0..N-1, `k` uniform over 10,000 keys, `v` uniform over 1,000 values,
  `ts` = 2024-01-01 + id/10 ms (100,000 rows per 10-second window);
- `degenerate`: one row per (window, key) group: `k` = id mod 10,000 and `ts` =
  2024-01-01 + id ms, so every 10-second window holds each key exactly once.

Jobs (the same file, the same query in each engine):

- `filter`: filter/project, the result discarded (only counted and summed);
- `window`: TUMBLE 10 s, COUNT(*) and SUM(v) by k;
- `distinct`: COUNT(DISTINCT v) by k (an updating result in streaming mode: the changelog
  is folded to the final table);
- `window_degenerate`: the window job over the degenerate input;
- `group_many`: GROUP BY id / 4 with COUNT(*), SUM(v), MAX(k): a group per 4 rows (2.5M
  groups at 10M rows), the state that BATCH group aggregation spills (not in the default
  --jobs: run it with `--jobs group_many --engines batch,batch-spill,duckdb`);
- `sort`: ORDER BY v, k over the whole input (BATCH only; not in the default --jobs
  either: `--jobs sort --engines batch,batch-spill,duckdb`);
- `join`: the input joined with itself on `id` (a regular join whose build side is every
  row; BATCH only, not in the default --jobs: `--jobs join --engines batch,batch-spill,duckdb`);
- `over`: SUM(v) and COUNT(*) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 10 PRECEDING AND
  CURRENT ROW) for every row (the BATCH OVER aggregation, whose sort spills; BATCH only, not
  in the default --jobs: `--jobs over --engines batch,batch-spill,duckdb`);
- `topn`: the 3 largest `v` per `k` (ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id)
  <= 3: the BATCH Rank operator, whose sort spills; BATCH only, not in the default --jobs);
- `window_topn` / `window_dedup`: the 3 largest `v`, and the first row, per 10-second TUMBLE
  window and `k` (window Top-N and window deduplication: BATCH Rank over the window
  columns); `session`: COUNT(*) and SUM(v) per SESSION window of `k` with a 2-second gap
  (sessions of ~7 rows; the SESSION window aggregation, which holds its rows); `window_join`:
  the TUMBLE 10-second windows of the input joined with themselves on `id` (the window
  join, which holds both inputs); `interval_join`: the input joined with itself on `k`
  within the 100 ms before each row (~1.1 partners a row; the interval join, which holds
  both inputs). BATCH only, not in the default --jobs: `--jobs
  window_topn,window_dedup,session,window_join,interval_join --engines batch,batch-spill,duckdb`.

Engines: `streaming` and `batch` (streamsql's two modes, default settings), `batch-spill`
(BATCH with `taskmanager.memory.managed.size` = --spill-memory and `io.tmp.dirs` under
--data-dir: what spilling costs in time and saves in memory), `duckdb` (one thread).

Every measurement runs in a fresh child process. Wall and CPU seconds are the job's (from
submitting the query to the last result batch consumed, interpreter start-up and imports
excluded); peak RSS is the child's whole high-water mark. Each figure is the median of
--runs runs, and the ratio compares the wall time to DuckDB's. The answers are checked:
each run reduces its result to a fingerprint (row count and weighted column sums) and all
engines of a job must agree, else the table says MISMATCH.

Compare figures from the same machine only, and note its load average (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

KEYS = 10_000
VALUES = 1_000
EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00 UTC

JOBS: dict[str, dict[str, str]] = {
    "filter": {
        "input": "uniform",
        "flink": "SELECT id, k + 1 AS k1, v * 2 AS v2 FROM src WHERE v < 500",
        "duckdb": "SELECT id, k + 1 AS k1, v * 2 AS v2 FROM src WHERE v < 500",
        "updating_key": "",
    },
    "window": {
        "input": "uniform",
        "flink": (
            "SELECT window_start, k, COUNT(*) AS cnt, SUM(v) AS total "
            "FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
            "GROUP BY window_start, window_end, k"
        ),
        "duckdb": (
            "SELECT time_bucket(INTERVAL 10 SECOND, ts) AS window_start, k, COUNT(*) AS cnt, "
            "CAST(SUM(v) AS INTEGER) AS total FROM src GROUP BY ALL"
        ),
        "updating_key": "",
    },
    "distinct": {
        "input": "uniform",
        "flink": "SELECT k, COUNT(DISTINCT v) AS dc FROM src GROUP BY k",
        "duckdb": "SELECT k, COUNT(DISTINCT v) AS dc FROM src GROUP BY k",
        "updating_key": "k",
    },
}
JOBS["window_degenerate"] = {**JOBS["window"], "input": "degenerate"}
JOBS["group_many"] = {
    "input": "uniform",
    "flink": "SELECT id / 4 AS g, COUNT(*) AS cnt, SUM(v) AS total, MAX(k) AS mk FROM src GROUP BY id / 4",
    "duckdb": (
        "SELECT id // 4 AS g, COUNT(*) AS cnt, CAST(SUM(v) AS INTEGER) AS total, MAX(k) AS mk FROM src GROUP BY ALL"
    ),
    "updating_key": "g",
}
JOBS["sort"] = {
    "input": "uniform",
    "flink": "SELECT id, k, v FROM src ORDER BY v, k",
    "duckdb": "SELECT id, k, v FROM src ORDER BY v, k",
    "updating_key": "",
}
JOBS["join"] = {
    "input": "uniform",
    "flink": "SELECT a.id, a.v, b.k FROM src AS a JOIN src AS b ON a.id = b.id",
    "duckdb": "SELECT a.id, a.v, b.k FROM src AS a JOIN src AS b ON a.id = b.id",
    "updating_key": "",
}
JOBS["over"] = {
    "input": "uniform",
    "flink": (
        "SELECT id, k, SUM(v) OVER w AS s, COUNT(*) OVER w AS c FROM src "
        "WINDOW w AS (PARTITION BY k ORDER BY id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)"
    ),
    "duckdb": (
        "SELECT id, k, CAST(SUM(v) OVER w AS INTEGER) AS s, COUNT(*) OVER w AS c FROM src "
        "WINDOW w AS (PARTITION BY k ORDER BY id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)"
    ),
    "updating_key": "",
}
JOBS["topn"] = {
    "input": "uniform",
    "flink": (
        "SELECT id, k, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn "
        "FROM src) WHERE rn <= 3"
    ),
    "duckdb": (
        "SELECT id, k, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn "
        "FROM src) WHERE rn <= 3"
    ),
    "updating_key": "",
}
TUMBLE_10S = "TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
JOBS["window_topn"] = {
    "input": "uniform",
    "flink": (
        "SELECT window_start, id, k, v FROM (SELECT window_start, id, k, v, ROW_NUMBER() OVER ("
        f"PARTITION BY window_start, window_end, k ORDER BY v DESC, id) AS rn FROM {TUMBLE_10S}) WHERE rn <= 3"
    ),
    "duckdb": (
        "SELECT window_start, id, k, v FROM (SELECT time_bucket(INTERVAL 10 SECOND, ts) AS window_start, id, k, v, "
        "ROW_NUMBER() OVER (PARTITION BY time_bucket(INTERVAL 10 SECOND, ts), k ORDER BY v DESC, id) AS rn "
        "FROM src) WHERE rn <= 3"
    ),
    "updating_key": "",
}
JOBS["window_dedup"] = {
    "input": "uniform",
    "flink": (
        "SELECT window_start, id, k, v FROM (SELECT window_start, id, k, v, ROW_NUMBER() OVER ("
        f"PARTITION BY window_start, window_end, k ORDER BY ts) AS rn FROM {TUMBLE_10S}) WHERE rn = 1"
    ),
    "duckdb": (
        "SELECT window_start, id, k, v FROM (SELECT time_bucket(INTERVAL 10 SECOND, ts) AS window_start, id, k, v, "
        "ROW_NUMBER() OVER (PARTITION BY time_bucket(INTERVAL 10 SECOND, ts), k ORDER BY ts, id) AS rn "
        "FROM src) WHERE rn = 1"
    ),
    "updating_key": "",
}
JOBS["session"] = {
    "input": "uniform",
    "flink": (
        "SELECT k, window_start, window_end, COUNT(*) AS cnt, SUM(v) AS total FROM TABLE(SESSION(TABLE src "
        "PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end"
    ),
    # a session starts where a key's row comes more than the gap after its previous one
    "duckdb": (
        "WITH a AS (SELECT k, v, ts, CASE WHEN ts - LAG(ts) OVER (PARTITION BY k ORDER BY ts) <= INTERVAL 2 SECOND "
        "THEN 0 ELSE 1 END AS s FROM src), b AS (SELECT k, v, ts, SUM(s) OVER (PARTITION BY k ORDER BY ts "
        "ROWS UNBOUNDED PRECEDING) AS sid FROM a) SELECT k, MIN(ts) AS window_start, "
        "MAX(ts) + INTERVAL 2 SECOND AS window_end, COUNT(*) AS cnt, CAST(SUM(v) AS INTEGER) AS total "
        "FROM b GROUP BY k, sid"
    ),
    "updating_key": "",
}
JOBS["window_join"] = {
    "input": "uniform",
    "flink": (
        f"SELECT a.id, a.v, b.k, a.window_start FROM {TUMBLE_10S} AS a JOIN {TUMBLE_10S} AS b "
        "ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.id = b.id"
    ),
    "duckdb": (
        "SELECT a.id, a.v, b.k, a.window_start FROM (SELECT *, time_bucket(INTERVAL 10 SECOND, ts) AS window_start "
        "FROM src) AS a JOIN (SELECT *, time_bucket(INTERVAL 10 SECOND, ts) AS window_start FROM src) AS b "
        "ON a.window_start = b.window_start AND a.id = b.id"
    ),
    "updating_key": "",
}
JOBS["interval_join"] = {
    "input": "uniform",
    "flink": (
        "SELECT a.id, b.id AS bid, b.v FROM src AS a JOIN src AS b ON a.k = b.k "
        "AND b.ts BETWEEN a.ts - INTERVAL '0.1' SECOND AND a.ts"
    ),
    "duckdb": (
        "SELECT a.id, b.id AS bid, b.v FROM src AS a JOIN src AS b ON a.k = b.k "
        "AND b.ts BETWEEN a.ts - INTERVAL 100 MILLISECOND AND a.ts"
    ),
    "updating_key": "",
}
DEFAULT_JOBS = ("filter", "window", "distinct", "window_degenerate")
# The child of a `batch-spill` measurement reads the bound and the spill directory here.
SPILL_ENV = "STREAMSQL_LIMIT_SPILL"

# `ts - 1 ms`, not `ts`: with `WATERMARK FOR ts AS ts` a row sharing a window's last millisecond
# with the row before it is late whenever a watermark equal to that millisecond was emitted
# between them. Flink does that after every record with `pipeline.auto-watermark-interval` = 0,
# and with its default 200 ms wherever the eager emission (current > last emitted + 200 ms)
# falls on it: here at 00:00:39.999 (emissions every 201 ms from the first row), dropping 9 rows
# of one window. A 1 ms bound keeps every row of this ordered input on time under any emission
# schedule, so the streaming answer equals batch's and DuckDB's; it costs nothing.
DDL = """
CREATE TABLE src (
  id BIGINT,
  k INT,
  v INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')
"""


# ---------------------------------------------------------------------------- input


def data_path(data_dir: Path, shape: str, rows: int) -> Path:
    return data_dir / f"{shape}-{rows}.parquet"


def generate(path: Path, shape: str, rows: int) -> None:
    """Write the input once, in 1M-row chunks (bounded memory whatever --rows is)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(21)
    schema = pa.schema([("id", pa.int64()), ("k", pa.int32()), ("v", pa.int32()), ("ts", pa.timestamp("ms"))])
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema) as writer:
        for start in range(0, rows, 1_000_000):
            ids = np.arange(start, min(rows, start + 1_000_000), dtype=np.int64)
            if shape == "uniform":
                k = rng.integers(0, KEYS, len(ids), dtype=np.int32)
                ts = EPOCH_MS + ids // 10
            else:
                k = (ids % KEYS).astype(np.int32)
                ts = EPOCH_MS + ids
            v = rng.integers(0, VALUES, len(ids), dtype=np.int32)
            table = pa.table([ids, k, v, pa.array(ts, pa.int64()).cast(pa.timestamp("ms"))], schema=schema)
            writer.write_table(table, row_group_size=1_000_000)
    tmp.rename(path)


# ---------------------------------------------------------------------------- answers


class Fingerprint:
    """Row count and weighted sums of a result, accumulated batch by batch.

    An updating result (streaming COUNT DISTINCT) is folded first: for each key the last
    insert/update-after row wins, a delete removes the key."""

    def __init__(self, updating_key: str) -> None:
        self.updating_key = updating_key
        self.rows = 0
        self.sums: dict[str, int] = {}
        self.latest: Any = None
        self.pending: list[Any] = []  # filtered change rows not folded into `latest` yet
        self.pending_rows = 0

    def add(self, batch: Any) -> None:
        import pyarrow as pa

        if self.updating_key:
            self._fold(batch)
            return
        self._accumulate(pa.Table.from_batches([batch]))

    def _accumulate(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = table.select([n for n in table.column_names if not n.startswith("__")])
        self.rows += table.num_rows
        weight = None
        for name in table.column_names:
            col = table[name]
            if pa.types.is_timestamp(col.type):
                # Milliseconds since the input's epoch: weighted sums stay inside int64.
                col = pc.subtract(col.cast(pa.timestamp("ms")).cast(pa.int64()), EPOCH_MS)
            col = col.cast(pa.int64())
            if weight is None:
                weight = pc.add(pc.bit_wise_and(col, 1023), 1)
            s = pc.sum(col).as_py() or 0
            ws = pc.sum(pc.multiply(col, weight)).as_py() or 0
            self.sums[name] = self.sums.get(name, 0) + s
            self.sums[name + "*w"] = self.sums.get(name + "*w", 0) + ws

    def _fold(self, batch: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = pa.Table.from_batches([batch])
        if "__op" in table.column_names:
            op = table["__op"]
            # +I/+U carry the new row; -U is always followed by its +U; -D removes a key.
            keep = pc.is_in(op, pa.array([0, 2], op.type))
            deletes = pc.equal(op, 3)
        else:
            keep, deletes = None, None
        if deletes is not None and pc.any(deletes).as_py():
            # A delete of a key (not followed by a later insert) removes it; rare here.
            self._flush()
            rows = table.to_pylist()
            for r in rows:
                self._fold_row(r)
            return
        if keep is not None:
            table = table.filter(keep)
        self.pending.append(table.select([n for n in table.column_names if not n.startswith("__")]))
        self.pending_rows += self.pending[-1].num_rows
        if self.pending_rows >= 1 << 18:  # fold a few batches at once: the harness's own cost stays small
            self._flush()

    def _flush(self) -> None:
        """Fold the pending rows into `latest` (the last row of each key wins)."""
        import pyarrow as pa

        if not self.pending:
            return
        tables = ([self.latest] if self.latest is not None else []) + self.pending
        self.pending, self.pending_rows = [], 0
        table = pa.concat_tables(tables)
        values = [n for n in table.column_names if n != self.updating_key]
        last = table.group_by(self.updating_key, use_threads=False).aggregate([(n, "last") for n in values])
        self.latest = last.rename_columns([n.removesuffix("_last") for n in last.column_names]).select(
            table.column_names
        )

    def _fold_row(self, r: dict[str, Any]) -> None:
        import pyarrow as pa

        data = {k: v for k, v in r.items() if not k.startswith("__")}
        current = {} if self.latest is None else {row[self.updating_key]: row for row in self.latest.to_pylist()}
        if r.get("__op") in (0, 2):
            current[data[self.updating_key]] = data
        else:
            current.pop(data[self.updating_key], None)
        self.latest = pa.Table.from_pylist(list(current.values())) if current else None

    def result(self) -> dict[str, int]:
        self._flush()
        if self.updating_key and self.latest is not None:
            self._accumulate(self.latest.sort_by(self.updating_key))
        return {"rows": self.rows, **self.sums}


# ---------------------------------------------------------------------------- children


def child(engine: str, job: str, path: str) -> None:
    """Run one job once in this process; print one JSON line with the figures."""
    spec = JOBS[job]
    fp = Fingerprint(spec["updating_key"] if engine == "streaming" else "")
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute("SET threads = 1")
        wall0, cpu0 = time.perf_counter(), time.process_time()
        con.execute(f"CREATE VIEW src AS SELECT * FROM read_parquet('{path}')")
        reader = con.execute(spec["duckdb"]).to_arrow_reader(65536)
        for batch in reader:
            fp.add(batch)
    else:
        from streamsql import EnvironmentSettings, TableEnvironment

        settings = (
            EnvironmentSettings.in_streaming_mode() if engine == "streaming" else EnvironmentSettings.in_batch_mode()
        )
        env = TableEnvironment.create(settings)
        env.execute_sql("SET 'table.local-time-zone' = 'UTC'")
        if engine == "batch-spill":
            memory, tmp = os.environ[SPILL_ENV].split(",", 1)
            env.execute_sql(f"SET 'taskmanager.memory.managed.size' = '{memory}'")
            env.execute_sql(f"SET 'io.tmp.dirs' = '{tmp}'")
        env.execute_sql(DDL.format(path=path))
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for batch in env.execute_sql(spec["flink"]).batches():
            fp.add(batch)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(json.dumps({"wall": wall, "cpu": cpu, "answer": fp.result()}))


def measure(engine: str, job: str, path: Path, spill: str = "") -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, job, str(path)]
    env = {**os.environ, SPILL_ENV: spill}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"{engine} {job} failed:\n{err[-3000:]}")
    figures = json.loads(out.strip().splitlines()[-1])
    figures["rss_mb"] = usage.ru_maxrss / 1024
    return figures


# ---------------------------------------------------------------------------- driver


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", default="10000000", help="row count, or a comma-separated list of them")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--jobs", default=",".join(DEFAULT_JOBS), help=f"some of: {', '.join(JOBS)}")
    p.add_argument("--spill-memory", default="16mb", help="taskmanager.memory.managed.size of batch-spill")
    p.add_argument("--engines", default="streaming,batch,duckdb")
    p.add_argument("--data-dir", default="/tmp/streamsql-limit")
    p.add_argument("--child", nargs=3, metavar=("ENGINE", "JOB", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(*args.child)
        return

    jobs = args.jobs.split(",")
    engines = args.engines.split(",")
    counts = [int(r.replace("_", "")) for r in args.rows.split(",")]
    sweep: dict[tuple[str, str, int], dict[str, Any]] = {}
    for rows in counts:
        sweep.update(run_table(rows, jobs, engines, args.runs, Path(args.data_dir), args.spill_memory))
    if len(counts) > 1:
        print_sweep(sweep, jobs, engines, counts)


def run_table(
    rows: int, jobs: list[str], engines: list[str], runs: int, data_dir: Path, spill_memory: str = "16mb"
) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Measure every job and engine over `rows` rows; print their table."""
    for shape in sorted({JOBS[j]["input"] for j in jobs}):
        generate(data_path(data_dir, shape, rows), shape, rows)
    load_before = os.getloadavg()
    print(f"rows={rows:,} runs={runs} (median) load average before: {load_before[0]:.2f}")
    header = f"{'job':<18} {'engine':<12} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12} {'x DuckDB':>9}  answer"
    print(header)
    print("-" * len(header))
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for job in jobs:
        path = data_path(data_dir, JOBS[job]["input"], rows)
        results: dict[str, dict[str, Any]] = {}
        for engine in engines:
            spill = f"{spill_memory},{data_dir / 'spill'}"
            measured = [measure(engine, job, path, spill) for _ in range(runs)]
            results[engine] = {
                "wall": statistics.median(r["wall"] for r in measured),
                "cpu": statistics.median(r["cpu"] for r in measured),
                "rss_mb": statistics.median(r["rss_mb"] for r in measured),
                "answer": measured[0]["answer"],
                "stable": all(r["answer"] == measured[0]["answer"] for r in measured),
            }
            out[(job, engine, rows)] = results[engine]
        reference = results.get("duckdb", next(iter(results.values())))
        for engine, r in results.items():
            ratio = f"{r['wall'] / results['duckdb']['wall']:.1f}x" if "duckdb" in results else "-"
            agree = "ok" if r["answer"] == reference["answer"] and r["stable"] else "MISMATCH"
            print(f"{job:<18} {engine:<12} {r['wall']:>8.2f} {r['cpu']:>8.2f} {r['rss_mb']:>12.0f} {ratio:>9}  {agree}")
            if agree != "ok":
                print(f"    {engine}: {r['answer']}\n    reference: {reference['answer']}")
        sys.stdout.flush()
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    return out


def print_sweep(
    sweep: dict[tuple[str, str, int], dict[str, Any]], jobs: list[str], engines: list[str], counts: list[int]
) -> None:
    """Peak RSS and wall time per job, engine and row count, side by side."""
    print("memory sweep: peak RSS MB / wall s (cpu s)")
    cells = [f"{c:,} rows" for c in counts]
    print(f"{'job':<18} {'engine':<12} " + " ".join(f"{c:>22}" for c in cells))
    for job in jobs:
        for engine in engines:
            row = []
            for c in counts:
                r = sweep[(job, engine, c)]
                row.append(f"{r['rss_mb']:.0f} / {r['wall']:.2f} ({r['cpu']:.2f})")
            print(f"{job:<18} {engine:<12} " + " ".join(f"{x:>22}" for x in row))


if __name__ == "__main__":
    main()
