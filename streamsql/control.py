"""Reaching a running job from another process: `streamsql list`, `streamsql savepoint
<job-id> <dir> [--stop]` (Flink's `flink list` / `flink savepoint` / `flink stop`).

streamsql runs jobs embedded in the process that started them, so there is no cluster to
ask. Instead, a process running a streaming INSERT job (`streamsql -f job.sql`) starts a
small control server on 127.0.0.1 (an ephemeral port, one per process, a random token)
and registers each job in a *jobs directory*: one JSON file per job
(`<pid>-<job id>.json`: job id, name, pid, port, token, start time), readable only by its
owner (directory 0700, files 0600), so only the same user gets the token. The entry is
removed when the job ends or the process exits; an entry whose pid is dead (SIGKILL) is
ignored and cleaned up by the next reader.

The directory is `streamsql.jobs.dir`, else `$STREAMSQL_JOBS_DIR`, else
`$XDG_RUNTIME_DIR/streamsql`, else `~/.streamsql/jobs`.

Protocol: one JSON line per connection each way. Request `{"token", "op": "savepoint",
"job", "dir", "stop", "drain", "timeout"}` → `{"ok": true, "path"}` or `{"ok": false, "error"}`.
Nothing here is imported on the `SELECT 1` path: the CLI imports it only for INSERT jobs
in streaming mode and for the `list` / `savepoint` subcommands.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import socket
import socketserver
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runtime.config.options import key
from runtime.frozen import frozen_dataclass

JOBS_DIR = (
    key("streamsql.jobs.dir")
    .string_type()
    .no_default_value()
    .with_description(
        "Where `streamsql -f` registers its running streaming jobs for `streamsql list` / `streamsql savepoint "
        "<job-id>` (unset: $STREAMSQL_JOBS_DIR, else $XDG_RUNTIME_DIR/streamsql, else ~/.streamsql/jobs)."
    )
)
_MAX_LINE = 1 << 20


class ControlError(Exception):
    """A readable failure of a control request (printed without a traceback)."""


def jobs_dir(config: Mapping[str, str | None] | None = None) -> Path:
    configured = JOBS_DIR.get(config) or os.environ.get("STREAMSQL_JOBS_DIR")
    if configured:
        return Path(configured).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "streamsql"
    return Path.home() / ".streamsql" / "jobs"


# ---------------------------------------------------------------------- registry entries
@frozen_dataclass
class JobEntry:
    job_id: str
    name: str
    pid: int
    port: int
    token: str
    start_time: float
    path: Path

    def describe(self) -> str:
        when = time.strftime("%d.%m.%Y %H:%M:%S", time.localtime(self.start_time))
        return f"{when} : {self.job_id} : {self.name} (RUNNING) [pid {self.pid}]"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive, but not ours
        return True
    return True


def running_jobs(directory: Path) -> list[JobEntry]:
    """Registered jobs whose process is alive, oldest first; stale entries are removed."""
    out: list[JobEntry] = []
    if not directory.is_dir():
        return out
    for f in sorted(directory.glob("*.json")):
        try:
            d = json.loads(f.read_text(encoding="utf-8"))
            entry = JobEntry(
                str(d["job_id"]), str(d["name"]), int(d["pid"]), int(d["port"]), str(d["token"]), float(d["start"]), f
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # half-written or foreign: not an entry
        if not _pid_alive(entry.pid):
            with contextlib.suppress(OSError):
                f.unlink()
            continue
        out.append(entry)
    return sorted(out, key=lambda e: (e.start_time, e.pid, e.job_id))


def find_job(directory: Path, job_id: str, pid: int | None = None) -> JobEntry:
    """The running job with this id (or the same hex number, e.g. '1', or a unique id
    prefix); a readable error otherwise.
    Job ids count from 1 in each process, so two processes can run the same id: then
    `pid` picks one."""
    jobs = running_jobs(directory)
    matches = (
        [j for j in jobs if j.job_id == job_id]
        or [j for j in jobs if _same_number(j.job_id, job_id)]  # '1' = 000...001
        or [j for j in jobs if j.job_id.startswith(job_id)]
    )
    if pid is not None:
        matches = [j for j in matches if j.pid == pid]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        listing = "\n".join("  " + j.describe() for j in jobs) or "  (none)"
        raise ControlError(f"No running job '{job_id}' in {directory}. Running jobs:\n{listing}")
    pids = ", ".join(str(j.pid) for j in matches)
    raise ControlError(f"Job '{job_id}' matches jobs of several processes (pids {pids}): pass --pid <pid>.")


def _same_number(a: str, b: str) -> bool:
    try:
        return int(a, 16) == int(b, 16)
    except ValueError:
        return False


# ---------------------------------------------------------------------- the server side
class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        try:
            request = json.loads(self.rfile.readline(_MAX_LINE) or b"{}")
            reply = self.server.control.serve(request)
        except Exception as e:  # noqa: BLE001 - every failure goes back to the client
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        self.wfile.write(json.dumps(reply).encode("utf-8") + b"\n")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    control: ControlServer


class ControlServer:
    """One per process: serves the savepoint requests of the jobs it registered. Each job's
    entry goes to the jobs directory of that job's own configuration (two environments of
    one program may name different ones)."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)
        self.jobs: dict[str, Any] = {}  # job id -> JobHandle
        self.entries: dict[str, Path] = {}
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.control = self
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, name="streamsql-control", daemon=True).start()
        atexit.register(self.close)

    def register(self, handle: Any, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = directory / f"{os.getpid()}-{handle.job_id}.json"
        entry = {
            "job_id": handle.job_id,
            "name": handle.name,
            "pid": os.getpid(),
            "port": self.port,
            "token": self.token,
            "start": handle.start_time,
        }
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh)
        os.replace(tmp, path)
        with self._lock:
            self.jobs[handle.job_id] = handle
            self.entries[handle.job_id] = path
        return path

    def unregister(self, job_id: str) -> None:
        with self._lock:
            self.jobs.pop(job_id, None)
            path = self.entries.pop(job_id, None)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        if not secrets.compare_digest(str(request.get("token", "")), self.token):
            return {"ok": False, "error": "bad token"}
        op = request.get("op")
        if op == "list":
            with self._lock:
                jobs = [{"job_id": h.job_id, "name": h.name, "status": h.get_job_status()} for h in self.jobs.values()]
            return {"ok": True, "jobs": jobs}
        if op != "savepoint":
            return {"ok": False, "error": f"unknown request '{op}'"}
        job_id = str(request.get("job"))
        with self._lock:
            handle = self.jobs.get(job_id)
        if handle is None or not handle.is_running():
            return {"ok": False, "error": f"Job '{job_id}' is not running in process {os.getpid()}."}
        directory = request.get("dir") or None
        timeout = float(request.get("timeout") or 60.0)
        if request.get("stop"):
            path = handle.stop_with_savepoint(directory, timeout=timeout, drain=bool(request.get("drain")))
        else:
            path = handle.trigger_savepoint(directory, timeout=timeout)
        return {"ok": True, "path": path}

    def close(self) -> None:
        for job_id in list(self.entries):
            self.unregister(job_id)
        self._server.shutdown()
        self._server.server_close()


