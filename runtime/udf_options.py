"""PyFlink's `python.*` configuration keys (docs/dev/python/python_config), declared with
Flink's types and defaults so a PyFlink program that sets them runs unchanged, each saying
what it does here. streamsql runs Python functions in the engine's own process, a batch of
Arrow columns at a time: there is no Python worker to launch, size, ship files to or
profile, so most keys have nothing to act on ("no effect" in their description). Acting:
`python.fn-execution.arrow.batch.size` (the rows a pandas function gets per call),
`python.metric.enabled` (whether `FunctionContext.get_metric_group()` works) and the
dependency keys `python.files` / `python.archives` / `python.requirements` (applied when
set, streamsql.table_env_catalog.apply_python_dependencies).
"""

from __future__ import annotations

from runtime.config.options import key

_IN_PROCESS = "streamsql runs Python functions in its own process (no Python worker): no effect."

ARCHIVES = (
    key("python.archives")
    .string_type()
    .no_default_value()
    .with_description(
        "Archives (`path[#target_dir]`, comma-separated) to extract for Python functions: setting the key "
        "extracts them at once into this process's working directory, as `add_python_archive` does."
    )
)
CLIENT_EXECUTABLE = (
    key("python.client.executable")
    .string_type()
    .default_value("python")
    .with_description(f"The interpreter PyFlink's client launches for a Python job. {_IN_PROCESS}")
)
EXECUTABLE = (
    key("python.executable")
    .string_type()
    .default_value("python")
    .with_description(f"The interpreter of PyFlink's Python worker. {_IN_PROCESS}")
)
EXECUTION_MODE = (
    key("python.execution-mode")
    .enum_type("process", "thread")
    .default_value("process")
    .with_description(
        "PyFlink's choice of running functions in a separate process or in the Java operator's thread. "
        "streamsql always runs them in the operator's own thread, as `thread` does: no effect."
    )
)
FILES = (
    key("python.files")
    .string_type()
    .no_default_value()
    .with_description(
        "Python files or directories (comma-separated) for Python functions: setting the key puts them on "
        "this process's sys.path at once, as `add_python_file` does."
    )
)
ARROW_BATCH_SIZE = (
    key("python.fn-execution.arrow.batch.size")
    .int_type()
    .default_value(1000)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description(
        "The most rows a vectorized (pandas) scalar function gets in one call: a larger Arrow batch is "
        "handed to it in slices of this many rows, as PyFlink's Arrow batches are."
    )
)
BUNDLE_SIZE = (
    key("python.fn-execution.bundle.size")
    .int_type()
    .default_value(1000)
    .with_description(f"PyFlink's rows per bundle sent to the Python worker. {_IN_PROCESS}")
)
BUNDLE_TIME = (
    key("python.fn-execution.bundle.time")
    .long_type()
    .default_value(1000)
    .with_description(f"PyFlink's wait (ms) before a bundle is sent to the Python worker. {_IN_PROCESS}")
)
MEMORY_MANAGED = (
    key("python.fn-execution.memory.managed")
    .boolean_type()
    .default_value(True)
    .with_description(f"Whether PyFlink's Python worker uses the slot's managed memory. {_IN_PROCESS}")
)
MAP_STATE_ITERATE_BATCH = (
    key("python.map-state.iterate-response-batch-size")
    .int_type()
    .default_value(1000)
    .with_description(
        "PyFlink's MapView entries per response to the worker. MapView lives in the accumulator here: no effect."
    )
)
MAP_STATE_READ_CACHE = (
    key("python.map-state.read-cache-size")
    .int_type()
    .default_value(1000)
    .with_description("PyFlink's worker-side MapView read cache. MapView lives in the accumulator here: no effect.")
)
MAP_STATE_WRITE_CACHE = (
    key("python.map-state.write-cache-size")
    .int_type()
    .default_value(1000)
    .with_description("PyFlink's worker-side MapView write cache. MapView lives in the accumulator here: no effect.")
)
METRIC_ENABLED = (
    key("python.metric.enabled")
    .boolean_type()
    .default_value(True)
    .with_description(
        "Whether Python functions get a metric group (`FunctionContext.get_metric_group()`; when false it raises "
        "as PyFlink's does). The metrics are kept in this process (runtime/udf_metrics.py), not exported."
    )
)
OPERATOR_CHAINING = (
    key("python.operator-chaining.enabled")
    .boolean_type()
    .default_value(True)
    .with_description("PyFlink's chaining of Python operators. Operators of a task share one process here: no effect.")
)
PROFILE_ENABLED = (
    key("python.profile.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(f"PyFlink's profiling of the Python worker. {_IN_PROCESS}")
)
PYTHONPATH = (
    key("python.pythonpath")
    .string_type()
    .no_default_value()
    .with_description(f"PyFlink's PYTHONPATH of the Python worker. {_IN_PROCESS}")
)
REQUIREMENTS = (
    key("python.requirements")
    .string_type()
    .no_default_value()
    .with_description(
        "A requirements.txt (`path[#cache_dir]`) for Python functions: setting the key checks this process "
        "has them installed, as `set_python_requirements` does (nothing is installed: there is no worker)."
    )
)
STATE_CACHE_SIZE = (
    key("python.state.cache-size")
    .int_type()
    .default_value(1000)
    .with_description(f"PyFlink's state cache in the Python worker. {_IN_PROCESS}")
)
SYSTEMENV_ENABLED = (
    key("python.systemenv.enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Whether PyFlink's Python worker sees the system environment. {_IN_PROCESS}")
)
GLOBAL_JOB_PARAMETERS = (
    key("pipeline.global-job-parameters")
    .string_type()
    .no_default_value()
    .with_description(
        "Flink's global job parameters (`k1:v1,k2:v2`): what a Python function's "
        "`FunctionContext.get_job_parameter(key, default)` reads."
    )
)
