"""The Flink-oracle window cases with two-phase window aggregation forced
(`table.optimizer.agg-phase-strategy` = TWO_PHASE: LocalWindowAggregate → Exchange →
GlobalWindowAggregate, planner/optimizer/two_phase_window_agg.py), in both modes and on
the parallel executor: the final table must still be Flink's."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import diff, expected_table, final_table, normalize, run_script

CASES = Path(__file__).parent / "cases"
# The window cases whose aggregates split (the others keep LISTAGG / DISTINCT / SESSION /
# FIRST_VALUE and stay one-phase: test_plan_splits_only_these below keeps the list honest).
SPLIT = [
    "048_tumble_tvf_edges_late",
    "051_cumulate_tvf",
    "054_legacy_group_window_tumble",
    "058_window_over_filtered_view",
]


def _script(case: str, parallelism: int) -> str:
    pre = f"SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\nSET 'parallelism.default' = '{parallelism}';\n"
    return pre + (CASES / case / "case.sql").read_text()


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("case", SPLIT)
def test_two_phase_window_case(case: str, mode: str, parallelism: int) -> None:
    rows = run_script(_script(case, parallelism), CASES / case, mode)
    actual = normalize(final_table(rows, None))
    expected = normalize(expected_table(CASES / case, mode))
    assert actual == expected, diff(actual, expected)


@pytest.mark.parametrize("case", SPLIT)
def test_plan_splits_only_these(case: str) -> None:
    """The cases above do run the two phases (streaming) and not in batch mode."""
    import os

    from streamsql import EnvironmentSettings, TableEnvironment

    for settings, want in (
        (EnvironmentSettings.in_streaming_mode(), True),
        (EnvironmentSettings.in_batch_mode(), False),
    ):
        env = TableEnvironment.create(settings)
        old = os.getcwd()
        os.chdir(CASES / case)
        try:
            *setup, last = env.parse(_script(case, 1))
            for stmt in setup:
                env.execute_statement(stmt).wait()
            plan = env.explain_sql(last.sql)
        finally:
            os.chdir(old)
        assert ("LocalWindowAggregate" in plan and "GlobalWindowAggregate" in plan) == want, plan
