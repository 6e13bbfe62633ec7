"""More string functions (hashes, base64, TRANSLATE, STR_TO_MAP, UUID, STARTSWITH,
ENDSWITH), split from `strings` to keep modules small; `strings` imports this module so
the functions register with the rest."""

from __future__ import annotations

import base64
import binascii
import hashlib
import uuid as _uuid
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._text_common import (
    any_nullable,
    check_arity,
    grouped_apply,
    infer_string,
    is_scalar,
    is_stringish,
    map_distinct_any,
    require,
)
from runtime.functions._text_java import python_regex
from runtime.functions.registry import ArgValue, EvalContext, document, scalar
from runtime.types import BOOLEAN, MAP, STRING, DataType

STR = pa.string()
_S = [is_stringish]
_SS = [is_stringish, is_stringish]
_SSS = [is_stringish, is_stringish, is_stringish]


def _n(ctx: EvalContext) -> int:
    return ctx.num_rows


def _hash_fn(algo: str):
    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        return map_distinct_any(args[0], lambda s: hashlib.new(algo, s.encode("utf-8")).hexdigest(), STR)

    return kernel


for _h in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512"):
    scalar(_h, infer_string(_h, 1, 1, _S, f"{_h.upper()}(<STRING>)"))(_hash_fn(_h))


