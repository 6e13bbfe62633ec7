"""ChangelogNormalize throughput (the operator alone, no planner or connector).

    python benchmarks/changelog_normalize.py [--rows 1000000] [--keys 100000] [--batch 10000]

An upsert changelog of `--rows` rows over `--keys` keys (10% deletes, the rest upserts with
random values) in batches of `--batch` rows is fed to the operator; prints input rows,
output rows (+I/-U/+U/-D) and input rows/s. Compare figures from the same machine only.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, with_system_columns
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.changelog_normalize import CHANGELOG_NORMALIZE, ChangelogNormalizeParams
from runtime.types import BIGINT, INT, Field


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=10_000)
    args = ap.parse_args()
    schema = (Field("id", INT(False)), Field("v", BIGINT()))
    node = Node(0, CHANGELOG_NORMALIZE.name, (1,), schema, ChangelogNormalizeParams((0,)))
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    rng = np.random.default_rng(1)
    batches = []
    for _ in range(0, args.rows, args.batch):
        ids = rng.integers(0, args.keys, args.batch).astype(np.int32)
        values = rng.integers(0, 1000, args.batch)
        kinds = np.where(rng.random(args.batch) < 0.1, DELETE, INSERT).astype(np.int8)
        data = pa.RecordBatch.from_arrays([pa.array(ids), pa.array(values)], names=["id", "v"])
        batches.append(with_system_columns(data, kinds))
    out, produced = Output(), 0
    start = time.perf_counter()
    for b in batches:
        op.process_batch(b, 0, out)
        produced += sum(x.num_rows for x in out.drain()[0])
    seconds = time.perf_counter() - start
    rows = sum(b.num_rows for b in batches)
    print("| rows in | keys | batch | rows out | seconds | rows in/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {rows:,} | {args.keys:,} | {args.batch:,} | {produced:,} | {seconds:.2f} | {rows / seconds:,.0f} |")


if __name__ == "__main__":
    main()
