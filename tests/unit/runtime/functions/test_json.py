"""JSON functions: conformance case 029 (construction) and flink-bugs 028 (querying, with
the standard answers where Flink 2.3 is buggy: DEFAULT ... ON EMPTY is honoured, and an
empty result is not an error)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Call, InputRef, Literal
from runtime.functions.json_functions import JSON_RAW_TYPE, dump_json, mark_nested_json
from runtime.functions.registry import EvalContext, FunctionTypeError, lookup
from runtime.types import ARRAY, BIGINT, BOOLEAN, CHAR, DECIMAL, DOUBLE, INT, STRING, TIMESTAMP


def lit(v: object) -> Literal:
    if isinstance(v, str):
        return Literal(v, CHAR(max(len(v), 1), False))
    return Literal(v, INT(False))


def call(name: str, *args, type=None) -> Call:  # noqa: A002
    if name in ("json_object", "json_array"):
        args = mark_nested_json(args)
    fn = lookup(name)
    assert fn is not None, name
    return Call(name, tuple(args), type or fn.infer([a.type for a in args]))


ROWS029 = pa.RecordBatch.from_pylist(
    [
        {"id": 1, "name": "plain", "score": 1.5, "ok": True},
        {"id": 2, "name": 'quo"te', "score": None, "ok": False},
        {"id": 3, "name": None, "score": -0.25, "ok": None},
        {"id": 4, "name": "ünï ✓", "score": 100.0, "ok": None},
    ],
    schema=pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64()), ("ok", pa.bool_())]),
)
ID, NAME, SCORE, OK = InputRef(0, INT()), InputRef(1, STRING()), InputRef(2, DOUBLE()), InputRef(3, BOOLEAN())


def run(expr, batch: pa.RecordBatch) -> list:
    out = evaluate(expr, batch, EvalContext(batch.num_rows))
    assert out.type == expr.type.to_arrow()
    return out.to_pylist()


@pytest.mark.parametrize(
    "expr, expected",
    [
        (
            call("json_object", lit("NULL"), lit("id"), ID, lit("name"), NAME),
            [
                '{"id":1,"name":"plain"}',
                '{"id":2,"name":"quo\\"te"}',
                '{"id":3,"name":null}',
                '{"id":4,"name":"ünï ✓"}',
            ],
        ),
        (
            call("json_object", lit("ABSENT"), lit("name"), NAME, lit("score"), SCORE),
            [
                '{"name":"plain","score":1.5}',
                '{"name":"quo\\"te"}',
                '{"score":-0.25}',
                '{"name":"ünï ✓","score":100.0}',
            ],
        ),
        (
            call("json_array", lit("ABSENT"), ID, NAME, OK),
            ['[1,"plain",true]', '[2,"quo\\"te",false]', "[3]", '[4,"ünï ✓"]'],
        ),
        (call("json_array", lit("ABSENT"), NAME), ['["plain"]', '["quo\\"te"]', "[]", '["ünï ✓"]']),
        (call("json_string", NAME), ['"plain"', '"quo\\"te"', None, '"ünï ✓"']),
        (call("json_string", SCORE), ["1.5", None, "-0.25", "100.0"]),
        (
            call(
                "json_object", lit("NULL"), lit("k"), call("json_array", lit("ABSENT"), lit(1), lit(2)), lit("ok"), OK
            ),
            ['{"k":[1,2],"ok":true}', '{"k":[1,2],"ok":false}', '{"k":[1,2],"ok":null}', '{"k":[1,2],"ok":null}'],
        ),
    ],
    ids=lambda x: str(x) if isinstance(x, Call) else "",
)
def test_case_029(expr, expected):
    assert run(expr, ROWS029) == expected


def test_constructor_types_and_nested_marking():
    assert lookup("json_object").infer([CHAR(4, False), CHAR(1, False), STRING()]) == STRING(False)
    with pytest.raises(FunctionTypeError):
        lookup("json_object").infer([CHAR(4, False), INT(False), STRING()])
    inner = call("json_object", lit("NULL"))
    wrapped = mark_nested_json((inner, NAME))
    assert wrapped[0].name == "json_raw" and wrapped[0].type == JSON_RAW_TYPE and wrapped[1] is NAME
    assert str(JSON_RAW_TYPE) == "STRING NOT NULL" and JSON_RAW_TYPE.to_arrow() == pa.string()
    # a plain STRING holding JSON text is quoted, not embedded
    c0 = InputRef(0, STRING())
    out = run(call("json_array", lit("NULL"), c0), pa.RecordBatch.from_arrays([pa.array(["[1]"])], ["c0"]))
    assert out == ['["[1]"]']
    # NULL ON NULL in arrays, empty object
    out = run(
        call("json_array", lit("NULL"), c0, call("json_object", lit("NULL"))),
        pa.RecordBatch.from_arrays([pa.array([None])], ["c0"]),
    )
    assert out == ["[null,{}]"]


def test_json_text_of_other_types():
    import datetime as dt

    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([dt.datetime(2024, 1, 1, 10, 0, 1, 500000)], pa.timestamp("ms")),
            pa.array([[1, None]], pa.list_(pa.int32())),
            pa.array(["1.50"]).cast(pa.decimal128(5, 2)),
            pa.array(["a\nb\\c\x01"], pa.string()),
        ],
        ["t", "a", "d", "s"],
    )
    e = call(
        "json_object",
        lit("NULL"),
        lit("t"),
        InputRef(0, TIMESTAMP(3)),
        lit("a"),
        InputRef(1, ARRAY(INT())),
        lit("d"),
        InputRef(2, DECIMAL(5, 2)),
        lit("s"),
        InputRef(3, STRING()),
    )
    # members ordered by key, as Flink 2.3 writes them (functions corpus json_lit_06)
    assert run(e, batch) == ['{"a":[1,null],"d":1.50,"s":"a\\nb\\\\c\\u0001","t":"2024-01-01T10:00:01.5"}']
    assert dump_json({"x": [1.0e10, 1e-5, True, None]}) == '{"x":[1.0E10,1.0E-5,true,null]}'


# ---------------------------------------------------------------------- querying (028)
DOCS = pa.RecordBatch.from_arrays(
    [
        pa.array(
            [
                '{"a": 1, "b": {"c": 2.5}, "arr": [1, "two", null], "flag": true}',
                '{"a": 7, "name": "x7", "b": {"c": -3.25}, "arr": [], "flag": false}',
                '{"a": null, "b": null}',
                "not json",
                None,
                '{"a": -12, "arr": [{"k": 1}], "flag": false}',
                "[1, 2, 3]",
            ]
        )
    ],
    ["j"],
)
J = InputRef(0, STRING())
NULL_STR = Literal(None, STRING())


@pytest.mark.parametrize(
    "expr, expected",
    [
        (call("json_value", J, lit("$.a")), ["1", "7", None, None, None, "-12", None]),
        (call("json_value", J, lit("$.a"), type=INT()), [1, 7, None, None, None, -12, None]),
        (call("json_value", J, lit("$.b.c"), type=DOUBLE()), [2.5, -3.25, None, None, None, None, None]),
        (call("json_value", J, lit("$.flag"), type=BOOLEAN()), [True, False, None, None, None, False, None]),
        # Flink 2.3 ignores DEFAULT ... ON EMPTY: an empty result takes the ON ERROR behaviour
        (
            call("json_value", J, lit("$.missing"), lit("DEFAULT"), lit("dflt"), lit("NULL"), NULL_STR),
            [None] * 7,
        ),
        # ON ERROR applies to the invalid document and to empty results (a JSON null, lax $.a of an array)
        (
            call(
                "json_value", J, lit("$.a"), lit("NULL"), NULL_STR, lit("DEFAULT"), Literal(-1, INT(False)), type=INT()
            ),
            [1, 7, -1, -1, None, -12, -1],
        ),
        (call("json_value", J, lit("$.b")), [None] * 7),
        (call("json_query", J, lit("$.b")), ['{"c":2.5}', '{"c":-3.25}', None, None, None, None, None]),
        (call("json_query", J, lit("$.arr")), ['[1,"two",null]', "[]", None, None, None, '[{"k":1}]', None]),
        (call("json_query", J, lit("$.a")), [None] * 7),
        (call("json_query", J, lit("$.a"), lit("UNCONDITIONAL")), ["[1]", "[7]", None, None, None, "[-12]", None]),
        (call("json_value", J, lit("$.arr[1]")), ["two", None, None, None, None, None, None]),
        (call("json_exists", J, lit("$.b.c")), [True, True, False, False, None, False, False]),
        (call("is_json", J), [True, True, True, False, False, True, True]),
    ],
    ids=lambda x: str(x) if isinstance(x, Call) else "",
)
def test_case_028_as_flink(expr, expected):
    assert run(expr, DOCS) == expected


def test_query_options():
    assert run(call("is_json", J, lit("OBJECT")), DOCS) == [True, True, True, False, False, True, False]
    # ON EMPTY is ignored (Flink 2.3); ON ERROR decides for an empty result
    assert run(call("json_query", J, lit("$.zz"), lit("WITHOUT"), lit("EMPTY_ARRAY")), DOCS)[:2] == [None, None]
    zz = call("json_query", J, lit("$.zz"), lit("WITHOUT"), lit("NULL"), lit("EMPTY_ARRAY"))
    assert run(zz, DOCS)[:2] == ["[]", "[]"]
    assert run(call("json_query", J, lit("$[*]"), lit("CONDITIONAL")), DOCS)[6] == "[1,2,3]"
    assert run(call("json_value", J, lit("strict $.a"), type=BIGINT()), DOCS)[:2] == [1, 7]
    assert lookup("is_json").infer([STRING()]) == BOOLEAN(False)
    from runtime.errors import EvaluationError

    # ERROR ON EMPTY is ignored as in Flink 2.3; ERROR ON ERROR fails on a missing path
    assert run(call("json_value", J, lit("$.missing"), lit("ERROR"), NULL_STR, lit("NULL"), NULL_STR), DOCS)[0] is None
    with pytest.raises(EvaluationError):
        run(call("json_value", J, lit("$.missing"), lit("NULL"), NULL_STR, lit("ERROR"), NULL_STR), DOCS)
