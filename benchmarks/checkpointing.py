"""Checkpointing cost: throughput off vs on, and checkpoint duration / size for many keys.

    python benchmarks/checkpointing.py [--rows 3000000] [--keys 1000000,10000000]

Part 1: datagen → GROUP BY k COUNT/SUM (100,000 keys) → blackhole, with checkpointing
off and on (`execution.checkpointing.interval` = 1 s), for `hashmap` and `rocksdb`.
Part 2: a job whose group aggregation ends with N distinct keys (datagen sequence key);
the final checkpoint of the bounded job is read back: its size and its duration (the
upload's, from `_metadata`, plus the synchronous snapshot measured around it).
Prints tables; compare figures from the same machine only. Full vs incremental rocksdb
checkpoints (first checkpoint, checkpoint after 1% of the keys changed) and throughput
with `execution.checkpointing.incremental`: benchmarks/checkpointing_incremental.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from streamsql import TableEnvironment

SRC = """
CREATE TABLE src (k BIGINT, v INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}', 'rows-per-second' = '1000000000',
  {key},
  'fields.v.min' = '0', 'fields.v.max' = '1000'
);
CREATE TABLE sink (k BIGINT, c BIGINT, s INT) WITH ('connector' = 'blackhole');
"""
RANDOM_KEY = "'fields.k.min' = '0', 'fields.k.max' = '{keys}'"
SEQ_KEY = "'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '{keys}'"
JOB = "INSERT INTO sink SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k"


def _env(backend: str, chk: Path | None, interval: str | None) -> TableEnvironment:
    conf = {"state.backend.type": backend, "state.backend.rocksdb.localdir": str(Path(tempfile.gettempdir()) / "rk")}
    if chk is not None:
        conf["execution.checkpointing.dir"] = f"file://{chk}"
    if interval:
        conf["execution.checkpointing.interval"] = interval
    return TableEnvironment.create(conf)


def throughput(backend: str, rows: int, keys: int, checkpoints: bool) -> tuple[float, int]:
    chk = Path(tempfile.mkdtemp(prefix="chkbench-"))
    try:
        env = _env(backend, chk, "1 s" if checkpoints else None)
        env.execute_sql(SRC.format(rows=rows, key=RANDOM_KEY.format(keys=keys - 1)))
        start = time.perf_counter()
        env.execute_sql(JOB).wait()
        secs = time.perf_counter() - start
        ids = [int(d.name[4:]) for j in chk.iterdir() for d in j.iterdir() if d.name.startswith("chk-")]
        n = max(ids, default=0)  # checkpoints taken (only the newest is retained)
        return secs, n
    finally:
        shutil.rmtree(chk, ignore_errors=True)


def many_keys(backend: str, keys: int) -> dict[str, float]:
    chk = Path(tempfile.mkdtemp(prefix="chkbench-"))
    try:
        # an interval far longer than the job: the only checkpoint is the final one
        env = _env(backend, chk, "1 h")
        env.execute_sql(SRC.format(rows=keys, key=SEQ_KEY.format(keys=keys)))
        start = time.perf_counter()
        env.execute_sql(JOB).wait()
        total = time.perf_counter() - start
        (job,) = list(chk.iterdir())
        (c,) = sorted(job.iterdir())
        meta = json.loads((c / "_metadata").read_text())
        size = sum(f.stat().st_size for f in c.iterdir())
        agg = [o for o in meta["operators"] if o["operator"] == "GroupAggregate"][0]
        return {
            "job_s": total,
            "upload_ms": float(meta.get("duration_ms") or 0),
            "bytes": float(size),
            "agg_bytes": float(agg["bytes"]),
            "keys": float(agg.get("keys") or 0),
        }
    finally:
        shutil.rmtree(chk, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rows", type=int, default=3_000_000)
    p.add_argument("--group-keys", type=int, default=100_000)
    p.add_argument("--keys", default="1000000,10000000")
    p.add_argument("--backends", default="hashmap,rocksdb")
    args = p.parse_args()
    backends = args.backends.split(",")
    throughput(backends[0], 50_000, 1000, False)  # warm-up: imports, first-run caches
    print(f"throughput: {args.rows:,} rows, GROUP BY over {args.group_keys:,} keys, checkpoint interval 1 s")
    print(f"{'backend':<9} {'checkpoints':<12} {'seconds':>8} {'rows/s':>11} {'#chk':>5}")
    for backend in backends:
        for on in (False, True):
            secs, n = throughput(backend, args.rows, args.group_keys, on)
            print(f"{backend:<9} {'on (1 s)' if on else 'off':<12} {secs:>8.2f} {args.rows / secs:>11,.0f} {n:>5}")
    print()
    print("checkpoint of a group aggregation with N keys (the final checkpoint of the bounded job)")
    print(f"{'backend':<9} {'keys':>11} {'job s':>7} {'upload ms':>10} {'size MB':>8} {'bytes/key':>9}")
    for keys in [int(k) for k in args.keys.split(",") if k]:
        for backend in backends:
            r = many_keys(backend, keys)
            print(
                f"{backend:<9} {keys:>11,} {r['job_s']:>7.1f} {r['upload_ms']:>10,.0f} "
                f"{r['bytes'] / 1e6:>8.1f} {r['bytes'] / keys:>9.1f}"
            )


if __name__ == "__main__":
    main()
