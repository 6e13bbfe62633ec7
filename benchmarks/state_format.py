"""State file format cost: the versioned MessagePack format (runtime/checkpoint/format.py)
against Python's pickle, on real operator snapshots.

    python benchmarks/state_format.py [--keys 1000000] [--repeat 3]

Runs a bounded job (datagen with N distinct keys into a GROUP BY / a MAX, a TopN and a
tumbling window), takes every stateful operator's snapshot object (what the operator
keeps: key index, value arrays, accumulators, buffers) and times writing it as a state
file and reading it back from the file (the format as restore reads it: the file into a
buffer of its own, `CheckpointStorage.read_writable`; pickle: `open().read()` and
`pickle.loads`), with the format and with pickle (protocol 5), plus the sizes.
Best of `--repeat`, in CPU milliseconds of this process (a shared machine's load changes
wall time far more than CPU time). Prints a table; compare figures from the same machine only.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import tempfile
import time
from typing import Any

from runtime.checkpoint import format as state_format
from runtime.checkpoint.storage import CheckpointStorage
from runtime.executor.local import LocalExecutor
from streamsql import TableEnvironment

SRC = """
CREATE TABLE src (k BIGINT, v INT, s STRING, ts AS TO_TIMESTAMP_LTZ(k, 3),
  WATERMARK FOR ts AS ts) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{keys}',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '{keys}',
  'fields.v.min' = '0', 'fields.v.max' = '1000', 'fields.s.length' = '8'
)
"""
QUERIES = {
    "group agg COUNT/SUM": "SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k",
    "group agg MAX(s) (objects)": "SELECT k, MAX(s) FROM src GROUP BY k",
    "Top-1 per key": (
        "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM src) WHERE rn = 1"
    ),
}


def _snapshots(env: TableEnvironment, sql: str) -> list[Any]:
    """The snapshot objects of the stateful operators after the job consumed its input."""
    (stmt,) = env.parse(sql)
    graph = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the benchmark drives the executor
    graph = dataclasses.replace(graph, config={**(graph.config or {}), "execution.runtime-mode": "streaming"})
    ex = LocalExecutor(graph)
    for _ in ex.run():
        pass
    out = []
    for op in ex.operators.values():
        snap = op.snapshot_state(1)
        if isinstance(snap, bytes):  # operators return their state encoded: the object is inside
            snap = state_format.unpack(snap)
        if snap is not None and op.node.operator != "TableSourceScan":
            out.append(snap)
    return out


def _timed(fn: Any) -> tuple[float, Any]:
    t0 = time.process_time()
    result = fn()
    return time.process_time() - t0, result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    env = TableEnvironment.create({"execution.runtime-mode": "streaming"})
    env.execute_sql(SRC.format(keys=args.keys))
    print(f"state files of operators over {args.keys:,} keys (best of {args.repeat})")
    head = f"{'query':<28} {'format':<8} {'write CPU ms':>12} {'read CPU ms':>11} {'size MB':>8}"
    print(head)
    print("-" * len(head))
    tmp = tempfile.mkdtemp(prefix="streamsql-state-format-")
    storage = CheckpointStorage(f"file://{tmp}")
    for name, sql in QUERIES.items():
        snaps = _snapshots(env, sql)

        def read_pickle() -> Any:
            with open(os.path.join(tmp, "pickle"), "rb") as f:
                return pickle.loads(f.read())

        formats = {
            "pickle": (lambda snaps=snaps: pickle.dumps(snaps, protocol=5), read_pickle),
            "msgpack": (
                lambda snaps=snaps: state_format.encode(snaps),
                lambda: state_format.decode(storage.read_writable("msgpack")),
            ),
        }
        best: dict[str, list[float]] = {f: [float("inf"), float("inf"), 0.0] for f in formats}
        for _ in range(args.repeat):  # interleaved: a busy machine slows both alike
            for fmt, (write, read) in formats.items():
                w, data = _timed(write)
                with open(os.path.join(tmp, fmt), "wb") as f:
                    f.write(data)
                r, _ = _timed(read)
                b = best[fmt]
                b[0], b[1], b[2] = min(b[0], w), min(b[1], r), len(data)
        for fmt, (w, r, size) in best.items():
            print(f"{name:<28} {fmt:<8} {w * 1000:>12.0f} {r * 1000:>11.0f} {size / 1e6:>8.1f}")


if __name__ == "__main__":
    main()
