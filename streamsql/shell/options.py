"""Options of the SQL client (the CLI and the interactive shell)."""

from __future__ import annotations

from runtime.config.options import key

RESULT_MODE = (
    key("sql-client.execution.result-mode")
    .enum_type("tableau", "changelog", "table")
    .default_value("tableau")
    .with_description(
        "How the CLI shows query results: tableau prints rows as they come (with the op column "
        "in streaming mode); changelog and table open a full-screen view in the interactive shell "
        "(changelog: every change with its op; table: the materialized result, updated live). "
        "Flink's default is table, which Flink's client refuses for a query in a script (-f) and asks for "
        "tableau; streamsql defaults to tableau so that scripts run as they are. A script's query with "
        "table or changelog fails with Flink's error."
    )
)

MAX_TABLE_RESULT_ROWS = (
    key("sql-client.execution.max-table-result.rows")
    .int_type()
    .default_value(1_000_000)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description(
        "Rows the shell's table result view keeps; past it the oldest rows are dropped first (FIFO), as in "
        "Flink. The changelog view keeps the latest 1000 changes, as Flink's does."
    )
)

SHOW_LINE_NUMBERS = (
    key("sql-client.display.show-line-numbers")
    .boolean_type()
    .default_value(False)
    .with_description("Number the lines of a statement being typed over several lines in the interactive shell.")
)

COLOR_SCHEMA = (
    key("sql-client.display.color-schema")
    .string_type()
    .default_value("DEFAULT")
    .with_check(
        lambda v: (
            v.strip().upper() in ("DEFAULT", "DARK", "LIGHT", "CHESTER", "VS2010", "SOLARIZED", "OBSIDIAN", "GESHI")
        ),
        "one of DEFAULT, DARK, LIGHT, CHESTER, VS2010, SOLARIZED, OBSIDIAN, GESHI",
    )
    .with_description(
        "The shell's syntax highlighting: DEFAULT colors keywords, types, strings, numbers and comments; "
        "Flink's other schemas (DARK, LIGHT, CHESTER, VS2010, SOLARIZED, OBSIDIAN, GESHI) are accepted "
        "and use the same colors."
    )
)

HISTORY_FILE = (
    key("sql-client.history-file")
    .string_type()
    .default_value("~/.streamsql_history")
    .with_description(
        "File the interactive shell keeps its statement history in (read at start, appended on "
        "each statement; Up/Down and Ctrl-R search it)."
    )
)
