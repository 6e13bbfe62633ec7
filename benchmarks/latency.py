"""End-to-end latency of a keyed aggregation at a fixed input rate, by mini-batch setting.

    python benchmarks/latency.py                      # 20,000 rows/s, 10 s per setting
    python benchmarks/latency.py --rate 50000 --seconds 20 --keys 10000

A 'datagen' source paced at `rows-per-second` (a `seq` field numbering the rows) feeds

    SELECT MOD(seq, keys) AS k, COUNT(*), SUM(v), MAX(seq) FROM src GROUP BY MOD(seq, keys)

The paced source makes row i available at t0 + i / rate, t0 being its first read (the
script reads t0 from the source reader): that is the row's ingestion time. The query's
changelog is read with `TableResult.collect()`, which records when each +I/+U row
arrives. Key k holds the rows seq = k, k + keys, ..., so an update of k with MAX(seq) = m
reflects exactly the rows of k up to m: a row's latency is the arrival time of the first
update reflecting it minus its ingestion time (PROCTIME() would not do: it is evaluated
after the MiniBatchAssigner, i.e. when a mini-batch is released). Runs once per setting:
mini-batch off (latency 0), and `table.exec.mini-batch.allow-latency` = 100 ms and 1 s
(the planner then also splits the aggregate into local/global phases, as Flink's AUTO
strategy does). Prints p50 / p90 / p99 / max over all input rows, the number of updates
received and the rows/s the source achieved.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SETTINGS: list[tuple[str, dict[str, str]]] = [
    ("mini-batch off (0)", {"table.exec.mini-batch.enabled": "false"}),
    (
        "mini-batch 100 ms",
        {
            "table.exec.mini-batch.enabled": "true",
            "table.exec.mini-batch.allow-latency": "100 ms",
            "table.exec.mini-batch.size": "100000",
        },
    ),
    (
        "mini-batch 1 s",
        {
            "table.exec.mini-batch.enabled": "true",
            "table.exec.mini-batch.allow-latency": "1 s",
            "table.exec.mini-batch.size": "1000000",
        },
    ),
]


def run_setting(config: dict[str, str], rate: int, seconds: float, keys: int) -> dict[str, Any]:
    """Run the query for `seconds` at `rate` rows/s; latencies (ms) of every update received."""
    from runtime.connectors.datagen import DatagenReader
    from streamsql import EnvironmentSettings, TableEnvironment
    from streamsql.row import RowKind

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.local-time-zone", "UTC")
    for k, v in config.items():
        env.get_config().set(k, v)
    rows = int(rate * seconds)
    env.execute_sql(
        f"""CREATE TABLE src (v INT, seq BIGINT) WITH (
            'connector' = 'datagen', 'rows-per-second' = '{rate}',
            'fields.seq.kind' = 'sequence', 'fields.seq.start' = '0', 'fields.seq.end' = '{rows - 1}',
            'fields.v.min' = '0', 'fields.v.max' = '100'
        )"""
    )
    starts: list[float] = []
    original = DatagenReader._allowed

    def allowed(self: Any, n: int) -> int:  # records the pacing origin t0 (time.monotonic)
        out = original(self, n)
        if not starts and self._t0 is not None:
            starts.append(self._t0)
        return out

    DatagenReader._allowed = allowed  # type: ignore[method-assign]
    arrivals: list[float] = []
    newest: list[int] = []
    t0 = time.time()
    try:
        result = env.execute_sql(
            f"SELECT MOD(seq, {keys}) AS k, COUNT(*) AS c, SUM(v) AS s, MAX(seq) AS newest FROM src GROUP BY MOD(seq, {keys})"
        )
        with result.collect() as it:
            for row in it:
                arrived = time.monotonic()
                if row.get_row_kind() in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
                    continue  # -U rows carry the previous value
                arrivals.append(arrived)
                newest.append(int(row[3]))
    finally:
        DatagenReader._allowed = original  # type: ignore[method-assign]
    wall = time.time() - t0
    return {
        "latencies": row_latencies(np.array(arrivals), np.array(newest, dtype=np.int64), keys, starts[0], rate),
        "updates": len(arrivals),
        "rows": rows,
        "span": (max(arrivals) - starts[0]) if arrivals else wall,
    }


def row_latencies(arrival: np.ndarray, newest: np.ndarray, keys: int, t0: float, rate: int) -> np.ndarray:
    """Latency (ms) of every input row: the arrival of the first update of its key whose
    MAX(seq) reaches it, minus its ingestion time t0 + seq / rate. Key k holds the rows
    seq = k, k + keys, ...; an update of k with MAX(seq) = m newly reflects those in
    (previous m of k, m]. Vectorized over updates (numpy repeat / arange)."""
    if len(newest) == 0:
        return np.zeros(0)
    key = newest % keys
    order = np.lexsort((arrival, key))
    key, newest, arrival = key[order], newest[order], arrival[order]
    prev = np.empty_like(newest)
    prev[1:] = newest[:-1]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    prev[first] = key[first] - keys  # nothing of the key reflected before its first update
    count = np.maximum((newest - prev) // keys, 0)  # rows newly reflected by each update
    upd = np.repeat(np.arange(len(newest)), count)
    within = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    seq = prev[upd] + keys * (within + 1)
    return (arrival[upd] - (t0 + seq / rate)) * 1000.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", type=int, default=20_000, help="source rows per second (default 20,000)")
    p.add_argument("--seconds", type=float, default=10.0, help="input duration per setting (default 10 s)")
    p.add_argument("--keys", type=int, default=1_000, help="distinct grouping keys (default 1,000)")
    args = p.parse_args(argv)
    print(
        f"Keyed aggregation latency: {args.rate:,} rows/s for {args.seconds:g} s per setting, {args.keys:,} keys\n"
        "latency of an input row = arrival at collect() of the first update reflecting it - its ingestion time"
    )
    header = (
        f"| {'setting':<20} | {'updates':>9} | {'p50 ms':>8} | {'p90 ms':>8} | {'p99 ms':>8} | {'max ms':>8} "
        f"| {'source rows/s':>13} |"
    )
    print(header)
    print("|" + "|".join("-" * len(c) for c in header.split("|")[1:-1]) + "|")
    for name, config in SETTINGS:
        r = run_setting(config, args.rate, args.seconds, args.keys)
        lat = r["latencies"]
        if len(lat) == 0:
            print(f"| {name:<20} | {0:>9,} | {'-':>8} | {'-':>8} | {'-':>8} | {'-':>8} | {'-':>13} |")
            continue
        p50, p90, p99 = np.percentile(lat, [50, 90, 99])
        print(
            f"| {name:<20} | {r['updates']:>9,} | {p50:>8.1f} | {p90:>8.1f} | {p99:>8.1f} | {lat.max():>8.1f} "
            f"| {r['rows'] / r['span']:>13,.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
