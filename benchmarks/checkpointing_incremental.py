"""Incremental vs full RocksDB checkpoints: duration and size, and throughput.

    python benchmarks/checkpointing_incremental.py [--keys 1000000,10000000] [--rows 1000000]

Part 1 (throughput): datagen → GROUP BY k COUNT/SUM (100,000 keys) → blackhole with
checkpointing off and on (interval 1 s) for hashmap, rocksdb full and rocksdb incremental
(benchmarks/checkpointing.py's job).

Part 2 (checkpoint cost): a GroupAggregate operator (COUNT/SUM per key, planned from SQL)
is fed N distinct keys; checkpoint 1 is taken (the executor's own `_snapshot`: flush of
dirty values + snapshot = "sync", the upload to file:// storage = "async"); then 1% of
the keys get a new row and checkpoint 2 is taken. hashmap = the canonical pickle each
time; rocksdb full = RocksDB checkpoint, every file uploaded; rocksdb incremental =
RocksDB checkpoint, only new SST files uploaded.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from runtime.executor.local import LocalExecutor
from streamsql import TableEnvironment

# the job of benchmarks/checkpointing.py
SRC = """
CREATE TABLE src (k BIGINT, v INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}', 'rows-per-second' = '1000000000',
  'fields.k.min' = '0', 'fields.k.max' = '{max_key}', 'fields.v.min' = '0', 'fields.v.max' = '1000'
);
CREATE TABLE sink (k BIGINT, c BIGINT, s INT) WITH ('connector' = 'blackhole');
"""
JOB = "INSERT INTO sink SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k"


def _conf(backend: str, incremental: bool, chk: Path, local: Path) -> dict[str, str]:
    return {
        "state.backend.type": backend,
        "state.backend.rocksdb.localdir": str(local),
        "execution.checkpointing.dir": f"file://{chk}",
        "execution.checkpointing.incremental": "true" if incremental else "false",
    }


def throughput(backend: str, incremental: bool, rows: int, keys: int, on: bool) -> tuple[float, int]:
    chk = Path(tempfile.mkdtemp(prefix="chkbench-"))
    try:
        conf = _conf(backend, incremental, chk, chk / "local")
        if on:
            conf["execution.checkpointing.interval"] = "1 s"
        env = TableEnvironment.create(conf)
        env.execute_sql(SRC.format(rows=rows, max_key=keys - 1))
        start = time.perf_counter()
        env.execute_sql(JOB).wait()
        secs = time.perf_counter() - start
        ids = [
            int(d.name[4:])
            for j in chk.iterdir()
            if j.name != "local"
            for d in j.iterdir()
            if d.name.startswith("chk-")
        ]
        return secs, max(ids, default=0)
    finally:
        shutil.rmtree(chk, ignore_errors=True)


def _checkpoint(ex: LocalExecutor) -> dict[str, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    p = ex.checkpoints.snapshot("checkpoint")  # the benchmark drives the executor's barrier itself
    sync, sync_cpu = time.perf_counter() - t0, time.process_time() - c0
    p.upload.result()
    total = time.perf_counter() - t0
    ex.checkpoints.complete(ex.coordinator.completed(wait=True))
    return {"sync_s": sync, "sync_cpu_s": sync_cpu, "async_s": total - sync, "bytes": float(ex.coordinator.last_size)}


def checkpoint_cost(keys: int, backend: str, incremental: bool, batch: int = 100_000) -> list[dict[str, float]]:
    root = Path(tempfile.mkdtemp(prefix="chkbench-"))
    try:
        env = TableEnvironment.create({})
        env.execute_sql("CREATE TABLE src (k BIGINT, v INT) WITH ('connector' = 'datagen')")
        (stmt,) = env.parse("SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k")
        graph = env._planner().plan_query(stmt).graph  # noqa: SLF001
        graph = dataclasses.replace(
            graph, config={**(graph.config or {}), **_conf(backend, incremental, root / "chk", root / "local")}
        )
        ex = LocalExecutor(graph)
        ex.task.build()
        ex.task.open()
        agg_id = next(n.id for n in graph.nodes if n.operator == "GroupAggregate")
        agg = ex.operators[agg_id]
        agg.input_changelog_modes = ["I"]
        from runtime.operators.base import Output

        def feed(k: np.ndarray) -> None:
            for i in range(0, len(k), batch):
                part = k[i : i + batch]
                b = pa.record_batch([pa.array(part), pa.array(np.ones(len(part), dtype=np.int32))], names=["k", "v"])
                agg.process_batch(b, 0, Output())

        t0 = time.perf_counter()
        feed(np.arange(keys, dtype=np.int64))
        load_s = time.perf_counter() - t0
        first = _checkpoint(ex)
        first["load_s"] = load_s
        rng = np.random.default_rng(7)
        feed(rng.choice(keys, size=max(1, keys // 100), replace=False).astype(np.int64))
        second = _checkpoint(ex)
        ex.coordinator.close()
        for op in ex.operators.values():
            dispose = getattr(op.ctx.state, "dispose", None)
            if dispose is not None:
                dispose()
        return [first, second]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--group-keys", type=int, default=100_000)
    p.add_argument("--keys", default="1000000")
    p.add_argument("--skip-throughput", action="store_true")
    args = p.parse_args()
    if not args.skip_throughput:
        print(f"throughput: {args.rows:,} rows, GROUP BY over {args.group_keys:,} keys, checkpoint interval 1 s")
        print(f"{'backend':<22} {'checkpoints':<12} {'seconds':>8} {'rows/s':>11} {'#chk':>5}")
        for backend, inc in (("hashmap", False), ("rocksdb", False), ("rocksdb", True)):
            name = f"{backend} {'incremental' if inc else 'full'}" if backend == "rocksdb" else backend
            for on in (False, True) if not inc else (True,):
                secs, n = throughput(backend, inc, args.rows, args.group_keys, on)
                print(
                    f"{name:<22} {'on (1 s)' if on else 'off':<12} {secs:>8.2f} {args.rows / secs:>11,.0f} {n:>5}",
                    flush=True,
                )
        print()
    print("GroupAggregate with N keys: checkpoint 1, then checkpoint 2 after 1% of the keys changed")
    print(
        f"{'keys':>11} {'mode':<12} {'load s':>7} {'chk':>4} {'sync s':>7} {'sync cpu':>8} {'async s':>8} {'size MB':>8}"
    )
    for keys in [int(k) for k in args.keys.split(",") if k]:
        for backend, inc in (("hashmap", False), ("rocksdb", False), ("rocksdb", True)):
            mode = "hashmap" if backend == "hashmap" else ("rocksdb incr" if inc else "rocksdb full")
            r = checkpoint_cost(keys, backend, inc)
            for i, c in enumerate(r, 1):
                print(
                    f"{keys:>11,} {mode:<12} {r[0]['load_s']:>7.1f} {i:>4} "
                    f"{c['sync_s']:>7.2f} {c['sync_cpu_s']:>8.2f} {c['async_s']:>8.2f} {c['bytes'] / 1e6:>8.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
