"""datagen → TUMBLE window COUNT/SUM by a 10,000-value key → blackhole, in both modes.

    python benchmarks/window_agg.py [--rows 10000000] [--modes streaming,batch]

Prints one table row per mode: rows, wall seconds, rows per second. Run it on an idle
machine and compare figures from the same machine only.
"""

from __future__ import annotations

import argparse
import time

from streamsql import EnvironmentSettings, TableEnvironment

DDL = """
CREATE TABLE src (
  id BIGINT,
  k INT,
  v INT,
  ts AS TO_TIMESTAMP_LTZ(id, 3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '{rows}',
  'rows-per-second' = '1000000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}',
  'fields.k.min' = '0', 'fields.k.max' = '9999',
  'fields.v.min' = '0', 'fields.v.max' = '1000'
);
CREATE TABLE sink (window_start TIMESTAMP(3), k INT, cnt BIGINT, total INT) WITH ('connector' = 'blackhole');
"""

JOB = """
INSERT INTO sink
SELECT window_start, k, COUNT(*) AS cnt, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, k
"""


def run(mode: str, rows: int, parallelism: int = 1) -> float:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(f"SET 'parallelism.default' = '{parallelism}'")
    env.execute_sql(DDL.format(rows=rows))
    start = time.perf_counter()
    env.execute_sql(JOB).wait()
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--modes", default="streaming,batch")
    p.add_argument("--parallelism", type=int, default=1, help="worker processes (docs/parallel.md)")
    args = p.parse_args()
    print(f"{'mode':<10} {'rows':>12} {'seconds':>9} {'rows/s':>12}")
    for mode in args.modes.split(","):
        secs = run(mode, args.rows, args.parallelism)
        print(f"{mode:<10} {args.rows:>12,} {secs:>9.2f} {args.rows / secs:>12,.0f}")


if __name__ == "__main__":
    main()
