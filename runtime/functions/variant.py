"""Flink 2.3's semi-structured VARIANT functions (PARSE_JSON, TRY_PARSE_JSON, `v[index]`,
`v['key']`; JSON_STRING and TYPEOF take a VARIANT too) and JSON(), which embeds JSON text
in JSON_OBJECT / JSON_ARRAY.

A VARIANT is carried as its canonical JSON text (Arrow string): compact, object keys sorted
(Flink's variant stores fields by key), integers as written, decimals (`2.5`) kept as
decimals, numbers with an exponent as DOUBLE in Java's notation (`1e3` is `1000.0`). That
text is also how the SQL client prints a VARIANT. Parsing has no Arrow kernel: it runs once
per distinct document.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._text_common import grouped_apply, is_stringish, map_distinct_any
from runtime.functions._text_java import java_double_str
from runtime.functions.json_functions import JSON_RAW_TYPE
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import MAX_VARCHAR, DataType

STR = pa.string()


def VARIANT(nullable: bool = True) -> DataType:  # noqa: N802 - Flink's spelling
    return DataType("VARIANT", nullable)


class _DuplicateKeyError(ValueError):
    pass


def _pairs(allow_duplicates: bool):  # noqa: ANN202 - a json object_pairs_hook
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out and not allow_duplicates:
                raise _DuplicateKeyError(k)
            out[k] = v
        return out

    return hook


def _number(text: str) -> float | Decimal:
    return float(text) if ("e" in text or "E" in text) else Decimal(text)


def parse(text: str, allow_duplicates: bool = False) -> Any:
    """The JSON value of `text` (ValueError when it is not JSON; _DuplicateKeyError for a
    repeated key unless allowed)."""
    return json.loads(text, object_pairs_hook=_pairs(allow_duplicates), parse_float=_number)


def canonical(value: Any) -> str:
    """The VARIANT text of a parsed JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(value[k]) for k in sorted(value)) + "}"


def _infer_parse(name: str):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        if (
            not 1 <= len(types) <= 2
            or not is_stringish(types[0])
            or (len(types) == 2 and types[1].name not in ("BOOLEAN", "NULL"))
        ):
            raise FunctionTypeError(f"Invalid input arguments. {name.upper()}(<STRING>[, <BOOLEAN>])")
        return VARIANT(types[0].nullable or name == "try_parse_json")

    return infer


def _parse_kernel(strict: bool):  # noqa: ANN202 - a Kernel
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        allow = args[1] if len(args) > 1 else pa.scalar(False)

        def one(text: str, allow_dup: bool) -> str | None:
            try:
                return canonical(parse(text, allow_dup))
            except _DuplicateKeyError as e:
                if strict:
                    raise EvaluationError(f"PARSE_JSON: VARIANT_DUPLICATE_KEY (key {e.args[0]!r})") from None
                return None
            except ValueError as e:
                if strict:
                    raise EvaluationError(f"PARSE_JSON: the text is not JSON ({e})") from None
                return None

        def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
            return map_distinct_any(sub[0], lambda t: one(t, bool(p[0])), STR)

        return grouped_apply([args[0], allow], [1], run, ctx.num_rows, STR, null_on_null_param=False)

    return kernel


scalar("parse_json", _infer_parse("parse_json"))(_parse_kernel(strict=True))
scalar("try_parse_json", _infer_parse("try_parse_json"))(_parse_kernel(strict=False))


def infer_variant_item(types: list[DataType]) -> DataType:
    """`v[i]` / `v['key']` on a VARIANT: a VARIANT (NULL when absent)."""
    if not (types[1].is_integer or types[1].is_string or types[1].name == "NULL"):
        raise FunctionTypeError(f"A VARIANT is indexed by an INT or a STRING key, not {types[1]}")
    return VARIANT(True)


def variant_item(args: list[ArgValue], types: list[DataType], ctx: EvalContext) -> ArgValue:
    """The element (1-based index into an array variant) or field (key of an object
    variant); NULL when out of range or absent; a job error for an index into a non-array
    or a key into a non-object, as Flink."""
    by_index = types[1].is_integer

    def one(text: str, key: Any) -> str | None:
        value = parse(text, True)
        if by_index:
            if not isinstance(value, list):
                raise EvaluationError(
                    "Integer index access on variant requires an array variant, but a non-array variant was provided."
                )
            i = int(key)
            return canonical(value[i - 1]) if 1 <= i <= len(value) else None
        if not isinstance(value, dict):
            raise EvaluationError(
                "String key access on variant requires an object variant, but a non-object variant was provided."
            )
        return canonical(value[key]) if key in value else None

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        return map_distinct_any(sub[0], lambda t: one(t, p[0]), STR)

    return grouped_apply(args, [1], run, ctx.num_rows, STR)


