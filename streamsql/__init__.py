"""streamsql: Flink SQL in Python, with no JVM.

from streamsql import TableEnvironment, EnvironmentSettings
t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
"""

from streamsql.config import TableConfig
from streamsql.descriptors import FormatDescriptor, Schema, TableDescriptor, TableSchema
from streamsql.environment import EnvironmentSettings, TableEnvironment
from streamsql.result import ResultKind, TableResult
from streamsql.row import Row, RowKind
from streamsql.statement_set import StatementSet
from streamsql.table import Table
from streamsql.udf import DataTypes

__all__ = [
    "DataTypes",
    "EnvironmentSettings",
    "FormatDescriptor",
    "ResultKind",
    "Row",
    "RowKind",
    "Schema",
    "StatementSet",
    "Table",
    "TableDescriptor",
    "TableConfig",
    "TableEnvironment",
    "TableResult",
    "TableSchema",
]
