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
from collections.abc import Callable, Sequence
from typing import Any

from runtime.errors import JobError
from runtime.functions.async_options import AsyncOptions


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
