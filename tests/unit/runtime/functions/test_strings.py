"""String functions: conformance cases 017 (case/trim/substring/concat) and 018
(replace/regex/split), plus the other string kernels, evaluated through IR Calls."""

from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Call, InputRef, Literal
from runtime.functions.registry import EvalContext, FunctionTypeError, lookup
from runtime.map_values import pairs
from runtime.types import ARRAY, BOOLEAN, CHAR, INT, STRING

S017 = ["  Hello World  ", "straße Ärger", "", None, "abcabc", "日本語テキスト", "MiXeD cAsE-words_here", "a,b,,c"]
T017 = ["x", None, "", "y", "bc", "語", "e", ","]
S018 = [
    "alice@example.com",
    "bob@test.com;carol@x.com",
    "no digits here",
    "abc123def45",
    ";;x",
    None,
    "naïve@café.com",
    "a;b;c;d;e;f",
]


def lit(v: object) -> Literal:
    if isinstance(v, str):
        return Literal(v, CHAR(max(len(v), 1), False))
    return Literal(v, INT(False))


def call(name: str, *args, type=None) -> Call:  # noqa: A002
    fn = lookup(name)
    assert fn is not None, name
    return Call(name, tuple(args), type or fn.infer([a.type for a in args]))


def run(expr, cols: list[list]) -> list:
    arrays = [pa.array(c, pa.string()) for c in cols]
    batch = pa.RecordBatch.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])
    out = evaluate(expr, batch, EvalContext(batch.num_rows))
    assert out.type == expr.type.to_arrow()
    return out.to_pylist()


S = InputRef(0, STRING())
T = InputRef(1, STRING())


@pytest.mark.parametrize(
    "expr, expected",
    [
        (
            call("upper", S),
            [
                "  HELLO WORLD  ",
                "STRASSE ÄRGER",
                "",
                None,
                "ABCABC",
                "日本語テキスト",
                "MIXED CASE-WORDS_HERE",
                "A,B,,C",
            ],
        ),
        (
            call("lower", S),
            [
                "  hello world  ",
                "straße ärger",
                "",
                None,
                "abcabc",
                "日本語テキスト",
                "mixed case-words_here",
                "a,b,,c",
            ],
        ),
        (
            call("btrim", S, lit(" ")),
            ["Hello World", "straße Ärger", "", None, "abcabc", "日本語テキスト", "MiXeD cAsE-words_here", "a,b,,c"],
        ),
        (
            call("ltrim", S),
            ["Hello World  ", "straße Ärger", "", None, "abcabc", "日本語テキスト", "MiXeD cAsE-words_here", "a,b,,c"],
        ),
        (
            call("rtrim", S, lit(" ")),
            ["  Hello World", "straße Ärger", "", None, "abcabc", "日本語テキスト", "MiXeD cAsE-words_here", "a,b,,c"],
        ),
        (
            call("btrim", S, lit("a")),
            ["  Hello World  ", "straße Ärger", "", None, "bcabc", "日本語テキスト", "MiXeD cAsE-words_here", ",b,,c"],
        ),
        (
            call("rtrim", S, lit("c")),
            ["  Hello World  ", "straße Ärger", "", None, "abcab", "日本語テキスト", "MiXeD cAsE-words_here", "a,b,,"],
        ),
        (call("char_length", S), [15, 12, 0, None, 6, 7, 21, 6]),
        (call("substring", S, lit(2), lit(3)), [" He", "tra", "", None, "bca", "本語テ", "iXe", ",b,"]),
        (
            call("substring", S, lit(5)),
            ["llo World  ", "ße Ärger", "", None, "bc", "キスト", "D cAsE-words_here", ",c"],
        ),
        (call("substring", S, lit(0), lit(2)), ["  ", "st", "", None, "ab", "日本", "Mi", "a,"]),
        (call("substring", S, lit(30)), ["", "", "", None, "", "", "", ""]),
        (
            call("concat", S, lit("|"), T),
            [
                "  Hello World  |x",
                None,
                "|",
                None,
                "abcabc|bc",
                "日本語テキスト|語",
                "MiXeD cAsE-words_here|e",
                "a,b,,c|,",
            ],
        ),
        (
            call("concat_ws", lit("-"), S, T, lit("z")),
            [
                "  Hello World  -x-z",
                "straße Ärger-z",
                "--z",
                "y-z",
                "abcabc-bc-z",
                "日本語テキスト-語-z",
                "MiXeD cAsE-words_here-e-z",
                "a,b,,c-,-z",
            ],
        ),
        (
            call("concat", S, T),
            ["  Hello World  x", None, "", None, "abcabcbc", "日本語テキスト語", "MiXeD cAsE-words_heree", "a,b,,c,"],
        ),
    ],
    ids=lambda x: str(x) if isinstance(x, Call) else "",
)
def test_case_017(expr, expected):
    assert run(expr, [S017, T017]) == expected


