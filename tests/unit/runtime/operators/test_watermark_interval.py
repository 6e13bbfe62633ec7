"""Watermark emission (`pipeline.auto-watermark-interval`) and lateness at a window's last
millisecond, end to end through SQL.

Flink's WatermarkAssigner forwards a row, then emits its watermark when it exceeds the last
emitted one by more than the interval (0: whenever it advanced). A row is late for a window
only against a watermark emitted before it, so rows sharing a window's last millisecond
(09.999 in [0 s, 10 s)) are dropped only when a watermark equal to it was emitted between
them: with the interval 0, or when the eager emission falls exactly there."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from harness import load_module_at

from runtime.batch import MIN_WATERMARK
from runtime.operators.watermark import emitted_before

H = load_module_at("streamsql_aggsql_helper", Path(__file__).with_name("aggsql.py"))

ROWS = [
    "2024-01-01 00:00:09.900,a,1",
    "2024-01-01 00:00:09.999,a,2",
    "2024-01-01 00:00:09.999,a,4",
    "2024-01-01 00:00:09.999,b,8",
    "2024-01-01 00:00:10.000,a,16",
    "2024-01-01 00:00:10.200,a,32",
]


def _script(path: Path, interval: str | None) -> str:
    setting = f"SET 'pipeline.auto-watermark-interval' = '{interval}';\n" if interval is not None else ""
    return (
        setting
        + f"""CREATE TABLE t (ts TIMESTAMP(3), k STRING, v INT, WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv');
SELECT window_start, k, COUNT(*) AS cnt, SUM(v) AS s
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k"""
    )


def _table(tmp_path: Path, mode: str, interval: str | None, batch_rows: int = 1000) -> Counter[tuple[Any, ...]]:
    path = tmp_path / "events.csv"
    path.write_text("\n".join(ROWS) + "\n")
    return H.final_table(H.run_sql(_script(path, interval), mode, batch_rows))


W0, W10 = "2024-01-01 00:00:00.000", "2024-01-01 00:00:10.000"
ALL = Counter([(W0, "a", "3", "7"), (W0, "b", "1", "8"), (W10, "a", "2", "48")])
# a watermark of 09.999 went out after the first 09.999 row: [0 s, 10 s) fired, the next two are late
LAST_MS_LATE = Counter([(W0, "a", "2", "3"), (W10, "a", "2", "48")])


@pytest.mark.parametrize("batch_rows", [1, 2, 1000])
def test_default_interval_keeps_rows_sharing_the_last_millisecond(tmp_path: Path, batch_rows: int) -> None:
    """Flink's default 200 ms: after 09.900 (emitted, the first) no watermark goes out until
    one exceeds it by more than 200 ms (10.200), so the 09.999 rows are all on time, in
    whatever batches they arrive; streaming equals batch."""
    assert _table(tmp_path, "streaming", None, batch_rows) == ALL
    assert _table(tmp_path, "batch", None, batch_rows) == ALL


@pytest.mark.parametrize("batch_rows", [1, 1000])
def test_interval_zero_emits_after_every_record(tmp_path: Path, batch_rows: int) -> None:
    """`0`: Flink emits 09.999 after the first row carrying it, so the rows after it that
    share that millisecond are late (the conformance corpus runs this way)."""
    assert _table(tmp_path, "streaming", "0", batch_rows) == LAST_MS_LATE
    assert _table(tmp_path, "batch", "0", batch_rows) == ALL


def test_eager_emission_falling_on_the_last_millisecond_drops_as_flink(tmp_path: Path) -> None:
    """98 ms: 09.999 exceeds 09.900 by 99 ms > 98, so Flink emits it after the first 09.999
    row and drops the two after it, whatever the batch size."""
    assert _table(tmp_path, "streaming", "98 ms", 1000) == LAST_MS_LATE


def _sequential(after: np.ndarray, last: float, interval: int) -> tuple[list[float], float]:
    """Flink's rule row by row: forward the row, then emit if current - last > interval."""
    seen = []
    for a in after.tolist():
        seen.append(last)
        if a - last > interval:
            last = a
    return seen, last


def test_emitted_before_equals_the_row_by_row_rule() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        last = float(rng.choice([-np.inf, 0.0, 150.0]))
        after = np.maximum.accumulate(np.maximum(rng.integers(0, 3000, n).astype(float), last))
        interval = int(rng.choice([0, 1, 99, 200, 5000]))
        seen, new_last = emitted_before(after, last, interval)
        want, want_last = _sequential(after, last, interval)
        assert seen.tolist() == want
        assert new_last == want_last


def test_emitted_before_long_chains_and_integer_watermarks() -> None:
    """Chains longer than the step-by-step search (pointer doubling takes over) and the
    int64 form the assigner uses (MIN_WATERMARK before any watermark) give the same rows."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(1, 5000))
        start = int(rng.choice([MIN_WATERMARK, 0, 150]))
        after = np.maximum.accumulate(np.maximum(np.sort(rng.integers(0, 10 * n, n)), start))
        interval = int(rng.choice([0, 1, 3, 200]))
        seen, new_last = emitted_before(after, start, interval)
        want, want_last = _sequential(after, start, interval)
        assert seen.dtype == np.int64
        assert seen.tolist() == want
        assert new_last == want_last
