"""JSON scalar functions: JSON_OBJECT, JSON_ARRAY, JSON_STRING (construction, vectorized)
and JSON_VALUE, JSON_QUERY, JSON_EXISTS, IS JSON (querying, per distinct document).

Output text is Jackson's compact form, as Flink prints it: `{"id":1,"name":"plain"}`,
non-ASCII characters unescaped, `"` and `\\` escaped, DOUBLE as Java's Double.toString
(`1.5`, `100.0`, `1.0E10`), TIMESTAMP as ISO-8601 ('2024-01-01T10:00:01.5', LTZ with 'Z').

Canonical calls (what the binder emits)
---------------------------------------
- `json_object('NULL'|'ABSENT', k1, v1, k2, v2, ...)`: the first argument is the ON NULL
  behaviour (JSON_OBJECT's default is NULL ON NULL). Result STRING NOT NULL.
- `json_array('ABSENT'|'NULL', v1, ...)`: JSON_ARRAY's default is ABSENT ON NULL.
- **Nested JSON.** Flink inserts the value of an argument that is *itself a JSON_OBJECT or
  JSON_ARRAY call* as raw JSON (`{"k":[1,2]}`), any other STRING as a JSON string
  (`{"k":"[1,2]"}`). A kernel only sees values, so the binder marks such arguments: it
  wraps every value argument of `json_object`/`json_array` that is a direct
  `Call('json_object'|'json_array', ...)` in `Call('json_raw', (arg,), JSON_RAW_TYPE)`.
  `mark_nested_json(args)` does exactly that for a tuple of IR arguments; call it when
  building a json_object/json_array Call. `JSON_RAW_TYPE` is STRING NOT NULL carrying the
  marker `field_names=("$json_raw",)` (Arrow layout: plain string; its `str()` is
  `STRING NOT NULL`); the constructors embed arguments of that type verbatim.
- `json_string(v)`: JSON text of any value; NULL for NULL.
- `json_value(j, path[, on_empty, empty_default, on_error, error_default])`: `on_empty` /
  `on_error` are 'NULL' | 'ERROR' | 'DEFAULT' literals, the defaults any expression
  (a NULL literal when unused). RETURNING works like CAST: the binder sets `Call.type` to
  the RETURNING type (default STRING, nullable); the kernel converts to it.
- `json_query(j, path[, wrapper[, on_empty[, on_error]]])`: wrapper 'WITHOUT' |
  'CONDITIONAL' | 'UNCONDITIONAL'; on_empty/on_error 'NULL' | 'ERROR' | 'EMPTY_ARRAY' |
  'EMPTY_OBJECT'. Result STRING, or ARRAY<STRING> for RETURNING ARRAY<STRING> (the binder
  sets `Call.type`): the selected array's elements, scalars as their text. A conditional
  wrapper wraps anything but an array, an object too.
- `json_exists(j, path[, on_error])`: on_error 'FALSE' | 'TRUE' | 'UNKNOWN' | 'ERROR'.
- `is_json(j[, 'VALUE'|'SCALAR'|'ARRAY'|'OBJECT'])`: BOOLEAN NOT NULL (NULL -> FALSE).

JSON paths: SQL/JSON lax (default) or strict mode with `$`, `.key`, `."key"`, `['key']`,
`[n]`, `[n, m]`, `[*]`, `.*` (a bracket may follow a dot, `$.['a b']`, as Flink's Jayway
paths allow). Querying loops over *distinct* documents (JSON parsing has
no Arrow kernel). Flink 2.3 ignores the ON EMPTY clause of JSON_VALUE and JSON_QUERY: an
empty result (a missing path, a JSON null) is handled by the ON ERROR clause (NULL by
default), so `DEFAULT 'd' ON EMPTY` gives NULL and `DEFAULT -1 ON ERROR` gives -1 for a
missing path. This module answers as Flink does (the functions oracle corpus; see
tests/conformance/flink-bugs/README.md).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.expr.ir import Call, Expr
from runtime.functions._text_common import (
    any_nullable,
    check_arity,
    const,
    is_scalar,
    is_stringish,
    join_skip,
    to_array,
)
from runtime.functions._text_java import java_double_str, java_float_str
from runtime.functions.cast import cast_value
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.map_values import pairs
from runtime.types import BOOLEAN, MAX_VARCHAR, STRING, DataType

STR = pa.string()
JSON_RAW_MARK = ("$json_raw",)
JSON_RAW_TYPE = DataType("VARCHAR", False, precision=MAX_VARCHAR, field_names=JSON_RAW_MARK)
_CONSTRUCTORS = ("json_object", "json_array")


def is_raw_json_type(t: DataType) -> bool:
    return t.field_names == JSON_RAW_MARK


def mark_nested_json(args: tuple[Expr, ...] | list[Expr]) -> tuple[Expr, ...]:
    """Wrap arguments that are JSON_OBJECT/JSON_ARRAY calls in `json_raw` (see module doc)."""
    out: list[Expr] = []
    for a in args:
        if isinstance(a, Call) and a.name.lower() in _CONSTRUCTORS:
            out.append(Call("json_raw", (a,), JSON_RAW_TYPE.with_nullable(a.type.nullable)))
        else:
            out.append(a)
    return tuple(out)


# ---------------------------------------------------------------------- serialization


def dump_json(v: Any) -> str:
    """Jackson-style compact JSON of a Python value (floats as Java prints doubles)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return java_double_str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + dump_json(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(dump_json(x) for x in v) + "]"
    if isinstance(v, _dt.datetime):
        return json.dumps(_iso(v))
    if isinstance(v, (_dt.date, _dt.time)):
        return json.dumps(v.isoformat())
    if isinstance(v, bytes):
        import base64

        return json.dumps(base64.b64encode(v).decode("ascii"))
    return json.dumps(str(v), ensure_ascii=False)


def _iso(v: _dt.datetime) -> str:
    """ISO_LOCAL_DATE_TIME: seconds always, fraction without trailing zeros."""
    base = v.strftime("%Y-%m-%dT%H:%M:%S")
    if v.microsecond:
        base += ("." + f"{v.microsecond:06d}").rstrip("0")
    return base


def _json_number(java_text: str) -> str:
    """A double as Flink's JSON functions write it: Java's Double.toString read back as a
    BigDecimal and printed by it (1.0E308 → 1.0E+308, 1.0E-5 → 0.000010); NaN and the
    infinities as JSON strings would not be numbers, so they stay as Java prints them."""
    if java_text in ("NaN", "Infinity", "-Infinity"):
        return json.dumps(java_text)
    return str(Decimal(java_text))


def _escape(arr: pa.Array) -> pa.Array:
    """Strings as quoted JSON string literals, vectorized (control characters other than
    \\b \\t \\n \\f \\r fall back to json.dumps per distinct value)."""
    out = pc.replace_substring(arr, "\\", "\\\\")
    out = pc.replace_substring(out, '"', '\\"')
    for ch, rep in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\b", "\\b"), ("\f", "\\f")):
        out = pc.replace_substring(out, ch, rep)
    out = pc.binary_join_element_wise('"', out, '"', "")
    odd = pc.match_substring_regex(arr, r"[\x00-\x07\x0b\x0e-\x1f]")
    if pc.any(odd).as_py():
        enc = pc.dictionary_encode(arr)
        fixed = pa.array([json.dumps(v, ensure_ascii=False) for v in enc.dictionary.to_pylist()], STR).take(enc.indices)
        out = pc.if_else(odd, fixed, out)
    return out


def json_text(arr: pa.Array, t: DataType, tz: str = "UTC") -> pa.Array:
    """JSON text of each value (NULL stays NULL)."""
    if is_raw_json_type(t) or t.name == "VARIANT":  # a VARIANT is carried as its JSON text
        return arr
    n = t.name
    if n == "NULL":
        return pa.nulls(len(arr), STR)
    if t.is_string:
        return _escape(arr.cast(STR))
    if n == "BOOLEAN":
        return pc.if_else(arr, "true", "false")
    if t.is_integer or n == "DECIMAL":
        return arr.cast(STR)
    if n in ("DOUBLE", "FLOAT"):
        fmt = java_double_str if n == "DOUBLE" else java_float_str
        enc = pc.dictionary_encode(arr)
        return pa.array([_json_number(fmt(v)) for v in enc.dictionary.to_pylist()], STR).take(enc.indices)
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        suffix = "Z" if n == "TIMESTAMP_LTZ" else ""
        vals = [None if v is None else json.dumps(_iso(v.replace(tzinfo=None)) + suffix) for v in arr.to_pylist()]
        return pa.array(vals, STR)
    # DATE, TIME, ARRAY, MAP, ROW, binary: structural conversion per row
    items: list[Any] = arr.to_pylist()
    if n in ("MAP", "ROW", "STRUCTURED", "ARRAY"):
        items = [_json_form(v, t) for v in items]
    return pa.array([None if v is None else dump_json(v) for v in items], STR)


def _java_key(k: str) -> bytes:
    return k.encode("utf-16-be")  # Java's String order: UTF-16 code units


def _json_form(v: Any, t: DataType) -> Any:
    """A nested value as the JSON functions write it: a MAP (at any depth) as an object of
    its entries, a ROW as an object of its fields, each object's keys sorted as Java sorts
    strings (Flink serializes with Jackson's ORDER_MAP_ENTRIES_BY_KEYS). A NULL map key
    fails, as in Flink."""
    if v is None:
        return None
    n = t.name
    if n == "MAP":
        out: dict[str, Any] = {}
        for i, (k, x) in enumerate(pairs(v)):
            if k is None:
                raise EvaluationError(f"Key at index {i} was null. This is not supported during conversion to JSON.")
            out[str(k)] = _json_form(x, t.children[1])
        return dict(sorted(out.items(), key=lambda kv: _java_key(kv[0])))
    if n in ("ROW", "STRUCTURED") and isinstance(v, dict):
        fields = {f: _json_form(v.get(f), c) for f, c in zip(t.field_names, t.children, strict=True)}
        return dict(sorted(fields.items(), key=lambda kv: _java_key(kv[0])))
    if n == "ARRAY":
        return [_json_form(x, t.children[0]) for x in v]
    return v


# ---------------------------------------------------------------------- constructors


def _infer_json_object(types: list[DataType]) -> DataType:
    if len(types) % 2 != 1:
        raise FunctionTypeError("JSON_OBJECT expects an ON NULL mode followed by key/value pairs")
    for k in types[1::2]:
        if not k.is_string:
            raise FunctionTypeError(f"Invalid function call: JSON_OBJECT keys must be character strings, got {k}")
    return STRING(False)


def _mode(v: ArgValue, default: str) -> str:
    m = const(v)
    return str(m).upper() if m is not None else default


@scalar("json_object", _infer_json_object)
def json_object(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    absent = _mode(args[0], "NULL") == "ABSENT"
    n = ctx.num_rows
    entries: list[pa.Array] = []
    # Flink writes the members ordered by key (a repeated key keeps its last value) when the
    # keys are constants, as they nearly always are; column keys keep the written order.
    pairs = list(range(1, len(args), 2))
    if all(isinstance(args[i], pa.Scalar) and args[i].is_valid for i in pairs):
        last = {str(args[i].as_py()): i for i in pairs}
        pairs = [last[k] for k in sorted(last)]
    for i in pairs:
        key = to_array(args[i], n)
        if key.null_count:
            raise EvaluationError("JSON_OBJECT: a key was NULL")
        val = json_text(to_array(args[i + 1], n), arg_types[i + 1], ctx.time_zone)
        if not absent:
            val = val.fill_null("null")
        entries.append(pc.binary_join_element_wise(_escape(key.cast(STR)), val, ":"))
    if not entries:
        return pa.scalar("{}", STR)
    body = join_skip(entries, ",")
    return pc.binary_join_element_wise("{", body, "}", "")


def _infer_json_array(types: list[DataType]) -> DataType:
    if len(types) < 1:
        raise FunctionTypeError("JSON_ARRAY expects an ON NULL mode first")
    return STRING(False)


@scalar("json_array", _infer_json_array)
def json_array(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    absent = _mode(args[0], "ABSENT") == "ABSENT"
    n = ctx.num_rows
    items = []
    for a, t in zip(args[1:], arg_types[1:], strict=True):
        v = json_text(to_array(a, n), t, ctx.time_zone)
        items.append(v if absent else v.fill_null("null"))
    if not items:
        return pa.scalar("[]", STR)
    body = join_skip(items, ",")
    return pc.binary_join_element_wise("[", body, "]", "")


@scalar("json_raw", lambda types: JSON_RAW_TYPE.with_nullable(any_nullable(types)))
def json_raw(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Identity; its type tells json_object/json_array to embed the text verbatim."""
    return args[0]


def _infer_json_string(types: list[DataType]) -> DataType:
    check_arity("json_string", types, 1)
    return STRING(types[0].nullable)


@scalar("json_string", _infer_json_string)
def json_string(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    out = json_text(to_array(args[0], 1 if is_scalar(args[0]) else ctx.num_rows), arg_types[0], ctx.time_zone)
    return out[0] if is_scalar(args[0]) else out


# ---------------------------------------------------------------------- paths


class _PathError(Exception):
    pass


_MISSING = object()
_TOKEN = re.compile(
    r"""\s*(?:
        \.\s*(?P<name>[A-Za-z_$][\w$]*)        |
        \.\s*"(?P<qname>(?:[^"\\]|\\.)*)"      |
        \.\s*(?P<wild>\*)                      |
        \.?\[\s*(?P<bwild>\*)\s*\]                |
        \.?\[\s*'(?P<bname>(?:[^'\\]|\\.)*)'\s*\] |
        \.?\[\s*"(?P<bqname>(?:[^"\\]|\\.)*)"\s*\]|
        \.?\[\s*(?P<idx>\d+(?:\s*,\s*\d+)*)\s*\]
    )""",
    re.VERBOSE,
)


@lru_cache(maxsize=256)
def compile_path(path: str) -> tuple[bool, tuple[tuple[str, Any], ...]]:
    """(strict, steps) of a SQL/JSON path; raises _PathError when malformed."""
    p = path.strip()
    strict = False
    m = re.match(r"(?i)(lax|strict)\s+", p)
    if m:
        strict = m.group(1).lower() == "strict"
        p = p[m.end() :]
    if not p.startswith("$"):
        raise _PathError(f"Illegal jsonpath spec: {path}")
    i = 1
    steps: list[tuple[str, Any]] = []
    while i < len(p):
        m = _TOKEN.match(p, i)
        if not m or m.end() == i:
            if p[i:].strip() == "":
                break
            raise _PathError(f"Illegal jsonpath spec: {path}")
        if m.group("name") is not None:
            steps.append(("key", m.group("name")))
        elif m.group("qname") is not None:
            steps.append(("key", m.group("qname")))
        elif m.group("bname") is not None:
            steps.append(("key", m.group("bname")))
        elif m.group("bqname") is not None:
            steps.append(("key", m.group("bqname")))
        elif m.group("wild") is not None:
            steps.append(("keys*", None))
        elif m.group("bwild") is not None:
            steps.append(("items*", None))
        else:
            steps.append(("idx", tuple(int(x) for x in m.group("idx").split(","))))
        i = m.end()
    return strict, tuple(steps)


def eval_path(doc: Any, path: str, wrap_scalars: bool = True) -> list[Any]:
    """The items the path selects (empty when nothing matches in lax mode); raises
    _PathError for a structural error in strict mode. `wrap_scalars`: lax `[k]` on a
    non-array treats it as a one-item array (JSON_EXISTS does not: `$[0]` of an object
    does not exist there)."""
    strict, steps = compile_path(path)
    items = [doc]
    for kind, arg in steps:
        nxt: list[Any] = []
        for it in items:
            if kind == "key":
                if isinstance(it, dict):
                    if arg in it:
                        nxt.append(it[arg])
                    elif strict:
                        raise _PathError(f"No results for path: {path}")
                elif strict:
                    raise _PathError(f"member accessor on a non-object: {path}")
            elif kind == "keys*":
                if isinstance(it, dict):
                    nxt.extend(it.values())
                elif strict:
                    raise _PathError(f"wildcard member accessor on a non-object: {path}")
            elif kind == "items*":
                if isinstance(it, list):
                    nxt.extend(it)
                elif strict:
                    raise _PathError(f"array accessor on a non-array: {path}")
                else:
                    nxt.append(it)
            else:
                arr = it if isinstance(it, list) else ([it] if not strict and wrap_scalars else None)
                if arr is None and not strict:
                    continue
                if arr is None:
                    raise _PathError(f"array accessor on a non-array: {path}")
                for k in arg:
                    if k < len(arr):
                        nxt.append(arr[k])
                    elif strict:
                        raise _PathError(f"array index {k} out of bounds: {path}")
        items = nxt
    return items


@lru_cache(maxsize=4096)
def _parse_doc(text: str) -> Any:
    return json.loads(text)


def _load_exact(text: str) -> Any:
    """Parsed JSON keeping each number's decimal text (JSON_QUERY writes `1.5e3` back as
    Jackson's BigDecimal does: `1.5E+3`); ValueError for invalid JSON."""
    try:
        return json.loads(text, parse_float=Decimal)
    except (ValueError, RecursionError) as e:
        raise ValueError(str(e)) from e