@pytest.mark.parametrize(
    "expr, expected",
    [
        (
            call("replace", S, lit("a"), lit("AA")),
            [
                "AAlice@exAAmple.com",
                "bob@test.com;cAArol@x.com",
                "no digits here",
                "AAbc123def45",
                ";;x",
                None,
                "nAAïve@cAAfé.com",
                "AA;b;c;d;e;f",
            ],
        ),
        (
            call("regexp_replace", S, lit("[0-9]+"), lit("#")),
            [
                "alice@example.com",
                "bob@test.com;carol@x.com",
                "no digits here",
                "abc#def#",
                ";;x",
                None,
                "naïve@café.com",
                "a;b;c;d;e;f",
            ],
        ),
        (
            call("regexp_replace", S, lit(r"(\w+)@(\w+)"), lit("$2 at $1")),
            [
                "$2 at $1.com",
                "$2 at $1.com;$2 at $1.com",
                "no digits here",
                "abc123def45",
                ";;x",
                None,
                "naï$2 at $1é.com",
                "a;b;c;d;e;f",
            ],
        ),
        (
            call("regexp_extract", S, lit(r"(\w+)@(\w+)\.com"), lit(2)),
            ["example", "test", None, None, None, None, None, None],
        ),
        (call("regexp_extract", S, lit("[0-9]+"), lit(0)), [None, None, None, "123", None, None, None, None]),
        (call("regexp", S, lit("^[a-z]+@")), [True, True, False, False, False, None, False, False]),
        (
            call("split_index", S, lit(";"), lit(0)),
            ["alice@example.com", "bob@test.com", "no digits here", "abc123def45", "", None, "naïve@café.com", "a"],
        ),
        (call("split_index", S, lit(";"), lit(1)), [None, "carol@x.com", None, None, "", None, None, "b"]),
        (call("split_index", S, lit(";"), lit(5)), [None, None, None, None, None, None, None, "f"]),
    ],
    ids=lambda x: str(x) if isinstance(x, Call) else "",
)
def test_case_018(expr, expected):
    assert run(expr, [S018]) == expected


def test_upper_keeps_char_type_and_infers_nullability():
    assert lookup("upper").infer([CHAR(3, False)]) == CHAR(3, False)
    assert lookup("char_length").infer([STRING(False)]) == INT(False)
    assert lookup("regexp").infer([STRING(), STRING(False)]) == BOOLEAN(True)
    assert lookup("concat_ws").infer([CHAR(1, False), STRING(), STRING()]) == STRING(False)
    assert lookup("split").infer([STRING(False), CHAR(1, False)]) == ARRAY(STRING(True), False)


def test_bad_argument_types_raise():
    with pytest.raises(FunctionTypeError):
        lookup("upper").infer([INT()])
    with pytest.raises(FunctionTypeError):
        lookup("substring").infer([STRING(), STRING()])
    with pytest.raises(FunctionTypeError):
        lookup("concat").infer([STRING(), INT()])