@scalar(
    "to_base64",
    infer_string(
        "to_base64", 1, 1, [lambda t: is_stringish(t) or t.name in ("BINARY", "VARBINARY")], "TO_BASE64(<STRING>)"
    ),
)
def to_base64(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    def enc(v: Any) -> str:
        raw = v if isinstance(v, bytes) else v.encode("utf-8")
        return base64.b64encode(raw).decode("ascii")

    return map_distinct_any(args[0], enc, STR)


@scalar("from_base64", infer_string("from_base64", 1, 1, _S, "FROM_BASE64(<STRING>)"))
def from_base64(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    def dec(v: str) -> str | None:
        try:
            # Java's decoder does not require the '=' padding
            return base64.b64decode(v + "=" * (-len(v) % 4), validate=False).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            return None

    return map_distinct_any(args[0], dec, STR)


@scalar("translate", infer_string("translate", 3, 3, _SSS, "TRANSLATE(<STRING>, <STRING>, <STRING>)"))
def translate(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Each character of `from` replaced by the one at the same position of `to`, or
    removed when `to` is shorter."""

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        src, dst = p
        table: dict[int, Any] = {}
        for i, ch in enumerate(src):
            if ord(ch) not in table:
                table[ord(ch)] = dst[i] if i < len(dst) else None
        return map_distinct_any(sub[0], lambda v: v.translate(table), STR)

    return grouped_apply(args, [1, 2], run, _n(ctx), STR)


def _infer_str_to_map(types: list[DataType]) -> DataType:
    check_arity("str_to_map", types, 1, 3)
    require("str_to_map", types, _SSS, "STR_TO_MAP(<STRING>[, <STRING>, <STRING>])")
    return MAP(STRING(True), STRING(True), any_nullable(types))


@scalar("str_to_map", _infer_str_to_map)
def str_to_map(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Pairs split at the (regex) list delimiter, then at the first key/value delimiter;
    a pair without it maps to NULL. '' gives an empty map."""
    out_type = result_type.to_arrow()
    list_d = args[1] if len(args) > 1 else pa.scalar(",", STR)
    kv_d = args[2] if len(args) > 2 else pa.scalar("=", STR)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        ld, kd = python_regex(p[0]), python_regex(p[1])
        if ld is None or kd is None:
            return pa.nulls(1 if is_scalar(sub[0]) else len(sub[0]), out_type)

        def parse(text: str) -> list[tuple[str, str | None]]:
            if text == "":
                return []
            pairs = _java_split(ld, text)
            out: dict[str, str | None] = {}
            for pair in pairs:
                kv = kd.split(pair, maxsplit=1)
                out[pair if len(kv) < 2 else kv[0]] = None if len(kv) < 2 else kv[1]
            return java_hash_map_order(out)

        return map_distinct_any(sub[0], parse, out_type)

    return grouped_apply([args[0], list_d, kv_d], [1, 2], run, _n(ctx), out_type)


def _java_string_hash(s: str) -> int:
    """java.lang.String.hashCode (over UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    units = s.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return h


def java_hash_map_order(entries: dict[str, str | None]) -> list[tuple[str, str | None]]:
    """The entries in a java.util.HashMap's iteration order (STR_TO_MAP builds one, and
    Flink prints the map in that order): by bucket, then insertion order in a bucket; the
    table starts at 16 buckets and doubles past a 0.75 load."""
    capacity = 16
    while len(entries) > capacity * 0.75:
        capacity *= 2

    def bucket(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    items = list(entries.items())
    order = sorted(range(len(items)), key=lambda i: (bucket(items[i][0]), i))
    return [items[i] for i in order]


def _java_split(rx: Any, text: str) -> list[str]:
    """Java `String.split(regex)`: trailing empty strings removed."""
    parts = rx.split(text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


@scalar("uuid", lambda types: STRING(False), deterministic=False)
def uuid(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    # One random value per row; the loop is the nature of UUID().
    return pa.array([str(_uuid.uuid4()) for _ in range(_n(ctx))], STR)


def _infer_starts(name: str):
    def infer(types: list[DataType]) -> DataType:
        check_arity(name, types, 2)
        binary = ("BINARY", "VARBINARY", "NULL")
        if not (all(t.name in binary for t in types) and any(t.name != "NULL" for t in types)):
            # STRING with STRING, or BYTES with BYTES
            require(name, types, _SS, f"{name.upper()}(<STRING>, <STRING>)")
        return BOOLEAN(any_nullable(types))

    return infer


def _affix_kernel(starts: bool):
    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
            pattern = p[0]
            if isinstance(pattern, bytes):  # BYTES: compare the bytes, as Flink does
                hay = sub[0]
                n = len(pattern)
                part = pc.binary_slice(hay, 0, n) if starts else _binary_tail(hay, n)
                return pc.equal(part, pa.scalar(pattern, pa.binary()))
            return pc.starts_with(sub[0], pattern=pattern) if starts else pc.ends_with(sub[0], pattern=pattern)

        return grouped_apply(args, [1], run, _n(ctx), pa.bool_())

    return kernel


def _binary_tail(hay: ArgValue, n: int) -> ArgValue:
    """The last `n` bytes of each value (all of it when shorter)."""
    if n == 0:
        return pc.binary_slice(hay, 0, 0)
    return pc.binary_slice(hay, -n, 2**31 - 1)


scalar("startswith", _infer_starts("startswith"), "starts_with")(_affix_kernel(True))
scalar("endswith", _infer_starts("endswith"), "ends_with")(_affix_kernel(False))


# docs/functions.md: signature and one example per function of this module
document(
    {
        "endswith": ("ENDSWITH(string, suffix)", "ENDSWITH('hello', 'lo')"),
        "startswith": ("STARTSWITH(string, prefix)", "STARTSWITH('hello', 'he')"),
        "from_base64": ("FROM_BASE64(string)", "FROM_BASE64('aGk=')"),
        "to_base64": ("TO_BASE64(string | bytes)", "TO_BASE64('hi')"),
        "md5": ("MD5(string)", "MD5('abc')"),
        "sha1": ("SHA1(string)", "SHA1('abc')"),
        "sha224": ("SHA224(string)", "SHA224('abc')"),
        "sha256": ("SHA256(string)", "SHA256('abc')"),
        "sha384": ("SHA384(string)", "SHA384('abc')"),
        "sha512": ("SHA512(string)", "SHA512('abc')"),
        "str_to_map": ("STR_TO_MAP(string[, pair_delimiter, key_value_delimiter])", "STR_TO_MAP('a=1,b=2')"),
        "translate": ("TRANSLATE(string, from, to)", "TRANSLATE('abc', 'ab', 'xy')"),
        "uuid": ("UUID()", "UUID()"),
    }
)
