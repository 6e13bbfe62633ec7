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

import pyarrow as pa

from runtime.errors import EvaluationError
from runtime.functions._text_common import grouped_apply, is_stringish, map_distinct_any
from runtime.functions._text_java import java_double_str
from runtime.functions.json_functions import JSON_RAW_TYPE
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import DataType

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


document(
    {
        "parse_json": ("PARSE_JSON(string[, allow_duplicate_keys])", 'PARSE_JSON(\'{"b": [1, 2.5, 1e3], "a": null}\')'),
        "try_parse_json": ("TRY_PARSE_JSON(string[, allow_duplicate_keys])", "TRY_PARSE_JSON('{')"),
        "json": ("JSON(string), inside JSON_OBJECT / JSON_ARRAY", "JSON_OBJECT('a' VALUE JSON('[1, 2]'))"),
    }
)