def test_substring_negative_start_and_column_arguments():
    assert run(call("substring", S, lit(-3), lit(2)), [["abcdef", "ab", None]]) == ["de", "", None]
    assert run(call("substring", S, lit(-3)), [["abcdef", "ab", None]]) == ["def", "", None]
    assert run(call("substring", S, lit(2), lit(-1)), [["abcdef"]]) == [None]
    # start taken from a column (grouped per distinct value)
    start = call("char_length", T)
    assert run(call("substring", S, start), [["abcdef", "xyz", "hello"], ["a", "abc", "a"]]) == ["abcdef", "z", "hello"]


def test_position_locate_instr():
    s = [["hello world", "日本語テキスト", "", None]]
    assert run(call("position", lit("o"), S), s) == [5, 0, 0, None]
    assert run(call("position", lit("テ"), S), s) == [0, 4, 0, None]
    assert run(call("locate", lit("o"), S, lit(6)), s) == [8, 0, 0, None]
    assert run(call("instr", S, lit("o"), lit(-1), lit(1)), s) == [8, 0, 0, None]
    assert run(call("instr", S, lit("o"), lit(1), lit(2)), s) == [8, 0, 0, None]


def test_padding_repeat_reverse_left_right():
    s = [["hi", "hello", "", None]]
    assert run(call("lpad", S, lit(4), lit("xy")), s) == ["xyhi", "hell", "xyxy", None]
    assert run(call("rpad", S, lit(4), lit("*")), s) == ["hi**", "hell", "****", None]
    assert run(call("lpad", S, lit(-1), lit("*")), s) == [None, None, None, None]
    assert run(call("repeat", S, lit(2)), s) == ["hihi", "hellohello", "", None]
    assert run(call("repeat", S, lit(-2)), s) == ["", "", "", None]
    assert run(call("reverse", S), s) == ["ih", "olleh", "", None]
    assert run(call("left", S, lit(3)), s) == ["hi", "hel", "", None]
    assert run(call("right", S, lit(3)), s) == ["hi", "llo", "", None]
    assert run(call("right", S, lit(0)), s) == ["", "", "", None]


def test_misc_functions():
    s = [["hello wORLD 1st", "a", ""]]
    assert run(call("initcap", S), s) == ["Hello World 1st", "A", ""]
    assert run(call("ascii", S), s) == [104, 97, 0]
    assert run(call("chr", Literal(65, INT(False))), [["x"]]) == ["A"]
    assert run(call("translate", S, lit("lo"), lit("L")), s) == ["heLL wORLD 1st", "a", ""]
    assert run(call("overlay", S, lit("XY"), lit(2), lit(3)), s) == ["hXYo wORLD 1st", "a", ""]
    assert run(call("to_base64", S), [["hello"]]) == ["aGVsbG8="]
    assert run(call("from_base64", S), [["aGVsbG8="]]) == ["hello"]
    assert run(call("md5", S), [["abc"]]) == ["900150983cd24fb0d6963f7d28e17f72"]
    assert run(call("split", S, lit(",")), [["a,,b", "", None]]) == [["a", "", "b"], [], None]
    (m,) = run(call("str_to_map", S), [["a=1,b=2,c"]])
    assert pairs(m) == [("a", "1"), ("b", "2"), ("c", None)]
    assert run(call("replace", S, lit(""), lit("-")), [["ab"]]) == ["-a-b-"]


def test_regex_edge_cases():
    s = [["abc", "a(b", None]]
    # invalid regex: REGEXP_REPLACE/EXTRACT give NULL, REGEXP gives FALSE
    assert run(call("regexp_replace", S, lit("("), lit("x")), s) == [None, None, None]
    assert run(call("regexp", S, lit("(")), s) == [False, False, None]
    assert run(call("regexp", S, lit("")), s) == [False, False, None]
    # group index beyond the groups -> NULL; look-ahead falls back to Python re
    assert run(call("regexp_extract", S, lit("(a)"), lit(2)), s) == [None, None, None]
    assert run(call("regexp_extract", S, lit("a(?=b)"), lit(0)), s) == ["a", None, None]
    assert run(call("regexp_replace", S, lit(r"\p{Lower}"), lit("_")), s) == ["___", "_(_", None]