def _infer_json(types: list[DataType]) -> DataType:
    if len(types) != 1 or not is_stringish(types[0]):
        raise FunctionTypeError("Invalid input arguments. JSON(<STRING>)")
    return JSON_RAW_TYPE.with_nullable(types[0].nullable)


@scalar("json", _infer_json)
def _json(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """JSON(text) inside JSON_OBJECT / JSON_ARRAY: the text embedded as JSON (compact);
    text that is not JSON fails the job."""

    def one(text: str) -> str:
        try:
            return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
        except ValueError as e:
            raise EvaluationError(f"JSON(): the text is not JSON ({e})") from None

    return map_distinct_any(args[0], one, STR)


# ------------------------------------------------------------ the planner's constant hand-off
# Flink 2.3's ExpressionReducer evaluates the constant expressions of a SELECT list in
# one generated function, VARIANT-typed ones included, but when it turns the results back
# into literals it skips the VARIANT ones without moving on to the next result. Every later
# constant therefore receives the value of an earlier constant (planner.binder.folding says
# which one). `constant_handoff(source, own)` is that hand-over, as the planner emits it:
# a NULL source keeps the receiver's own value where its type is NOT NULL (Flink's
# `maySkipNullLiteralReduce`) and is NULL otherwise; a value of another Java class than the
# receiver's literal takes fails the statement, as Flink's ClassCastException does.

# The Java class of Flink's internal value of each type (RowData field values).
_JAVA_CLASS = {
    "CHAR": "org.apache.flink.table.data.binary.BinaryStringData",
    "VARCHAR": "org.apache.flink.table.data.binary.BinaryStringData",
    "TINYINT": "java.lang.Byte",
    "SMALLINT": "java.lang.Short",
    "INT": "java.lang.Integer",
    "DATE": "java.lang.Integer",
    "TIME": "java.lang.Integer",
    "INTERVAL_YEAR_MONTH": "java.lang.Integer",
    "BIGINT": "java.lang.Long",
    "INTERVAL_DAY_TIME": "java.lang.Long",
    "FLOAT": "java.lang.Float",
    "DOUBLE": "java.lang.Double",
    "DECIMAL": "org.apache.flink.table.data.DecimalData",
    "BOOLEAN": "java.lang.Boolean",
    "TIMESTAMP": "org.apache.flink.table.data.TimestampData",
    "TIMESTAMP_LTZ": "org.apache.flink.table.data.TimestampData",
    "BINARY": "[B",
    "VARBINARY": "[B",
    "VARIANT": "org.apache.flink.types.variant.BinaryVariant",
}
# Types whose literal is made from any java.lang.Number (Calcite's RexBuilder.clean reads
# `((Number) o).longValue()` / `doubleValue()`; DATE/TIME/intervals are ints in RowData).
_FROM_NUMBER = frozenset(
    ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME")
    + ("INTERVAL_YEAR_MONTH", "INTERVAL_DAY_TIME")
)
# The integer width of a receiving type's literal (Java narrowing wraps around).
_INT_WIDTH = {
    "TINYINT": np.int8,
    "SMALLINT": np.int16,
    "INT": np.int32,
    "DATE": np.int32,
    "TIME": np.int32,
    "INTERVAL_YEAR_MONTH": np.int32,
    "BIGINT": np.int64,
    "INTERVAL_DAY_TIME": np.int64,
}


def _java_class(t: DataType) -> str:
    return _JAVA_CLASS.get(t.name, t.name)


def handoff_accepts(receiver: DataType, source: DataType) -> bool:
    """Whether Flink's reducer can make a literal of `receiver` from a value of `source`."""
    if receiver.name in _FROM_NUMBER:
        return source.name in _FROM_NUMBER
    return _java_class(receiver) == _java_class(source)


def _java_numbers(arr: pa.Array, source: DataType) -> np.ndarray:
    """The values as Java's boxed Number would give them (nulls as 0)."""
    if source.name in ("FLOAT", "DOUBLE"):
        return pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
    if source.name in ("DATE", "TIME"):
        arr = arr.cast(pa.int32())
    elif source.name == "INTERVAL_DAY_TIME":
        arr = arr.cast(pa.int64())
    return pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)


