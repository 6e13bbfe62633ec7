"""Skewed COUNT(DISTINCT) per key at parallelism 2, split-distinct on vs off.

    python benchmarks/skew_distinct.py [--rows 2000000] [--parallelism 2] [--repeat 3]

One key (k = 0) carries half of the rows; the other half spreads over --keys cold keys.
``SELECT k, COUNT(DISTINCT v) FROM t GROUP BY k`` runs in STREAMING mode into a blackhole
sink with ``table.optimizer.distinct-agg.split.enabled`` off and on. Off, every row of the
hot key goes to the one subtask that owns key 0, so that worker does half of all the work
while the other idles; on, the partial aggregate is keyed by (k, MOD(HASH_CODE(v),
bucket-num)) and spreads the hot key over both workers (docs/parallel.md, Flink's
"split distinct aggregation" tuning).

Each run is a fresh process (so no state, cache or warm-up leaks between runs) and the
configurations alternate (off, on, off, on, ...) so background load hits both alike. Printed
per run: wall seconds and CPU seconds (the process and its forked workers); then the median
of each and the speed-up off/on. Before timing, both configurations run on a small input into
a collecting sink and must give the same table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "nexmark"))
from flink_worker import process_tree  # noqa: E402  (stdlib-only /proc helpers)

CLK_TCK = os.sysconf("SC_CLK_TCK")

SPLIT = "table.optimizer.distinct-agg.split.enabled"


def ddl(rows: int, keys: int, values: int) -> str:
    """datagen rows; view t: k = 0 for even ids (50% of the rows), else one of ``keys`` cold keys."""
    return f"""
CREATE TABLE src (id BIGINT, r INT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}', 'rows-per-second' = '1000000000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '{rows - 1}',
  'fields.r.min' = '0', 'fields.r.max' = '{values - 1}'
);
CREATE VIEW t AS
SELECT CASE WHEN id % 2 = 0 THEN 0 ELSE CAST((id / 2) % {keys} AS INT) + 1 END AS k, r AS v FROM src;
"""


QUERY = "SELECT k, COUNT(DISTINCT v) AS cnt FROM t GROUP BY k"


BUCKETS = 1024  # --buckets: table.optimizer.distinct-agg.split.bucket-num (Flink's default 1024)


def environment(split: bool, parallelism: int, mini_batch: bool) -> Any:
    from streamsql import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("parallelism.default", str(parallelism))
    config.set(SPLIT, "true" if split else "false")
    config.set("table.optimizer.distinct-agg.split.bucket-num", str(BUCKETS))
    if mini_batch:
        config.set("table.exec.mini-batch.enabled", "true")
        config.set("table.exec.mini-batch.allow-latency", "1 s")
        config.set("table.exec.mini-batch.size", "10000")
    return env


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class WorkerCpu(threading.Thread):
    """Samples the CPU of each process of this job (this one and its forked workers): the
    busiest process's CPU is the job's critical path, i.e. about the wall time it would take
    on dedicated cores. Wall time on a shared, overloaded machine mostly measures waiting for
    a core, so the critical path shows the load balance split-distinct buys. Cheap: the pids
    are found by a /proc scan every 0.5 s, and only their stat files are read every 20 ms."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.cpu: dict[int, float] = {}
        self.pids: list[int] = [os.getpid()]
        self.stop = threading.Event()

    def sample(self, rescan: bool = True) -> None:
        if rescan:
            self.pids = process_tree(os.getpid())
        for pid in self.pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            self.cpu[pid] = max(self.cpu.get(pid, 0.0), (int(fields[11]) + int(fields[12])) / CLK_TCK)

    def run(self) -> None:
        tick = 0
        while not self.stop.wait(0.02):
            tick += 1
            self.sample(rescan=tick % 25 == 1)


def timed_run(rows: int, keys: int, values: int, split: bool, parallelism: int, mini_batch: bool) -> dict[str, Any]:
    """One timed INSERT INTO blackhole (call in a fresh process)."""
    env = environment(split, parallelism, mini_batch)
    env.execute_sql(ddl(rows, keys, values))
    env.execute_sql("CREATE TABLE sink (k INT, cnt BIGINT) WITH ('connector' = 'blackhole')")
    plan = env.explain_sql(f"INSERT INTO sink {QUERY}")
    sampler = WorkerCpu()
    sampler.sample()
    me0 = sampler.cpu[os.getpid()]
    sampler.start()
    wall0, cpu0 = time.perf_counter(), _cpu()
    env.execute_sql(f"INSERT INTO sink {QUERY}").wait()
    wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
    sampler.stop.set()
    sampler.join()
    sampler.sample()
    main_cpu = sampler.cpu.pop(os.getpid()) - me0
    return {
        "wall": wall,
        "cpu": cpu,
        "critical_cpu": max([main_cpu, *sampler.cpu.values()]),
        "main_cpu": main_cpu,
        "worker_cpu": sorted(sampler.cpu.values(), reverse=True),
        "split_in_plan": "HASH_CODE" in plan.upper(),
    }


