"""PyFlink's metric objects for Python functions (`function_context.get_metric_group()`).

PyFlink reports a function's counters, gauges, meters and distributions to Flink's metric
system. streamsql runs functions in the engine's process and keeps them there: each metric
is a plain Python object a function updates and reads (`get_count()`, ...), registered under
its scope (`add_group` names) in `registered_metrics()`; they are not exported to the REST
API or Prometheus. With `python.metric.enabled` = false, `get_metric_group()` raises as
PyFlink does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

_LOCK = threading.Lock()
_METRICS: dict[tuple[str, ...], Any] = {}


def registered_metrics() -> dict[str, Any]:
    """Every metric registered in this process, by its dotted scope name (`key.value.my_counter`)."""
    with _LOCK:
        return {".".join(k): m for k, m in _METRICS.items()}


class Counter:
    """A count: `inc()` / `inc(n)`, `dec()` / `dec(n)`, `get_count()`."""

    def __init__(self) -> None:
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n

    def dec(self, n: int = 1) -> None:
        self._count -= n

    def get_count(self) -> int:
        return self._count


class Meter:
    """Events per second over `time_span_in_seconds`: `mark_event()` / `mark_event(n)`."""

    def __init__(self, time_span_in_seconds: int = 60) -> None:
        self._span = max(1, int(time_span_in_seconds))
        self._count = 0
        self._events: list[tuple[float, int]] = []

    def mark_event(self, value: int = 1) -> None:
        now = time.monotonic()
        self._count += value
        self._events.append((now, value))
        cut = now - self._span
        while self._events and self._events[0][0] < cut:
            self._events.pop(0)

    def get_count(self) -> int:
        return self._count

    def get_rate(self) -> float:
        cut = time.monotonic() - self._span
        return sum(v for t, v in self._events if t >= cut) / self._span


class Distribution:
    """Sum, count, min, max and mean of the integers given to `update(n)`."""

    def __init__(self) -> None:
        self.count = 0
        self.sum = 0
        self.min: int | None = None
        self.max: int | None = None

    def update(self, value: int) -> None:
        self.count += 1
        self.sum += value
        self.min = value if self.min is None else min(self.min, value)
        self.max = value if self.max is None else max(self.max, value)

    @property
    def mean(self) -> float | None:
        return self.sum / self.count if self.count else None


class Gauge:
    """A value read on demand from the function's callable."""

    def __init__(self, obj: Callable[[], int]) -> None:
        self._obj = obj

    def get_value(self) -> int:
        return self._obj()


class MetricGroup:
    """PyFlink's MetricGroup: `add_group(name, extra=None)` for a sub-scope (a key/value
    pair when `extra` is given), `counter`, `gauge`, `meter`, `distribution`."""

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self._scope = scope

    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        return MetricGroup((*self._scope, name) if extra is None else (*self._scope, name, extra))

    def _register(self, name: str, metric: Any) -> Any:
        with _LOCK:
            return _METRICS.setdefault((*self._scope, name), metric)

    def counter(self, name: str) -> Counter:
        return self._register(name, Counter())  # type: ignore[no-any-return]

    def gauge(self, name: str, obj: Callable[[], int]) -> None:
        self._register(name, Gauge(obj))

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        return self._register(name, Meter(time_span_in_seconds))  # type: ignore[no-any-return]

    def distribution(self, name: str) -> Distribution:
        return self._register(name, Distribution())  # type: ignore[no-any-return]