def test_concat_ws_single_value_and_null_separator():
    assert run(call("concat_ws", lit("-"), S), [["a", None]]) == ["a", ""]
    assert run(call("concat_ws", T, S, lit("z")), [["a", "b"], ["+", None]]) == ["a+z", None]


def test_uuid_is_non_deterministic_and_unique():
    fn = lookup("uuid")
    assert not fn.deterministic
    out = run(call("uuid"), [["a", "b", "c"]])
    assert len(set(out)) == 3 and all(len(u) == 36 for u in out)


# ---------------------------------------------------------------------- LOCATE / POSITION NULLs and shapes
_HAY = ["hello", None, "", "oo", "日本語テ"]
_NEEDLE = ["o", "l", None, "", "テ"]
_FROM = [1, None, 2, 0, 9]


def _flink_locate(needle: str | None, hay: str | None, start: int | None) -> int | None:
    """Flink's `BinaryStringData.indexOf(needle, start - 1) + 1`, NULL on any NULL."""
    if needle is None or hay is None or start is None:
        return None
    if needle == "":
        return 1  # indexOf returns 0 for an empty needle before looking at the start
    return hay.find(needle, max(start - 1, 0)) + 1


def _shape(name: str, col: int, values: list, kind: str, typ):
    """An argument as a column (`arr`), a literal (`lit`) or a NULL literal (`null`)."""
    if kind == "arr":
        return InputRef(col, typ(True)), values
    v = None if kind == "null" else values[0]
    return Literal(v, typ(v is None)), [v] * len(values)


@pytest.mark.parametrize("hay_kind", ["arr", "lit", "null"])
@pytest.mark.parametrize("needle_kind", ["arr", "lit", "null", "empty"])
@pytest.mark.parametrize("from_kind", ["none", "arr", "lit", "null"])
def test_locate_position_null_and_shapes(hay_kind: str, needle_kind: str, from_kind: str) -> None:
    """Every shape of each argument (column with NULL rows, literal, NULL literal) gives
    NULL exactly where an argument is NULL and Flink's position elsewhere (a literal
    haystack with a needle column used to repeat the first group's answer)."""
    hay, hay_vals = _shape("hay", 0, _HAY, hay_kind, STRING)
    if needle_kind == "empty":
        needle, needle_vals = Literal("", STRING(False)), [""] * len(_NEEDLE)
    else:
        needle, needle_vals = _shape("needle", 1, _NEEDLE, needle_kind, STRING)
    args = [needle, hay]
    from_vals = [1] * len(_FROM)
    if from_kind != "none":
        start, from_vals = _shape("from", 2, _FROM, from_kind, INT)
        args.append(start)
    batch = pa.RecordBatch.from_arrays(
        [pa.array(_HAY, pa.string()), pa.array(_NEEDLE, pa.string()), pa.array(_FROM, pa.int32())],
        names=["h", "n", "f"],
    )
    expected = [_flink_locate(*t) for t in zip(needle_vals, hay_vals, from_vals, strict=True)]
    for name in ["locate"] if from_kind != "none" else ["locate", "position"]:
        out = evaluate(call(name, *args), batch, EvalContext(batch.num_rows))
        got = [out.as_py()] * batch.num_rows if isinstance(out, pa.Scalar) else out.to_pylist()
        assert got == expected, (name, hay_kind, needle_kind, from_kind)


def test_locate_empty_needle_and_start_past_the_end() -> None:
    s = [["abc", "", None]]
    assert run(call("locate", lit(""), S, lit(3)), s) == [1, 1, None]  # Flink: 1 for any start
    assert run(call("locate", lit("c"), S, lit(9)), s) == [0, 0, None]
    assert run(call("locate", lit("a"), S, lit(-4)), s) == [1, 0, None]  # start < 1 counts as 1
