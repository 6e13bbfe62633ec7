"""Async scalar functions: concurrency bound, input order, retries, timeout."""

from __future__ import annotations

import asyncio

import pytest

from runtime.errors import JobError
from runtime.functions.async_options import AsyncOptions
from runtime.functions.async_udf import run_async


class Probe:
    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0
        self.calls: dict[int, int] = {}

    async def __call__(self, k: int) -> str:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        self.calls[k] = self.calls.get(k, 0) + 1
        await asyncio.sleep(0.001 * (10 - k % 10))  # later rows answer first
        self.in_flight -= 1
        return f"v{k}"


def test_results_keep_input_order_and_concurrency_is_bounded() -> None:
    probe = Probe()
    out = run_async(probe, [(k,) for k in range(25)], AsyncOptions(max_concurrent=3), "probe")
    assert out == [f"v{k}" for k in range(25)]
    assert probe.most == 3


def test_a_failing_call_is_retried_then_fails_the_job() -> None:
    attempts: list[int] = []

    async def flaky(k: int) -> int:
        attempts.append(k)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return k * 2

    assert run_async(flaky, [(21,)], AsyncOptions(retry_delay_ms=1, max_attempts=3), "flaky") == [42]
    assert len(attempts) == 3

    async def broken(k: int) -> int:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        run_async(broken, [(1,)], AsyncOptions(retry_strategy="NO_RETRY"), "broken")


def test_a_call_past_the_timeout_fails_naming_the_function() -> None:
    async def slow(k: int) -> int:
        await asyncio.sleep(5)
        return k

    with pytest.raises(JobError, match="Async function slow did not complete within 50 ms"):
        run_async(slow, [(1,)], AsyncOptions(timeout_ms=50, retry_strategy="NO_RETRY"), "slow")
