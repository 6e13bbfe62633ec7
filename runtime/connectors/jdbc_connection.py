"""How a 'jdbc' table reaches its PostgreSQL table: the connection options and their readers,
shared by the scan and lookup source (runtime.connectors.jdbc) and the sink
(runtime.connectors.jdbc_sink), which the connector's factory builds.
"""

from __future__ import annotations

from typing import Any

from runtime.config import duration_ms
from runtime.config.options import ConfigOption
from runtime.connectors.postgres import Endpoint, parse_jdbc_url
from runtime.errors import ConnectorError

CONNECTION_OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption("url", required=True, description="The JDBC database url: `jdbc:postgresql://host:port/database`."),
    ConfigOption("table-name", required=True, description="The table to read or write (optionally `schema.table`)."),
    ConfigOption("username", description="The user name to connect with."),
    ConfigOption("password", description="The password to connect with."),
    ConfigOption(
        "driver",
        description="The JDBC driver class (accepted for compatibility and ignored: streamsql connects with psycopg).",
    ),
    ConfigOption(
        "compatible-mode",
        description="Flink: the SQL dialect of a database that speaks another's (OceanBase: 'mysql' or "
        "'oracle'). streamsql's jdbc connector speaks PostgreSQL only, so a table that sets it is refused.",
    ),
    ConfigOption(
        "connection.max-retry-timeout",
        type="duration",
        default="60 s",
        description="How long to keep retrying a refused connection before the job fails (at least 1 s).",
    ),
)


def endpoint(options: dict[str, str]) -> Endpoint:
    url = options.get("url")
    if not url:
        raise ConnectorError("Missing required option 'url' for connector 'jdbc'.")
    mode = options.get("compatible-mode")
    if mode:
        raise ConnectorError(
            f"'compatible-mode' = '{mode}' is not supported: streamsql's jdbc connector reads and writes PostgreSQL "
            "only (the option selects another database's dialect, e.g. OceanBase's). Remove the option."
        )
    return parse_jdbc_url(url, options.get("username"), options.get("password"))


def check_retry_options(options: dict[str, str]) -> None:
    """Flink's checks of the retry options: counts are not negative, the timeout is at least 1 s."""
    for key in ("lookup.max-retries", "sink.max-retries"):
        value = options.get(key)
        if value is not None and int(value) < 0:
            raise ConnectorError(f"The value of '{key}' option shouldn't be negative, but is {value}.")
    if retry_timeout_s(options) < 1:
        raise ConnectorError(
            "The value of 'connection.max-retry-timeout' option must be in second granularity and shouldn't be "
            f"smaller than 1 second, but is {options.get('connection.max-retry-timeout')}."
        )


def retry_timeout_s(options: dict[str, str]) -> float:
    ms = duration_ms(options.get("connection.max-retry-timeout") or "60 s", "connection.max-retry-timeout")
    return (ms or 0) / 1000


def table_name(options: dict[str, str]) -> str:
    table = options.get("table-name")
    if not table:
        raise ConnectorError("Missing required option 'table-name' for connector 'jdbc'.")
    return table
