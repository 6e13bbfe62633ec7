"""WindowAggregate's slice pre-aggregation (runtime/operators/window_slicing.py) gives the
rows of the row-at-a-time fold, late rows included, for TUMBLE / HOP / CUMULATE."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from runtime.operators import window_agg
from runtime.operators.window_slicing import can_slice, slice_unit
from runtime.plan_params import AggCallParams, WindowParams
from runtime.types import BIGINT, BOOLEAN, DOUBLE, INT, STRING, Field

BASE = dt.datetime(2024, 1, 1)


def _text(ms: int) -> str:
    return (BASE + dt.timedelta(milliseconds=ms)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _write(path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    t, lines = 0, []
    for _ in range(600):
        t += rnd.choice([0, 50, 300, 900])
        ts = max(0, t + rnd.choice([0, 0, 0, -2_000, -6_000, -15_000]))  # some rows late
        k = rnd.choice(["a", "b", "c", "NULL"])
        v = "NULL" if rnd.random() < 0.1 else str(rnd.randint(-5, 50))
        lines.append(f"{_text(ts)},{k},{v}\n")
    path.write_text("".join(lines))


def _nodes(kit: ModuleType, path: Path, window: dict[str, Any], rows_per_batch: int) -> list[Any]:
    ts = kit.ts3()
    cond = kit.Call("greater_than", (kit.ref(2, INT()), kit.Literal(10, INT(False))), BOOLEAN())
    return [
        kit.scan(1, path, kit.EVENTS, rows_per_batch),
        kit.node(
            2,
            "WatermarkAssigner",
            (1,),
            kit.EVENTS,
            rowtime_index=0,
            watermark=kit.minus_interval(0, ts, 3_000),
            idle_timeout_ms=None,
        ),
        kit.node(
            3,
            "Calc",
            (2,),
            [*kit.EVENTS, Field("big", BOOLEAN())],
            projections=[kit.ref(0, ts), kit.ref(1, STRING()), kit.ref(2, INT()), cond],
            condition=None,
        ),
        kit.node(
            4,
            "WindowAggregate",
            (3,),
            [
                Field("k", STRING()),
                Field("cnt", BIGINT(False)),
                Field("cnt_v", BIGINT(False)),
                Field("sum_v", INT()),
                Field("min_k", STRING()),
                Field("max_ts", ts),
                Field("big_cnt", BIGINT(False)),
                Field("window_start", kit.ts3(False)),
                Field("window_end", kit.ts3(False)),
            ],
            window=window,
            time_index=0,
            grouping=[1],
            aggs=[
                kit.agg("count", [], BIGINT(False)),
                kit.agg("count", [2], BIGINT(False)),
                kit.agg("sum", [2], INT()),
                kit.agg("min", [1], STRING()),
                kit.agg("max", [0], ts),
                kit.agg("count", [], BIGINT(False), filt=3),
            ],
            window_props=["window_start", "window_end"],
        ),
    ]


WINDOWS = [
    {"kind": "TUMBLE", "size_ms": 5_000},
    {"kind": "HOP", "size_ms": 6_000, "slide_ms": 2_000},
    {"kind": "HOP", "size_ms": 5_000, "slide_ms": 1_000, "offset_ms": 300},
    {"kind": "CUMULATE", "size_ms": 8_000, "step_ms": 2_000},
]


@pytest.mark.parametrize("spec", WINDOWS, ids=lambda s: s["kind"] + str(s.get("offset_ms", "")))
@pytest.mark.parametrize("rows_per_batch", [1, 37, 10_000])
def test_sliced_equals_row_at_a_time(
    kit: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: dict[str, Any], rows_per_batch: int
) -> None:
    path = tmp_path / "e.csv"
    _write(path, rows_per_batch)
    window = kit.window(spec["kind"], **{k: v for k, v in spec.items() if k != "kind"})
    sliced_rows, sliced_ex = kit.run(_nodes(kit, path, window, rows_per_batch), 4)
    assert sliced_ex.operators[4].sliced is not None  # the pre-aggregation was used
    monkeypatch.setattr(window_agg, "can_slice", lambda *a: False)
    plain_rows, plain_ex = kit.run(_nodes(kit, path, window, rows_per_batch), 4)
    assert plain_ex.operators[4].sliced is None
    assert kit.as_rows(sliced_rows) == kit.as_rows(plain_rows)  # same rows (ties in window end may reorder)
    ends = [r["row"][-1] for r in sliced_rows]
    assert ends == sorted(ends)  # windows still fire in window order
    late = sliced_ex.metrics[4].late_rows_dropped
    assert late == plain_ex.metrics[4].late_rows_dropped
    assert late > 0 and len(plain_rows) > 20


def test_what_is_sliced() -> None:
    import pyarrow as pa

    types = [pa.timestamp("ms"), pa.string(), pa.int32(), pa.float64()]
    count = AggCallParams("count", (), BIGINT(False))
    assert slice_unit(WindowParams("HOP", size_ms=10, slide_ms=4)) is None  # not a union of slides
    assert can_slice(WindowParams("HOP", size_ms=10, slide_ms=5), [count], types, [1])
    float_sum = AggCallParams("sum", (3,), DOUBLE())  # order-dependent rounding
    assert not can_slice(WindowParams("TUMBLE", size_ms=10), [count, float_sum], types, [1])
    assert not can_slice(WindowParams("TUMBLE", size_ms=10), [replace(count, distinct=True)], types, [1])
    assert not can_slice(WindowParams("SESSION", gap_ms=10), [count], types, [1])


@pytest.mark.parametrize("spec", WINDOWS, ids=lambda s: s["kind"] + str(s.get("offset_ms", "")))
@pytest.mark.parametrize("partitions", [3, 4096], ids=["wrapping", "disjoint"])
def test_batch_merged_partials_equal_row_at_a_time(
    kit: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: dict[str, Any], partitions: int
) -> None:
    """BATCH keeps merged Arrow partials (BoundedPartials), compacted many times here
    (a tiny threshold), and gives the rows of the keyed state's row-at-a-time fold."""
    from runtime.graph import BATCH
    from runtime.operators import window_slicing

    path = tmp_path / "e.csv"
    _write(path, 7)
    window = kit.window(spec["kind"], **{k: v for k, v in spec.items() if k != "kind"})
    compactions: list[int] = []
    compact = window_slicing.BoundedPartials._compact

    def counted(self: window_slicing.BoundedPartials) -> None:
        compactions.append(self.pending)
        compact(self)

    monkeypatch.setattr(window_slicing.BoundedPartials, "_compact", counted)
    monkeypatch.setattr(window_slicing.BoundedPartials.__init__, "__defaults__", (16, 0, ""))
    # merges touch some partitions only; with 3 their slice ranges overlap (sorted together)
    monkeypatch.setattr(window_slicing, "_PARTITIONS", partitions)
    monkeypatch.setattr(window_slicing, "_PARTITION_SLICES", 2)
    monkeypatch.setattr(window_agg, "_EMIT_CHUNK_ROWS", 5)  # several output chunks
    merged_rows, merged_ex = kit.run(_nodes(kit, path, window, 23), 4, mode=BATCH)
    assert merged_ex.operators[4].sliced is not None
    assert len(compactions) > 3  # merged while reading, not only at the end
    monkeypatch.setattr(window_agg, "can_slice", lambda *a: False)
    plain_rows, _ = kit.run(_nodes(kit, path, window, 23), 4, mode=BATCH)
    assert kit.as_rows(merged_rows) == kit.as_rows(plain_rows) and len(plain_rows) > 20
    ends = [r["row"][-1] for r in merged_rows]
    assert ends == sorted(ends)  # windows in window order


