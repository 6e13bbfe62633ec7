"""A file the operating system refuses (permission denied) is a clean error naming the
file, never a traceback or an "internal error": a source file, a sink directory (the
filesystem and DuckDB sinks), a checkpoint directory and a savepoint to restore.

Permission bits do not stop root, so when the tests run as root the statements run in
one child process as the unprivileged user 65534 (`nobody`); otherwise as the user itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from clitools import ROOT

# Each case: a script for `streamsql -f`; the child prints {name: [exit code, stderr]}.
CHILD = r"""
import contextlib, io, json, sys
from streamsql.cli import main
out = {}
for name, script in json.loads(sys.argv[1]).items():
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["-e", script])
    out[name] = [code, err.getvalue()]
print(json.dumps(out))
"""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the unprivileged child can enter (pytest's tmp_path is private to root)."""
    d = Path(tempfile.mkdtemp(prefix="streamsql-perm-"))
    d.chmod(0o777)
    try:
        yield d
    finally:
        for p in d.rglob("*"):
            if p.is_dir():
                p.chmod(0o777)
        shutil.rmtree(d, ignore_errors=True)


def _run_unprivileged(cases: dict[str, str]) -> dict[str, tuple[int, str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": tempfile.gettempdir()}
    env.pop("STREAMSQL_DEBUG", None)
    drop = {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tempfile.gettempdir(),
        **drop,  # type: ignore[arg-type]
    )
    assert p.returncode == 0, p.stderr
    return {k: (v[0], v[1]) for k, v in json.loads(p.stdout.splitlines()[-1]).items()}


def test_permission_denied_names_the_file(shared_dir: Path) -> None:
    d = shared_dir
    (d / "in").mkdir()
    (d / "in" / "a.csv").write_text("1,a\n")
    (d / "in" / "a.csv").chmod(0o000)
    for sub in ("out", "chk", "sp"):
        (d / sub).mkdir()
    (d / "sp" / "_metadata").write_text("{}")
    (d / "sp").chmod(0o000)  # cannot even be looked into
    (d / "out").chmod(0o555)
    (d / "chk").chmod(0o555)
    gen = "CREATE TABLE g (k INT) WITH ('connector'='datagen','number-of-rows'='50000','rows-per-second'='50000');"
    cases = {
        "source": f"CREATE TABLE t (k INT, s STRING) WITH ('connector'='filesystem','path'='{d}/in','format'='csv');"
        "SELECT * FROM t;",
        "sink": f"CREATE TABLE o (k INT) WITH ('connector'='filesystem','path'='{d}/out','format'='csv');"
        "INSERT INTO o VALUES (1);",
        "duckdb": f"CREATE TABLE o (k INT) WITH ('connector'='duckdb','path'='{d}/out/x.duckdb','table-name'='t');"
        "INSERT INTO o VALUES (1);",
        "checkpoint": f"SET 'execution.checkpointing.dir'='file://{d}/chk';"
        "SET 'execution.checkpointing.interval'='100 ms';"
        f"{gen} CREATE TABLE b (k INT, c BIGINT) WITH ('connector'='blackhole');"
        "INSERT INTO b SELECT k, COUNT(*) FROM g GROUP BY k;",
        "savepoint": f"SET 'execution.savepoint.path'='{d}/sp'; {gen} SELECT COUNT(*) FROM g;",
    }
    got = _run_unprivileged(cases)
    want = {
        "source": ("FileAccessError", f"'{d}/in/a.csv': Permission denied"),
        "sink": ("FileAccessError", f"'{d}/out/"),
        "duckdb": ("ConnectorError", f"'{d}/out/x.duckdb'"),
        "checkpoint": ("CheckpointError", f"'{d}/chk/"),
        "savepoint": ("RestoreError", f"'{d}/sp/_metadata': Permission denied"),
    }
    for name, (kind, text) in want.items():
        code, err = got[name]
        assert code != 0, f"{name}: the statement succeeded"
        assert f"{kind}: " in err and text in err, f"{name}: {err}"
        assert "Permission denied" in err, f"{name}: {err}"
        assert "Traceback" not in err and "internal error" not in err.lower(), f"{name}: {err}"
