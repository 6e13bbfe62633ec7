"""The session's configuration (`TableConfig`) and the registry of every declared key.

Keys are declared once, as typed `ConfigOption`s (runtime/config/options.py), in the module
that owns them; `OPTION_MODULES` names those modules so the registry can collect them for
`SET` validation, shell completion and the generated `docs/configuration.md`
(tests/unit/test_config_keys.py fails when a module declares options and is missing here,
or when code reads a key that is not declared).

`TableConfig` keeps the text the session set. `SET` of a declared key checks the value
with the key's declaration (a bad value fails naming the key and what it accepts; an enum
value is stored in its declared spelling); keys nobody declared are accepted, as Flink
accepts any key in `SET` (connectors and `spark.*` pass-through read their own).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from functools import cache

from runtime.config.core import LOCAL_TIME_ZONE
from runtime.config.options import ConfigOption
from streamsql.table_config_api import TableConfigApi

# Modules declaring configuration options (module-level ConfigOption attributes).
OPTION_MODULES: tuple[str, ...] = (
    "runtime.config.core",
    "runtime.functions.async_options",
    "runtime.checkpoint.options",
    "runtime.state.options",
    "runtime.state.ttl",
    "runtime.executor.parallel.options",
    "runtime.executor.spark.options",
    "planner.optimizer.mini_batch",
    "planner.optimizer.two_phase_agg",
    "planner.optimizer.split_distinct",
    "planner.optimizer.phases",
    "runtime.sink_constraints",
    "runtime.spill",
    "streamsql.environment",
    "streamsql.materialized_options",
    "streamsql.printing",
    "streamsql.client_output",
    "streamsql.control",
    "streamsql.rest.options",
    "streamsql.shell.options",
    "streamsql.table_config_api",
)

INTERNAL_PREFIX = "$internal."


@cache
def all_options() -> tuple[ConfigOption, ...]:
    """Every declared option, sorted by key (internal `$internal.*` ones included)."""
    found: dict[str, ConfigOption] = {}
    for name in OPTION_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, ConfigOption):
                if value.key in found and found[value.key] is not value:
                    raise RuntimeError(f"configuration key '{value.key}' is declared twice ({name})")
                found[value.key] = value
    return tuple(sorted(found.values(), key=lambda o: o.key))


def public_options() -> tuple[ConfigOption, ...]:
    """The options users set (docs, completion): not `$internal.*`."""
    return tuple(o for o in all_options() if not o.key.startswith(INTERNAL_PREFIX))


@cache
def _by_key() -> dict[str, ConfigOption]:
    out: dict[str, ConfigOption] = {}
    for o in all_options():
        for k in o.all_keys:
            out.setdefault(k, o)
    return out


def lookup(key: str) -> ConfigOption | None:
    """The option declared under `key` (or with `key` as a fallback / deprecated name)."""
    return _by_key().get(key)


def check_value(key: str, value: str) -> str:
    """`value` for `key` as `SET` stores it: validated by a declared key (ConfigError
    naming the key and what is accepted), enums in their declared spelling; unknown keys
    unchanged."""
    option = lookup(key)
    if option is None or str(value).strip() == "":
        return value
    parsed = option.parse(value, key)
    return parsed if option.type == "enum" else value  # type: ignore[return-value]


def _defaults() -> dict[str, str]:
    return {o.key: o.default for o in public_options() if o.default not in (None, "")}  # type: ignore[misc]


class TableConfig(TableConfigApi):
    """The session's configuration (PyFlink's TableConfig shape: get/set)."""

    @staticmethod
    def get_default() -> TableConfig:
        """A configuration with every option at its default (PyFlink's TableConfig.get_default)."""
        return TableConfig()

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        for k, v in (initial or {}).items():
            self.set(k, v)

    def set(self, key: str, value: str) -> TableConfig:
        self._values[key] = check_value(key, str(value))
        return self

    def get(self, key: str, default_value: str | None = None) -> str | None:
        """The text set for `key`, else its declared default, else `default_value`. Typed
        reads go through the declaration: `OPTION.get(table_config)`."""
        if key in self._values:
            return self._values[key]
        option = lookup(key)
        if option is not None and option.key == key and option.default not in (None, ""):
            return option.default
        return default_value

    def reset(self, key: str | None = None) -> None:
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)

    def to_dict(self) -> dict[str, str]:
        """Effective values: defaults overlaid with what the session set."""
        out = _defaults()
        out.update(self._values)
        return out

    def explicit(self) -> dict[str, str]:
        return dict(self._values)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(sorted(self.to_dict().items()))

    # PyFlink's TableConfig helpers
    def get_local_timezone(self) -> str:
        return LOCAL_TIME_ZONE.get(self)

    def set_local_timezone(self, timezone_id: str) -> None:
        self.set(LOCAL_TIME_ZONE.key, timezone_id)