def _from_numbers(values: np.ndarray, valid: np.ndarray, receiver: DataType) -> pa.Array:
    target = receiver.to_arrow()
    mask = ~valid
    if receiver.name in ("FLOAT", "DOUBLE"):
        return pa.array(values.astype(np.float64), pa.float64(), mask=mask).cast(target, safe=False)
    if values.dtype.kind == "f":  # Java's (long) of a double: truncation, NaN 0, saturation
        values = np.trunc(np.nan_to_num(values, nan=0.0, posinf=9.2e18, neginf=-9.2e18)).astype(np.int64)
    width = _INT_WIDTH[receiver.name]
    ints = values.astype(np.int64).astype(width)  # wraps, as Java's narrowing does
    return pa.array(ints, pa.from_numpy_dtype(width), mask=mask).cast(target, safe=False)


def _handed_over(arr: pa.Array, source: DataType, receiver: DataType) -> pa.Array:
    """`arr` (values of `source`) as literals of `receiver` (handoff_accepts holds)."""
    target = receiver.to_arrow()
    if receiver.name in _FROM_NUMBER:
        return _from_numbers(_java_numbers(arr, source), arr.is_valid().to_numpy(zero_copy_only=False), receiver)
    if receiver.name in ("CHAR", "VARCHAR"):
        n = receiver.precision
        if receiver.name == "CHAR" and n:
            arr = pc.utf8_rpad(arr, width=n, padding=" ")
        if n and n < MAX_VARCHAR:
            arr = pc.utf8_slice_codeunits(arr, 0, n)
        return arr.cast(target)
    if receiver.name == "DECIMAL":
        arr = pc.round(arr, ndigits=receiver.scale or 0, round_mode="half_up")
    return arr.cast(target, safe=False)


def _infer_handoff(types: list[DataType]) -> DataType:
    if len(types) != 2:
        raise FunctionTypeError("CONSTANT_HANDOFF(<source>, <receiver>)")
    return types[1]


@scalar("constant_handoff", _infer_handoff)
def _constant_handoff(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The value Flink's ExpressionReducer leaves in the receiving constant expression
    (`own`, result type `rt`) when it hands it the result of the constant `source`."""
    source, own = args
    scalar_out = isinstance(source, pa.Scalar) and isinstance(own, pa.Scalar)
    n = 1 if scalar_out else ctx.num_rows
    src = pa.repeat(source, n) if isinstance(source, pa.Scalar) else source
    valid = src.is_valid()
    if pc.any(valid).as_py():
        if not handoff_accepts(rt, types[0]):
            raise EvaluationError(
                "Flink 2.3 fails to plan this statement: its constant reduction (ExpressionReducer) skips "
                "a VARIANT constant without moving on, so it hands the value of a constant of type "
                f"{types[0]} to a later constant of type {rt} (java.lang.ClassCastException: class "
                f"{_java_class(types[0])} cannot be cast to class "
                f"{'java.lang.Number' if rt.name in _FROM_NUMBER else _java_class(rt)}). Hint: put the "
                "VARIANT expressions after the other constant expressions, or in another query"
            )
        out = _handed_over(src, types[0], rt)
    else:
        out = pa.nulls(n, rt.to_arrow())
    if not rt.nullable:
        keep = pa.repeat(own, n) if isinstance(own, pa.Scalar) else own
        out = pc.if_else(valid, out, keep)
    return out[0] if scalar_out else out


document(
    {
        "parse_json": ("PARSE_JSON(string[, allow_duplicate_keys])", 'PARSE_JSON(\'{"b": [1, 2.5, 1e3], "a": null}\')'),
        "try_parse_json": ("TRY_PARSE_JSON(string[, allow_duplicate_keys])", "TRY_PARSE_JSON('{')"),
        "json": ("JSON(string), inside JSON_OBJECT / JSON_ARRAY", "JSON_OBJECT('a' VALUE JSON('[1, 2]'))"),
        "constant_handoff": (
            "internal: a constant that Flink's planner fills with another constant's value (docs/sql.md, Types)",
            "",
        ),
    }
)
