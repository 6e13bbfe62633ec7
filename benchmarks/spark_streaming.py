"""STREAMING on Spark: streamsql's operators inside Structured Streaming vs the local runner
vs Spark's native stateful operators, for a group aggregate, a join and a window aggregate.

    python benchmarks/spark_streaming.py [--rows 200000] [--keys 10000] [--master local[2]]

Input: CSV files of (k, v, ts) rows (ts increasing, 1 ms apart) in a temporary directory,
read as a bounded stream (Spark: `trigger(availableNow)`), results into a blackhole sink.
Prints one table row per (query, engine): rows, wall seconds (the job, the SparkSession
already started), rows per second. "spark native" is plain PySpark on the same files:
`groupBy().agg()` in update mode, a stream-stream inner join, `window()` in append mode
(Spark's semantics, not Flink's: no retractions); it is the figure the processor is
measured against. Compare figures from the same machine only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

DDL = """
CREATE TABLE t (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{dir}/t', 'format' = 'csv');
CREATE TABLE d (k INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '{dir}/d', 'format' = 'csv');
CREATE TABLE agg_out (k INT, c BIGINT, s INT) WITH ('connector' = 'blackhole');
CREATE TABLE join_out (k INT, v INT, name STRING) WITH ('connector' = 'blackhole');
CREATE TABLE win_out (k INT, c BIGINT, ws TIMESTAMP(3)) WITH ('connector' = 'blackhole');
"""

QUERIES = {
    "group aggregate": "INSERT INTO agg_out SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k",
    "join": "INSERT INTO join_out SELECT t.k, t.v, d.name FROM t JOIN d ON t.k = d.k",
    "window aggregate": (
        "INSERT INTO win_out SELECT k, COUNT(*), window_start FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
        "INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end"
    ),
}


def write_input(base: Path, rows: int, keys: int) -> None:
    (base / "t").mkdir(parents=True)
    (base / "d").mkdir(parents=True)
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(7)
    start = 1_700_000_000_000
    table = pa.table(
        {
            "k": rng.integers(0, keys, rows, dtype=np.int32),
            "v": rng.integers(0, 1000, rows, dtype=np.int32),
            "ts": pa.array(start + np.arange(rows, dtype=np.int64), pa.timestamp("ms")).cast(pa.string()),
        }
    )
    opts = pacsv.WriteOptions(include_header=False, quoting_style="none")
    pacsv.write_csv(table, str(base / "t" / "part-0.csv"), opts)
    dim = pa.table({"k": np.arange(keys, dtype=np.int32), "name": [f"n{i}" for i in range(keys)]})
    pacsv.write_csv(dim, str(base / "d" / "part-0.csv"), opts)


def run_streamsql(base: Path, query: str, runner: str, master: str) -> float:
    from streamsql import TableEnvironment

    env = TableEnvironment.create(
        {
            "execution.runtime-mode": "streaming",
            "execution.target": runner,
            "spark.master": master,
            "spark.sql.shuffle.partitions": "2",
        }
    )
    for stmt in env.parse(DDL.format(dir=base)):
        env.execute_statement(stmt).wait()
    start = time.perf_counter()
    env.execute_sql(query).wait()
    return time.perf_counter() - start


def run_native(base: Path, name: str, master: str) -> float:
    from pyspark.sql import functions as F  # noqa: N812

    from runtime.executor.spark.session import get_session

    spark = get_session({"spark.master": master, "spark.sql.shuffle.partitions": "2"})
    schema = "k INT, v INT, ts TIMESTAMP"
    t = spark.readStream.schema(schema).csv(str(base / "t"))
    mode = "append"
    if name == "group aggregate":
        df = t.groupBy("k").agg(F.count(F.lit(1)), F.sum("v"))
        mode = "update"
    elif name == "join":
        d = spark.readStream.schema("k INT, name STRING").csv(str(base / "d"))
        df = t.join(d, "k")
    else:
        df = t.withWatermark("ts", "1 second").groupBy(F.window("ts", "1 minute"), "k").agg(F.count(F.lit(1)))
    with tempfile.TemporaryDirectory() as ckpt:
        start = time.perf_counter()
        q = (
            df.writeStream.format("noop")
            .outputMode(mode)
            .option("checkpointLocation", ckpt)
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()
        return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        write_input(base, args.rows, args.keys)
        run_streamsql(base, QUERIES["group aggregate"], "spark", args.master)  # warm-up: session, workers
        print(f"rows={args.rows} keys={args.keys} master={args.master}")
        print(f"| {'query':<17} | {'engine':<24} | {'seconds':>8} | {'rows/s':>10} |")
        print(f"|{'-' * 19}|{'-' * 26}|{'-' * 10}|{'-' * 12}|")
        for name, query in QUERIES.items():
            for engine in ("local", "spark processor", "spark native"):
                if engine == "spark native":
                    secs = run_native(base, name, args.master)
                else:
                    secs = run_streamsql(base, query, "local" if engine == "local" else "spark", args.master)
                print(f"| {name:<17} | {engine:<24} | {secs:8.2f} | {args.rows / secs:10.0f} |", flush=True)


if __name__ == "__main__":
    main()
