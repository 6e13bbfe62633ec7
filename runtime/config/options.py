"""Typed configuration options: each key declared once, read only through its declaration.

A `ConfigOption` is Flink's `ConfigOption`: key, type, default, description, accepted
values, fallback and deprecated keys, and a validation. Declare one next to the code that
owns it, with the builder::

    INTERVAL = (
        key("execution.checkpointing.interval")
        .duration_type()
        .no_default_value()
        .with_description("Take a checkpoint this often ...")
    )

and read it with `INTERVAL.get(conf)`, where `conf` is the JobGraph's config (a str -> str
mapping) or the session's `TableConfig`. The default is not restated at the read; a bad
value fails with a `ConfigError` naming the key and what is accepted.

Connector and format `WITH` options are the same class (`required=True` for mandatory
ones; `#` in a key is a wildcard for one name segment, as in `fields.#.kind`).

The default is kept as text (what the docs and `SET;` show, and what a JobGraph's config
carries); the builder formats a typed default into it, so both spellings are one value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field, replace
from typing import Any, Generic, Protocol, TypeVar

from runtime.config import parsers
from runtime.errors import ConfigError
from runtime.frozen import frozen_dataclass

T = TypeVar("T")
U = TypeVar("U")


class ConfigSource(Protocol):
    """Anything with `get(key)`: a plain dict (a JobGraph's config) or a `TableConfig`."""

    def get(self, key: str, /) -> str | None: ...


@frozen_dataclass
class OptionType:
    """A value type: its name in the docs, its parser and how a typed value is written."""

    name: str
    doc_name: str
    parse: Callable[[str], Any]
    format: Callable[[Any], str]


TYPES: dict[str, OptionType] = {
    t.name: t
    for t in (
        OptionType("string", "String", parsers.parse_string, str),
        OptionType("int", "Integer", parsers.parse_int, str),
        OptionType("long", "Long", parsers.parse_int, str),  # Flink's Long: Python ints have no width
        OptionType("float", "Double", parsers.parse_float, repr),
        OptionType("boolean", "Boolean", parsers.parse_bool, parsers.format_bool),
        OptionType("duration", "Duration", parsers.parse_duration_ms, parsers.format_duration_ms),
        OptionType("memory", "MemorySize", parsers.parse_memory_size, parsers.format_memory_size),
        OptionType("enum", "Enum", parsers.parse_string, str),  # values checked by the option
        OptionType("list", "List<String>", parsers.parse_list, parsers.format_list),
        OptionType("enum_list", "List<Enum>", parsers.parse_list, parsers.format_list),  # items checked
    )
}


@frozen_dataclass
class ConfigOption(Generic[T]):
    """One declared key. `T` is what `get` returns (None when unset and no default)."""

    key: str
    type: str = "string"
    default: str | None = None  # as text; parsed by `get`
    required: bool = False  # WITH options: the table cannot be used without it
    description: str = ""
    values: tuple[str, ...] = ()  # enum: the accepted values (any case on input)
    fallback_keys: tuple[str, ...] = ()  # also read, in order, when `key` is unset
    deprecated_keys: tuple[str, ...] = ()  # older names, read last, shown as deprecated
    check: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)
    check_accepted: str = ""  # what `check` accepts, for the error message

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise TypeError(f"option '{self.key}': unknown type '{self.type}' (one of {', '.join(TYPES)})")
        if self.type in ("enum", "enum_list") and not self.values:
            raise TypeError(f"option '{self.key}': an enum needs its values")

    # -- declaration helpers (each returns a new option) --------------------------------
    def with_description(self, text: str) -> ConfigOption[T]:
        return replace(self, description=text)

    def with_fallback_keys(self, *keys: str) -> ConfigOption[T]:
        return replace(self, fallback_keys=self.fallback_keys + keys)

    def with_deprecated_keys(self, *keys: str) -> ConfigOption[T]:
        return replace(self, deprecated_keys=self.deprecated_keys + keys)

    def with_check(self, check: Callable[[Any], bool], accepted: str) -> ConfigOption[T]:
        """Values `check` refuses fail with 'expected <accepted>'."""
        return replace(self, check=check, check_accepted=accepted)

    # -- reading -------------------------------------------------------------------------
    @property
    def all_keys(self) -> tuple[str, ...]:
        return (self.key, *self.fallback_keys, *self.deprecated_keys)

    def find(self, conf: ConfigSource | None) -> tuple[str, str] | None:
        """(key actually set, its text) for the first of `all_keys` set to a non-blank value."""
        if conf is None:
            return None
        for k in self.all_keys:
            v = conf.get(k)
            if v is not None and str(v).strip() != "":
                return k, str(v)
        return None

    def is_set(self, conf: ConfigSource | None) -> bool:
        return self.find(conf) is not None

    def get(self, conf: ConfigSource | None) -> T:
        """The typed value: the first key set, else the declared default (None if none)."""
        found = self.find(conf)
        if found is not None:
            return self.parse(found[1], found[0])
        if self.default is None:
            return None  # type: ignore[return-value]  # T includes None for no-default options
        return self.parse(self.default)

    def parse(self, text: str, key: str | None = None) -> T:
        """`text` as this option's type; a `ConfigError` naming `key` (default: this key)."""
        name = key or self.key
        try:
            value = TYPES[self.type].parse(text)
            if self.type == "enum":
                value = parsers.parse_enum(value, self.values)
            elif self.type == "enum_list":
                value = tuple(parsers.parse_enum(v, self.values) for v in value)
        except ValueError as e:
            raise ConfigError(name, text, str(e)) from None
        if self.check is not None and not self.check(value):
            raise ConfigError(name, text, f"expected {self.check_accepted}")
        return value  # type: ignore[no-any-return]

    def validate(self, text: str, key: str | None = None) -> None:
        self.parse(text, key)

    # -- docs ----------------------------------------------------------------------------
    @property
    def choices(self) -> tuple[str, ...]:
        """The values a user can pick from (enums, booleans), for completion and docs."""
        return ("true", "false") if self.type == "boolean" else self.values

    @property
    def doc_type(self) -> str:
        return TYPES[self.type].doc_name

    def matches(self, key: str) -> bool:
        """Whether `key` is this option (a `#` in the declared key matches one segment)."""
        if "#" not in self.key:
            return key in self.all_keys
        return _wildcard(self.key).fullmatch(key) is not None