def final_table(rows: int, keys: int, values: int, split: bool, parallelism: int, mini_batch: bool) -> dict[int, int]:
    """The query's final table {k: count} (changelog applied), for the equality check."""
    env = environment(split, parallelism, mini_batch)
    env.execute_sql(ddl(rows, keys, values))
    table: dict[int, int] = {}
    with env.execute_sql(QUERY).collect() as result:
        for r in result:
            kind = r.get_row_kind().short_string()
            if kind in ("+I", "+U"):
                table[int(r[0])] = int(r[1])
            elif kind == "-D":
                table.pop(int(r[0]), None)
    return table


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Median wall, total CPU and critical-path CPU of the off and on runs, and off / on."""
    out: dict[str, float] = {}
    for metric in ("wall", "cpu", "critical_cpu"):
        for label in ("off", "on"):
            mine = [r[metric] for r in runs if r["split"] == (label == "on") and metric in r]
            out[f"{metric}_{label}"] = statistics.median(mine) if mine else float("nan")
        out[f"speedup_{metric}"] = out[f"{metric}_off"] / out[f"{metric}_on"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--keys", type=int, default=1000, help="cold keys sharing the other 50%% of the rows")
    p.add_argument("--values", type=int, default=1_000_000, help="distinct values v is drawn from")
    p.add_argument("--parallelism", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="runs per configuration (alternating)")
    p.add_argument("--mini-batch", action="store_true", help="also enable table.exec.mini-batch (1 s / 10,000)")
    p.add_argument("--buckets", type=int, default=1024, help="table.optimizer.distinct-agg.split.bucket-num")
    p.add_argument("--worker", choices=("off", "on"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    global BUCKETS
    BUCKETS = args.buckets
    if args.worker:
        r = timed_run(args.rows, args.keys, args.values, args.worker == "on", args.parallelism, args.mini_batch)
        print("RESULT " + json.dumps(r), flush=True)
        return 0

    small = (20_000, 50, 5_000)
    off = final_table(*small, split=False, parallelism=args.parallelism, mini_batch=args.mini_batch)
    on = final_table(*small, split=True, parallelism=args.parallelism, mini_batch=args.mini_batch)
    same = "same" if off == on else "DIFFERENT (bug)"
    print(f"check on 20,000 rows: final tables with split off and on are {same} ({len(off)} keys)")
    print(
        f"COUNT(DISTINCT v) GROUP BY k, {args.rows:,} rows, key 0 = 50% of the rows, {args.keys:,} cold keys, "
        f"parallelism {args.parallelism}, mini-batch {'on' if args.mini_batch else 'off'}, {BUCKETS} buckets"
    )
    print(
        f"| {'split-distinct':<14} | {'run':>3} | {'wall s':>7} | {'cpu s':>7} | {'rows/s':>10} | critical-path CPU s |"
    )
    print(f"|{'-' * 16}|{'-' * 5}|{'-' * 9}|{'-' * 9}|{'-' * 12}|{'-' * 21}|")
    runs: list[dict[str, Any]] = []
    for i in range(args.repeat):
        for label in ("off", "on"):
            cmd = [sys.executable, __file__, "--worker", label, "--rows", str(args.rows), "--keys", str(args.keys)]
            cmd += ["--values", str(args.values), "--parallelism", str(args.parallelism), "--buckets", str(BUCKETS)]
            cmd += ["--mini-batch"] if args.mini_batch else []
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if not lines:
                tail = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
                print(f"| {label:<14} | {i + 1:>3} | error: {tail[:160]}")
                runs.append({"split": label == "on", "error": tail})
                continue
            r = json.loads(lines[0][len("RESULT ") :]) | {"split": label == "on"}
            runs.append(r)
            note = "" if r["split_in_plan"] == (label == "on") else " (plan does not match the setting!)"
            procs = f"main {r['main_cpu']:.2f}, workers " + " + ".join(f"{c:.2f}" for c in r["worker_cpu"])
            print(
                f"| {label:<14} | {i + 1:>3} | {r['wall']:>7.2f} | {r['cpu']:>7.2f} | {args.rows / r['wall']:>10,.0f} "
                f"| {r['critical_cpu']:.2f} ({procs}) |" + note,
                flush=True,
            )
    s = summary(runs)
    for metric, what in (("wall", "wall"), ("critical_cpu", "critical-path CPU"), ("cpu", "total CPU")):
        print(
            f"median {what}: off {s[metric + '_off']:.2f} s, on {s[metric + '_on']:.2f} s -> "
            f"off/on = {s['speedup_' + metric]:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
