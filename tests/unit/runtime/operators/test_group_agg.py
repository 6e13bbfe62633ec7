"""GroupAggregate over the conformance cases' own input, built as JobGraphs by hand.

With one row per source batch the operator's changelog is Flink's per-record changelog,
so those runs compare the full `streaming.changelog.jsonl`; larger batches must give the
same final table."""

from __future__ import annotations

from types import ModuleType

import pytest

from runtime.expr.ir import Call, Literal
from runtime.types import BIGINT, BOOLEAN, DECIMAL, DOUBLE, INT, STRING, Field

KV_AGGS_032 = [
    ("count", [], BIGINT(False)),
    ("count", [1], BIGINT(False)),
    ("count", [2], BIGINT(False)),
    ("sum", [1], INT()),
    ("avg", [1], INT()),
    ("avg", [3], DOUBLE()),
    ("min", [1], INT()),
    ("max", [1], INT()),
    ("min", [2], STRING()),
    ("max", [2], STRING()),
]


def _kv_scan(kit: ModuleType, case: str, rows_per_batch: int):
    return kit.scan(1, kit.CASES / case / "kv.json", kit.KV, rows_per_batch)


def _group(kit, nid, inp, grouping_fields, grouping, aggs, mode="I,UB,UA,D"):
    fields = list(grouping_fields) + [Field(f"a{i}", a["type"]) for i, a in enumerate(aggs)]
    return kit.node(nid, "GroupAggregate", (inp,), fields, mode, grouping=grouping, aggs=aggs)


@pytest.mark.parametrize("rows_per_batch", [1, 4, 1000])
def test_032_many_aggregates_streaming(kit: ModuleType, rows_per_batch: int) -> None:
    case = "032_groupby_many_aggregates"
    aggs = [kit.agg(n, a, t) for n, a, t in KV_AGGS_032]
    nodes = [_kv_scan(kit, case, rows_per_batch), _group(kit, 2, 1, [Field("k", STRING())], [0], aggs)]
    rows, ex = kit.run(nodes, 2)
    assert kit.final_table(rows) == kit.as_rows(kit.expected(case, "streaming.jsonl"))
    if rows_per_batch == 1:
        assert rows == kit.expected(case, "streaming.changelog.jsonl")
    assert ex.metrics[2].rows_in == 11


def test_032_many_aggregates_batch(kit: ModuleType) -> None:
    case = "032_groupby_many_aggregates"
    aggs = [kit.agg(n, a, t) for n, a, t in KV_AGGS_032]
    nodes = [_kv_scan(kit, case, 3), _group(kit, 2, 1, [Field("k", STRING())], [0], aggs)]
    rows, _ = kit.run(nodes, 2, kit.BATCH)
    assert all(r["op"] == "+I" for r in rows)
    assert kit.as_rows(rows) == kit.as_rows(kit.expected(case, "batch.jsonl"))


@pytest.mark.parametrize("rows_per_batch", [1, 1000])
def test_044_retraction_changelog_suppresses_unchanged(kit: ModuleType, rows_per_batch: int) -> None:
    case = "044_groupby_retraction_changelog"
    src = [Field("k", STRING()), Field("v", INT())]
    aggs = [kit.agg("max", [1], INT()), kit.agg("min", [1], INT())]
    nodes = [kit.scan(1, kit.CASES / case / "kv.csv", src, rows_per_batch), _group(kit, 2, 1, src[:1], [0], aggs)]
    rows, _ = kit.run(nodes, 2)
    if rows_per_batch == 1:
        assert rows == kit.expected(case, "streaming.changelog.jsonl")
    assert kit.final_table(rows) == kit.as_rows(kit.expected(case, "streaming.jsonl"))
    batch_rows, _ = kit.run(nodes, 2, kit.BATCH)
    assert kit.as_rows(batch_rows) == kit.as_rows(kit.expected(case, "batch.jsonl"))


def _filter_calc_038(kit):
    b = BOOLEAN()
    projections = [kit.ref(i, f.type) for i, f in enumerate(kit.KV)] + [
        Call("greater_than", (kit.ref(1, INT()), Literal(0, INT(False))), b),
        Call("equals", (kit.ref(2, STRING()), Literal("x", STRING(False))), b),
        Call("not_equals", (kit.ref(2, STRING()), Literal("z", STRING(False))), b),
        Call("is_null", (kit.ref(1, INT()),), BOOLEAN(False)),
    ]
    fields = list(kit.KV) + [Field(f"f{i}", b) for i in range(4)]
    return kit.node(2, "Calc", (1,), fields, projections=projections, condition=None)


