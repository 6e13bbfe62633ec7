"""A table's `WITH` options checked against the declarations of its connector and format,
as Flink's FactoryUtil checks them: an unknown connector or format, unsupported options,
missing required options and values a declared option does not accept all fail before the
job runs, with Flink's wording. The error names the offending option (`option`) so the
planner can point at it in the `CREATE TABLE` statement, and offers a "Did you mean".
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import replace

from runtime.config.options import ConfigOption
from runtime.connectors.base import (
    ConnectorFactory,
    ConnectorPluginError,
    TableDescription,
    connector_names,
    get_connector,
)
from runtime.connectors.formats import all_format_options, format_names, format_options_view, get_format
from runtime.errors import ConfigError, ConnectorError

CONNECTOR: ConfigOption[str] = ConfigOption("connector", required=True, description="The connector's identifier.")

WATERMARK_ALIGNMENT_GROUP: ConfigOption[str] = ConfigOption(
    "scan.watermark.alignment.group",
    description="Flink's watermark alignment: the sources of one group stop reading splits whose watermark is "
    "more than 'scan.watermark.alignment.max-drift' ahead of the group's. Not supported: a table that sets it "
    "is refused at planning time (remove the option; the job then reads all splits as fast as they come).",
)

WATERMARK_ALIGNMENT_MAX_DRIFT: ConfigOption[int] = ConfigOption(
    "scan.watermark.alignment.max-drift",
    type="duration",
    description="The maximum drift of watermark alignment (with 'scan.watermark.alignment.group'); refused "
    "as that option is.",
)

WATERMARK_ALIGNMENT_UPDATE_INTERVAL: ConfigOption[int] = ConfigOption(
    "scan.watermark.alignment.update-interval",
    type="duration",
    default="1 s",
    description="How often watermark alignment re-computes the group's watermark (with "
    "'scan.watermark.alignment.group'); refused as that option is.",
)

# Options any table may carry: the planner reads them, whatever the connector.
TABLE_OPTIONS: tuple[ConfigOption, ...] = (
    ConfigOption(
        "scan.watermark.idle-timeout",
        type="duration",
        description="A split of this table that produced no row for this long no longer holds back the "
        "watermark (overrides table.exec.source.idle-timeout).",
    ),
    WATERMARK_ALIGNMENT_GROUP,
    WATERMARK_ALIGNMENT_MAX_DRIFT,
    WATERMARK_ALIGNMENT_UPDATE_INTERVAL,
)
# Declared above (Flink's names) but not implemented: a table setting them is refused.
UNSUPPORTED_TABLE_OPTIONS = (
    WATERMARK_ALIGNMENT_GROUP,
    WATERMARK_ALIGNMENT_MAX_DRIFT,
    WATERMARK_ALIGNMENT_UPDATE_INTERVAL,
)

INTERNAL = "$internal."


class ConnectorOptionError(ConnectorError):
    """A `WITH` option is wrong. `option` is the key to point at (None: the whole clause);
    `on_value`: point at its value rather than its key; `hint`: "Did you mean ...?"."""

    def __init__(self, message: str, option: str | None = None, hint: str | None = None, on_value: bool = False):
        super().__init__(message)
        self.message = message
        self.option = option
        self.hint = hint
        self.on_value = on_value


def did_you_mean(word: str, candidates: list[str]) -> str | None:
    match = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"Did you mean '{match[0]}'?" if match else None


def supported_options(factory: ConnectorFactory, options: Mapping[str, str]) -> list[ConfigOption]:
    """The options `factory` accepts with these options: its own, those of the formats it
    is given (`'format' = 'csv'` adds `csv.*`, Kafka's `'value.format' = 'json'` adds
    `value.json.*`, and no other format's), and the planner's."""
    own = list(factory.options)
    if factory.formats:
        format_keys = {o.key for o in all_format_options()}
        own = [o for o in own if o.key not in format_keys]
        for key, prefix in factory.format_keys:
            fmt = options.get(key)
            if fmt in factory.formats:
                own += [_prefixed(o, prefix) for o in get_format(fmt).options]
    return [CONNECTOR, *own, *TABLE_OPTIONS]


def _prefixed(option: ConfigOption, prefix: str) -> ConfigOption:
    """A format's option as a connector with several formats names it ('value.json.*')."""
    if not prefix:
        return option
    return replace(
        option,
        key=prefix + option.key,
        fallback_keys=tuple(prefix + k for k in option.fallback_keys),
        deprecated_keys=tuple(prefix + k for k in option.deprecated_keys),
    )


def resolve_factory(options: Mapping[str, str]) -> ConnectorFactory:
    name = options.get("connector")
    if not name:
        raise ConnectorOptionError(
            "Table options do not contain an option key 'connector' for discovering a connector. "
            "Therefore, streamsql assumes a managed table, which it does not support: add 'connector' = '...'.",
        )
    try:
        return get_connector(name)
    except ConnectorPluginError as e:
        raise ConnectorOptionError(
            f"{e}\n\nThe installed packages' connectors are read because '{name}' is not a built-in connector.",
            "connector",
            on_value=True,
        ) from None
    except ConnectorError:
        names = connector_names()
        raise ConnectorOptionError(
            f"Could not find any factory for identifier '{name}' that implements 'DynamicTableFactory'.\n\n"
            "Available factory identifiers are:\n\n" + "\n".join(names),
            "connector",
            did_you_mean(name, names),
            on_value=True,
        ) from None


def validate_table_options(options: Mapping[str, str], table: TableDescription | None = None) -> ConnectorFactory:
    """Check `options` (a table's WITH clause); returns the connector's factory. With
    `table` (the planner's view of the table read or written) also its metadata columns
    and the factory's own checks (option combinations, primary key)."""
    factory = resolve_factory(options)
    for key, _ in factory.format_keys if factory.formats else ():
        fmt = options.get(key)
        refused = _refused_format(fmt) if fmt is not None else None
        if refused:
            raise ConnectorOptionError(f"Format '{fmt}' ('{key}') is not supported: {refused}", key, on_value=True)
        if fmt is not None and fmt not in factory.formats:
            known = [f for f in format_names() if f in factory.formats]
            raise ConnectorOptionError(
                f"Could not find any format factory for identifier '{fmt}' in the classpath.\n\n"
                "Available format identifiers are:\n\n" + "\n".join(known),
                key,
                did_you_mean(fmt, known),
                on_value=True,
            )
    supported = supported_options(factory, options)
    unsupported = sorted(
        k
        for k in options
        if not k.startswith(INTERNAL)
        and not k.startswith(factory.prefixes or ("\0",))
        and not any(o.matches(k) for o in supported)
    )
    if unsupported:
        names = sorted({k for o in supported for k in o.all_keys})
        listed = [f"{k} (deprecated)" if any(k in o.deprecated_keys for o in supported) else k for k in names]
        listed += [f"{p}*" for p in factory.prefixes]
        raise ConnectorOptionError(
            f"Unsupported options found for '{factory.name}'.\n\n"
            "Unsupported options:\n\n" + "\n".join(unsupported) + "\n\nSupported options:\n\n" + "\n".join(listed),
            unsupported[0],
            did_you_mean(unsupported[0], [k for k in names if "#" not in k]),
        )
    missing = [o.key for o in supported if o.required and "#" not in o.key and o.find(options) is None]
    if missing:
        raise ConnectorOptionError(
            "One or more required options are missing.\n\nMissing required options are:\n\n" + "\n".join(missing),
            "connector",
        )
    for k, v in options.items():
        option = next((o for o in supported if o.matches(k)), None)
        if option is None or option.type == "string":
            continue
        try:
            option.parse(v, k)
        except ConfigError as e:
            raise ConnectorOptionError(
                f"Invalid value for option '{k}': {e.accepted}.", k, did_you_mean(v, list(option.values)), on_value=True
            ) from None
    for key, prefix in factory.format_keys if factory.formats else ():
        fmt = options.get(key)
        check = get_format(fmt).validate if fmt in factory.formats else None
        if check is not None:
            try:
                check(format_options_view(dict(options), prefix))
            except ConnectorError as e:
                raise ConnectorOptionError(str(e), key) from None
    for k in (o.key for o in UNSUPPORTED_TABLE_OPTIONS):
        if k in options:
            raise ConnectorOptionError(
                f"Watermark alignment ('{k}') is not supported: streamsql does not pause splits that run ahead "
                "of their alignment group's watermark. Remove the 'scan.watermark.alignment.*' options; the "
                "watermark is still the minimum over the splits (idle ones excluded after "
                "'scan.watermark.idle-timeout').",
                k,
            )
    if table is not None:
        _check_metadata(factory, table)
        if factory.validate is not None:
            try:
                factory.validate(table)
            except ConnectorOptionError:
                raise
            except ConnectorError as e:
                raise ConnectorOptionError(str(e)) from None
    return factory


def _refused_format(name: str) -> str | None:
    """Why format `name` (one Flink has) cannot work here, or None."""
    if name not in format_names():
        return None
    return get_format(name).refused


def _check_metadata(factory: ConnectorFactory, table: TableDescription) -> None:
    """Each metadata column names a key the connector offers (for writing: a writable one;
    a read-only column of a written table must be VIRTUAL), as Flink's DynamicSourceUtils /
    DynamicSinkUtils check them. The format's metadata (Kafka: 'value.source.table' of
    'debezium-json') is read-only."""
    offered = [m.key for m in factory.metadata if m.writable or not table.sink]
    if factory.format_metadata is not None and not table.sink:
        offered += [m.key for m in factory.format_metadata(table.options)]
    for column, key in table.metadata.items():
        if key in offered:
            continue
        verb = "writing" if table.sink else "reading"
        listed = "\n".join(offered) if offered else "(none)"
        raise ConnectorOptionError(
            f"Invalid metadata key '{key}' in column '{column}' of table '{table.name}'. "
            f"The connector '{factory.name}' supports the following metadata keys for {verb}:\n{listed}",
            hint=did_you_mean(key, offered),
        )
