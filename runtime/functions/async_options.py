"""The options of async scalar functions (`table.exec.async-scalar.*`) and their resolved
form, apart from the runner (`async_udf`): every session's configuration registry reads
these declarations, and the runner's asyncio (~10 ms) loads only with an async function.
"""

from __future__ import annotations

from runtime.config.options import ConfigSource, key
from runtime.frozen import frozen_dataclass

MAX_CONCURRENT_OPERATIONS = (
    key("table.exec.async-scalar.max-concurrent-operations")
    .int_type()
    .default_value(10)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Async scalar functions: how many calls of one function may be in flight at once.")
)
TIMEOUT = (
    key("table.exec.async-scalar.timeout")
    .duration_type()
    .default_value(180_000)
    .with_description("Async scalar functions: the time one call, retries included, may take before the job fails.")
)
RETRY_STRATEGY = (
    key("table.exec.async-scalar.retry-strategy")
    .enum_type("NO_RETRY", "FIXED_DELAY")
    .default_value("FIXED_DELAY")
    .with_description("Async scalar functions: FIXED_DELAY retries a failed call after retry-delay; NO_RETRY fails.")
)
RETRY_DELAY = (
    key("table.exec.async-scalar.retry-delay")
    .duration_type()
    .default_value(100)
    .with_description("Async scalar functions: the wait before a failed call is retried (FIXED_DELAY).")
)
MAX_ATTEMPTS = (
    key("table.exec.async-scalar.max-attempts")
    .int_type()
    .default_value(3)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Async scalar functions: how many times a call is made before its failure fails the job.")
)


@frozen_dataclass
class AsyncOptions:
    max_concurrent: int = 10
    timeout_ms: int = 180_000
    retry_strategy: str = "FIXED_DELAY"
    retry_delay_ms: int = 100
    max_attempts: int = 3


def async_options(conf: ConfigSource | None) -> AsyncOptions:
    return AsyncOptions(
        MAX_CONCURRENT_OPERATIONS.get(conf),
        TIMEOUT.get(conf),
        RETRY_STRATEGY.get(conf),
        RETRY_DELAY.get(conf),
        MAX_ATTEMPTS.get(conf),
    )
