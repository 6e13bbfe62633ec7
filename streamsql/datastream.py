"""The part of `pyflink.datastream` a Table API program touches (import rule:
`pyflink.datastream` → `streamsql.datastream`).

PyFlink's Table API examples start from `StreamExecutionEnvironment.get_execution_environment()`
to make a `StreamTableEnvironment`; here that environment only carries the settings such a
program sets on it (parallelism, runtime mode, checkpointing), which become the table
environment's configuration. DataStream operations themselves are not implemented: they
raise JvmRequiredError naming the Table API or SQL instead.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from runtime.checkpoint.options import CHECKPOINTING_INTERVAL, CHECKPOINTING_MODE
from runtime.config.core import MAX_PARALLELISM, PARALLELISM, RUNTIME_MODE
from streamsql.table_env_catalog import add_python_file
from streamsql.unsupported import DATASTREAM, jvm_only_class, refuse

__all__ = ["CheckpointingMode", "DataStream", "RuntimeExecutionMode", "StreamExecutionEnvironment"]


class RuntimeExecutionMode(Enum):
    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2


class CheckpointingMode(Enum):
    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


class StreamExecutionEnvironment:
    """Settings of a streaming program; `StreamTableEnvironment.create(env)` takes them."""

    def __init__(self, j_stream_execution_environment: Any = None) -> None:
        self._config: dict[str, str] = {}

    @staticmethod
    def get_execution_environment(configuration: Any = None) -> StreamExecutionEnvironment:
        env = StreamExecutionEnvironment()
        if configuration is not None:
            env._config.update(configuration if isinstance(configuration, dict) else configuration.to_dict())
        return env

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        self._config[PARALLELISM.key] = str(int(parallelism))
        return self

    def get_parallelism(self) -> int:
        return PARALLELISM.get(self._config)

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        self._config[MAX_PARALLELISM.key] = str(int(max_parallelism))
        return self

    def get_max_parallelism(self) -> int:
        return MAX_PARALLELISM.get(self._config)

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
        self._config[RUNTIME_MODE.key] = execution_mode.name.lower()
        return self

    def enable_checkpointing(self, interval: int, mode: CheckpointingMode | None = None) -> StreamExecutionEnvironment:
        self._config[CHECKPOINTING_INTERVAL.key] = f"{int(interval)} ms"
        if mode is not None:
            self._config[CHECKPOINTING_MODE.key] = mode.name
        return self

    def configure(self, configuration: Any) -> None:
        self._config.update(configuration if isinstance(configuration, dict) else configuration.to_dict())

    def add_python_file(self, file_path: str) -> None:
        add_python_file(file_path)

    def to_configuration(self) -> dict[str, str]:
        return dict(self._config)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        refuse(f"StreamExecutionEnvironment.{name}", DATASTREAM)


DataStream = jvm_only_class("DataStream", DATASTREAM)
