"""Options of the parallel executor (worker processes exchanging Arrow batches)."""

from __future__ import annotations

from runtime.config.options import key

NETWORK_CREDITS = (
    key("taskmanager.network.credits")
    .int_type()
    .default_value(4)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description(
        "Parallel jobs: batches a worker may send per exchange edge and receiver before it is acknowledged."
    )
)
