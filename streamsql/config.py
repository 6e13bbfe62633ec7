"""Configuration keys (Flink's names), their defaults and documentation.

`TableConfig` is the session's key/value map; the planner and runtime read plain strings
from the JobGraph's config. The KEYS table is the single source for `docs/configuration.md`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigKey:
    key: str
    default: str | None
    description: str
    values: tuple[str, ...] = ()


KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "execution.runtime-mode",
        "streaming",
        "STREAMING runs sources as unbounded streams with watermarks and changelog results; "
        "BATCH runs bounded sources and emits final results only.",
        ("streaming", "batch"),
    ),
    ConfigKey("table.local-time-zone", "UTC", "Session time zone for TIMESTAMP_LTZ values and time functions."),
    ConfigKey(
        "pipeline.auto-watermark-interval",
        "0",
        "Periodic watermark interval. streamsql emits watermarks in input order (as Flink with 0), "
        "so results do not depend on timing.",
    ),
    ConfigKey("pipeline.max-parallelism", "128", "Number of key groups keyed state is hashed into."),
    ConfigKey("parallelism.default", "1", "Parallelism of the job's operators."),
    ConfigKey(
        "table.exec.source.idle-timeout",
        "0 ms",
        "A source split that produced no row for this long is marked idle and no longer holds back the watermark.",
    ),
    ConfigKey(
        "sql-client.execution.result-mode",
        "tableau",
        "How the CLI shows query results: tableau prints rows as they come (with the op column "
        "in streaming mode); changelog and table open a full-screen view in the interactive shell "
        "(changelog: every change with its op; table: the materialized result, updated live).",
        ("tableau", "changelog", "table"),
    ),
    ConfigKey(
        "sql-client.history-file",
        "~/.streamsql_history",
        "File the interactive shell keeps its statement history in (read at start, appended on "
        "each statement; Up/Down and Ctrl-R search it).",
    ),
    ConfigKey(
        "table.display.max-column-width", "30", "Widest column the tableau output prints before cutting a value."
    ),
    ConfigKey("execution.target", "local", "Where jobs run.", ("local",)),
    ConfigKey("state.backend.type", "hashmap", "Keyed state backend.", ("hashmap",)),
    ConfigKey(
        "table.exec.source.batch-rows",
        "8192",
        "Most rows a source puts in one Arrow batch. Results do not depend on it; larger batches "
        "amortize per-batch work, smaller ones show streaming updates in finer steps.",
    ),
    ConfigKey(
        "table.exec.statement-start-ms",
        None,
        "Fixes the instant (epoch ms) CURRENT_TIMESTAMP and friends return, for reproducible runs; "
        "unset, they return the time the statement started.",
    ),
)

_DEFAULTS = {k.key: k.default for k in KEYS if k.default is not None}


def normalize(key: str, value: str) -> str:
    """Flink accepts enum values in any case; keep one spelling internally."""
    if key == "execution.runtime-mode":
        return value.strip().lower()
    return value


class TableConfig:
    """The session's configuration (PyFlink's TableConfig shape: get/set)."""

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        for k, v in (initial or {}).items():
            self.set(k, v)

    def set(self, key: str, value: str) -> TableConfig:
        self._values[key] = normalize(key, str(value))
        return self

    def get(self, key: str, default: str | None = None) -> str | None:
        if key in self._values:
            return self._values[key]
        return _DEFAULTS.get(key, default)

    def reset(self, key: str | None = None) -> None:
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)

    def to_dict(self) -> dict[str, str]:
        """Effective values: defaults overlaid with what the session set."""
        out = dict(_DEFAULTS)
        out.update(self._values)
        return out

    def explicit(self) -> dict[str, str]:
        return dict(self._values)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(sorted(self.to_dict().items()))

    # PyFlink's TableConfig helpers
    def get_local_timezone(self) -> str:
        return self.get("table.local-time-zone") or "UTC"

    def set_local_timezone(self, tz: str) -> None:
        self.set("table.local-time-zone", tz)
