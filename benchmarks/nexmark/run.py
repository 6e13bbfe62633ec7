"""Nexmark q0-q23 on the in-engine 'nexmark' connector, each query into a blackhole sink.

    python benchmarks/nexmark/run.py                          # q0-q23, 500,000 events, streaming
    python benchmarks/nexmark/run.py --queries q0,q5 --events 2000000 --mode batch
    python benchmarks/nexmark/run.py --compare flink          # also on Apache Flink (PyFlink)
    python benchmarks/nexmark/run.py --compare flink --source both --check all --events 200000

The queries are the oracle's (prefix.sql + qN.sql) with the filesystem source replaced by
`'connector' = 'nexmark'` ('events.num' = --events, a fixed base time and seed). Each query
runs in its own process (so peak memory is the query's own, and a crash or a --timeout
does not stop the run) as `INSERT INTO` a blackhole table whose columns are the query's
planned schema. The first row, "generator", only drains the source (all columns).

Per query: events, wall seconds, events/s, events/s per core (events / CPU seconds of the
process: what one core sustains), peak memory (ru_maxrss). A query that fails prints the
first line of its error and the run continues. Compare figures from the same machine only.

--compare flink runs the same queries on Apache Flink over the same events written to a JSON
file, all in ONE PyFlink process (flink_worker.py, started with --flink-python: default
$FLINK_PYTHON, else this interpreter if it imports pyflink, else /work/flinkvenv/bin/python),
at parallelism 1 and, with --parallelism N > 1, also N; then prints streamsql vs Flink
events/s per core side by side with the ratio and its geometric mean. Flink parses JSON while
the nexmark source generates in-engine: --source file (or both) runs streamsql over the same
file too, for a like-for-like ratio. --check all also compares each query's final row count
(an untimed COUNT(*) job per query and engine).
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
sys.path.insert(0, str(HERE))  # compare.py next to this file (also when imported by path)
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


def _cpu_seconds() -> float:
    """CPU of this process and its reaped children (the parallel executor's forked workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _measure(fn: Any) -> dict[str, Any]:
    wall0, cpu0 = time.perf_counter(), _cpu_seconds()
    fn()
    wall, cpu = time.perf_counter() - wall0, _cpu_seconds() - cpu0
    return {"wall": wall, "cpu": cpu, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def run_generator(events: int, rate: int) -> dict[str, Any]:
    """Drain the nexmark source alone (every column), as the executor would poll it."""
    reader = nexmark_source(events, rate).create_reader("0")  # builds the string pools

    def drain() -> None:
        while reader.read(8192) is not None:
            pass

    return _measure(drain)


PARALLELISM = 1  # --parallelism
FILE_DATA = ""  # --source file: the JSON events file (write_events_jsonl) instead of the generator


def file_options(path: str) -> str:
    """The filesystem/json WITH clause over write_events_jsonl's file (what Flink reads too)."""
    return f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'json', 'json.fail-on-missing-field' = 'false'"


def run_query(query: str, events: int, rate: int, mode: str) -> dict[str, Any]:
    from streamsql import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", str(PARALLELISM))
    os.chdir(HERE)  # q13's side input path is relative to the query folder
    side = Path(tempfile.gettempdir()) / "streamsql-nexmark-side_input.csv"
    if not side.exists():
        side.write_text("".join(f"{i},{i}\n" for i in range(10_000)))
    source = file_options(FILE_DATA) if FILE_DATA else nexmark_options(events, rate)
    text = script(query, source).replace("data/side_input.csv", str(side))
    *setup, last = env.parse(text)
    for stmt in setup:
        env.execute_statement(stmt).wait()
    fields = env.sql_query(last.sql).get_schema()
    env.execute_sql(sink_ddl(f"nexmark_{query}_sink", fields))
    insert = env.parse(f"INSERT INTO nexmark_{query}_sink\n{last.sql}")[0]
    warm_up(events, rate)
    out = _measure(lambda: env.execute_statement(insert).wait())
    if COUNT_ROWS and query != "q12":  # q12: processing-time windows, no stable row count
        out["rows"] = final_count(env, last.sql)
    return out


COUNT_ROWS = False  # --check all


def final_count(env: Any, select: str) -> int:
    """Final table row count (untimed): the last value of an (updating) COUNT(*)."""
    count = 0
    with env.execute_sql(f"SELECT COUNT(*) FROM (\n{select}\n)").collect() as rows:
        for r in rows:
            if r.get_row_kind().short_string() in ("+I", "+U"):
                count = int(r[0])
    return count


def warm_up(events: int, rate: int) -> None:
    """One-off per-process costs kept out of the measurement, as the generator row does:
    importing the operator modules (compiled from source on every run when
    PYTHONDONTWRITEBYTECODE is set) and building the generator's string pools."""
    from runtime.operators.spec import all_specs

    all_specs()  # imports every operator module
    nexmark_source(events, rate).create_reader("0")


def worker(args: argparse.Namespace) -> None:
    try:
        if args.worker == "generator":
            out = run_generator(args.events, args.rate)
        else:
            out = run_query(args.worker, args.events, args.rate, args.mode)
    except BaseException as e:  # noqa: BLE001 - reported as the query's row
        text = f"{type(e).__name__}: {e}".strip().splitlines()
        out = {"error": text[0][:160] if text else type(e).__name__}
    print("RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------------- Flink (optional)


def write_events_jsonl(events: int, rate: int, path: Path) -> int:
    """The connector's events as the filesystem/json rows the Flink prefix reads; returns the
    number of bids (q0's row count)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    reader = nexmark_source(events, rate).create_reader("0")
    bids = 0
    with path.open("w") as fh:
        while (batch := reader.read(65536)) is not None:
            cols = {}
            for name in batch.schema.names:
                col = batch.column(name)
                if pa.types.is_struct(col.type):  # timestamps as Flink's JSON text
                    kids = [
                        pc.strftime(c, "%Y-%m-%d %H:%M:%S").cast(pa.string()) if pa.types.is_timestamp(c.type) else c
                        for c in (col.field(i) for i in range(col.type.num_fields))
                    ]
                    col = pa.StructArray.from_arrays(kids, names=[f.name for f in col.type], mask=col.is_null())
                cols[name] = col
            for row in pa.RecordBatch.from_pydict(cols).to_pylist():
                fh.write(json.dumps(row) + "\n")
            bids += int(pc.sum(pc.equal(batch.column("event_type"), 2)).as_py() or 0)
    return bids


# ---------------------------------------------------------------------- driver


def run_one(name: str, args: argparse.Namespace, engine: str = "streamsql", data: str = "") -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", name, "--events", str(args.events), "--rate", str(args.rate)]
    cmd += ["--parallelism", str(args.parallelism)]
    cmd += ["--mode", args.mode, "--engine", engine, "--data", data]
    cmd += ["--check", getattr(args, "check", "q0")]
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
    rows = f" final rows {r['rows']:,}" if "rows" in r else ""  # --check all
    return f"| {name:<9} | {events:>11,} | {r['wall']:>8.2f} | {eps:>11,.0f} | {per_core:>13,.0f} | {mb:>8.0f} |" + rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=500_000, help="events per query (default 500,000)")
    p.add_argument("--queries", default=",".join(ALL), help="comma-separated, e.g. q0,q5 (default q0-q23)")
    p.add_argument("--mode", choices=("streaming", "batch"), default="streaming")
    p.add_argument("--rate", type=int, default=10_000, help="'first-event.rate': events per second of event time")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per query before it is reported as failed")
    p.add_argument("--no-generator", action="store_true", help="skip the generator-only row")
    p.add_argument("--compare", choices=("flink",), help="also run the queries on PyFlink (if installed)")
    p.add_argument("--parallelism", type=int, default=1, help="worker processes per query (docs/parallel.md)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--engine", default="streamsql", help=argparse.SUPPRESS)
    p.add_argument("--data", default="", help=argparse.SUPPRESS)
    p.add_argument(
        "--source",
        choices=("nexmark", "file", "both"),
        default="nexmark",
        help="streamsql reads the in-engine generator, the JSON file Flink reads, or both",
    )
    p.add_argument(
        "--flink-python",
        help="interpreter with pyflink for --compare flink "
        "(default: $FLINK_PYTHON, this one if it imports pyflink, else /work/flinkvenv/bin/python)",
    )
    p.add_argument(
        "--check",
        choices=("none", "q0", "all"),
        default="q0",
        help="row-count checks: q0 rows = bids (Flink), or every query's final count on both engines",
    )
    args = p.parse_args(argv)
    global PARALLELISM, FILE_DATA, COUNT_ROWS
    PARALLELISM, FILE_DATA, COUNT_ROWS = args.parallelism, args.data, args.check == "all"
    if args.worker:
        worker(args)
        return 0

    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    unknown = [q for q in queries if not (HERE / f"{q}.sql").exists()]
    if unknown:
        p.error(f"unknown queries: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory() as tmp:
        run_all(args, queries, Path(tmp))
    return 0


def run_all(args: argparse.Namespace, queries: list[str], tmp: Path) -> None:
    """streamsql per source and parallelism, then (--compare flink) Flink and the comparison."""
    import compare

    sources = ["nexmark", "file"] if args.source == "both" else [args.source]
    parallelisms = sorted({1, args.parallelism}) if args.compare else [args.parallelism]
    data, bids = "", -1
    if "file" in sources or args.compare:
        data = str(tmp / "nexmark.jsonl")
        bids = write_events_jsonl(args.events, args.rate, Path(data))
        print(f"Events file: {args.events:,} events ({bids:,} bids), {os.path.getsize(data) / 2**20:,.0f} MB JSON")
    mine: dict[tuple[int, str], dict[str, dict[str, Any]]] = {}
    for par in parallelisms:
        run_args = argparse.Namespace(**{**vars(args), "parallelism": par})
        for src in sources:
            print(
                f"\nNexmark on streamsql: {args.events:,} events per query, {args.mode} mode, parallelism {par}, "
                f"source {'nexmark (generated in-engine)' if src == 'nexmark' else 'JSON file'}, "
                f"rate {args.rate:,}/s of event time"
            )
            print(HEADER)
            print(SEPARATOR)
            if src == "nexmark" and not args.no_generator:
                print(row("generator", args.events, run_one("generator", run_args)), flush=True)
            got = mine.setdefault((par, src), {})
            for q in queries:
                got[q] = run_one(q, run_args, data=data if src == "file" else "")
                print(row(q, args.events, got[q]), flush=True)
    if args.compare != "flink":
        return
    python = args.flink_python or compare.default_flink_python()
    if python is None or not compare.has_pyflink(python):
        print(
            f"\n--compare flink: no interpreter with pyflink ({python or 'none found'}); use --flink-python. Skipped."
        )
        return
    warm = str(tmp / "warmup.jsonl")
    write_events_jsonl(100, args.rate, Path(warm))
    for par in parallelisms:
        spec = {
            "mode": args.mode,
            "parallelism": par,
            "timeout": args.timeout,
            "warmup": flink_statements("q0", file_options(warm)),
            "queries": [
                {
                    "name": q,
                    "statements": flink_statements(q, file_options(data)),
                    "count": (args.check == "all" and q != "q12") or (args.check == "q0" and q == "q0"),
                }
                for q in queries
            ],
        }
        print(f"\nApache Flink (PyFlink, {python}), parallelism {par}, over the same events (JSON file), one JVM:")
        print(HEADER)
        print(SEPARATOR)
        budget = args.timeout * (len(queries) + 2) * (2 if args.check == "all" else 1) + 300
        flink = compare.run_flink_worker(python, spec, budget, lambda r: print(flink_row(r, args.events), flush=True))
        q0 = flink.get("q0", {})
        if "rows" in q0:
            verdict = "ok" if q0["rows"] == bids else "WRONG"
            print(f"check: Flink q0 wrote {q0['rows']:,} rows; bids in the file: {bids:,}: {verdict}")
        print(f"\nstreamsql vs Flink, events/s per core, parallelism {par} (ratio > 1: streamsql does more per core):")
        by_source = {src: mine[(par, src)] for src in sources}
        overhead = flink.get("job-overhead", {}).get("cpu")
        for line in compare.comparison_table(args.events, queries, by_source, flink, overhead):
            print(line)


def flink_row(r: dict[str, Any], events: int) -> str:
    """A Flink result as a table row; start-up and the empty job's overhead as notes."""
    if r["name"] == "startup" and "error" not in r:
        return f"(JVM start-up + first job, not in the figures: {r['wall']:.1f} s wall)"
    if r["name"] == "job-overhead" and "error" not in r:
        return f"(fixed cost of one job over 100 events in the warm JVM: {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU)"
    return row(r["name"], events, r)


def flink_statements(query: str, with_clause: str) -> list[str]:
    """prefix.sql + qN.sql as separate statements for PyFlink's execute_sql (no comments-only ones)."""
    side = Path(tempfile.gettempdir()) / "streamsql-nexmark-side_input.csv"
    if not side.exists():
        side.write_text("".join(f"{i},{i}\n" for i in range(10_000)))
    text = script(query, with_clause).replace("data/side_input.csv", str(side))
    return [s for s in text.split(";\n") if re.sub(r"--.*", "", s).strip()]


if __name__ == "__main__":
    sys.exit(main())
