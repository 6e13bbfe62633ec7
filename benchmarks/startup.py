"""Start-up: wall time of `streamsql -e "SELECT 1"`, a fresh process each run.

    python benchmarks/startup.py [--runs 10]

Prints min / median / max seconds. pandas is a dependency; the CLI keeps pyarrow from importing it
(runtime/pandas_interop.py), so it costs nothing at start-up.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=10)
    args = p.parse_args()
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "streamsql.cli", "-e", "SELECT 1"], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    label = 'streamsql -e "SELECT 1"'
    print(f"{'command':<32} {'runs':>5} {'min s':>7} {'median s':>9} {'max s':>7}")
    print(f"{label:<32} {args.runs:>5} {min(times):>7.3f} {statistics.median(times):>9.3f} {max(times):>7.3f}")


if __name__ == "__main__":
    main()
