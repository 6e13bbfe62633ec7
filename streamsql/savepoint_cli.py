"""`streamsql savepoint inspect <dir>`: what a checkpoint or savepoint holds.

Lists every operator (stable uid, kind, label), its state names, size and key count,
plus the snapshot's id, kind, time and backend, from `_metadata` alone (no state is
loaded). `streamsql savepoint <job-id> <dir>` needs a running job in this process: use
STOP JOB '<id>' WITH SAVEPOINT in the shell, or `JobHandle.trigger_savepoint` from Python.
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
    p = argparse.ArgumentParser(prog="streamsql savepoint", description="Inspect checkpoints and savepoints.")
    p.add_argument("what", help="'inspect', or a job id")
    p.add_argument("path", help="the snapshot directory")
    args = p.parse_args(argv)
    if args.what != "inspect":
        err.write(
            f"[ERROR] Job '{args.what}' is not running in this process. streamsql runs jobs embedded: take a "
            "savepoint with STOP JOB '<id>' WITH SAVEPOINT in the shell (or JobHandle.trigger_savepoint in "
            "Python); 'streamsql savepoint inspect <dir>' shows one.\n"
        )
        return 1
    try:
        out.write(inspect_text(args.path))
    except Exception as e:  # noqa: BLE001 - a readable error, not a traceback
        err.write(f"[ERROR] {e}\n")
        return 1
    return 0
