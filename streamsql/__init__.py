"""streamsql: Flink SQL in Python, with no JVM.

    from streamsql import TableEnvironment, EnvironmentSettings
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())

The package mirrors PyFlink's `pyflink.table` name for name (docs/table_api.md gives the
import rule: `pyflink.table` → `streamsql`, `pyflink.common` → `streamsql.common`, ...).
Names are loaded on first use, so `import streamsql` (and the CLI's start-up) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from streamsql.start_up import gc_paused

# name → the module that defines it
_LAZY: dict[str, str] = {
    "AggregateFunction": "streamsql.udf",
    "AsyncScalarFunction": "streamsql.udf",
    "ChangelogMode": "streamsql.modes",
    "CompiledPlan": "streamsql.pipeline",
    "DataTypes": "streamsql.types",
    "DataView": "streamsql.udf",
    "EnvironmentSettings": "streamsql.environment",
    "ExplainDetail": "streamsql.modes",
    "Expression": "streamsql.expressions",
    "FormatDescriptor": "streamsql.descriptors",
    "FunctionContext": "streamsql.udf",
    "GroupWindowedTable": "streamsql.table",
    "GroupedTable": "streamsql.table",
    "ListView": "streamsql.udf",
    "MapView": "streamsql.udf",
    "Module": "streamsql.modes",
    "ModuleEntry": "streamsql.modes",
    "OverWindowedTable": "streamsql.table",
    "PlanReference": "streamsql.pipeline",
    "ResultKind": "streamsql.result",
    "Row": "runtime.row",
    "RowKind": "runtime.row",
    "ScalarFunction": "streamsql.udf",
    "Schema": "streamsql.descriptors",
    "SqlDialect": "streamsql.modes",
    "StatementSet": "streamsql.statement_set",
    "StreamTableEnvironment": "streamsql.environment",
    "Table": "streamsql.table",
    "TableAggregateFunction": "streamsql.udf",
    "TableConfig": "streamsql.config",
    "TableDescriptor": "streamsql.descriptors",
    "TableEnvironment": "streamsql.environment",
    "TableFunction": "streamsql.udf",
    "TablePipeline": "streamsql.pipeline",
    "TableResult": "streamsql.result",
    "TableSchema": "streamsql.descriptors",
    "UserDefinedType": "streamsql.types",
    "WindowGroupedTable": "streamsql.table",
}

__all__ = [
    "AggregateFunction",
    "AsyncScalarFunction",
    "ChangelogMode",
    "CompiledPlan",
    "DataTypes",
    "DataView",
    "EnvironmentSettings",
    "ExplainDetail",
    "Expression",
    "FormatDescriptor",
    "FunctionContext",
    "GroupWindowedTable",
    "GroupedTable",
    "ListView",
    "MapView",
    "Module",
    "ModuleEntry",
    "OverWindowedTable",
    "PlanReference",
    "ResultKind",
    "Row",
    "RowKind",
    "ScalarFunction",
    "Schema",
    "SqlDialect",
    "StatementSet",
    "StreamTableEnvironment",
    "Table",
    "TableAggregateFunction",
    "TableConfig",
    "TableDescriptor",
    "TableEnvironment",
    "TableFunction",
    "TablePipeline",
    "TableResult",
    "TableSchema",
    "UserDefinedType",
    "WindowGroupedTable",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'streamsql' has no attribute {name!r}")
    with gc_paused():  # the first name loads the engine (streamsql/start_up.py)
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:
    from runtime.row import Row, RowKind
    from streamsql.config import TableConfig
    from streamsql.descriptors import FormatDescriptor, Schema, TableDescriptor, TableSchema
    from streamsql.environment import EnvironmentSettings, StreamTableEnvironment, TableEnvironment
    from streamsql.expressions import Expression
    from streamsql.modes import ChangelogMode, ExplainDetail, Module, ModuleEntry, SqlDialect
    from streamsql.pipeline import CompiledPlan, PlanReference, TablePipeline
    from streamsql.result import ResultKind, TableResult
    from streamsql.statement_set import StatementSet
    from streamsql.table import GroupedTable, GroupWindowedTable, OverWindowedTable, Table, WindowGroupedTable
    from streamsql.types import DataTypes, UserDefinedType
    from streamsql.udf import (
        AggregateFunction,
        AsyncScalarFunction,
        DataView,
        FunctionContext,
        ListView,
        MapView,
        ScalarFunction,
        TableAggregateFunction,
        TableFunction,
    )
