"""datagen x datagen → interval join on an expression key (`CAST(x.k AS INT) = y.k`) and
on a column key, → blackhole, STREAMING.

    python benchmarks/interval_join.py [--rows 300000] [--parallelism 1] [--queries expression,column]

Each source has `--rows` rows, one per millisecond of event time, keys in 0..9,999; the
join bounds are ±1 s, so every row has ~2,000 rows of the other side in range and ~0.2 of
them share its key. A join whose key is an expression used to compare all ~2,000 (the
equality was a residual predicate, on one subtask); now it is a hash key like a column
(planner/rules/time_joins.py), so both queries should take about the same time. Prints
one table row per query: rows, output rows, wall seconds, input rows per second. Compare
figures from the same machine only.
"""

from __future__ import annotations

import argparse
import time

from streamsql import EnvironmentSettings, TableEnvironment

DDL = """
CREATE TABLE x (
  id BIGINT, k BIGINT, v INT,
  ts AS TO_TIMESTAMP_LTZ(id, 3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}', 'rows-per-second' = '1000000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}',
  'fields.k.min' = '0', 'fields.k.max' = '9999', 'fields.v.min' = '0', 'fields.v.max' = '1000'
);
CREATE TABLE y (
  id BIGINT, k INT, w INT,
  ts AS TO_TIMESTAMP_LTZ(id, 3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}', 'rows-per-second' = '1000000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}',
  'fields.k.min' = '0', 'fields.k.max' = '9999', 'fields.w.min' = '0', 'fields.w.max' = '1000'
);
CREATE VIEW xi AS SELECT id, CAST(k AS INT) AS k, v, ts FROM x;
"""

BOUNDS = "x.ts BETWEEN y.ts - INTERVAL '1' SECOND AND y.ts + INTERVAL '1' SECOND"
QUERIES = {
    # x.k is BIGINT, y.k INT: the key is the expression CAST(x.k AS INT)
    "expression": f"SELECT x.v, y.w FROM x JOIN y ON CAST(x.k AS INT) = y.k AND {BOUNDS}",
    # the same key as a column of the view xi (computed in the source's Calc)
    "column": f"SELECT x.v, y.w FROM xi AS x JOIN y ON x.k = y.k AND {BOUNDS}",
}


def run(query: str, rows: int, parallelism: int) -> tuple[float, int]:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(f"SET 'parallelism.default' = '{parallelism}'")
    for statement in DDL.format(rows=rows).split(";"):
        if statement.strip():
            env.execute_sql(statement)
    start = time.perf_counter()
    with env.execute_sql(f"SELECT COUNT(*) FROM ({QUERIES[query]})").collect() as it:
        out = [r[0] for r in it]
    return time.perf_counter() - start, int(out[-1]) if out else 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=300_000)
    p.add_argument("--parallelism", type=int, default=1, help="worker processes (docs/parallel.md)")
    p.add_argument("--queries", default="expression,column")
    args = p.parse_args()
    run("column", 1000, 1)  # warm-up: the first job pays for imports and caches
    print(f"{'key':<11} {'rows':>9} {'out rows':>9} {'seconds':>9} {'rows/s':>10}")
    for q in args.queries.split(","):
        secs, out = run(q, args.rows, args.parallelism)
        print(f"{q:<11} {args.rows:>9,} {out:>9,} {secs:>9.2f} {2 * args.rows / secs:>10,.0f}", flush=True)


if __name__ == "__main__":
    main()
