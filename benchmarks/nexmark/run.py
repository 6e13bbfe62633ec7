"""Nexmark q0-q23 on the in-engine 'nexmark' connector, each query into a blackhole sink.

    python benchmarks/nexmark/run.py                          # q0-q23, 500,000 events, streaming
    python benchmarks/nexmark/run.py --queries q0,q5 --events 2000000 --mode batch
    python benchmarks/nexmark/run.py --compare flink          # also on PyFlink, if installed

The queries are the oracle's (prefix.sql + qN.sql) with the filesystem source replaced by
`'connector' = 'nexmark'` ('events.num' = --events, a fixed base time and seed). Each query
runs in its own process (so peak memory is the query's own, and a crash or a --timeout
does not stop the run) as `INSERT INTO` a blackhole table whose columns are the query's
planned schema. The first row, "generator", only drains the source (all columns).

Per query: events, wall seconds, events/s, events/s per core (events / CPU seconds of the
process: what one core sustains), peak memory (ru_maxrss). A query that fails prints the
first line of its error and the run continues. Compare figures from the same machine only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ALL = [f"q{i}" for i in range(24)]
BASE_TIME = "2015-07-15 00:00:00"


def nexmark_options(events: int, rate: int) -> str:
    return (
        f"'connector' = 'nexmark', 'events.num' = '{events}', 'first-event.rate' = '{rate}', "
        f"'base-time' = '{BASE_TIME}', 'seed' = '0'"
    )


def prefix(with_clause: str) -> str:
    """prefix.sql with the datagen table's WITH clause replaced."""
    return re.sub(r"\) WITH \((.|\n)*?\);", f") WITH ({with_clause});", (HERE / "prefix.sql").read_text(), count=1)


def script(query: str, with_clause: str) -> str:
    """prefix.sql + qN.sql, the datagen table's WITH clause replaced."""
    return prefix(with_clause) + "\n;\n" + (HERE / f"{query}.sql").read_text()


def nexmark_source(events: int, rate: int) -> Any:
    """The connector's Source for the prefix's `datagen` table (all columns)."""
    from runtime.connectors.base import SourceContext, get_connector
    from streamsql import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(prefix(nexmark_options(events, rate)))
    schema = env.sql_query("SELECT event_type, person, auction, bid FROM datagen").get_schema()
    opts = dict(re.findall(r"'([^']+)' = '([^']*)'", nexmark_options(events, rate)))
    opts.pop("connector")
    return get_connector("nexmark").create_source(opts, tuple(schema), None, SourceContext("BATCH"))


def _type_text(dtype: Any) -> str:
    return re.sub(r"\s*\*(ROWTIME|PROCTIME)\*", "", str(dtype))


def sink_ddl(name: str, fields: Any, connector: str = "blackhole") -> str:
    """CREATE TABLE for a sink with the query's columns (duplicate names get a suffix)."""
    seen: dict[str, int] = {}
    cols = []
    for f in fields:
        n = f.name
        if n.lower() in seen:
            seen[n.lower()] += 1
            n = f"{n}_{seen[n.lower()]}"
        seen.setdefault(n.lower(), 0)
        cols.append(f"`{n}` {_type_text(f.type)}")
    return f"CREATE TABLE {name} ({', '.join(cols)}) WITH ('connector' = '{connector}')"


# ---------------------------------------------------------------------- one query (worker)


