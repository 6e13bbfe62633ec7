"""SinkMaterializer throughput (the operator alone, no planner or connector).

    python benchmarks/sink_materializer.py [--rows 1000000] [--keys 100000] [--ids 4] [--batch 10000]

A changelog of `--rows` rows over `--keys` sink keys, each key backed by up to `--ids` input
rows (its upsert key): every row is a +U of one (key, id) with a random value, or (20%) a
-D of a (key, id) written before, in batches of `--batch` rows. Prints input rows, output
rows (+I/+U/-D), the entries kept at the end and input rows/s. Compare figures from the
same machine only.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, UPDATE_AFTER, with_system_columns
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.sink_materializer import SINK_MATERIALIZER, SinkMaterializerParams
from runtime.types import BIGINT, INT, Field


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--ids", type=int, default=4)
    ap.add_argument("--batch", type=int, default=10_000)
    args = ap.parse_args()
    schema = (Field("k", INT(False)), Field("id", INT()), Field("v", BIGINT()))
    node = Node(0, SINK_MATERIALIZER.name, (1,), schema, SinkMaterializerParams((0,), (1,)))
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    rng = np.random.default_rng(1)
    batches = []
    for _ in range(0, args.rows, args.batch):
        keys = rng.integers(0, args.keys, args.batch).astype(np.int32)
        ids = rng.integers(0, args.ids, args.batch).astype(np.int32)
        values = rng.integers(0, 1000, args.batch)
        kinds = np.where(rng.random(args.batch) < 0.2, DELETE, UPDATE_AFTER).astype(np.int8)
        data = pa.RecordBatch.from_arrays([pa.array(keys), pa.array(ids), pa.array(values)], names=["k", "id", "v"])
        batches.append(with_system_columns(data, kinds))
    out, produced = Output(), 0
    start = time.perf_counter()
    for b in batches:
        op.process_batch(b, 0, out)
        produced += sum(x.num_rows for x in out.drain()[0])
    seconds = time.perf_counter() - start
    rows = sum(b.num_rows for b in batches)
    kept = op.state_size()["rows"]  # type: ignore[attr-defined]
    print("| rows in | keys | ids per key | batch | rows out | entries kept | seconds | rows in/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {rows:,} | {args.keys:,} | {args.ids} | {args.batch:,} | {produced:,} | {kept:,} | {seconds:.2f} "
        f"| {rows / seconds:,.0f} |"
    )


if __name__ == "__main__":
    main()
