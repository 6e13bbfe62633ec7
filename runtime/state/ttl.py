"""State time-to-live (`table.exec.state.ttl`, the `/*+ STATE_TTL(...) */` hint).

Flink semantics (StateTtlConfig as the table runtime builds it): a key's state that has not
been *written* for the TTL is gone (`UpdateType.OnCreateAndWrite`, processing time) and an
expired value is never returned (`NeverReturnExpired`). A key that comes back after
expiry starts from scratch: COUNT restarts at 1, a join no longer finds the old row.
Nothing is emitted when state expires. TTL 0 (the default) means never.

Design: operators keep per-key values in slot-indexed arrays (runtime/state/backend.py),
so TTL bookkeeping is one more slot-indexed array, `StateTtl.last`, the processing time of
each slot's last write (`NEVER` for slots not tracked). Operators call `touch(slots, now)`
where they write state and `expired(now)` before they read it; they clear the returned
slots in their own arrays and `backend.remove` them. To keep `expired` cheap it remembers
the earliest time anything can expire (`next_due`): until then it returns at once; when
something is due it is one vectorized scan of the array. Expiry is therefore exact at
every access (no expired value is ever read), and a key that is never accessed again is
freed by the first batch after its expiry. `StateTtl` is written with the operator's state,
so the timestamps survive a checkpoint / savepoint restore.

The clock is processing time in epoch ms. Tests swap it with `set_clock` (a callable
returning ms); each operator reads it once per batch (`now_ms`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from runtime.checkpoint.format import register_state_type
from runtime.config.options import key

STATE_TTL = (
    key("table.exec.state.ttl")
    .duration_type()
    .default_value(0)
    .with_description(
        "STREAMING: state of a key not written for this long is dropped (processing time; a returning key "
        "starts from scratch, e.g. COUNT restarts at 1). Applies to GroupAggregate, regular Join (per row), "
        "Deduplicate and Rank; window operators ignore it. 0 = never. A /*+ STATE_TTL(...) */ hint "
        "overrides it per join side / aggregate (docs/state_ttl.md)."
    )
)
# Node param the planner sets from a STATE_TTL hint (ms; a join has one per side).
HINT_PARAM = "state_ttl_ms"
NEVER = np.iinfo(np.int64).max


def _system_clock() -> int:
    return time.time_ns() // 1_000_000


_clock: Callable[[], int] = _system_clock


def now_ms() -> int:
    """Processing time (epoch ms) as state TTL sees it."""
    return int(_clock())


def set_clock(clock: Callable[[], int] | None) -> Callable[[], int]:
    """Replace the TTL clock (None: the system clock); returns the previous one. For tests:
    a fake clock makes expiry deterministic."""
    global _clock
    previous = _clock
    _clock = clock if clock is not None else _system_clock
    return previous


def ttl_from_config(config: Mapping[str, str] | None) -> int:
    """`table.exec.state.ttl` in ms (0 = never expire)."""
    return max(0, STATE_TTL.get(config))


def operator_ttl(config: Mapping[str, str] | None, params: Any, side: int | None = None) -> int:
    """The TTL (ms) of an operator's state: its STATE_TTL hint (the typed params' field
    `state_ttl_ms`, or that key of untyped params: a list per input for joins; None = not
    hinted; `params` None = the kind takes no hint) wins over `table.exec.state.ttl`."""
    if params is None:
        hint = None
    elif isinstance(params, Mapping):
        hint = params.get(HINT_PARAM)
    else:
        hint = getattr(params, HINT_PARAM, None)
    if isinstance(hint, (list, tuple)):
        hint = hint[side or 0] if len(hint) > (side or 0) else None
    if hint is not None:
        return max(0, int(hint))
    return ttl_from_config(config)


@register_state_type
class StateTtl:
    """Last-write processing time per slot of one keyed state (module docstring)."""

    def __init__(self, ttl_ms: int) -> None:
        self.ttl_ms = int(ttl_ms)
        self.last = np.full(0, NEVER, dtype=np.int64)
        self.next_due = NEVER
        self.expired_total = 0

    @property
    def enabled(self) -> bool:
        return self.ttl_ms > 0

    def _grow(self, n: int) -> None:
        if len(self.last) >= n:
            return
        out = np.full(max(n, 2 * len(self.last), 16), NEVER, dtype=np.int64)
        out[: len(self.last)] = self.last
        self.last = out

    def touch(self, slots: np.ndarray, now: int) -> None:
        """These slots were written at `now` (their TTL restarts)."""
        if not self.enabled or len(slots) == 0:
            return
        slots = np.asarray(slots, dtype=np.int64)
        slots = slots[slots >= 0]
        if len(slots) == 0:
            return
        self._grow(int(slots.max()) + 1)
        self.last[slots] = now
        self.next_due = min(self.next_due, now + self.ttl_ms)

    def forget(self, slots: np.ndarray) -> None:
        """The operator removed these slots itself: stop tracking them."""
        if not self.enabled or len(slots) == 0:
            return
        slots = np.asarray(slots, dtype=np.int64)
        slots = slots[(slots >= 0) & (slots < len(self.last))]
        self.last[slots] = NEVER

    def expired(self, now: int) -> np.ndarray:
        """Slots whose last write is at least the TTL before `now`; they are no longer
        tracked afterwards (the caller clears and removes them)."""
        if not self.enabled or now < self.next_due:
            return np.zeros(0, dtype=np.int64)
        slots = np.flatnonzero(self.last <= now - self.ttl_ms).astype(np.int64)
        self.last[slots] = NEVER
        oldest = int(self.last.min()) if len(self.last) else NEVER
        self.next_due = NEVER if oldest == NEVER else oldest + self.ttl_ms
        self.expired_total += len(slots)
        return slots

    def reconfigure(self, ttl_ms: int) -> None:
        """After a restore: the running job's TTL applies to the restored timestamps."""
        self.ttl_ms = int(ttl_ms)
        tracked = self.last[self.last != NEVER]
        self.next_due = int(tracked.min()) + self.ttl_ms if len(tracked) and self.enabled else NEVER

    def tracked(self) -> int:
        """How many slots are tracked (for metrics)."""
        return int((self.last != NEVER).sum())


def state_bytes(*parts: Any, _depth: int = 0) -> int:
    """Approximate in-memory size of state parts: numpy arrays, Arrow arrays / tables /
    batches, and (three levels deep) lists, dicts and objects holding them; other values
    count 0. For the per-operator state-size metric, not an exact accounting."""
    total = 0
    for p in parts:
        if p is None or isinstance(p, (str, bytes, int, float, bool)):
            continue
        if isinstance(p, np.ndarray):
            total += int(p.nbytes)
            continue
        nbytes = getattr(p, "nbytes", None)
        if isinstance(nbytes, int):
            total += nbytes
            continue
        if _depth >= 3:
            continue
        if isinstance(p, (list, tuple, set)):
            total += state_bytes(*p, _depth=_depth + 1)
        elif isinstance(p, dict):
            total += state_bytes(*p.values(), _depth=_depth + 1)
        elif hasattr(p, "__dict__"):
            total += state_bytes(*vars(p).values(), _depth=_depth + 1)
    return total
