"""streamsql: Flink SQL in Python, with no JVM.

from streamsql import TableEnvironment, EnvironmentSettings
t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
"""

from streamsql.config import TableConfig
from streamsql.environment import EnvironmentSettings, TableEnvironment
from streamsql.result import ResultKind, TableResult
from streamsql.row import Row, RowKind
from streamsql.table import Table

__all__ = [
    "EnvironmentSettings",
    "ResultKind",
    "Row",
    "RowKind",
    "Table",
    "TableConfig",
    "TableEnvironment",
    "TableResult",
]
