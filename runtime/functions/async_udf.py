"""Async scalar functions (Flink 2.x `AsyncScalarFunction`): the rows of a batch are
awaited concurrently, bounded, with a timeout and retries, results in input order.

A function whose `eval` (or the function itself) is a coroutine function is run here by
the `python_udf` kernel: one event loop per call of the kernel (one batch), at most
`max_concurrent` rows in flight; each row's call, retries included, must end within
`timeout_ms` or the job fails naming the function; a call that raises is retried after
`retry_delay_ms` until `max_attempts` calls were made (`retry_strategy` FIXED_DELAY) or
fails at once (NO_RETRY).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.config.options import ConfigSource, key
from runtime.errors import JobError

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


@dataclass(frozen=True)
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


def is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn)


def run_async(fn: Callable[..., Any], rows: Sequence[tuple[Any, ...]], options: AsyncOptions, name: str) -> list[Any]:
    """fn(*row) for every row, concurrently; the results in the rows' order."""

    async def attempt(args: tuple[Any, ...]) -> Any:
        attempts = 0
        while True:
            attempts += 1
            try:
                return await fn(*args)
            except Exception:
                if options.retry_strategy.upper() == "NO_RETRY" or attempts >= options.max_attempts:
                    raise
                await asyncio.sleep(options.retry_delay_ms / 1000)

    async def main() -> list[Any]:
        gate = asyncio.Semaphore(max(1, options.max_concurrent))

        async def one(args: tuple[Any, ...]) -> Any:
            async with gate:
                try:
                    return await asyncio.wait_for(attempt(args), options.timeout_ms / 1000)
                except TimeoutError:
                    raise JobError(
                        f"Async function {name} did not complete within {options.timeout_ms} ms "
                        "(table.exec.async-scalar.timeout, retries included)"
                    ) from None

        return list(await asyncio.gather(*(one(r) for r in rows)))

    loop = asyncio.new_event_loop()  # the job's thread may not be the main thread
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()
