"""Running the real `streamsql` command from tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamsql.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_restoring(
    root: Path,
    job: Path,
    env_extra: dict[str, str] | None = None,
    kill_after: float | None = None,
    timeout: float = 180,
    args: tuple[str, ...] = (),
) -> int:
    """Run `job` with `--restore latest` (and `args`, e.g. `--parallelism 2`); SIGKILL it
    after `kill_after` seconds if given.
    Returns 0, or -9 when killed (by us or by a fault point); any other exit fails."""
    import os

    env = {**os.environ, **(env_extra or {})}
    cmd = [sys.executable, "-m", "streamsql.cli", "-f", str(job), "--restore", "latest", *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root)
    if kill_after is not None:
        try:
            proc.wait(kill_after)
        except subprocess.TimeoutExpired:
            proc.kill()  # SIGKILL
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode not in (0, -9):
        raise AssertionError(f"job failed ({proc.returncode}):\n{err.decode()}\n{out.decode()}")
    return proc.returncode


def committed_lines(directory: Path) -> list[str]:
    """Sorted lines of a filesystem sink's published part files (hidden in-progress and
    pending files are not output yet)."""
    rows: list[str] = []
    for f in sorted(directory.iterdir()) if directory.exists() else []:
        if not f.name.startswith((".", "_")):
            rows += f.read_text().splitlines()
    return sorted(rows)


def duckdb_rows(path: Path, query: str) -> list[tuple[object, ...]]:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()