def _wildcard(pattern: str) -> re.Pattern[str]:
    return re.compile(".+".join(re.escape(p) for p in pattern.split("#")))


def duration_ms(text: str | None, name: str, default: int | None = None) -> int | None:
    """A duration that is not a configuration key (a hint argument, a `WITH` option read by
    hand) in ms with the one duration parser; blank: `default`. A `ConfigError` names `name`."""
    if text is None or str(text).strip() == "":
        return default
    try:
        return parsers.parse_duration_ms(text)
    except ValueError as e:
        raise ConfigError(name, str(text), str(e)) from None


class TypedBuilder(Generic[T]):
    """`key(...).<type>()` : choose the default next."""

    def __init__(self, name: str, type_name: str, values: tuple[str, ...] = ()) -> None:
        self._key = name
        self._type = type_name
        self._values = values

    def default_value(self, value: T) -> ConfigOption[T]:
        text = TYPES[self._type].format(value)
        return ConfigOption(self._key, self._type, default=text, values=self._values)

    def no_default_value(self) -> ConfigOption[T | None]:
        return ConfigOption(self._key, self._type, values=self._values)


class OptionBuilder:
    """`key(name)`: pick the value type (Flink's `ConfigOptions.key(name).<type>Type()`)."""

    def __init__(self, name: str) -> None:
        self._key = name

    def string_type(self) -> TypedBuilder[str]:
        return TypedBuilder(self._key, "string")

    def int_type(self) -> TypedBuilder[int]:
        return TypedBuilder(self._key, "int")

    def long_type(self) -> TypedBuilder[int]:
        """Flink's `longType()`: the same Python int, documented as Long."""
        return TypedBuilder(self._key, "long")

    def float_type(self) -> TypedBuilder[float]:
        return TypedBuilder(self._key, "float")

    def boolean_type(self) -> TypedBuilder[bool]:
        return TypedBuilder(self._key, "boolean")

    def duration_type(self) -> TypedBuilder[int]:
        """Milliseconds."""
        return TypedBuilder(self._key, "duration")

    def memory_type(self) -> TypedBuilder[int]:
        """Bytes."""
        return TypedBuilder(self._key, "memory")

    def enum_type(self, *values: str) -> TypedBuilder[str]:
        """One of `values` (read in any case, returned as declared)."""
        return TypedBuilder(self._key, "enum", tuple(values))

    def list_type(self) -> TypedBuilder[tuple[str, ...]]:
        return TypedBuilder(self._key, "list")

    def enum_list_type(self, *values: str) -> TypedBuilder[tuple[str, ...]]:
        """A ';'-separated list of `values` (Flink's `enumType(..).asList()`)."""
        return TypedBuilder(self._key, "enum_list", tuple(values))


def key(name: str) -> OptionBuilder:
    return OptionBuilder(name)
