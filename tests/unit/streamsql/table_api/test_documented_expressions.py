"""The Table API column of Flink 2.3's System (Built-in) Functions page: every scalar and
aggregate method of PyFlink's `Expression` (tests/unit/streamsql/data/pyflink_2_3_api.json)
and the module-level functions beside them, each evaluated and compared with the SQL
function the page lists next to it (and with the page's result where it gives one, e.g.
`lit(4).bin` is "100", `lit(2).quarters` is 6 months)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streamsql import DataTypes, EnvironmentSettings, Table, TableEnvironment
from streamsql.expression import JsonQueryWrapper, JsonType, TimeIntervalUnit, TimePointUnit
from streamsql.expressions import (
    Expression,
    JsonOnNull,
    and_,
    array,
    atan2,
    call_sql,
    coalesce,
    col,
    concat,
    concat_ws,
    convert_tz,
    current_database,
    date_format,
    e,
    from_unixtime,
    if_then_else,
    json_array,
    json_object,
    json_string,
    lit,
    map_,
    negative,
    not_,
    null_of,
    or_,
    pi,
    row,
    temporal_overlaps,
    timestamp_diff,
    to_date,
    to_timestamp,
    to_timestamp_ltz,
    unix_timestamp,
)

S = DataTypes.STRING()

# (PyFlink method or function name, the Table API expression, the same in SQL)
SCALAR: list[tuple[str, Callable[[], Expression], str]] = [
    # arithmetic
    ("abs", lambda: lit(-5).abs, "5"),
    ("power", lambda: lit(2).power(3), "POWER(2, 3)"),
    ("sqrt", lambda: lit(4).sqrt, "2.0E0"),
    ("ln", lambda: lit(1).ln, "LN(1)"),
    ("log10", lambda: lit(100).log10, "LOG10(100)"),
    ("log2", lambda: lit(8).log2, "LOG2(8)"),
    ("log", lambda: lit(8).log(), "LOG(8)"),
    ("log", lambda: lit(2).log(8), "LOG(8, 2)"),  # NUMERIC1.log(NUMERIC2): log of NUMERIC1 to base NUMERIC2
    ("exp", lambda: lit(1).exp, "EXP(1)"),
    ("ceil", lambda: lit(1.5).ceil(), "CEIL(CAST(1.5 AS DOUBLE))"),
    ("floor", lambda: lit(1.5).floor(), "FLOOR(CAST(1.5 AS DOUBLE))"),
    ("sin", lambda: lit(1).sin, "SIN(1)"),
    ("sinh", lambda: lit(1).sinh, "SINH(1)"),
    ("cos", lambda: lit(1).cos, "COS(1)"),
    ("tan", lambda: lit(1).tan, "TAN(1)"),
    ("tanh", lambda: lit(1).tanh, "TANH(1)"),
    ("cot", lambda: lit(1).cot, "COT(1)"),
    ("asin", lambda: lit(1).asin, "ASIN(1)"),
    ("acos", lambda: lit(1).acos, "ACOS(1)"),
    ("atan", lambda: lit(1).atan, "ATAN(1)"),
    ("atan2", lambda: atan2(1, 2), "ATAN2(1, 2)"),
    ("cosh", lambda: lit(1).cosh, "COSH(1)"),
    ("degrees", lambda: lit(1).degrees, "DEGREES(1)"),
    ("radians", lambda: lit(180).radians, "RADIANS(180)"),
    ("sign", lambda: lit(-3).sign, "SIGN(-3)"),
    ("round", lambda: lit(1.25).round(1), "ROUND(CAST(1.25 AS DOUBLE), 1)"),
    ("pi", lambda: pi(), "PI()"),
    ("e", lambda: e(), "E()"),
    ("bin", lambda: lit(4).bin, "'100'"),
    ("bin", lambda: lit(12).bin, "'1100'"),
    ("hex", lambda: lit(20).hex, "'14'"),
    ("hex", lambda: lit("hello,world").hex, "'68656C6C6F2C776F726C64'"),
    ("unhex", lambda: lit("4142").unhex, "x'4142'"),
    ("truncate", lambda: lit(42.324).truncate(2), "CAST(42.32 AS DOUBLE)"),
    ("truncate", lambda: lit(42.324).truncate(), "CAST(42.0 AS DOUBLE)"),
    ("negative", lambda: negative(lit(1)), "-1"),
    # string
    ("char_length", lambda: lit("abc").char_length, "3"),
    ("upper_case", lambda: lit("aB").upper_case, "'AB'"),
    ("lower_case", lambda: lit("aB").lower_case, "'ab'"),
    ("position", lambda: lit("b").position("abc"), "2"),
    ("printf", lambda: lit("%s-%d").printf("a", 1), "'a-1'"),
    ("trim", lambda: lit(" a ").trim(), "'a'"),
    ("trim", lambda: lit("xax").trim(character="x"), "'a'"),
    ("trim_leading", lambda: lit("xax").trim_leading("x"), "'ax'"),
    ("trim_trailing", lambda: lit("xax").trim_trailing("x"), "'xa'"),
    ("ltrim", lambda: lit(" This is a test String.").ltrim(), "'This is a test String.'"),
    ("rtrim", lambda: lit("This is a test String. ").rtrim(), "'This is a test String.'"),
    ("btrim", lambda: lit("xyaxy").btrim("xy"), "'a'"),
    ("repeat", lambda: lit("ab").repeat(2), "'abab'"),
    ("regexp_replace", lambda: lit("foobar").regexp_replace("oo|ar", ""), "'fb'"),
    ("overlay", lambda: lit("xxxxxtest").overlay("xxxx", 6), "'xxxxxxxxx'"),
    ("overlay", lambda: lit("xxxxxtest").overlay("xxxx", 6, 2), "'xxxxxxxxxst'"),
    ("starts_with", lambda: lit("abc").starts_with("ab"), "TRUE"),
    ("ends_with", lambda: lit("abc").ends_with("bc"), "TRUE"),
    ("substring", lambda: lit("abcde").substring(2), "'bcde'"),
    ("substring", lambda: lit("abcde").substring(2, 2), "'bc'"),
    ("substr", lambda: lit("abcde").substr(2, 2), "'bc'"),
    ("replace", lambda: lit("hello world").replace("world", "flink"), "'hello flink'"),
    ("replace", lambda: lit("ababab").replace("abab", "z"), "'zab'"),
    ("regexp_count", lambda: lit("ababab").regexp_count("ab"), "3"),
    ("regexp_extract", lambda: lit("foothebar").regexp_extract("foo(.*?)(bar)", 2), "'bar'"),
    ("regexp_extract_all", lambda: lit("a1b22").regexp_extract_all("[a-z](\\d+)"), "ARRAY['1', '22']"),
    ("regexp_instr", lambda: lit("abcabc").regexp_instr("c"), "3"),
    ("regexp_substr", lambda: lit("abc123").regexp_substr("\\d+"), "'123'"),
    ("translate", lambda: lit("abc").translate("ab", "x"), "'xc'"),
    ("init_cap", lambda: lit("hello world").init_cap, "'Hello World'"),
    ("concat", lambda: concat("AA", "BB", "CC"), "'AABBCC'"),
    ("concat_ws", lambda: concat_ws("~", "AA", null_of(S), "BB", "", "CC"), "'AA~BB~~CC'"),
    ("lpad", lambda: lit("hi").lpad(4, "??"), "'??hi'"),
    ("rpad", lambda: lit("hi").rpad(4, "??"), "'hi??'"),
    ("from_base64", lambda: lit("aGVsbG8gd29ybGQ=").from_base64, "'hello world'"),
    ("to_base64", lambda: lit("hello world").to_base64, "'aGVsbG8gd29ybGQ='"),
    ("ascii", lambda: lit("abc").ascii, "97"),
    ("chr", lambda: lit(353).chr, "'a'"),
    ("encode", lambda: lit("ab").encode("UTF-8"), "x'6162'"),
    ("decode", lambda: lit("ab").encode("UTF-16BE").decode("UTF-16BE"), "'ab'"),
    ("instr", lambda: lit("abcabc").instr("c"), "3"),
    ("left", lambda: lit("abc").left(2), "'ab'"),
    ("right", lambda: lit("abc").right(2), "'bc'"),
    ("locate", lambda: lit("b").locate("abcb"), "2"),
    ("locate", lambda: lit("b").locate("abcb", 3), "4"),
    ("url_decode", lambda: lit("a%20b").url_decode(), "'a b'"),
    ("url_encode", lambda: lit("a b").url_encode(), "'a+b'"),
    ("parse_url", lambda: lit("http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1").parse_url("HOST"), "'facebook.com'"),
    ("parse_url", lambda: lit("http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1").parse_url("QUERY", "k1"), "'v1'"),
    ("regexp", lambda: lit("abc").regexp("b"), "TRUE"),
    ("reverse", lambda: lit("abc").reverse, "'cba'"),
    ("split_index", lambda: lit("a,b,c").split_index(",", 1), "'b'"),
    ("str_to_map", lambda: lit("a:1;b:2").str_to_map(";", ":"), "STR_TO_MAP('a:1;b:2', ';', ':')"),
    ("json_quote", lambda: lit('a"b').json_quote(), "JSON_QUOTE('a\"b')"),
    ("json_unquote", lambda: lit('"a"').json_unquote(), "'a'"),
    ("elt", lambda: lit(2).elt("a", "b"), "'b'"),
    ("split", lambda: lit("a,b").split(","), "ARRAY['a', 'b']"),
    ("inet_aton", lambda: lit("1.2.3.4").inet_aton(), "INET_ATON('1.2.3.4')"),
    ("inet_ntoa", lambda: lit(16909060).inet_ntoa(), "'1.2.3.4'"),
    # hash
    ("md5", lambda: lit("a").md5, "MD5('a')"),
    ("sha1", lambda: lit("a").sha1, "SHA1('a')"),
    ("sha224", lambda: lit("a").sha224, "SHA224('a')"),
    ("sha256", lambda: lit("a").sha256, "SHA256('a')"),
    ("sha384", lambda: lit("a").sha384, "SHA384('a')"),
    ("sha512", lambda: lit("a").sha512, "SHA512('a')"),
    ("sha2", lambda: lit("a").sha2(256), "SHA2('a', 256)"),
    # comparison and logic
    ("between", lambda: lit(1).between(0, 2), "TRUE"),
    ("not_between", lambda: lit(3).not_between(0, 2), "TRUE"),
    ("like", lambda: lit("abc").like("a%"), "TRUE"),
    ("similar", lambda: lit("abc").similar("a(b|c)c"), "TRUE"),
    ("in_", lambda: lit(1).in_(1, 2), "TRUE"),
    ("is_null", lambda: null_of(DataTypes.INT()).is_null, "TRUE"),
    ("is_not_null", lambda: lit(1).is_not_null, "TRUE"),
    ("is_true", lambda: lit(True).is_true, "TRUE"),
    ("is_false", lambda: lit(False).is_false, "TRUE"),
    ("is_not_true", lambda: lit(True).is_not_true, "FALSE"),
    ("is_not_false", lambda: lit(True).is_not_false, "TRUE"),
    ("or_", lambda: or_(lit(True), null_of(DataTypes.BOOLEAN())), "TRUE"),
    ("and_", lambda: and_(lit(True), null_of(DataTypes.BOOLEAN())), "CAST(NULL AS BOOLEAN)"),
    ("not_", lambda: not_(lit(True)), "FALSE"),
    # conditional and conversion
    ("then", lambda: (lit(42) > 5).then("A", "B"), "'A'"),
    ("if_then_else", lambda: if_then_else(lit(42) > 5, "A", "B"), "'A'"),
    ("coalesce", lambda: coalesce(null_of(S), "default"), "'default'"),
    ("if_null", lambda: null_of(DataTypes.INT()).if_null(5), "5"),
    ("cast", lambda: lit("42").cast(DataTypes.INT()), "42"),
    ("try_cast", lambda: lit("x").try_cast(DataTypes.INT()), "CAST(NULL AS INT)"),
    # temporal
    ("to_date", lambda: lit("2020-01-02").to_date, "DATE '2020-01-02'"),
    ("to_time", lambda: lit("12:13:14").to_time, "TIME '12:13:14'"),
    ("to_timestamp", lambda: lit("2020-01-02 03:04:05").to_timestamp, "TIMESTAMP '2020-01-02 03:04:05'"),
    ("extract", lambda: lit("2006-06-05").to_date.extract(TimeIntervalUnit.DAY), "5"),
    ("floor", lambda: lit("12:44:31").to_time.floor(TimeIntervalUnit.MINUTE), "TIME '12:44:00'"),
    ("ceil", lambda: lit("12:44:31").to_time.ceil(TimeIntervalUnit.MINUTE), "TIME '12:45:00'"),
    ("years", lambda: lit(2).years, "INTERVAL '2' YEAR"),
    ("year", lambda: lit(2).year, "INTERVAL '2' YEAR"),
    ("quarters", lambda: lit(2).quarters, "INTERVAL '6' MONTH"),
    ("quarter", lambda: lit(2).quarter, "INTERVAL '6' MONTH"),
    ("months", lambda: lit(2).months, "INTERVAL '2' MONTH"),
    ("month", lambda: lit(2).month, "INTERVAL '2' MONTH"),
    ("weeks", lambda: lit(2).weeks, "INTERVAL '14' DAY"),
    ("week", lambda: lit(2).week, "INTERVAL '14' DAY"),
    ("days", lambda: lit(2).days, "INTERVAL '2' DAY"),
    ("day", lambda: lit(2).day, "INTERVAL '2' DAY"),
    ("hours", lambda: lit(2).hours, "INTERVAL '2' HOUR"),
    ("hour", lambda: lit(2).hour, "INTERVAL '2' HOUR"),
    ("minutes", lambda: lit(2).minutes, "INTERVAL '2' MINUTE"),
    ("minute", lambda: lit(2).minute, "INTERVAL '2' MINUTE"),
    ("seconds", lambda: lit(2).seconds, "INTERVAL '2' SECOND"),
    ("second", lambda: lit(2).second, "INTERVAL '2' SECOND"),
    ("millis", lambda: lit(2).millis, "INTERVAL '0.002' SECOND"),
    ("milli", lambda: lit(2).milli, "INTERVAL '0.002' SECOND"),
    (
        "temporal_overlaps",
        lambda: temporal_overlaps(lit("2:55:00").to_time, lit(1).hours, lit("3:30:00").to_time, lit(2).hours),
        "TRUE",
    ),
    ("date_format", lambda: date_format(lit("2020-01-02 03:04:05").to_timestamp, "yyyy/MM/dd"), "'2020/01/02'"),
    (
        "timestamp_diff",
        lambda: timestamp_diff(
            TimePointUnit.DAY, lit("2020-01-01 00:00:00").to_timestamp, lit("2020-01-03 00:00:00").to_timestamp
        ),
        "2",
    ),
    ("convert_tz", lambda: convert_tz("1970-01-01 00:00:00", "UTC", "America/Los_Angeles"), "'1969-12-31 16:00:00'"),
    ("from_unixtime", lambda: from_unixtime(44), "'1970-01-01 00:00:44'"),
    ("unix_timestamp", lambda: unix_timestamp("1970-01-01 00:00:01"), "CAST(1 AS BIGINT)"),
    ("to_date", lambda: to_date("2020-01-02"), "DATE '2020-01-02'"),
    ("to_timestamp", lambda: to_timestamp("2020-01-02 03:04:05"), "TIMESTAMP '2020-01-02 03:04:05'"),
    ("to_timestamp_ltz", lambda: to_timestamp_ltz(0, 3), "TO_TIMESTAMP_LTZ(0, 3)"),
    # collections, value construction and access
    ("cardinality", lambda: array(1, 2).cardinality, "2"),
    ("at", lambda: array(1, 2).at(1), "1"),
    ("element", lambda: array(7).element, "7"),
    ("at", lambda: map_("a", 1).at("a"), "1"),
    ("get", lambda: row(1, "a").get("EXPR$0"), "1"),
    ("array_append", lambda: array(1).array_append(2), "ARRAY[1, 2]"),
    ("array_contains", lambda: array(1, 2).array_contains(2), "TRUE"),
    ("array_distinct", lambda: array(1, 1).array_distinct(), "ARRAY[1]"),
    ("array_position", lambda: array(1, 2).array_position(2), "2"),
    ("array_prepend", lambda: array(1).array_prepend(0), "ARRAY[0, 1]"),
    ("array_remove", lambda: array(1, 2, 1).array_remove(1), "ARRAY[2]"),
    ("array_reverse", lambda: array(1, 2).array_reverse(), "ARRAY[2, 1]"),
    ("array_slice", lambda: array(1, 2, 3).array_slice(2, 3), "ARRAY[2, 3]"),
    ("array_sort", lambda: array(2, 1).array_sort(), "ARRAY[1, 2]"),
    ("array_union", lambda: array(1, 2).array_union(array(2, 3)), "ARRAY[1, 2, 3]"),
    ("array_concat", lambda: array(1).array_concat(array(2)), "ARRAY[1, 2]"),
    ("array_except", lambda: array(1, 2).array_except(array(2)), "ARRAY[1]"),
    ("array_intersect", lambda: array(1, 2).array_intersect(array(2)), "ARRAY[2]"),
    ("array_max", lambda: array(1, 3).array_max(), "3"),
    ("array_min", lambda: array(1, 3).array_min(), "1"),
    ("array_join", lambda: array("a", "b").array_join(","), "'a,b'"),
    ("map_keys", lambda: map_("a", 1).map_keys, "ARRAY['a']"),
    ("map_values", lambda: map_("a", 1).map_values, "ARRAY[1]"),
    ("map_entries", lambda: map_("a", 1).map_entries, "MAP_ENTRIES(MAP['a', 1])"),
    ("map_union", lambda: map_("a", 1).map_union(map_("a", 2)), "MAP['a', 2]"),
    (
        "object_update",
        lambda: call_sql("OBJECT_OF('C', 'a', 1, 'b', 'x')").object_update("b", "y"),
        "OBJECT_UPDATE(OBJECT_OF('C', 'a', 1, 'b', 'x'), 'b', 'y')",
    ),
    # JSON
    ("is_json", lambda: lit("{}").is_json(), "TRUE"),
    ("is_json", lambda: lit("1").is_json(JsonType.SCALAR), "TRUE"),
    ("json_exists", lambda: lit('{"a": true}').json_exists("$.a"), "TRUE"),
    ("json_string", lambda: json_string(1), "'1'"),
    ("json_value", lambda: lit('{"a": true}').json_value("$.a"), "'true'"),
    ("json_query", lambda: lit('{"a": {"b": 1}}').json_query("$.a"), "'{\"b\":1}'"),
    (
        "json_query",
        lambda: lit("[1, 2]").json_query("$", wrapping_behavior=JsonQueryWrapper.UNCONDITIONAL_ARRAY),
        "'[[1,2]]'",
    ),
    ("json_object", lambda: json_object(JsonOnNull.NULL, "K1", "V1"), '\'{"K1":"V1"}\''),
    ("json_array", lambda: json_array(JsonOnNull.NULL, 1, "2"), "'[1,\"2\"]'"),
    # bitmap
    ("bitmap_build", lambda: array(1, 2).bitmap_build().bitmap_to_string(), "'{1,2}'"),
    (
        "bitmap_to_string",
        lambda: array(3).bitmap_build().bitmap_to_string(),
        "BITMAP_TO_STRING(BITMAP_BUILD(ARRAY[3]))",
    ),
    ("bitmap_cardinality", lambda: array(1, 2).bitmap_build().bitmap_cardinality(), "CAST(2 AS BIGINT)"),
    ("bitmap_to_array", lambda: array(2, 1).bitmap_build().bitmap_to_array(), "ARRAY[1, 2]"),
    ("bitmap_to_bytes", lambda: array(1).bitmap_build().bitmap_to_bytes(), "BITMAP_TO_BYTES(BITMAP_BUILD(ARRAY[1]))"),
    (
        "bitmap_from_bytes",
        lambda: array(1).bitmap_build().bitmap_to_bytes().bitmap_from_bytes().bitmap_to_string(),
        "'{1}'",
    ),
    ("bitmap_and", lambda: array(1, 2).bitmap_build().bitmap_and(array(2).bitmap_build()).bitmap_to_string(), "'{2}'"),
    (
        "bitmap_andnot",
        lambda: array(1, 2).bitmap_build().bitmap_andnot(array(2).bitmap_build()).bitmap_to_string(),
        "'{1}'",
    ),
    ("bitmap_or", lambda: array(1).bitmap_build().bitmap_or(array(2).bitmap_build()).bitmap_to_string(), "'{1,2}'"),
    ("bitmap_xor", lambda: array(1, 2).bitmap_build().bitmap_xor(array(2).bitmap_build()).bitmap_to_string(), "'{1}'"),
    ("current_database", lambda: current_database(), "CURRENT_DATABASE()"),
]

# (method, Table API aggregate over x (1, 2, 3, NULL), SQL aggregate)
AGGREGATE: list[tuple[str, Callable[[], Expression], str]] = [
    ("count", lambda: col("x").count, "COUNT(x)"),
    ("distinct", lambda: col("x").count.distinct, "COUNT(DISTINCT x)"),
    ("avg", lambda: col("x").avg, "AVG(x)"),
    ("sum", lambda: col("x").sum, "SUM(x)"),
    ("sum0", lambda: col("x").sum0, "SUM(x)"),
    ("max", lambda: col("x").max, "MAX(x)"),
    ("min", lambda: col("x").min, "MIN(x)"),
    ("stddev_pop", lambda: col("x").stddev_pop, "STDDEV_POP(x)"),
    ("stddev_samp", lambda: col("x").stddev_samp, "STDDEV_SAMP(x)"),
    ("var_pop", lambda: col("x").var_pop, "VAR_POP(x)"),
    ("var_samp", lambda: col("x").var_samp, "VAR_SAMP(x)"),
    ("collect", lambda: col("x").collect, "COLLECT(x)"),
    ("first_value", lambda: col("x").first_value, "FIRST_VALUE(x)"),
    ("last_value", lambda: col("x").last_value, "LAST_VALUE(x)"),
    ("list_agg", lambda: col("s").list_agg(), "LISTAGG(s)"),
    ("list_agg", lambda: col("s").list_agg("-"), "LISTAGG(s, '-')"),
    ("array_agg", lambda: col("x").array_agg, "ARRAY_AGG(x)"),
    ("percentile", lambda: col("x").percentile(0.5), "PERCENTILE(x, 0.5)"),
    (
        "bitmap_build_agg",
        lambda: col("i").bitmap_build_agg().bitmap_to_string(),
        "BITMAP_TO_STRING(BITMAP_BUILD_AGG(i))",
    ),
    (
        "bitmap_build_cardinality_agg",
        lambda: col("i").bitmap_build_cardinality_agg(),
        "BITMAP_BUILD_CARDINALITY_AGG(i)",
    ),
    ("bitmap_and_agg", lambda: col("b").bitmap_and_agg().bitmap_to_string(), "BITMAP_TO_STRING(BITMAP_AND_AGG(b))"),
    ("bitmap_and_cardinality_agg", lambda: col("b").bitmap_and_cardinality_agg(), "BITMAP_AND_CARDINALITY_AGG(b)"),
    ("bitmap_or_agg", lambda: col("b").bitmap_or_agg().bitmap_to_string(), "BITMAP_TO_STRING(BITMAP_OR_AGG(b))"),
    ("bitmap_or_cardinality_agg", lambda: col("b").bitmap_or_cardinality_agg(), "BITMAP_OR_CARDINALITY_AGG(b)"),
    ("bitmap_xor_agg", lambda: col("b").bitmap_xor_agg().bitmap_to_string(), "BITMAP_TO_STRING(BITMAP_XOR_AGG(b))"),
    ("bitmap_xor_cardinality_agg", lambda: col("b").bitmap_xor_cardinality_agg(), "BITMAP_XOR_CARDINALITY_AGG(b)"),
]

# Expression methods that are not functions of the page's table: naming, ordering, windows
# and time attributes (tested with the operations that take them), and the constructor.
NOT_FUNCTIONS = {
    "__init__", "alias", "as_argument", "asc", "desc", "over", "proctime", "rowtime", "start", "end", "flatten",
}  # fmt: skip

API = json.loads((Path(__file__).parents[1] / "data" / "pyflink_2_3_api.json").read_text())


@pytest.fixture(scope="module")
def env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def test_every_expression_method_is_exercised() -> None:
    methods = set(API["pyflink.table.expression"]["Expression"]["methods"])
    covered = {name for name, _, _ in SCALAR + AGGREGATE}
    assert methods - NOT_FUNCTIONS - covered == set()


@pytest.mark.parametrize(("name", "build", "sql"), SCALAR, ids=[f"{n}:{s}" for n, _, s in SCALAR])
def test_scalar_method_equals_its_sql_function(
    env: TableEnvironment, name: str, build: Callable[[], Expression], sql: str
) -> None:
    one = env.from_elements([(1,)], ["k"])
    got = [tuple(r) for r in one.select(build().alias("v")).execute().collect()]
    want = [tuple(r) for r in env.execute_sql(f"SELECT {sql}").collect()]
    assert got == want


@pytest.fixture(scope="module")
def agg_table(env: TableEnvironment) -> Table:
    """x (BIGINT) and i (INT): 1, 2, 3, NULL; s: 'a', 'b', NULL, 'c'; b: a bitmap of
    {x or 0, 7}; also the view agg_t."""
    rows = [(1, "a"), (2, "b"), (3, None), (None, "c")]
    t = env.from_elements(rows, ["x", "s"]).select(
        col("x"),
        col("s"),
        col("x").cast(DataTypes.INT()).alias("i"),
        array(col("x").if_null(0).cast(DataTypes.INT()), 7).bitmap_build().alias("b"),
    )
    env.create_temporary_view("agg_t", t)
    return t


@pytest.mark.parametrize(("name", "build", "sql"), AGGREGATE, ids=[f"{n}:{s}" for n, _, s in AGGREGATE])
def test_aggregate_method_equals_its_sql_function(
    env: TableEnvironment, agg_table: Table, name: str, build: Callable[[], Expression], sql: str
) -> None:
    got: Any = [tuple(r) for r in agg_table.select(build().alias("v")).execute().collect()]
    want: Any = [tuple(r) for r in env.execute_sql(f"SELECT {sql} FROM agg_t").collect()]
    if name == "collect":  # a multiset: compare the counts, not the order
        got, want = sorted(got[0][0]), sorted(want[0][0])
    assert got == want