@pytest.mark.parametrize(
    "mode,file,rows_per_batch", [("STREAMING", "streaming.changelog.jsonl", 1), ("BATCH", "batch.jsonl", 5)]
)
def test_038_filter_clause(kit: ModuleType, mode: str, file: str, rows_per_batch: int) -> None:
    case = "038_aggregate_filter_clause"
    aggs = [
        kit.agg("count", [], BIGINT(False)),
        kit.agg("count", [], BIGINT(False), filt=4),
        kit.agg("sum", [1], INT(), filt=5),
        kit.agg("count", [1], BIGINT(False), distinct=True, filt=6),
        kit.agg("max", [3], DOUBLE(), filt=7),
    ]
    nodes = [
        _kv_scan(kit, case, rows_per_batch),
        _filter_calc_038(kit),
        _group(kit, 3, 2, [Field("k", STRING())], [0], aggs),
    ]
    rows, _ = kit.run(nodes, 3, mode)
    if mode == "STREAMING":
        assert rows == kit.expected(case, file)
    else:
        assert kit.as_rows(rows) == kit.as_rows(kit.expected(case, file))


def test_040_global_aggregate_over_empty_input(kit: ModuleType) -> None:
    case = "040_global_aggregate_empty_input"
    cond = Call("greater_than", (kit.ref(1, INT()), Literal(1000, INT(False))), BOOLEAN())
    aggs = [
        kit.agg("count", [], BIGINT(False)),
        kit.agg("count", [1], BIGINT(False)),
        kit.agg("sum", [1], INT()),
        kit.agg("max", [1], INT()),
        kit.agg("avg", [3], DOUBLE()),
    ]
    nodes = [
        _kv_scan(kit, case, 4),
        kit.node(
            2, "Calc", (1,), kit.KV, projections=[kit.ref(i, f.type) for i, f in enumerate(kit.KV)], condition=cond
        ),
        _group(kit, 3, 2, [], [], aggs),
    ]
    rows, _ = kit.run(nodes, 3, kit.BATCH)
    assert rows == kit.expected(case, "batch.jsonl")
    rows, _ = kit.run(nodes, 3, kit.STREAMING)
    assert rows == []


def test_global_aggregate_streaming_updates(kit: ModuleType) -> None:
    aggs = [kit.agg("count", [], BIGINT(False)), kit.agg("sum", [1], INT())]
    nodes = [_kv_scan(kit, "032_groupby_many_aggregates", 6), _group(kit, 2, 1, [], [], aggs)]
    rows, _ = kit.run(nodes, 2)
    assert [r["op"] for r in rows] == ["+I", "-U", "+U"]
    assert rows[-1]["row"] == ["11", "17"]


@pytest.mark.parametrize("rows_per_batch", [1, 3])
def test_047_group_by_expressions(kit: ModuleType, rows_per_batch: int) -> None:
    case = "047_group_by_expressions"
    b = BOOLEAN()
    d = kit.ref(3, DOUBLE())
    bucket = Call(
        "case",
        (
            Call("greater_than_or_equal", (d, Literal(2, INT(False))), b),
            Literal("hi", STRING(False)),
            Call("less_than", (d, Literal(2, INT(False))), b),
            Literal("lo", STRING(False)),
            Literal(None, STRING()),
        ),
        STRING(),
    )
    calc_fields = [Field("m3", INT()), Field("bucket", STRING()), Field("pos", b), Field("kk", STRING(False))]
    calc = kit.node(
        2,
        "Calc",
        (1,),
        calc_fields,
        projections=[
            Call("mod", (kit.ref(1, INT()), Literal(3, INT(False))), INT()),
            bucket,
            Call("greater_than", (kit.ref(1, INT()), Literal(0, INT(False))), b),
            Call("coalesce", (kit.ref(0, STRING()), Literal("?", STRING(False))), STRING(False)),
        ],
        condition=None,
    )
    aggs = [kit.agg("count", [], BIGINT(False)), kit.agg("listagg", [3], STRING(), separator="")]
    nodes = [_kv_scan(kit, case, rows_per_batch), calc, _group(kit, 3, 2, calc_fields[:3], [0, 1, 2], aggs)]
    rows, _ = kit.run(nodes, 3)
    if rows_per_batch == 1:
        assert rows == kit.expected(case, "streaming.changelog.jsonl")
    assert kit.final_table(rows) == kit.as_rows(kit.expected(case, "streaming.jsonl"))


