"""The 'canal-json' and 'maxwell-json' change-event formats (Canal's and Maxwell's JSON
messages → +I/-U/+U/-D rows). Message connectors only (Kafka)."""

from __future__ import annotations

from typing import Any

from runtime.connectors.base import ConfigOption
from runtime.connectors.formats import FileFormat, messages_only, register_format


def _options(prefix: str) -> tuple[ConfigOption[Any], ...]:
    return (
        ConfigOption(
            f"{prefix}.ignore-parse-errors",
            type="boolean",
            default="false",
            description="Skip change events that cannot be parsed instead of failing.",
        ),
        ConfigOption(
            f"{prefix}.timestamp-format.standard",
            type="enum",
            default="SQL",
            values=("SQL", "ISO-8601"),
            description="Timestamp text standard of the row fields (see 'json.timestamp-format.standard').",
        ),
        ConfigOption(
            f"{prefix}.map-null-key.mode",
            type="enum",
            default="FAIL",
            values=("FAIL", "DROP", "LITERAL"),
            description="Writing a MAP with a NULL key: FAIL, DROP the entry, or write the literal.",
        ),
        ConfigOption(
            f"{prefix}.map-null-key.literal",
            default="null",
            description="Key text for NULL map keys when the mode is LITERAL.",
        ),
        ConfigOption(
            f"{prefix}.encode.decimal-as-plain-number",
            type="boolean",
            default="false",
            description="Write DECIMAL values in plain notation.",
        ),
    )


CANAL_OPTIONS: tuple[ConfigOption[Any], ...] = _options("canal-json") + (
    ConfigOption(
        "canal-json.database.include",
        description="Only read change events of databases whose name matches this regular expression.",
    ),
    ConfigOption(
        "canal-json.table.include",
        description="Only read change events of tables whose name matches this regular expression.",
    ),
)
MAXWELL_OPTIONS: tuple[ConfigOption[Any], ...] = _options("maxwell-json")

register_format(
    FileFormat(
        name="canal-json",
        extension="json",
        description="Canal's JSON change events (INSERT / UPDATE / DELETE with 'data' and 'old' arrays).",
        options=CANAL_OPTIONS,
        open_reader=messages_only("canal-json"),
        changelog=True,
    )
)
register_format(
    FileFormat(
        name="maxwell-json",
        extension="json",
        description="Maxwell's JSON change events (insert / update / delete with 'data' and 'old').",
        options=MAXWELL_OPTIONS,
        open_reader=messages_only("maxwell-json"),
        changelog=True,
    )
)
