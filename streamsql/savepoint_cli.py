"""`streamsql savepoint inspect <dir>`: what a checkpoint or savepoint holds.

Lists every operator (stable uid, kind, label), its state names, size and key count,
plus the snapshot's id, kind, time and backend, from `_metadata` alone (no state is
loaded). `streamsql savepoint <job-id> [<dir>] [--stop]` takes a savepoint of a job
running in another `streamsql` process, and `streamsql list` lists those jobs (Flink's
`flink savepoint` / `flink list`; the transport is streamsql/control.py).
"""

from __future__ import annotations

import argparse
import datetime
from typing import TextIO


def inspect_text(path: str) -> str:
    from runtime.checkpoint.restore import load_checkpoint

    snap = load_checkpoint(path)
    m = snap.metadata
    when = datetime.datetime.fromtimestamp(m.timestamp_ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [
        f"{m.kind} {m.checkpoint_id} of job {m.job_id} at {snap.location}",
        f"taken {when}, state backend {m.state_backend}, max parallelism {m.max_parallelism}, "
        f"parallelism {m.parallelism}, {m.total_bytes} bytes of state",
        "",
        f"{'uid':<16}  {'operator':<18} {'bytes':>9} {'keys':>8}  state",
    ]
    for o in m.operators:
        keys = "" if o.keys is None else str(o.keys)
        names = ", ".join(o.state_names) if o.file else "(no state)"
        lines.append(f"{o.uid:<16}  {o.operator:<18} {o.bytes:>9} {keys:>8}  {names}")
        lines.append(f"{'':<16}  {o.label[:100]}")
    return "\n".join(lines) + "\n"


def savepoint_main(argv: list[str], out: TextIO, err: TextIO) -> int:
    p = argparse.ArgumentParser(
        prog="streamsql savepoint",
        description="Take a savepoint of a running job (streamsql savepoint <job-id> [<dir>] [--stop]), "
        "or inspect one (streamsql savepoint inspect <dir>).",
    )
    p.add_argument("what", help="a job id (or a unique prefix of one), or 'inspect'")
    p.add_argument(
        "path",
        nargs="?",
        help="target directory (default: the job's execution.checkpointing.savepoint-dir); with inspect: the snapshot",
    )
    p.add_argument("--stop", action="store_true", help="stop the job after the savepoint (STOP JOB ... WITH SAVEPOINT)")
    p.add_argument(
        "--drain",
        action="store_true",
        help="with --stop: the sources send MAX_WATERMARK first, so every window fires before the savepoint "
        "(STOP JOB ... WITH SAVEPOINT WITH DRAIN, Flink's `flink stop --drain`)",
    )
    p.add_argument("--pid", type=int, help="the job's process, when jobs of several processes have this id")
    p.add_argument("--jobs-dir", help="where running jobs register (default: see docs/cli.md)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the savepoint (default 120)")
    args = p.parse_args(argv)
    if args.what == "inspect":
        if not args.path:
            err.write("[ERROR] streamsql savepoint inspect <dir>: the snapshot directory is missing.\n")
            return 1
        try:
            out.write(inspect_text(args.path))
        except Exception as e:  # noqa: BLE001 - a readable error, not a traceback
            err.write(f"[ERROR] {e}\n")
            return 1
        return 0
    from streamsql.control import JOBS_DIR, ControlError, find_job, jobs_dir, trigger_savepoint

    try:
        entry = find_job(jobs_dir({JOBS_DIR.key: args.jobs_dir}), args.what, args.pid)
        err.write(f"Triggering savepoint for job {entry.job_id} (pid {entry.pid}).\n")
        if args.drain and not args.stop:
            raise ControlError("--drain needs --stop (it ends the job: every window fires before the savepoint)")
        path = trigger_savepoint(entry, args.path, stop=args.stop, timeout=args.timeout, drain=args.drain)
    except ControlError as e:
        err.write(f"[ERROR] {e}\n")
        return 1
    out.write(f"Savepoint completed. Path: {path}\n")
    if args.stop:
        out.write(f"Job {entry.job_id} stopped.\n")
    return 0


def list_main(argv: list[str], out: TextIO, err: TextIO) -> int:
    """`streamsql list`: the jobs running in streamsql processes of this user."""
    p = argparse.ArgumentParser(prog="streamsql list", description="List the running streamsql jobs (flink list).")
    p.add_argument("--jobs-dir", help="where running jobs register (default: see docs/cli.md)")
    args = p.parse_args(argv)
    from streamsql.control import JOBS_DIR, jobs_dir, running_jobs

    jobs = running_jobs(jobs_dir({JOBS_DIR.key: args.jobs_dir}))
    if not jobs:
        out.write("No running jobs.\n")
        return 0
    out.write("------------------ Running/Restarting Jobs -------------------\n")
    for j in jobs:
        out.write(j.describe() + "\n")
    out.write("--------------------------------------------------------------\n")
    return 0