def _measure(fn: Any) -> dict[str, Any]:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {"wall": wall, "cpu": cpu, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def run_generator(events: int, rate: int) -> dict[str, Any]:
    """Drain the nexmark source alone (every column), as the executor would poll it."""
    reader = nexmark_source(events, rate).create_reader("0")  # builds the string pools

    def drain() -> None:
        while reader.read(8192) is not None:
            pass

    return _measure(drain)


def run_query(query: str, events: int, rate: int, mode: str) -> dict[str, Any]:
    from streamsql import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    os.chdir(HERE)  # q13's side input path is relative to the query folder
    side = Path(tempfile.gettempdir()) / "streamsql-nexmark-side_input.csv"
    if not side.exists():
        side.write_text("".join(f"{i},{i}\n" for i in range(10_000)))
    text = script(query, nexmark_options(events, rate)).replace("data/side_input.csv", str(side))
    *setup, last = env.parse(text)
    for stmt in setup:
        env.execute_statement(stmt).wait()
    fields = env.sql_query(last.sql).get_schema()
    env.execute_sql(sink_ddl(f"nexmark_{query}_sink", fields))
    insert = env.parse(f"INSERT INTO nexmark_{query}_sink\n{last.sql}")[0]
    return _measure(lambda: env.execute_statement(insert).wait())


def worker(args: argparse.Namespace) -> None:
    try:
        if args.worker == "generator":
            out = run_generator(args.events, args.rate)
        elif args.engine == "flink":
            out = run_flink(args.worker, args.events, args.rate, args.mode, args.data)
        else:
            out = run_query(args.worker, args.events, args.rate, args.mode)
    except BaseException as e:  # noqa: BLE001 - reported as the query's row
        text = f"{type(e).__name__}: {e}".strip().splitlines()
        out = {"error": text[0][:160] if text else type(e).__name__}
    print("RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------------- Flink (optional)


def flink_available() -> bool:
    try:
        import pyflink  # noqa: F401
    except ImportError:
        return False
    return True


def write_events_jsonl(events: int, rate: int, path: Path) -> None:
    """The connector's events as the filesystem/json rows the Flink prefix reads."""
    import pyarrow as pa
    import pyarrow.compute as pc

    reader = nexmark_source(events, rate).create_reader("0")
    with path.open("w") as fh:
        while (batch := reader.read(65536)) is not None:
            cols = {}
            for name in batch.schema.names:
                col = batch.column(name)
                if pa.types.is_struct(col.type):  # timestamps as Flink's JSON text
                    kids = [
                        pc.strftime(c, "%Y-%m-%d %H:%M:%S.%f").cast(pa.string()) if pa.types.is_timestamp(c.type) else c
                        for c in (col.field(i) for i in range(col.type.num_fields))
                    ]
                    col = pa.StructArray.from_arrays(kids, names=[f.name for f in col.type], mask=col.is_null())
                cols[name] = col
            for row in pa.RecordBatch.from_pydict(cols).to_pylist():
                fh.write(json.dumps(row) + "\n")


def run_flink(query: str, events: int, rate: int, mode: str, data: str) -> dict[str, Any]:
    from pyflink.table import EnvironmentSettings as FlinkSettings
    from pyflink.table import TableEnvironment as FlinkEnv

    settings = FlinkSettings.in_streaming_mode() if mode == "streaming" else FlinkSettings.in_batch_mode()
    env = FlinkEnv.create(settings)
    env.get_config().set("parallelism.default", "1")
    env.get_config().set("table.local-time-zone", "UTC")
    with_clause = (
        f"'connector' = 'filesystem', 'path' = '{data}', 'format' = 'json', 'json.fail-on-missing-field' = 'false'"
    )
    statements = [s for s in script(query, with_clause).split(";\n") if re.sub(r"--.*", "", s).strip()]
    *setup, last = statements
    for stmt in setup:
        env.execute_sql(stmt)
    fields = env.sql_query(last).get_schema()
    cols = ", ".join(f"`{n}` {t}" for n, t in zip(fields.get_field_names(), fields.get_field_data_types(), strict=True))
    env.execute_sql(f"CREATE TABLE nexmark_sink ({cols}) WITH ('connector' = 'blackhole')")
    return _measure(lambda: env.execute_sql(f"INSERT INTO nexmark_sink {last}").wait())


# ---------------------------------------------------------------------- driver


def run_one(name: str, args: argparse.Namespace, engine: str = "streamsql", data: str = "") -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", name, "--events", str(args.events), "--rate", str(args.rate)]
    cmd += ["--mode", args.mode, "--engine", engine, "--data", data]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {args.timeout:.0f} s"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    tail = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    return {"error": tail[:160]}


HEADER = (
    f"| {'query':<9} | {'events':>11} | {'wall s':>8} | {'events/s':>11} | {'events/s/core':>13} | {'peak MB':>8} |"
)


SEPARATOR = "|" + "|".join("-" * len(c) for c in HEADER.split("|")[1:-1]) + "|"


def row(name: str, events: int, r: dict[str, Any]) -> str:
    if "error" in r:
        return f"| {name:<9} | {events:>11,} | {'-':>8} | {'-':>11} | {'-':>13} | {'-':>8} | {r['error']}"
    eps = events / r["wall"] if r["wall"] > 0 else float("inf")
    per_core = events / r["cpu"] if r["cpu"] > 0 else float("inf")
    mb = r["maxrss_kb"] / 1024
    return f"| {name:<9} | {events:>11,} | {r['wall']:>8.2f} | {eps:>11,.0f} | {per_core:>13,.0f} | {mb:>8.0f} |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=500_000, help="events per query (default 500,000)")
    p.add_argument("--queries", default=",".join(ALL), help="comma-separated, e.g. q0,q5 (default q0-q23)")
    p.add_argument("--mode", choices=("streaming", "batch"), default="streaming")
    p.add_argument("--rate", type=int, default=10_000, help="'first-event.rate': events per second of event time")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per query before it is reported as failed")
    p.add_argument("--no-generator", action="store_true", help="skip the generator-only row")
    p.add_argument("--compare", choices=("flink",), help="also run the queries on PyFlink (if installed)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--engine", default="streamsql", help=argparse.SUPPRESS)
    p.add_argument("--data", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0

    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    unknown = [q for q in queries if not (HERE / f"{q}.sql").exists()]
    if unknown:
        p.error(f"unknown queries: {', '.join(unknown)}")
    print(
        f"Nexmark on streamsql: {args.events:,} events per query, {args.mode} mode, rate {args.rate:,}/s of event time"
    )
    print(HEADER)
    print(SEPARATOR)
    if not args.no_generator:
        print(row("generator", args.events, run_one("generator", args)), flush=True)
    for q in queries:
        print(row(q, args.events, run_one(q, args)), flush=True)

    if args.compare == "flink":
        if not flink_available():
            print("\n--compare flink: PyFlink is not installed (pip install apache-flink); skipped.")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "nexmark.jsonl"
            write_events_jsonl(args.events, args.rate, data)
            print(f"\nThe same queries on Apache Flink (PyFlink, parallelism 1) over the same events ({data.name}):")
            print(HEADER)
            print(SEPARATOR)
            for q in queries:
                print(row(q, args.events, run_one(q, args, engine="flink", data=str(data))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