def _load(text: str) -> Any:
    """Parsed JSON, or raises ValueError (invalid JSON is an error for the ON ERROR clause)."""
    try:
        return _parse_doc(text)
    except (ValueError, RecursionError) as e:
        raise ValueError(str(e)) from e


def _path_arg(args: list[ArgValue], name: str) -> str:
    if not is_scalar(args[1]):
        raise EvaluationError(f"{name}: the JSON path must be a literal")
    return str(const(args[1]))


def _per_doc(arr: pa.Array, fn, out_type: pa.DataType) -> pa.Array:
    """Apply `fn(text)` once per distinct document; NULL documents go to fn as None."""
    enc = pc.dictionary_encode(arr, null_encoding="encode")
    vals = [fn(v) for v in enc.dictionary.to_pylist()]
    out = pa.array(vals, type=out_type)
    return out.take(enc.indices)


# ---------------------------------------------------------------------- JSON_VALUE


def _infer_json_value(types: list[DataType]) -> DataType:
    check_arity("json_value", types, 2, 6)
    if not is_stringish(types[0]) or not is_stringish(types[1]):
        raise FunctionTypeError("Cannot apply 'JSON_VALUE' to arguments: expected (<STRING>, <STRING path>)")
    return STRING(True)


def _scalar_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double_str(v)
    return str(v)


