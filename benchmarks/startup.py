"""Start-up: wall time of a fresh process for the short things users run, N runs each.

    python benchmarks/startup.py [--runs 10]
    python benchmarks/startup.py --instructions     # one run each under valgrind (minutes)

Commands timed (each in a new interpreter, as a user starts them):
- `streamsql -e "SELECT 1"` (the issue's yardstick, target: median under 0.5 s);
- `streamsql -f tiny.sql` (a tiny job: a VALUES table, a filter and a GROUP BY, in batch mode);
- `python -c "from streamsql import TableEnvironment"`;
- a tiny Table API program (`from_elements`, `select`, `execute().collect()`).

Honest conditions: the children run without PYTHONDONTWRITEBYTECODE (some sandboxes set
it, which makes every start compile the ~250 modules from source, as a pip install never
does), and one untimed warm-up run per command writes the bytecode caches first. The
runs are interleaved: each round runs every command once. Prints
min / median / max wall seconds and the median CPU seconds (user + system; less sensitive
than wall time to other processes on a shared machine), and two reference rows: `python -c
pass` and `import pyarrow.compute, sqlglot`, the floor every command pays, which show how fast
the (shared) host is at the moment. pandas is a dependency; nothing on
these paths imports it (runtime/pandas_interop.py keeps pyarrow from doing so).

`--instructions` counts the instructions each command executes instead (valgrind's
callgrind, one run each, ~50x slower): the same on a loaded machine as on a quiet one, so
two versions can be compared while others use the machine (wall time tracks the count on a
quiet machine). For reference it also counts `python -c pass` and the imports every command
needs (numpy, pyarrow, pyarrow.compute, sqlglot).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY_JOB = """\
SET 'execution.runtime-mode' = 'batch';
CREATE TEMPORARY VIEW orders (id, product, amount) AS
  VALUES (1, 'apple', 3), (2, 'pear', 5), (3, 'apple', 7), (4, 'plum', 1);
SELECT product, SUM(amount) AS total FROM orders WHERE amount > 1 GROUP BY product;
"""

TABLE_API = """\
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.expressions import col

env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
t = env.from_elements([(1, "a"), (2, "b"), (3, "c")], ["x", "y"])
rows = list(t.where(col("x") > 1).select(col("x") + 1, col("y")).execute().collect())
assert len(rows) == 2, rows
"""


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(cmds: list[list[str]], runs: int) -> list[tuple[list[float], list[float]]]:
    """Wall and CPU seconds of `runs` timed runs of each command, after one untimed warm-up
    run each. The runs are interleaved (round r runs every command once), so a slow spell
    of a shared host slows every row alike instead of whichever row it fell on."""
    env = child_env()
    for cmd in cmds:
        subprocess.run(cmd, env=env, check=True, capture_output=True)  # writes the .pyc files
    times: list[tuple[list[float], list[float]]] = [([], []) for _ in cmds]
    for _ in range(runs):
        for cmd, (walls, cpus) in zip(cmds, times, strict=True):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            walls.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times


def instructions(cmd: list[str]) -> int:
    """Instructions one run of `cmd` executes (valgrind's callgrind), after a warm-up run."""
    env = child_env()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    match = re.search(r"Collected : (\d+)", run.stderr)
    if match is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{run.stderr[-2000:]}")
    return int(match.group(1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--instructions", action="store_true", help="count instructions (valgrind) instead of timing")
    args = p.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    cli = [sys.executable, "-m", "streamsql.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "tiny.sql"
        job.write_text(TINY_JOB)
        cases = [
            ('streamsql -e "SELECT 1"', [*cli, "-e", "SELECT 1"]),
            ("streamsql -f tiny.sql", [*cli, "-f", str(job)]),
            ("import TableEnvironment", [sys.executable, "-c", "from streamsql import TableEnvironment"]),
            ("Table API program", [sys.executable, "-c", TABLE_API]),
        ]
        # The floor every command pays (the interpreter, and the libraries it imports): on a
        # shared machine its times show how fast the host is at the moment, so rows measured
        # at different times can be compared.
        cases += [
            ("(python -c pass)", [sys.executable, "-c", "pass"]),
            ("(import pyarrow.compute, sqlglot)", [sys.executable, "-c", "import pyarrow.compute, sqlglot"]),
        ]
        if args.instructions:
            print(f"{'command':<34} {'instructions':>15}")
            for label, cmd in cases:
                print(f"{label:<34} {instructions(cmd):>15,}")
            return
        print(f"{'command':<34} {'runs':>5} {'min s':>7} {'median s':>9} {'max s':>7} {'median cpu s':>13}")
        for (label, _), (walls, cpus) in zip(cases, measure([cmd for _, cmd in cases], args.runs), strict=True):
            print(
                f"{label:<34} {args.runs:>5} {min(walls):>7.3f} {statistics.median(walls):>9.3f} "
                f"{max(walls):>7.3f} {statistics.median(cpus):>13.3f}"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