_server: ControlServer | None = None
_server_lock = threading.Lock()


def register_job(handle: Any, config: Mapping[str, str | None] | None = None) -> ControlServer:
    """Make a running job reachable from other processes (starts the control server on
    first use); `unregister_job` (or process exit) removes the entry."""
    global _server
    with _server_lock:
        if _server is None:
            _server = ControlServer()
        server = _server
    server.register(handle, jobs_dir(config))
    return server


def unregister_job(job_id: str) -> None:
    if _server is not None:
        _server.unregister(job_id)


# ---------------------------------------------------------------------- the client side
def request(entry: JobEntry, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Send one request to the job's process and return its reply."""
    try:
        with socket.create_connection(("127.0.0.1", entry.port), timeout=timeout) as sock:
            sock.sendall(json.dumps({**payload, "token": entry.token}).encode("utf-8") + b"\n")
            with sock.makefile("rb") as fh:
                line = fh.readline(_MAX_LINE)
    except OSError as e:
        raise ControlError(f"Could not reach job {entry.job_id} (pid {entry.pid}, port {entry.port}): {e}") from None
    if not line:
        raise ControlError(f"Job {entry.job_id} (pid {entry.pid}) closed the connection without an answer.")
    reply: dict[str, Any] = json.loads(line)
    return reply


def trigger_savepoint(
    entry: JobEntry, directory: str | None, stop: bool = False, timeout: float = 120.0, drain: bool = False
) -> str:
    """Take a savepoint of a job of another process (`stop`: then stop it, after
    MAX_WATERMARK with `drain`); returns the savepoint's path."""
    if directory and "://" not in directory:
        directory = os.path.abspath(os.path.expanduser(directory))  # the job's cwd is not ours
    reply = request(
        entry,
        {"op": "savepoint", "job": entry.job_id, "dir": directory, "stop": stop, "drain": drain, "timeout": timeout},
        timeout + 5,
    )
    if not reply.get("ok"):
        raise ControlError(str(reply.get("error")))
    return str(reply["path"])