def _convert(v: Any, t: DataType) -> Any:
    """A JSON scalar as a value of the RETURNING type; raises ValueError when it does not fit."""
    n = t.name
    if t.is_string:
        return _scalar_text(v)
    if n == "BOOLEAN":
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.lower() in ("true", "false"):
            return v.lower() == "true"
        raise ValueError("not a boolean")
    if isinstance(v, bool):
        raise ValueError("boolean where a number is expected")
    if t.is_integer:
        if isinstance(v, int):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, str):
            return int(v.strip())
        raise ValueError("not an integer")
    if n in ("DOUBLE", "FLOAT"):
        return float(v)
    if n == "DECIMAL":
        try:
            return Decimal(str(v)).quantize(Decimal(1).scaleb(-(t.scale or 0)))
        except InvalidOperation as e:
            raise ValueError(str(e)) from e
    if n == "DATE" and isinstance(v, str):
        return _dt.date.fromisoformat(v)
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ") and isinstance(v, str):
        return _dt.datetime.fromisoformat(v.replace(" ", "T").rstrip("Z"))
    raise ValueError(f"cannot return {t}")


@scalar("json_value", _infer_json_value)
def json_value(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    path = _path_arg(args, "JSON_VALUE")
    # args[2] / args[3] (ON EMPTY and its default) are not used: Flink 2.3 ignores them
    on_error = _mode(args[4], "NULL") if len(args) > 4 else "NULL"
    error_default = const(args[5]) if len(args) > 5 and is_scalar(args[5]) else None
    # DEFAULT <expression> ON ERROR whose value varies per row: the documents that fall
    # back are noted, and their rows take the expression's value afterwards
    column_default = on_error == "DEFAULT" and len(args) > 5 and not is_scalar(args[5])
    fell_back: list[str] = []
    current: list[str] = []
    out_type = result_type.to_arrow()
    try:
        compile_path(path)
    except _PathError as e:
        raise EvaluationError(str(e)) from e

    def fallback(mode: str, default: Any, err: str) -> Any:
        if mode == "ERROR":
            raise EvaluationError(f"JSON_VALUE: {err}")
        if mode == "DEFAULT" and column_default:
            fell_back.append(current[0])
            return None
        if mode == "DEFAULT" and default is not None:
            return _convert(default, result_type)
        return None

    def one(text: str | None) -> Any:
        if text is None:
            return None
        current[:] = [text]
        try:
            items = eval_path(_load(text), path)
        except (ValueError, _PathError) as e:
            return fallback(on_error, error_default, str(e))
        if not items or (len(items) == 1 and items[0] is None):
            return fallback(on_error, error_default, f"no value for path {path}")
        if len(items) > 1 or isinstance(items[0], (dict, list)):
            return fallback(on_error, error_default, f"path {path} does not select a scalar")
        v = items[0]
        if result_type.is_integer and (isinstance(v, bool) or not isinstance(v, int)):
            # Flink casts the JSON value's Java object to the RETURNING class: a string, a
            # fraction or a boolean RETURNING INT fails the job (ClassCastException), ON ERROR
            # does not apply
            java = {str: "String", float: "Double", bool: "Boolean"}.get(type(v), type(v).__name__)
            raise EvaluationError(
                f"java.lang.ClassCastException: class java.lang.{java} cannot be cast to class java.lang.Integer"
            )
        try:
            return _convert(v, result_type)
        except (ValueError, TypeError) as e:
            return fallback(on_error, error_default, str(e))

    doc = to_array(args[0], 1) if is_scalar(args[0]) else args[0]
    if column_default and is_scalar(args[0]):
        doc = to_array(args[0], ctx.num_rows)
    out = _per_doc(doc.cast(STR), one, out_type)
    if column_default and fell_back:
        defaults = cast_value(args[5], arg_types[5], result_type, ctx)
        use_default = pc.is_in(doc.cast(STR), value_set=pa.array(fell_back, STR))
        return pc.if_else(pc.fill_null(use_default, False), defaults, out)
    return out[0] if is_scalar(args[0]) and not column_default else out


# ---------------------------------------------------------------------- JSON_QUERY


def _infer_json_query(types: list[DataType]) -> DataType:
    check_arity("json_query", types, 2, 5)
    if not is_stringish(types[0]) or not is_stringish(types[1]):
        raise FunctionTypeError("Cannot apply 'JSON_QUERY' to arguments: expected (<STRING>, <STRING path>)")
    return STRING(True)


@scalar("json_query", _infer_json_query)
def json_query(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    path = _path_arg(args, "JSON_QUERY")
    wrapper = _mode(args[2], "WITHOUT") if len(args) > 2 else "WITHOUT"
    # args[3] (ON EMPTY) is not used: Flink 2.3 handles an empty result by ON ERROR
    on_error = _mode(args[4], "NULL") if len(args) > 4 else "NULL"
    _, steps = compile_path(path)
    indefinite = any(kind in ("keys*", "items*") or (kind == "idx" and len(arg) > 1) for kind, arg in steps)

    def one(text: str | None) -> Any:
        if text is None:
            return None
        try:
            doc = _load_exact(text)
            items = eval_path(doc, path)
        except (ValueError, _PathError) as e:
            return fallback(on_error, str(e))
        if indefinite and not (steps and steps[0][0] == "key" and not isinstance(doc, dict)):
            # Jayway: a path with a wildcard selects one value, the (possibly empty) array
            # of its matches ('$.a[*].b' WITH WRAPPER is [[]] when nothing matches)
            items = [items]
        if not items or (len(items) == 1 and items[0] is None):
            # a lone JSON null counts as empty, as in Flink (Calcite's jsonQuery)
            return fallback(on_error, f"no value for path {path}")
        if wrapper.startswith("UNCONDITIONAL") or wrapper == "WITH":
            value: Any = items
        elif wrapper.startswith("CONDITIONAL"):
            # Flink wraps anything but an array (an object too: '{}' gives '[{}]')
            value = items[0] if len(items) == 1 and isinstance(items[0], list) else items
        elif len(items) == 1 and isinstance(items[0], (dict, list)):
            value = items[0]
        else:
            return fallback(on_error, f"path {path} does not select an object or array")
        if not as_array:
            return dump_json(value)
        if not isinstance(value, list):
            return fallback(on_error, f"path {path} does not select an array (RETURNING ARRAY<STRING>)")
        return [None if v is None else _element_text(v) for v in value]

    as_array = result_type.name == "ARRAY"
    out_type = result_type.to_arrow()

    def fallback(mode: str, err: str) -> Any:
        if mode == "ERROR":
            raise EvaluationError(f"JSON_QUERY: {err}")
        text = {"EMPTY_ARRAY": "[]", "EMPTY_OBJECT": "{}"}.get(mode)
        if as_array and text is not None:
            if text == "{}":
                raise EvaluationError("JSON_QUERY: EMPTY OBJECT ON ERROR cannot give an ARRAY<STRING>")
            return []
        return text

    doc = to_array(args[0], 1) if is_scalar(args[0]) else args[0]
    out = _per_doc(doc.cast(STR), one, out_type)
    return out[0] if is_scalar(args[0]) else out


def _element_text(v: Any) -> str:
    """An element of JSON_QUERY's ARRAY<STRING> result: a string as is, another scalar as
    its text, an object or array as JSON (Flink's String.valueOf / jsonize)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    return dump_json(v)


# ---------------------------------------------------------------------- JSON_EXISTS / IS JSON


def _infer_json_exists(types: list[DataType]) -> DataType:
    check_arity("json_exists", types, 2, 3)
    if not is_stringish(types[0]) or not is_stringish(types[1]):
        raise FunctionTypeError("Cannot apply 'JSON_EXISTS' to arguments: expected (<STRING>, <STRING path>)")
    return BOOLEAN(True)


@scalar("json_exists", _infer_json_exists)
def json_exists(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    path = _path_arg(args, "JSON_EXISTS")
    on_error = _mode(args[2], "FALSE") if len(args) > 2 else "FALSE"

    def one(text: str | None) -> bool | None:
        if text is None:
            return None
        try:
            # Flink (Jayway): a member whose value is null does not exist
            return any(v is not None for v in eval_path(_load(text), path, wrap_scalars=False))
        except (ValueError, _PathError) as e:
            if on_error == "ERROR":
                raise EvaluationError(f"JSON_EXISTS: {e}") from e
            return {"TRUE": True, "FALSE": False}.get(on_error)

    doc = to_array(args[0], 1) if is_scalar(args[0]) else args[0]
    out = _per_doc(doc.cast(STR), one, pa.bool_())
    return out[0] if is_scalar(args[0]) else out


def _infer_is_json(types: list[DataType]) -> DataType:
    check_arity("is_json", types, 1, 2)
    if not is_stringish(types[0]):
        raise FunctionTypeError(f"Cannot apply 'IS JSON' to arguments of type '<{types[0]}> IS JSON'")
    return BOOLEAN(False)


@scalar("is_json", _infer_is_json)
def is_json(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    kind = _mode(args[1], "VALUE") if len(args) > 1 else "VALUE"

    def one(text: str | None) -> bool:
        if text is None:
            return False
        try:
            v = _load(text)
        except ValueError:
            return False
        if kind == "OBJECT":
            return isinstance(v, dict)
        if kind == "ARRAY":
            return isinstance(v, list)
        if kind == "SCALAR":
            return not isinstance(v, (dict, list))
        return True

    doc = to_array(args[0], 1) if is_scalar(args[0]) else args[0]
    out = _per_doc(doc.cast(STR), one, pa.bool_())
    return out[0] if is_scalar(args[0]) else out


__all__ = ["JSON_RAW_TYPE", "dump_json", "is_raw_json_type", "json_text", "mark_nested_json"]


# docs/functions.md: signature and one example per function of this module
document(
    {
        "is_json": ("v IS JSON [VALUE|SCALAR|ARRAY|OBJECT]", "'[1, 2]' IS JSON ARRAY"),
        "json_array": (
            "JSON_ARRAY(v, ... [NULL|ABSENT ON NULL])",
            "JSON_ARRAY(1, 'a', CAST(NULL AS INT) NULL ON NULL)",
        ),
        "json_exists": ("JSON_EXISTS(json, path)", "JSON_EXISTS('{\"a\": [1]}', '$.a[0]')"),
        "json_object": (
            "JSON_OBJECT([KEY] k VALUE v, ... [NULL|ABSENT ON NULL])",
            "JSON_OBJECT('b' VALUE 1, 'a' VALUE 'x')",
        ),
        "json_query": (
            "JSON_QUERY(json, path [RETURNING STRING | ARRAY<STRING>] [wrapper] [ON EMPTY] [ON ERROR])",
            "JSON_QUERY('{\"a\": {\"b\": 1}}', '$.a')",
        ),
        "json_raw": ("(internal: a nested JSON value)", ""),
        "json_string": ("JSON_STRING(v)", "JSON_STRING(ARRAY[1, 2])"),
        "json_value": (
            "JSON_VALUE(json, path [RETURNING type] [ON EMPTY] [ON ERROR])",
            "JSON_VALUE('{\"a\": 42}', '$.a' RETURNING INT)",
        ),
    }
)
