"""PyFlink's TableConfig methods beyond get/set (TableConfig mixes them in).

`get_configuration()` returns a `Configuration` that writes through to the session (as
PyFlink's does: setting a key on it changes the TableConfig); idle state retention is
`table.exec.state.ttl`; the SQL dialect is `table.sql-dialect` (only DEFAULT exists).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from runtime.config.options import key
from runtime.state.ttl import STATE_TTL
from streamsql.common import Configuration
from streamsql.modes import SqlDialect

if TYPE_CHECKING:
    from streamsql.config import TableConfig

SQL_DIALECT = (
    key("table.sql-dialect")
    .string_type()
    .default_value("default")
    .with_check(lambda v: v.strip().lower() == "default", "default (the Hive dialect needs Hive's parser, a JVM)")
    .with_description("The SQL dialect statements are parsed in: Flink's `default` (Hive's needs a JVM).")
)
MAX_GENERATED_CODE_LENGTH = (
    key("table.generated-code.max-length")
    .int_type()
    .default_value(4000)
    .with_description("Flink's limit for generated Java code; accepted for compatibility, streamsql generates none.")
)
PLAN_FORCE_RECOMPILE = (
    key("table.plan.force-recompile")
    .boolean_type()
    .default_value(False)
    .with_description(
        "COMPILE PLAN overwrites an existing plan file (otherwise it fails, as in Flink); COMPILE AND "
        "EXECUTE PLAN compiles again instead of running the file's plan."
    )
)


class _SessionConfiguration(Configuration):
    """A Configuration whose writes go to the session's TableConfig."""

    def __init__(self, table_config: TableConfig) -> None:
        super().__init__()
        self._table_config = table_config
        self._map = table_config.explicit()

    def set_string(self, key: str, value: str) -> Configuration:
        self._table_config.set(key, value)
        self._map[key] = value
        return self

    def set_integer(self, key: str, value: int) -> Configuration:
        return self.set_string(key, str(int(value)))

    def set_float(self, key: str, value: float) -> Configuration:
        return self.set_string(key, repr(float(value)))

    def set_boolean(self, key: str, value: bool) -> Configuration:
        return self.set_string(key, "true" if value else "false")

    def remove_config(self, key: str) -> bool:
        self._table_config.reset(key)
        return self._map.pop(key, None) is not None


class TableConfigApi:
    """PyFlink's TableConfig methods, over `set` / `get` / `reset` / `explicit`."""

    if TYPE_CHECKING:

        def set(self, key: str, value: str) -> TableConfig: ...
        def get(self, key: str, default_value: str | None = None) -> str | None: ...
        def explicit(self) -> dict[str, str]: ...
        def to_dict(self) -> dict[str, str]: ...

    def get_configuration(self) -> Configuration:
        return _SessionConfiguration(self)  # type: ignore[arg-type]

    def add_configuration(self, configuration: Configuration | dict[str, Any]) -> None:
        items = configuration.to_dict() if isinstance(configuration, Configuration) else configuration
        for k, v in items.items():
            self.set(k, str(v))

    def to_map(self) -> dict[str, str]:
        return self.explicit()

    def get_idle_state_retention(self) -> datetime.timedelta:
        return datetime.timedelta(milliseconds=STATE_TTL.get(self) or 0)  # type: ignore[arg-type]

    def set_idle_state_retention(self, duration: datetime.timedelta) -> None:
        self.set(STATE_TTL.key, f"{int(duration.total_seconds() * 1000)} ms")

    def get_max_generated_code_length(self) -> int:
        return MAX_GENERATED_CODE_LENGTH.get(self)  # type: ignore[arg-type]

    def set_max_generated_code_length(self, max_generated_code_length: int) -> None:
        self.set(MAX_GENERATED_CODE_LENGTH.key, str(int(max_generated_code_length)))

    def get_python_executable(self) -> str | None:
        from runtime.udf_options import EXECUTABLE  # start-up: the python.* keys load when used

        found = EXECUTABLE.find(self)  # type: ignore[arg-type]
        return None if found is None else found[1]  # PyFlink: None unless set

    def set_python_executable(self, python_exec: str) -> None:
        from runtime.udf_options import EXECUTABLE

        self.set(EXECUTABLE.key, python_exec)

    def get_sql_dialect(self) -> SqlDialect:
        return SqlDialect[SQL_DIALECT.get(self).strip().upper()]  # type: ignore[arg-type]

    def set_sql_dialect(self, sql_dialect: SqlDialect) -> None:
        self.set(SQL_DIALECT.key, sql_dialect.name.lower())