@pytest.mark.parametrize("spec", WINDOWS, ids=lambda s: s["kind"] + str(s.get("offset_ms", "")))
@pytest.mark.parametrize("partitions", [3, 4096], ids=["wrapping", "disjoint"])
def test_batch_spilled_partials_equal_row_at_a_time(
    kit: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spill_writes: Any,
    spec: dict[str, Any],
    partitions: int,
) -> None:
    """Past `taskmanager.memory.managed.size` (1 byte here) BATCH window state goes to Arrow
    files under `io.tmp.dirs` at every merge; the rows, and their window order, are those
    of the keyed state's row-at-a-time fold, and the files are gone at the end."""
    from runtime.graph import BATCH
    from runtime.operators import window_slicing

    class OneByte:
        @staticmethod
        def get(conf: object) -> int:
            return 1

    path = tmp_path / "e.csv"
    _write(path, 7)
    window = kit.window(spec["kind"], **{k: v for k, v in spec.items() if k != "kind"})
    written = spill_writes.rows
    monkeypatch.setattr(window_agg, "MANAGED_MEMORY_SIZE", OneByte)
    monkeypatch.setattr(window_slicing.BoundedPartials.__init__, "__defaults__", (16, 0, ""))
    monkeypatch.setattr(window_slicing, "_PARTITIONS", partitions)
    monkeypatch.setattr(window_slicing, "_PARTITION_SLICES", 2)
    monkeypatch.setattr(window_agg, "_EMIT_CHUNK_ROWS", 5)
    tmp = tmp_path / "spill"
    spilled_rows, ex = kit.run(_nodes(kit, path, window, 23), 4, mode=BATCH, config={"io.tmp.dirs": str(tmp)})
    assert ex.operators[4].sliced is not None
    assert len(written) > 10 and sum(written) > 100  # spilled at many merges
    assert tmp.is_dir() and not any(tmp.iterdir())  # the spill directory was removed
    monkeypatch.setattr(window_agg, "can_slice", lambda *a: False)
    plain_rows, _ = kit.run(_nodes(kit, path, window, 23), 4, mode=BATCH)
    assert kit.as_rows(spilled_rows) == kit.as_rows(plain_rows) and len(plain_rows) > 20
    ends = [r["row"][-1] for r in spilled_rows]
    assert ends == sorted(ends)  # windows in window order


def test_batch_final_groups_are_yielded_a_batch_at_a_time(
    kit: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BATCH end of input: the window groups (as many as the input's rows at worst) are made
    a chunk at a time as the caller takes results (Output.emit_later, TaskRunner.step_deferred):
    when the first result batch reaches the caller the rest is not made yet."""
    from runtime.executor.local import LocalExecutor
    from runtime.graph import BATCH, JobGraph

    path = tmp_path / "e.csv"
    _write(path, 7)
    monkeypatch.setattr(window_agg, "_EMIT_CHUNK_ROWS", 5)
    nodes = _nodes(kit, path, kit.window("TUMBLE", size_ms=5_000), 23)
    ex = LocalExecutor(JobGraph(tuple(nodes), mode=BATCH, config={}, result_node=4))
    run = ex.run()
    first = next(run)
    assert first.num_rows == 5
    assert ex.task.deferred and not ex.results.pending  # the next chunks are still to make
    rest = list(run)
    assert len(rest) > 3 and not ex.task.deferred
    all_rows = kit.run(nodes, 4, mode=BATCH)[0]
    assert first.num_rows + sum(b.num_rows for b in rest) == len(all_rows)
