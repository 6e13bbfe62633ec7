"""Options of the Spark runner (besides `execution.target`, runtime/config/core.py).

Every other `spark.*` key is Spark's own and passed to the SparkSession unchanged
(runtime/executor/spark/session.py); those are not declared here."""

from __future__ import annotations

from runtime.config.options import key

MASTER = (
    key("spark.master")
    .string_type()
    .default_value("local[*]")
    .with_description("Spark master URL for `execution.target` = `spark` (`local[*]`, `spark://host:7077`, ...).")
)

LOG_LEVEL = (
    key("spark.log.level")
    .enum_type("ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF", "TRACE")
    .default_value("ERROR")
    .with_description("Log level of the SparkContext the Spark runner starts.")
)
