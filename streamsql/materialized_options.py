"""The configuration options of materialized tables (streamsql/materialized_tables.py), in
a module of their own: the option registry (streamsql/config.py) imports every option
module when a session sets its first key, and the materialized-table machinery (ALTER
handling, statement classes) need not load for a session that has none.
"""

from __future__ import annotations

from runtime.config.options import key

FRESHNESS_THRESHOLD = (
    key("materialized-table.refresh-mode.freshness-threshold")
    .duration_type()
    .default_value(30 * 60_000)
    .with_description(
        "A materialized table without REFRESH_MODE refreshes CONTINUOUSly when its freshness is below this, "
        "else FULL (a periodic batch refresh)."
    )
)
DEFAULT_FRESHNESS_CONTINUOUS = (
    key("materialized-table.default-freshness.continuous")
    .duration_type()
    .default_value(3 * 60_000)
    .with_description("The freshness of a CONTINUOUS materialized table created without FRESHNESS.")
)
DEFAULT_FRESHNESS_FULL = (
    key("materialized-table.default-freshness.full")
    .duration_type()
    .default_value(60 * 60_000)
    .with_description("The freshness of a FULL materialized table created without FRESHNESS.")
)
WORKFLOW_SCHEDULER = (
    key("workflow-scheduler.type")
    .enum_type("embedded")
    .no_default_value()
    .with_description(
        "The workflow scheduler that runs FULL materialized tables' periodic refreshes: 'embedded' runs them "
        "in this session's process. Unset: creating a FULL materialized table fails, as in Flink."
    )
)
PARTITION_DATE_FORMATTER = (
    key("partition.fields.#.date-formatter")
    .string_type()
    .no_default_value()
    .with_description(
        "A materialized table's WITH option (`#` is a partition column of string type): the date pattern "
        "(Java's, e.g. `yyyy-MM-dd`) of that column, so a FULL refresh scheduled at time t refreshes "
        "only the partition of t minus the freshness."
    )
)
