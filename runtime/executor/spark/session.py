"""The SparkSession a Spark job runs in, built from the session configuration.

One SparkSession per process (Spark's own rule: `getOrCreate` returns the active one), so
options that only take effect at start-up (`spark.master`, memory, ...) apply to the first
job; later jobs reuse it and only their runtime SQL options (`spark.sql.*`) are re-applied.
Every `spark.*` key of the session configuration is passed through unchanged.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from runtime.config.core import PIPELINE_NAME
from runtime.executor.spark.options import LOG_LEVEL, MASTER

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

# Settings streamsql relies on for Flink semantics; a user's `spark.*` option overrides them.
_DEFAULTS: dict[str, str] = {
    # Every timestamp is computed in UTC; the session zone only affects rendering (as in
    # the local runner, which keeps TIMESTAMP_LTZ as UTC instants).
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    # Non-ANSI arithmetic wraps on integer overflow as Java (and so Flink) does; the
    # expression mapping raises where Flink fails (division by zero, a bad CAST).
    "spark.sql.ansi.enabled": "false",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    # Flink's min-of-inputs watermark.
    "spark.sql.streaming.multipleWatermarkPolicy": "min",
    # STREAMING runs streamsql's operators in transformWithState (stateful.py), which needs
    # Spark's RocksDB state store.
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
    # A pickled Python command above this size is shipped as a broadcast variable, and the
    # driver-side worker of transformWithState cannot load broadcasts ("Broadcast variable
    # ... not loaded"): a STREAMING processor (the operator and its plan) can pass 1 MiB.
    "spark.broadcast.UDFCompressionThreshold": str(1 << 30),
    # How long a Python worker and the JVM wait for each other's authentication on a socket
    # (Spark's default 15 s): a loaded machine starting many workers can pass it. Spark's fixed
    # 10 s wait for a started worker to connect back has no setting: the executor starts a
    # query that failed that way again (executor.WORKER_START_TIMEOUTS).
    "spark.python.authenticate.socketTimeout": "120s",
}


def spark_options(config: dict[str, str]) -> dict[str, str]:
    """The SparkSession options for a job's configuration: defaults, then `state.backend.type`
    = rocksdb → Spark's RocksDB state store, then every `spark.*` key as given."""
    opts = dict(_DEFAULTS)
    for k, v in config.items():
        if k.startswith("spark."):
            opts[k] = v
    opts.setdefault(MASTER.key, MASTER.get(config))
    return opts


def get_session(config: dict[str, str]) -> Any:
    """The active SparkSession (created on first use with `spark_options(config)`)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise RuntimeError("the Spark runner needs PySpark: pip install 'streamsql[spark]' (and Java 17+)") from e
    opts = spark_options(config)
    # Spark's Python workers (UDFs, the stateful processors) run the job's interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is None:
        builder = SparkSession.builder.appName(PIPELINE_NAME.get(config) or "streamsql")
        for k, v in opts.items():
            builder = builder.config(k, v)
        active = builder.getOrCreate()
        active.sparkContext.setLogLevel(LOG_LEVEL.get(config))
    for k, v in opts.items():
        if k.startswith("spark.sql.") and not k.startswith("spark.sql.streaming.stateStore.providerClass"):
            try:
                active.conf.set(k, v)
            except Exception:  # noqa: BLE001 - static SQL confs cannot change after start
                pass
    return active
