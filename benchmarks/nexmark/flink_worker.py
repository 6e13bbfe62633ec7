"""Run a list of Nexmark queries on Apache Flink (PyFlink) in ONE process and JVM.

    <flink venv>/bin/python flink_worker.py SPEC.json

Started by ``run.py --compare flink`` with the interpreter of ``--flink-python``: this file
imports only the standard library and pyflink (never streamsql), so it runs in a separate
virtualenv that has Apache Flink and nothing of this project.

Why one process: a PyFlink TableEnvironment starts a JVM (tens of seconds cold on a loaded
machine). Starting it once and running every query in it keeps that start-up out of the
figures; each query still gets a fresh TableEnvironment (its own catalog) and its own job.

SPEC.json: ``{"mode", "parallelism", "timeout", "warmup": [statements...],
"queries": [{"name", "statements": [...], "count": bool}]}``; the last statement of a query
is its SELECT, the others are its DDL. Per query the worker prints one line
``RESULT {"name": ..., "wall": s, "cpu": s, "maxrss_kb": kB, "rows": n | absent}`` or
``RESULT {"name": ..., "error": "..."}``:

* wall: from submitting ``INSERT INTO <blackhole> <query>`` to the job's end;
* cpu: user+system CPU of this process and all its descendants (the JVM does the work, and
  it is a child of this python process) from /proc/<pid>/stat, before and after;
* maxrss_kb: the high-water RSS of the process tree during the query (/proc/<pid>/status
  VmHWM, reset through /proc/<pid>/clear_refs before the query where the kernel allows);
* rows: with ``count``, a second untimed job ``SELECT COUNT(*) FROM (<query>)`` gives the
  final table's row count, to check the result against streamsql's.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

SET = re.compile(r"^(?:\s*--[^\n]*\n)*\s*SET\s+'([^']+)'\s*=\s*'([^']*)'\s*$", re.IGNORECASE)
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _children() -> dict[int, list[int]]:
    """ppid -> pids of every live process (one pass over /proc)."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants (the PyFlink gateway JVM is one of them)."""
    kids = _children()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def tree_cpu_seconds(root: int) -> float:
    """utime + stime of ``root`` and its live descendants, in seconds (all threads included)."""
    total = 0
    for pid in process_tree(root):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue  # exited between the listing and the read
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5): utime, stime
    return total / CLK_TCK


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_hwm_kb(root: int) -> int:
    """Sum over the tree of each process's RSS high-water mark (VmHWM)."""
    return sum(_status_kb(pid, "VmHWM") for pid in process_tree(root))


def reset_hwm(root: int) -> None:
    """Reset VmHWM to the current RSS (``5`` > clear_refs, Linux >= 4.0) so the next reading is
    the query's own peak; silently kept as the lifetime peak where that is not allowed."""
    for pid in process_tree(root):
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        except OSError:
            pass


def _first_line(e: BaseException) -> str:
    """The Java exception's own first line, not py4j's "An error occurred while calling o12"."""
    lines = [ln.strip(" :") for ln in f"{type(e).__name__}: {e}".splitlines() if ln.strip(" :")]
    java = [ln for ln in lines if "Exception" in ln.split(":")[0] and "calling o" not in ln]
    text = java[0] if java else (lines[0] if lines else type(e).__name__)
    return text[:300]


def _env(mode: str, parallelism: int) -> Any:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", str(parallelism))
    env.get_config().set("table.local-time-zone", "UTC")
    return env


def _wait(result: Any, timeout: float) -> None:
    """Wait for the job; on timeout cancel it (so the next query gets the slots) and raise."""
    try:
        result.wait(int(timeout * 1000))
    except BaseException:
        client = result.get_job_client()
        if client is not None:
            try:
                client.cancel().result()
            except BaseException:  # noqa: BLE001 - the job may already be gone
                pass
        raise


def _final_count(env: Any, select: str, timeout: float) -> int:
    """Final row count of ``select``: the last value of an (updating) ``COUNT(*)``. Mini-batch
    folds the count's per-row updates (one per input row otherwise, each crossing py4j)."""
    config = env.get_config()
    config.set("table.exec.mini-batch.enabled", "true")
    config.set("table.exec.mini-batch.allow-latency", "1 s")
    config.set("table.exec.mini-batch.size", "100000")
    result = env.execute_sql(f"SELECT COUNT(*) FROM (\n{select}\n)")
    deadline = time.monotonic() + timeout
    count = 0
    with result.collect() as rows:
        for row in rows:
            if row.get_row_kind().value in (0, 2):  # +I, +U (str() gives "+I", not the name)
                count = int(row[0])
            if time.monotonic() > deadline:
                raise TimeoutError(f"COUNT(*) check: timeout after {timeout:.0f} s")
    return count


def run_query(q: dict[str, Any], mode: str, parallelism: int, timeout: float) -> dict[str, Any]:
    """One query: DDL, then the timed INSERT INTO a blackhole sink, then the optional count."""
    env = _env(mode, parallelism)
    *setup, select = q["statements"]
    for stmt in setup:
        m = SET.match(stmt)
        if m:  # SET is a SQL-client statement; executeSql rejects it
            env.get_config().set(m.group(1), m.group(2))
        else:
            env.execute_sql(stmt)
    schema = env.sql_query(select).get_schema()
    cols = ", ".join(f"`{n}` {t}" for n, t in zip(schema.get_field_names(), schema.get_field_data_types(), strict=True))
    env.execute_sql(f"CREATE TABLE nexmark_sink ({cols}) WITH ('connector' = 'blackhole')")
    me = os.getpid()
    reset_hwm(me)
    cpu0, wall0 = tree_cpu_seconds(me), time.perf_counter()
    _wait(env.execute_sql(f"INSERT INTO nexmark_sink {select}"), timeout)
    wall, cpu = time.perf_counter() - wall0, tree_cpu_seconds(me) - cpu0
    out: dict[str, Any] = {"name": q["name"], "wall": wall, "cpu": cpu, "maxrss_kb": tree_hwm_kb(me)}
    if q.get("count"):
        try:
            out["rows"] = _final_count(env, select, timeout)
        except BaseException as e:  # noqa: BLE001 - the timing stands; the check failed
            out["rows_error"] = _first_line(e)
    return out


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text())
    mode, parallelism, timeout = spec["mode"], int(spec["parallelism"]), float(spec["timeout"])
    t0 = time.perf_counter()
    warm = {"name": "warm-up", "statements": spec["warmup"], "count": False}
    # Twice: the first pays JVM start-up, class loading and JIT; the second is the fixed cost
    # of one (almost empty) job in a warm JVM, printed so readers can see Flink's per-job overhead.
    for label in ("startup", "job-overhead"):
        try:
            r = run_query(warm, mode, parallelism, timeout)
        except BaseException as e:  # noqa: BLE001 - reported, the run continues
            r = {"error": _first_line(e)}
        r["name"] = label
        if label == "startup":
            r["wall"] = time.perf_counter() - t0
        print("RESULT " + json.dumps(r), flush=True)
    for q in spec["queries"]:
        try:
            r = run_query(q, mode, parallelism, timeout)
        except BaseException as e:  # noqa: BLE001 - a failing query is a row, not the end
            r = {"name": q["name"], "error": _first_line(e)}
        print("RESULT " + json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
