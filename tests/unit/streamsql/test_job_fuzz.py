"""A seeded job fuzzer: small BATCH jobs over tiny input files whose table options and
files are mutated (an option's key misspelled, its value wrong or missing, the connector
or format misspelled or swapped; files that are not UTF-8, truncated, of the wrong
format, empty, missing, or a directory of such files; a sink path that is a file). Every
job must run or fail with a clean error (SqlError, JobError): never another exception.
An error caused by an option must name the option (or its connector/format), one caused
by a file must name the file (checked for every error, SqlError or JobError).

The jobs are deterministic (seeded), so a failure names the exact job;
`python tests/unit/streamsql/test_job_fuzz.py [--jobs N]` prints the summary (the CI test
runs `CI_JOBS`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from planner.errors import SqlError
from runtime.errors import JobError
from streamsql import EnvironmentSettings, TableEnvironment

SEED = 20
CI_JOBS = 60
MAX_ROWS = 10_000  # rows read of a job's result (a mutated datagen row count may be huge)
LEAKS = ("sqlglot", "<class '", "Required keyword", "Traceback", "NoneType", "object has no attribute")

SCHEMA = "k INT, v BIGINT, s STRING, ts TIMESTAMP(3)"
ROWS = [(1, 10, "a", "2024-01-01 00:00:01"), (2, 20, "b", "2024-01-01 00:00:02"), (1, 30, "c", "2024-01-01 00:00:05")]
QUERIES = (
    "SELECT * FROM t",
    "SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k",
    "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
    "GROUP BY window_start, window_end",
    "SELECT s, MAX(v) FROM t WHERE v > 5 GROUP BY s ORDER BY s",
)
BAD_VALUES = ("", "-1", "0", "abc", "true", "1 h", "99999999999999999999", "\\t\\t", "'", "none", "/nonexistent/x")
FORMAT_OPTIONS = {
    "csv": {
        "csv.field-delimiter": ",",
        "csv.ignore-parse-errors": "false",
        "csv.null-literal": "",
        "csv.allow-comments": "false",
    },
    "json": {"json.ignore-parse-errors": "false", "json.fail-on-missing-field": "false"},
    "parquet": {},
}


@dataclass
class Job:
    """One generated job: its statements, what was mutated, and what a clean error
    caused by the mutation must name (any of `names`; empty: no requirement)."""

    statements: list[str]
    mutation: str
    names: list[str] = field(default_factory=list)

    def text(self) -> str:
        return ";\n".join(self.statements) + ";"


def _write_inputs(root: Path) -> dict[str, Path]:
    """One tiny file per format, plus bad files."""
    root.mkdir(parents=True, exist_ok=True)
    files = {}
    csv = root / "good.csv"
    csv.write_text("".join(f"{k},{v},{s},{ts}\n" for k, v, s, ts in ROWS), encoding="utf-8")
    files["csv"] = csv
    js = root / "good.json"
    js.write_text("".join(json.dumps({"k": k, "v": v, "s": s, "ts": ts}) + "\n" for k, v, s, ts in ROWS))
    files["json"] = js
    pf = root / "good.parquet"
    pq.write_table(
        pa.table(
            {
                "k": pa.array([r[0] for r in ROWS], pa.int32()),
                "v": pa.array([r[1] for r in ROWS], pa.int64()),
                "s": [r[2] for r in ROWS],
                "ts": pa.array([r[3] for r in ROWS]).cast(pa.timestamp("ms")),
            }
        ),
        pf,
    )
    files["parquet"] = pf
    bad = {
        "latin1.csv": b"1,10,caf\xe9,2024-01-01 00:00:01\n",
        "truncated.csv": b"1,10,a,2024-01-01 00:00:01\n2,20",
        "fields.csv": b"1,10\n2,20,b,2024-01-01 00:00:02,extra\n",
        "types.csv": b"x,10,a,2024-01-01 00:00:01\n1,y,a,not a time\n",
        "empty.csv": b"",
        "binary.bin": bytes(range(256)) * 4,
        "quote.csv": b'1,10,"unterminated,2024-01-01 00:00:01\n',
        "bad.json": b'{"k": 1, "v": \n{not json}\n',
        "latin1.json": b'{"k": 1, "s": "caf\xe9"}\n',
        "wrong.parquet": b"PAR1 not really parquet PAR1",
    }
    for name, data in bad.items():
        (root / name).write_bytes(data)
        files[name] = root / name
    nested = root / "dir"
    (nested / "sub").mkdir(parents=True, exist_ok=True)
    (nested / "sub" / "x.csv").write_bytes(b"1,10,a,2024-01-01 00:00:01\n\xff\xfe\n")
    files["dir"] = nested
    return files


def _ddl(name: str, schema: str, options: dict[str, str]) -> str:
    opts = ", ".join(f"'{k}' = '{v.replace(chr(39), chr(39) * 2)}'" for k, v in options.items())
    return f"CREATE TABLE {name} ({schema}) WITH ({opts})"


def _misspell(word: str, rng: random.Random) -> str:
    j = rng.randrange(len(word))
    return word[:j] + rng.choice("aeiouxz") + word[j + 1 :]


def generate(rng: random.Random, files: dict[str, Path], out: Path) -> Job:
    """One job: a source table over a tiny file (or datagen), one mutation, a query (or an
    INSERT into a filesystem sink)."""
    fmt = rng.choice(["csv", "json", "parquet", "datagen"])
    if fmt == "datagen":
        options = {"connector": "datagen", "number-of-rows": "5", "fields.k.min": "1", "fields.k.max": "3"}
        schema = "k INT, v BIGINT, s STRING, ts AS LOCALTIMESTAMP"
    else:
        options = {"connector": "filesystem", "path": str(files[fmt]), "format": fmt}
        options.update(rng.sample(sorted(FORMAT_OPTIONS[fmt].items()), k=min(2, len(FORMAT_OPTIONS[fmt]))))
        schema = SCHEMA
    query = rng.choice(QUERIES)
    kind = rng.choice(["key", "value", "drop", "connector", "file", "format", "sink", "none"])
    names: list[str] = []
    sink = None
    if kind == "key":
        key = rng.choice(sorted(options))
        bad = _misspell(key, rng)
        options = {bad if k == key else k: v for k, v in options.items()}
        names = [bad, key]
    elif kind == "value":
        key = rng.choice(sorted(options))
        options[key] = rng.choice(BAD_VALUES)
        names = [key, options[key] or "''"] + ([options["connector"]] if key == "connector" else [])
    elif kind == "drop":
        key = rng.choice(sorted(options))
        del options[key]
        names = [key, "connector", "format", "path", "unbounded"]  # datagen without a row count: unbounded
    elif kind == "connector":
        options["connector"] = _misspell(options["connector"], rng)
        names = [options["connector"]]
    elif kind == "file" and fmt != "datagen":
        name = rng.choice(sorted(k for k in files if k not in ("csv", "json", "parquet")))
        options["path"] = str(files[name])
        if rng.random() < 0.3:
            options[f"{fmt}.ignore-parse-errors"] = "true"
        names = [str(files[name])]
    elif kind == "format" and fmt != "datagen":
        options["format"] = rng.choice(
            [f for f in ("csv", "json", "parquet", "raw", "avro", "debezium-json") if f != fmt]
        )
        names = [options["path"], options["format"], "INSERT-only"]  # a changelog format in BATCH: Flink's refusal
    elif kind == "sink":
        target = rng.choice([str(out / f"sink{rng.randrange(1000)}"), str(files["csv"]), "/proc/streamsql-no"])
        sink_opts = {"connector": "filesystem", "path": target, "format": rng.choice(["csv", "json", "parquet", "xml"])}
        if rng.random() < 0.5:
            sink_opts[rng.choice(["sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval"])] = (
                rng.choice(BAD_VALUES)
            )
        sink = _ddl("o", "k INT, c BIGINT", sink_opts)
        query = "INSERT INTO o SELECT k, COUNT(*) FROM t GROUP BY k"
        names = [target, *sink_opts]
    statements = [_ddl("t", schema, options)]
    if sink:
        statements.append(sink)
    statements.append(query)
    return Job(statements, kind, names)


def run_job(job: Job) -> tuple[str, str | None]:
    """Run one job in BATCH mode: ("ok" | "clean error" | "internal error", problem)."""
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    try:
        for stmt in job.statements:
            result = env.execute_sql(stmt)
            if stmt.startswith(("SELECT", "INSERT")):
                with result.collect() as rows:
                    for n, _ in enumerate(rows):
                        if n >= MAX_ROWS:  # a mutated row count: enough to know the job runs
                            break
                    else:
                        result.wait()
    except (SqlError, JobError) as e:
        text = e.render() if isinstance(e, SqlError) else str(e)
        leak = next((w for w in LEAKS if w in text), None)
        if leak:
            return "clean error", f"message leaks '{leak}': {text[:300]}"
        if job.names and not any(n and n in text for n in job.names):
            return "clean error", f"error names none of {job.names}: {text[:300]}"
        return "clean error", None
    except Exception as e:  # noqa: BLE001 - what the fuzzer hunts
        return "internal error", f"{type(e).__name__}: {str(e)[:300]}"
    return "ok", None


def run_fuzzer(
    jobs: int, seed: int = SEED, progress: Callable[[int], None] | None = None
) -> tuple[Counter[str], list[str]]:
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="streamsql-jobfuzz-") as tmp:
        files = _write_inputs(Path(tmp) / "in")
        for i in range(jobs):
            job = generate(rng, files, Path(tmp) / "out")
            outcome, problem = run_job(job)
            outcomes[outcome] += 1
            if problem:
                failures.append(f"job {i} ({job.mutation}): {problem}\n  {job.text()}")
            if progress:
                progress(i)
    return outcomes, failures


def test_generated_jobs_run_or_fail_cleanly() -> None:
    outcomes, failures = run_fuzzer(CI_JOBS)
    assert outcomes["ok"] and outcomes["clean error"], outcomes
    assert not failures, f"{len(failures)} of {CI_JOBS} jobs failed badly:\n" + "\n".join(failures[:30])


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--seed", type=int, default=SEED)
    args = p.parse_args()
    os.environ.pop("STREAMSQL_DEBUG", None)
    counts, bad = run_fuzzer(args.jobs, args.seed)
    print(dict(counts), "jobs:", sum(counts.values()), "failures:", len(bad))
    print("\n".join(bad))
