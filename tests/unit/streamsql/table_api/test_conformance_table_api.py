"""Flink-oracle conformance cases written with the Table API: same final tables as the SQL.

Each case's setup (its DDL) runs as SQL; its final query is rebuilt here with Table API
operations and expressions and compared with Flink's expected table
(tests/conformance/cases/<case>/expected/<mode>.jsonl) by the conformance harness.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from streamsql import DataTypes, EnvironmentSettings, Table, TableEnvironment
from streamsql.expressions import (
    call,
    coalesce,
    col,
    concat,
    if_then_else,
    lit,
    not_,
    null_of,
    row_interval,
)
from streamsql.printing import jsonl_lines
from streamsql.window import Over, Session, Tumble

CONFORMANCE = Path(__file__).resolve().parents[3] / "conformance"
sys.path.insert(0, str(CONFORMANCE))
from harness import diff, expected_table, final_table, load_case, normalize  # noqa: E402

Build = Callable[[TableEnvironment], Table]
CASES: dict[str, Build] = {}


def case(prefix: str) -> Callable[[Build], Build]:
    def register(fn: Build) -> Build:
        CASES[prefix] = fn
        return fn

    return register


@case("031")
def _031(env: TableEnvironment) -> Table:
    t = env.from_path("t")
    v, k, s = col("v"), col("k"), col("s")
    filtered = t.where(
        (v.between(-2, 5) | k.is_null)
        & (s.in_("x", "y") | s.is_null)
        & not_(v.in_(100, null_of(DataTypes.INT()))).is_not_true
    ).select(k, v, (v * 2 - 1).alias("w"), s)
    return filtered.select(col("k"), col("s"), col("w")).distinct()


@case("032")
def _032(env: TableEnvironment) -> Table:
    v, s, d = col("v"), col("s"), col("d")
    return (
        env.from_path("t")
        .group_by(col("k"))
        .select(
            col("k"),
            col("*").count.alias("cnt"),
            v.count.alias("cnt_v"),
            s.count.alias("cnt_s"),
            v.sum.alias("sum_v"),
            v.avg.alias("avg_v"),
            d.avg.alias("avg_d"),
            v.min.alias("min_v"),
            v.max.alias("max_v"),
            s.min.alias("min_s"),
            s.max.alias("max_s"),
        )
    )


@case("037")
def _037(env: TableEnvironment) -> Table:
    t = env.from_path("t")
    v, s = col("v"), col("s")
    per_key = t.group_by(col("k")).select(
        col("k"),
        v.count.distinct.alias("cd_v"),
        v.count.alias("c_v"),
        v.sum.distinct.alias("sd_v"),
        v.sum.alias("s_v"),
        v.avg.distinct.alias("ad_v"),
        s.count.distinct.alias("cd_s"),
    )
    overall = t.select(
        lit("*ALL*").alias("k"),
        v.count.distinct.alias("cd_v"),
        v.count.alias("c_v"),
        v.sum.distinct.alias("sd_v"),
        v.sum.alias("s_v"),
        v.avg.distinct.alias("ad_v"),
        s.count.distinct.alias("cd_s"),
    )
    return per_key.union_all(overall)


@case("040")
def _040(env: TableEnvironment) -> Table:
    v = col("v")
    return (
        env.from_path("t")
        .where(v > 1000)
        .select(
            lit(1).count.alias("n"),
            v.count.alias("nv"),
            v.sum.alias("s"),
            v.max.alias("mx"),
            col("d").avg.alias("ad"),
        )
    )


@case("044")
def _044(env: TableEnvironment) -> Table:
    return (
        env.from_path("t").group_by(col("k")).select(col("k"), col("v").max.alias("max_v"), col("v").min.alias("min_v"))
    )


@case("047")
def _047(env: TableEnvironment) -> Table:
    v, d = col("v"), col("d")
    bucket = if_then_else(d >= 2, "hi", if_then_else(d < 2, "lo", null_of(DataTypes.STRING())))
    return (
        env.from_path("t")
        .add_columns((v % 3).alias("m3"), bucket.alias("bucket"), (v > 0).alias("pos"))
        .group_by(col("m3"), col("bucket"), col("pos"))
        .select(
            col("m3"),
            col("bucket"),
            col("pos"),
            lit(1).count.alias("n"),
            coalesce(col("k"), "?").list_agg("").alias("ks"),
        )
    )


@case("016")
def _016(env: TableEnvironment) -> Table:
    rows = [("a", 1, "1.5"), ("bb", 2, None), ("a", None, "2.25"), ("ccc", -3, "0.1"), ("bb", 4, "-7")]
    from decimal import Decimal

    schema = DataTypes.ROW([("name", DataTypes.STRING()), ("x", DataTypes.INT()), ("y", DataTypes.DECIMAL(3, 2))])
    v = env.from_elements([(n, x, None if y is None else Decimal(y)) for n, x, y in rows], schema)
    name = col("name")
    return v.group_by(name).select(
        name,
        lit(1).count.alias("n"),
        col("x").sum.alias("sx"),
        col("y").max.alias("my"),
        name.char_length.alias("len"),
        name.concat("|").alias("name_bar"),
    )


@case("017")
def _017(env: TableEnvironment) -> Table:
    s, t_ = col("s"), col("t")
    return env.from_path("t").select(
        col("id"),
        s.upper_case.alias("up"),
        s.lower_case.alias("lo"),
        s.trim().alias("tr"),
        s.ltrim().alias("ltr"),
        s.rtrim().alias("rtr"),
        s.trim("a").alias("tr_a"),
        s.trim_leading(" ").alias("tr_lead"),
        s.trim_trailing("c").alias("tr_trail_c"),
        s.char_length.alias("len"),
        s.substring(2, 3).alias("sub_2_3"),
        s.substring(5).alias("sub_5"),
        s.substring(0, 2).alias("sub_0_2"),
        s.substring(30).alias("sub_30"),
        concat(s, "|", t_).alias("cc"),
        call("CONCAT_WS", "-", s, t_, "z").alias("cws"),
        s.concat(t_).alias("pipes"),
    )


@case("020")
def _020(env: TableEnvironment) -> Table:
    s = col("s")
    return (
        env.from_path("t")
        .where(s.is_null | not_(s.like("zz%")))
        .select(
            col("id"),
            s,
            s.like("a%").alias("starts_a"),
            s.like("_b%").alias("second_b"),
            s.like("%!_%", "!").alias("has_underscore"),
            not_(s.like("%c")).alias("not_ends_c"),
            s.like("A%").alias("starts_upper_a"),
            s.similar("(ab|cd)%").alias("sim_alt"),
            s.similar("[a-c]+").alias("sim_class"),
            s.like("%").alias("any_str"),
        )
    )


@case("021")
def _021(env: TableEnvironment) -> Table:
    ts, s, d = col("ts"), col("s"), col("d")
    return env.from_path("t").select(
        col("id"),
        ts.date_format("yyyy/MM/dd HH:mm:ss").alias("f1"),
        ts.date_format("EEE dd MMM yyyy, SSS").alias("f2"),
        s.date_format("yyyyMMdd").alias("f_str"),
        s.to_timestamp.alias("ts_default"),
        call("TO_TIMESTAMP", d, "dd.MM.yyyy HH:mm").alias("ts_custom"),
        s.to_date.alias("d_default"),
        call("TO_DATE", d, "dd.MM.yyyy").alias("d_custom"),
    )


@case("025")
def _025(env: TableEnvironment) -> Table:
    x, d, i = col("x"), col("d"), col("i")
    return env.from_path("t").select(
        col("id"),
        x.abs.alias("abs_x"),
        i.abs.alias("abs_i"),
        (i % 4).alias("mod_i"),
        x.power(2).alias("pow2"),
        x.abs.sqrt.alias("sqrt_x"),
        lit(1).exp.alias("e"),
        (x.abs + 1).ln.alias("ln_x"),
        (x.abs + 1).log10.alias("lg10"),
        (i.abs + 1).log2.alias("lg2"),
        (i.abs + 8).log(2).alias("log_b"),
        x.sign.alias("sgn"),
        x.round(2).alias("rx2"),
        d.round(2).alias("rd2"),
        x.round().alias("rx0"),
        x.truncate(1).alias("tx1"),
        d.truncate(1).alias("td1"),
        x.floor().alias("fl_x"),
        x.ceil().alias("ce_x"),
        d.floor().alias("fl_d"),
        d.ceil().alias("ce_d"),
    )


@case("035")
def _035(env: TableEnvironment) -> Table:
    s = col("s")
    return (
        env.from_path("t")
        .group_by(col("k"))
        .select(
            col("k"),
            s.list_agg().alias("ls"),
            s.list_agg(" | ").alias("ls_sep"),
            col("v").collect.alias("coll_v"),
            if_then_else(col("k") == "b", s, null_of(DataTypes.STRING())).collect.alias("coll_b"),
        )
    )


@case("048")
def _048(env: TableEnvironment) -> Table:
    w = col("w")
    return (
        env.from_path("t")
        .window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
        .group_by(w, col("k"))
        .select(
            w.start.alias("window_start"),
            w.end.alias("window_end"),
            w.rowtime.alias("window_time"),
            col("k"),
            lit(1).count.alias("cnt"),
            col("v").sum.alias("sum_v"),
            col("ts").max.alias("max_ts"),
        )
    )


@case("052")
def _052(env: TableEnvironment) -> Table:
    w = col("w")
    return (
        env.from_path("t")
        .window(Session.with_gap(lit(5).seconds).on(col("ts")).alias("w"))
        .group_by(w, col("k"))
        .select(
            w.start.alias("window_start"),
            w.end.alias("window_end"),
            col("k"),
            lit(1).count.alias("cnt"),
            col("v").sum.alias("sum_v"),
        )
    )


@case("054")
def _054(env: TableEnvironment) -> Table:
    w = col("w")
    return (
        env.from_path("t")
        .window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
        .group_by(w, col("k"))
        .select(
            col("k"),
            w.start.alias("ws"),
            w.end.alias("we"),
            w.rowtime.alias("wrt"),
            lit(1).count.alias("cnt"),
            col("v").sum.alias("sum_v"),
        )
        .where(col("sum_v") > 2)
    )


@case("056")
def _056(env: TableEnvironment) -> Table:
    w = col("w")
    return (
        env.from_path("t")
        .window(Session.with_gap(lit(5).seconds).on(col("ts")).alias("w"))
        .group_by(w, col("k"))
        .select(
            col("k"),
            w.start.alias("ss"),
            w.end.alias("se"),
            w.rowtime.alias("srt"),
            lit(1).count.alias("cnt"),
            col("v").sum.alias("sum_v"),
        )
    )


def _customers(env: TableEnvironment) -> Table:
    return env.from_path("customers").rename_columns(col("cid").alias("c_cid"))


@case("072")
def _072(env: TableEnvironment) -> Table:
    orders = env.from_path("orders")
    return orders.join(_customers(env), col("cid") == col("c_cid")).select(
        col("oid"), col("amount"), col("name"), col("country")
    )


@case("073")
def _073(env: TableEnvironment) -> Table:
    orders = env.from_path("orders")
    joined = orders.left_outer_join(_customers(env), (col("cid") == col("c_cid")) & (col("country") != "FR"))
    return joined.where(col("amount") >= 0).select(col("oid"), col("cid"), col("name"))


@case("075")
def _075(env: TableEnvironment) -> Table:
    plan = env.from_path("plan").group_by(col("k")).select(col("k").alias("pk"), col("qty").sum.alias("planned"))
    actual = env.from_path("actual").group_by(col("k")).select(col("k").alias("ak"), col("qty").sum.alias("done"))
    return plan.full_outer_join(actual, col("pk") == col("ak")).select(
        coalesce(col("pk"), col("ak")).alias("k"),
        col("planned"),
        col("done"),
        (coalesce(col("done"), 0) - coalesce(col("planned"), 0)).alias("diff"),
    )


@case("076")
def _076(env: TableEnvironment) -> Table:
    sales = env.from_path("sales")
    prices = env.from_path("prices").rename_columns(col("item").alias("p_item"))
    qty = col("qty")
    equi = sales.join(
        prices, (col("item") == col("p_item")) & qty.between(col("lo"), col("hi")) & (col("tier") != "void")
    ).select(lit("equi+range").alias("kind"), col("sid"), col("item"), qty, col("tier"))
    band = sales.join(prices, (qty > col("hi")) & (col("p_item") == "any")).select(
        lit("band").alias("kind"), col("sid"), col("item"), qty, col("tier")
    )
    return equi.union_all(band)


@case("099")
def _099(env: TableEnvironment) -> Table:
    w = Over.partition_by(col("k")).order_by(col("ts")).preceding(row_interval(2)).alias("w")
    v = col("v")
    return (
        env.from_path("t")
        .over_window(w)
        .select(
            col("k"),
            col("ts"),
            v,
            v.sum.over(col("w")).alias("sum3"),
            v.count.over(col("w")).alias("cnt3"),
            v.min.over(col("w")).alias("min3"),
        )
    )


@case("100")
def _100(env: TableEnvironment) -> Table:
    w = Over.partition_by(col("k")).order_by(col("ts")).preceding(lit(5).seconds).alias("w")
    v = col("v")
    return (
        env.from_path("t")
        .over_window(w)
        .select(
            col("k"),
            col("ts"),
            v,
            v.sum.over(col("w")).alias("sum5s"),
            lit(1).count.over(col("w")).alias("cnt5s"),
            v.max.over(col("w")).alias("max5s"),
        )
    )


@case("107")
def _107(env: TableEnvironment) -> Table:
    a = env.from_path("a").select(col("s"), col("n"))
    b = env.from_path("b").select(col("s"), col("n"))
    return a.union(b)


@case("109")
def _109(env: TableEnvironment) -> Table:
    a = env.from_path("a").select(col("s"), col("n"))
    b = env.from_path("b").select(col("s"), col("n"))

    def tagged(t: Table, tag: str) -> Table:
        return t.select(lit(tag).alias("op"), col("s"), col("n"))

    return tagged(a.minus(b), "a-b").union_all(tagged(a.minus_all(b), "a-b all")).union_all(tagged(b.minus(a), "b-a"))


@case("116")
def _116(env: TableEnvironment) -> Table:
    return env.from_path("t").select(col("k"), col("v")).order_by(col("v").desc, col("k").asc).fetch(3)


@case("117")
def _117(env: TableEnvironment) -> Table:
    t = env.from_path("t").select(col("k"), col("v"))
    return t.order_by(col("v").asc.nulls_last, col("k").desc).offset(1).fetch(4)


@case("119")
def _119(env: TableEnvironment) -> Table:
    return env.from_path("t").where(col("v") > 0).select(col("k"), col("v")).limit(3)


def _params() -> list[tuple[Path, str]]:
    out = []
    for prefix in sorted(CASES):
        (case_dir,) = (CONFORMANCE / "cases").glob(f"{prefix}_*")
        for mode in load_case(case_dir)["modes"]:
            if (case_dir / "expected" / f"{mode}.jsonl").exists():
                out.append((case_dir, mode))
    return out


@pytest.mark.parametrize(("case_dir", "mode"), _params(), ids=lambda p: p.name[:3] if isinstance(p, Path) else p)
def test_table_api_matches_flink(case_dir: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    monkeypatch.chdir(case_dir)
    *setup, _last = env.parse((case_dir / "case.sql").read_text())
    for stmt in setup:
        env.execute_statement(stmt).wait()
    table = CASES[case_dir.name[:3]](env)
    result = table.execute()
    changelog = [json.loads(line) for line in jsonl_lines(result.batches(), result.fields, result.time_zone)]
    actual = normalize(final_table(changelog))
    expected = normalize(expected_table(case_dir, mode))
    assert actual == expected, f"{table.to_sql()}\n{diff(actual, expected)}"


def test_at_least_twenty_cases_are_written_with_the_table_api() -> None:
    assert len(CASES) >= 20
