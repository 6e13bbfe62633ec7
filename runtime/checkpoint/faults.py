"""Fault injection for the recovery tests: `STREAMSQL_FAULT_INJECT=<point>:<n>` kills the
process with SIGKILL the n-th time execution passes `<point>` (several separated by ',').

Points: `batch` (after a source batch was processed), `snapshot` (state taken, before the
upload), `upload` (state files written, metadata not yet), `metadata` (checkpoint complete,
sinks not yet committed), `commit` (after the first sink committed), `transaction` (inside a
Kafka sink's transaction: records produced, the transaction not yet committed).
"""

from __future__ import annotations

import os
import signal

_counts: dict[str, int] = {}
_plan: dict[str, int] | None = None
_also: list[int] = []  # processes that die with this one (a parallel worker's job process)


def kill_also(pid: int) -> None:
    """A fault in this process kills `pid` first: a parallel worker takes its job's parent
    process down with it, so the test sees the whole job die as one process would."""
    _also.append(pid)


def _load() -> dict[str, int]:
    global _plan
    if _plan is None:
        _plan = {}
        for part in (os.environ.get("STREAMSQL_FAULT_INJECT") or "").split(","):
            name, _, n = part.strip().partition(":")
            if name:
                _plan[name] = int(n or 1)
    return _plan


def fault_point(name: str) -> None:
    """Die here (SIGKILL, no cleanup) when the injection plan says so."""
    plan = _load()
    if name not in plan:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] == plan[name]:
        for pid in _also:
            os.kill(pid, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
