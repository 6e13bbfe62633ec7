"""The Spark runner: the same JobGraph on Apache Spark through PySpark (docs/spark.md).

- `SparkExecutor(graph, stop_event).run()`: the LocalExecutor interface, on Spark.
- `check_graph(graph)`: raises `SparkUnsupportedError` naming the operator (or function) and
  the reason when the job cannot run on Spark with the same semantics; nothing starts.
- `CAPABILITIES`: operator → batch / streaming support and a note; drives the refusal and
  the generated docs.

PySpark is imported lazily (only when a job runs), so this package is importable without it.
"""

from runtime.executor.spark.capabilities import CAPABILITIES, Capability, capability_rows, check_graph
from runtime.executor.spark.executor import SparkExecutor
from runtime.executor.spark.expressions import supported_functions
from runtime.executor.spark.types import SparkUnsupportedError

__all__ = [
    "CAPABILITIES",
    "Capability",
    "SparkExecutor",
    "SparkUnsupportedError",
    "capability_rows",
    "check_graph",
    "supported_functions",
]
