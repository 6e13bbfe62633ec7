"""SQL text the Table API writes: identifier quoting. Its own small module so that the
catalog methods every TableEnvironment has (and the CLI's start-up) need not load the
Table API's expression modules (streamsql.expressions re-exports `quote`)."""

from __future__ import annotations


def quote(name: str) -> str:
    """An identifier in backticks (Flink's quoting), so any name survives the round trip."""
    return "`" + name.replace("`", "``") + "`"