def test_031_distinct_is_insert_only(kit: ModuleType) -> None:
    case = "031_filter_project_distinct"
    b = BOOLEAN()
    v, k, s = kit.ref(1, INT()), kit.ref(0, STRING()), kit.ref(2, STRING())
    cond = Call(
        "and",
        (
            Call(
                "or",
                (
                    Call(
                        "and",
                        (
                            Call("greater_than_or_equal", (v, Literal(-2, INT(False))), b),
                            Call("less_than_or_equal", (v, Literal(5, INT(False))), b),
                        ),
                        b,
                    ),
                    Call("is_null", (k,), BOOLEAN(False)),
                ),
                b,
            ),
            Call(
                "or",
                (
                    Call("in", (s, Literal("x", STRING(False)), Literal("y", STRING(False))), b),
                    Call("is_null", (s,), BOOLEAN(False)),
                ),
                b,
            ),
        ),
        b,
    )
    w = Call("minus", (Call("times", (v, Literal(2, INT(False))), INT()), Literal(1, INT(False))), INT())
    fields = [Field("k", STRING()), Field("s", STRING()), Field("w", INT())]
    nodes = [
        _kv_scan(kit, case, 1),
        kit.node(2, "Calc", (1,), fields, projections=[k, s, w], condition=cond),
        kit.node(3, "GroupAggregate", (2,), fields, "I", grouping=[0, 1, 2], aggs=[]),
    ]
    rows, _ = kit.run(nodes, 3)
    assert rows == kit.expected(case, "streaming.changelog.jsonl")
    rows, _ = kit.run(nodes, 3, kit.BATCH)
    assert kit.as_rows(rows) == kit.as_rows(kit.expected(case, "batch.jsonl"))


def test_016_values_group_by(kit: ModuleType) -> None:
    case = "016_values_table"
    dec = DECIMAL(3, 2)

    def lit(v, t):
        return Literal(v, t)

    rows = [
        [lit("a", STRING(False)), lit(1, INT()), lit("1.50", dec)],
        [lit("bb", STRING(False)), lit(2, INT()), lit(None, dec)],
        [lit("a", STRING(False)), lit(None, INT()), lit("2.25", dec)],
        [lit("ccc", STRING(False)), lit(-3, INT()), lit("0.10", dec)],
        [lit("bb", STRING(False)), lit(4, INT()), lit("-7.00", dec)],
    ]
    vf = [Field("name", STRING(False)), Field("x", INT()), Field("y", dec)]
    aggs = [kit.agg("count", [], BIGINT(False)), kit.agg("sum", [1], INT()), kit.agg("max", [2], dec)]
    nodes = [kit.node(1, "Values", (), vf, rows=rows), _group(kit, 2, 1, vf[:1], [0], aggs)]
    want = [tuple(r["row"][:4]) for r in kit.expected(case, "batch.jsonl")]
    got, _ = kit.run(nodes, 2, kit.BATCH)
    assert kit.as_rows(got) == sorted(want)
    got, _ = kit.run(nodes, 2)
    assert kit.final_table(got) == sorted(want)


def test_upsert_output_mode_has_no_update_before(kit: ModuleType) -> None:
    case = "044_groupby_retraction_changelog"
    src = [Field("k", STRING()), Field("v", INT())]
    nodes = [
        kit.scan(1, kit.CASES / case / "kv.csv", src, 1),
        _group(kit, 2, 1, src[:1], [0], [kit.agg("max", [1], INT())], mode="I,UA,D"),
    ]
    rows, _ = kit.run(nodes, 2)
    assert [r["op"] for r in rows] == ["+I", "+I", "+U", "+U", "+I"]
    assert [r["row"] for r in rows][-2:] == [["a", "9"], ["c", "0"]]
