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
        timeout=600,
    )


def run_restoring(
    root: Path,
    job: Path,
    env_extra: dict[str, str] | None = None,
    kill_after: float | None = None,
    timeout: float = 600,
    args: tuple[str, ...] = (),
) -> int:
    """Run `job` with `--restore latest` (and `args`, e.g. `--parallelism 2`); SIGKILL it
    after `kill_after` seconds if given. `timeout` only catches a hung job (its default is
    generous: a loaded CI machine runs a job many times slower than an idle one).
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
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()  # never left running (it would hold the test's files and a core)
        out, err = proc.communicate()
        raise AssertionError(f"job did not end within {timeout:.0f} s:\n{err.decode()[-4000:]}") from None
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


def in_progress_files(directory: Path) -> set[Path]:
    """A filesystem sink's hidden in-progress part files under `directory` (any partition)."""
    return set(directory.rglob(".part-*.inprogress.*")) if directory.exists() else set()


def wait_for_sink_rows(
    directory: Path, proc: subprocess.Popen[bytes], before: set[Path] | None = None, timeout: float = 300
) -> None:
    """Wait until the running job `proc` wrote rows to the filesystem sink at `directory`:
    a hidden in-progress part file (not one of `before`) appears with the sink's first row
    since the last commit, so a savepoint taken from now on commits rows of this run. The
    condition a fixed pause after the start only met on an idle machine."""
    import time

    deadline = time.monotonic() + timeout
    while not in_progress_files(directory) - (before or set()):
        if proc.poll() is not None:
            raise AssertionError(f"the job ended ({proc.returncode}) before it wrote a row")
        if time.monotonic() > deadline:
            raise AssertionError(f"the job wrote no row to {directory} within {timeout:.0f} s")
        time.sleep(0.05)
