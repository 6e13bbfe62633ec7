"""benchmarks/functions.py runs end to end on a small table and prints one row per case
(no timing is asserted: the figures are for reading, not for tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_functions_benchmark_prints_its_table() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "functions.py"), "--rows", "3000", "--batch", "1000"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 20, p.stdout
    assert any("ARRAY_CONTAINS" in r for r in rows) and any("PERCENTILE" in r for r in rows)
