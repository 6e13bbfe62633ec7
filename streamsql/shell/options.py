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
        "(changelog: every change with its op; table: the materialized result, updated live)."
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
