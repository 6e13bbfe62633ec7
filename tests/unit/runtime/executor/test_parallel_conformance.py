"""Same final tables at parallelism 2 as Flink's (and so as at parallelism 1): a sample of
the Flink-oracle conformance cases and Nexmark queries run with `parallelism.default` = 2,
in both modes. Cases with late data are left out: with two workers the watermark
progresses differently (as in Flink), so which rows are late may differ."""

from __future__ import annotations

import gzip
import json
import multiprocessing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[4]
CASES = ROOT / "tests" / "conformance" / "cases"
NEXMARK = ROOT / "tests" / "nexmark"
QUERIES = ROOT / "benchmarks" / "nexmark"
SET = "SET 'parallelism.default' = '2';\n"


def _harness() -> Any:
    """tests/conformance/harness.py, loaded once under the name its own tests use."""
    import importlib.util
    import sys

    if "harness" not in sys.modules:
        spec = importlib.util.spec_from_file_location("harness", ROOT / "tests" / "conformance" / "harness.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        sys.modules["harness"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["harness"]


SAMPLE = [
    "031_filter_project_distinct",
    "032_groupby_many_aggregates",
    "037_count_sum_distinct",
    "044_groupby_retraction_changelog",
    "049_tumble_tvf_offset",
    "051_cumulate_tvf",
    "063_window_join_inner",
    "072_join_inner_equi",
    "075_join_full_outer_of_aggregates",
    "082_interval_join_between",
    "089_topn_row_number_top3",
    "093_topn_global_with_offset",
    "095_dedup_keep_first_rowtime",
    "099_over_rows_preceding",
    "107_union_distinct",
    "116_order_by_limit",
]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("case", SAMPLE)
def test_conformance_case_at_parallelism_2(case: str, mode: str) -> None:
    case_dir = CASES / case
    if not (case_dir / "expected" / f"{mode}.jsonl").exists():
        pytest.skip(f"no {mode} expectation")
    h = _harness()
    changelog = h.run_script(SET + (case_dir / "case.sql").read_text(), case_dir, mode)
    actual, want = h.normalize(h.final_table(changelog)), h.normalize(h.expected_table(case_dir, mode))
    assert actual == want, h.diff(actual, want)
    assert not multiprocessing.active_children()


def _nexmark_expected(name: str, mode: str) -> Counter[tuple[Any, ...]]:
    with gzip.open(NEXMARK / "expected" / f"{name}.{mode}.jsonl.gz", "rt") as fh:
        return Counter(tuple(json.loads(line)["row"]) for line in fh if line.strip())


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("name", [f"q{i}" for i in range(9) if i != 6])
def test_nexmark_at_parallelism_2(name: str, mode: str) -> None:
    meta = json.loads((NEXMARK / "expected" / "queries.json").read_text())
    if meta[name][mode]["status"] != "ok":
        pytest.skip("Flink has no table for this query/mode")
    script = SET + (QUERIES / "prefix.sql").read_text() + "\n;\n" + (QUERIES / f"{name}.sql").read_text()
    h = _harness()
    actual = h.final_table(h.run_script(script, NEXMARK, mode))
    want = _nexmark_expected(name, mode)
    assert actual == want, f"{len(want - actual)} missing, {len(actual - want)} unexpected"
