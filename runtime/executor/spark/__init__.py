"""The Spark runner: the same JobGraph on Apache Spark through PySpark (docs/spark.md).

- `SparkExecutor(graph, stop_event).run()`: the LocalExecutor interface, on Spark.
- `check_graph(graph)`: raises `SparkUnsupportedError` naming the operator (or function) and
  the reason when the job cannot run on Spark with the same semantics; nothing starts.
- `capability(operator)`: its spec's Spark capability (batch / streaming support and a
  note); drives the refusal and the generated docs (`capability_rows`).

PySpark is imported lazily (only when a job runs), so this package is importable without it.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use: `runtime.executor.spark.options` (a configuration module every
# session reads) must not pull the whole runner into the CLI's start-up.
_LAZY = {
    "Capability": "runtime.executor.spark.capabilities",
    "capability": "runtime.executor.spark.capabilities",
    "capability_rows": "runtime.executor.spark.capabilities",
    "check_graph": "runtime.executor.spark.capabilities",
    "SparkExecutor": "runtime.executor.spark.executor",
    "supported_functions": "runtime.executor.spark.expressions",
    "SparkUnsupportedError": "runtime.executor.spark.types",
}

__all__ = [
    "Capability",
    "SparkExecutor",
    "SparkUnsupportedError",
    "capability",
    "capability_rows",
    "check_graph",
    "supported_functions",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime.executor.spark' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
