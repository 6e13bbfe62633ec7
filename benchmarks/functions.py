"""Built-in function throughput: rows/s per function over 1M rows, DuckDB's equivalent beside it.

    python benchmarks/functions.py [--rows 1000000] [--batch 8192] [--only collection,string]

Measures the kernels alone: each function is evaluated by streamsql's expression evaluator
over the same Arrow batches a source produces (`table.exec.source.batch-rows` = 8192 rows by
default), so source, sink and planning costs are left out; DuckDB runs the equivalent SQL
expression over the same Arrow table (`SELECT count(expr) FROM t`, its own vectorized
engine, all cores). Data: 1M rows, an INT column, strings drawn from 100,000 distinct values
(kernels without an Arrow counterpart run once per distinct value per batch, so cardinality
matters), URLs and IPs from 10,000 distinct values, arrays of 0-8 INTs, and a GROUP BY key
with 1,000 values for the aggregates. Prints one table; compare figures from the same
machine only.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.functions.registry import EvalContext, lookup
from runtime.types import ARRAY, BIGINT, BOOLEAN, INT, STRING, DataType

COLUMNS: list[tuple[str, DataType]] = [
    ("i", INT()),
    ("s", STRING()),
    ("url", STRING()),
    ("ip", STRING()),
    ("arr", ARRAY(INT())),
    ("sarr", ARRAY(STRING())),
    ("k", BIGINT()),
]


def _ref(name: str) -> InputRef:
    i = [c for c, _ in COLUMNS].index(name)
    return InputRef(i, COLUMNS[i][1])


def _lit(v: object) -> Literal:
    if isinstance(v, bool):
        return Literal(v, BOOLEAN(False))
    if isinstance(v, int):
        return Literal(v, INT(False))
    return Literal(v, DataType("CHAR", False, precision=max(len(str(v)), 1)))


def call(name: str, *args: Expr) -> Call:
    fn = lookup(name)
    assert fn is not None, name
    literals = [a.value if isinstance(a, Literal) else None for a in args]
    return Call(name, tuple(args), fn.result_type([a.type for a in args], literals))


@dataclass(frozen=True)
class Case:
    group: str
    sql: str  # the Flink SQL call, for the table
    expr: Callable[[], Expr]
    duckdb: str | None  # DuckDB's equivalent expression over the same columns


CASES = [
    Case(
        "collection",
        "ARRAY_CONTAINS(arr, 3)",
        lambda: call("array_contains", _ref("arr"), _lit(3)),
        "list_contains(arr, 3)",
    ),
    Case("collection", "ARRAY_DISTINCT(arr)", lambda: call("array_distinct", _ref("arr")), "list_distinct(arr)"),
    Case("collection", "ARRAY_SORT(arr)", lambda: call("array_sort", _ref("arr")), "list_sort(arr)"),
    Case(
        "collection",
        "ARRAY_SLICE(arr, 2, 4)",
        lambda: call("array_slice", _ref("arr"), _lit(2), _lit(4)),
        "list_slice(arr, 2, 4)",
    ),
    Case("collection", "ARRAY_MAX(arr)", lambda: call("array_max", _ref("arr")), "list_max(arr)"),
    Case(
        "collection",
        "ARRAY_APPEND(arr, i)",
        lambda: call("array_append", _ref("arr"), _ref("i")),
        "list_append(arr, i)",
    ),
    Case(
        "collection",
        "ARRAY_UNION(arr, arr)",
        lambda: call("array_union", _ref("arr"), _ref("arr")),
        "list_distinct(list_concat(arr, arr))",
    ),
    Case(
        "collection",
        "ARRAY_JOIN(sarr, ',')",
        lambda: call("array_join", _ref("sarr"), _lit(",")),
        "array_to_string(sarr, ',')",
    ),
    Case("bitmap", "BITMAP_BUILD(arr)", lambda: call("bitmap_build", _ref("arr")), None),
    Case(
        "bitmap",
        "BITMAP_CARDINALITY(BITMAP_OR(BITMAP_BUILD(arr), BITMAP_BUILD(arr)))",
        lambda: call(
            "bitmap_cardinality",
            call("bitmap_or", call("bitmap_build", _ref("arr")), call("bitmap_build", _ref("arr"))),
        ),
        None,
    ),
    Case(
        "string",
        "REGEXP_COUNT(s, '[aeiou]')",
        lambda: call("regexp_count", _ref("s"), _lit("[aeiou]")),
        "len(regexp_extract_all(s, '[aeiou]'))",
    ),
    Case(
        "string",
        "REGEXP_SUBSTR(s, '[0-9]+')",
        lambda: call("regexp_substr", _ref("s"), _lit("[0-9]+")),
        "regexp_extract(s, '[0-9]+')",
    ),
    Case("string", "SHA2(s, 256)", lambda: call("sha2", _ref("s"), _lit(256)), "sha256(s)"),
    Case("string", "HEX(s)", lambda: call("hex", _ref("s")), "hex(s)"),
    Case("string", "BIN(i)", lambda: call("bin", _ref("i")), "bin(i)"),
    Case(
        "string",
        "PRINTF('%s-%d', s, i)",
        lambda: call("printf", _lit("%s-%d"), _ref("s"), _ref("i")),
        "printf('%s-%d', s, i)",
    ),
    Case("string", "URL_ENCODE(s)", lambda: call("url_encode", _ref("s")), "url_encode(s)"),
    Case("string", "JSON_QUOTE(s)", lambda: call("json_quote", _ref("s")), "to_json(s)"),
    Case("string", "IS_DIGIT(s)", lambda: call("is_digit", _ref("s")), "regexp_full_match(s, '[0-9]+')"),
    Case(
        "string",
        "ELT(2, s, url, ip)",
        lambda: call("elt", _lit(2), _ref("s"), _ref("url"), _ref("ip")),
        "[s, url, ip][2]",
    ),
    Case(
        "network",
        "PARSE_URL(url, 'HOST')",
        lambda: call("parse_url", _ref("url"), _lit("HOST")),
        "regexp_extract(url, '://([^/:?#]+)', 1)",
    ),
    Case("network", "INET_ATON(ip)", lambda: call("inet_aton", _ref("ip")), None),
    Case("network", "INET_NTOA(i)", lambda: call("inet_ntoa", _ref("i")), None),
    Case("numeric", "SIN(i) (Java's fdlibm)", lambda: call("sin", _ref("i")), "sin(i)"),
    Case(
        "numeric",
        "RAND_INTEGER(i + 1) (bound per row)",
        lambda: call("rand_integer", call("plus", _ref("i"), _lit(1))),
        "floor(random() * (i + 1))",
    ),
    Case(
        "structured",
        "OBJECT_OF('c.P', 'k', i, 's', s)",
        lambda: call("object_of", _lit("c.P"), _lit("k"), _ref("i"), _lit("s"), _ref("s")),
        "struct_pack(k := i, s := s)",
    ),
]


def make_table(rows: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array([f"w{n}x{n % 97}ab{n % 13}" for n in range(100_000)], dtype=object)
    urls = np.array([f"https://h{n % 500}.example.com:8{n % 10}/p/{n}?q={n}#f" for n in range(10_000)], dtype=object)
    ips = np.array([f"{n % 256}.{(n * 7) % 256}.{(n * 13) % 256}.{n % 250}" for n in range(10_000)], dtype=object)
    lengths = rng.integers(0, 9, rows)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    flat = rng.integers(-5, 20, int(offsets[-1])).astype(np.int32)
    arr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, pa.int32()))
    sflat = words[rng.integers(0, len(words), int(offsets[-1]))]
    sarr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(sflat.tolist(), pa.string()))
    return pa.table(
        {
            "i": pa.array(rng.integers(0, 1 << 30, rows).astype(np.int32)),
            "s": pa.array(words[rng.integers(0, len(words), rows)].tolist(), pa.string()),
            "url": pa.array(urls[rng.integers(0, len(urls), rows)].tolist(), pa.string()),
            "ip": pa.array(ips[rng.integers(0, len(ips), rows)].tolist(), pa.string()),
            "arr": arr,
            "sarr": sarr,
            "k": pa.array(rng.integers(0, 1000, rows)),
        }
    )


def streamsql_rate(case: Case, batches: list[pa.RecordBatch]) -> float:
    expr = case.expr()
    start = time.perf_counter()
    rows = 0
    for b in batches:
        evaluate(expr, b, EvalContext(b.num_rows))
        rows += b.num_rows
    return rows / (time.perf_counter() - start)


def duckdb_rate(expr: str, table: pa.Table) -> float | str:
    try:
        import duckdb
    except ImportError:
        return "duckdb not installed"
    con = duckdb.connect()
    con.register("t", table)
    try:
        con.execute(f"SELECT count({expr}) FROM t").fetchall()  # warm-up, and checks the SQL
        start = time.perf_counter()
        con.execute(f"SELECT count({expr}) FROM t").fetchall()
        return table.num_rows / (time.perf_counter() - start)
    except Exception as e:  # noqa: BLE001 - a missing DuckDB function is shown, not fatal
        return f"n/a ({type(e).__name__})"


def aggregate_rates(table: pa.Table) -> list[tuple[str, str, float, float | str, str]]:
    """VAR_SAMP, PERCENTILE and BITMAP_OR_AGG through the engine (GROUP BY k over the same rows)."""
    from streamsql import EnvironmentSettings, TableEnvironment

    out = []
    for sql, duck in (
        ("VAR_SAMP(i)", "var_samp(i)"),
        ("PERCENTILE(i, 0.5)", "quantile_cont(i, 0.5)"),
        ("BITMAP_CARDINALITY(BITMAP_OR_AGG(BITMAP_BUILD(arr)))", None),
    ):
        env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        env.create_temporary_view("t", env.from_arrow(table))
        start = time.perf_counter()
        result = env.execute_sql(f"SELECT k, {sql} FROM t GROUP BY k")
        for _ in result.collect():
            pass
        rate = table.num_rows / (time.perf_counter() - start)
        dr: float | str = duckdb_rate_group(duck, table) if duck else "—"
        note = "streamsql figure: whole batch job incl. scan"
        out.append(("aggregate", sql + " GROUP BY k", rate, dr, f"{duck} ({note})" if duck else note))
    return out


def duckdb_rate_group(expr: str, table: pa.Table) -> float | str:
    import duckdb

    con = duckdb.connect()
    con.register("t", table)
    q = f"SELECT k, {expr} FROM t GROUP BY k"
    con.execute(q).fetchall()
    start = time.perf_counter()
    con.execute(q).fetchall()
    return table.num_rows / (time.perf_counter() - start)


def _fmt(v: float | str) -> str:
    return f"{v / 1e6:,.2f} M" if isinstance(v, float) else v


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--batch", type=int, default=8192)
    p.add_argument("--only", default="", help="comma-separated groups (collection, bitmap, string, network, aggregate)")
    p.add_argument("--no-aggregates", action="store_true")
    args = p.parse_args(argv)
    groups = {g for g in args.only.split(",") if g}
    table = make_table(args.rows)
    batches = table.to_batches(max_chunksize=args.batch)
    rows: list[tuple[str, str, float, float | str, str]] = []
    for case in CASES:
        if groups and case.group not in groups:
            continue
        rate = streamsql_rate(case, batches)
        duck = duckdb_rate(case.duckdb, table) if case.duckdb else "—"
        rows.append((case.group, case.sql, rate, duck, case.duckdb or ""))
    if not args.no_aggregates and (not groups or "aggregate" in groups):
        rows += aggregate_rates(table)
    print(f"rows/s over {args.rows:,} rows (streamsql: batches of {args.batch}; M = million)\n")
    print("| group | function | streamsql | DuckDB | DuckDB expression |")
    print("|---|---|---:|---:|---|")
    for group, sql, rate, duck, dexpr in rows:
        print(f"| {group} | `{sql}` | {_fmt(rate)} | {_fmt(duck)} | {('`' + dexpr + '`') if dexpr else ''} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
