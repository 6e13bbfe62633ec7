"""String, encoding and network functions Flink 2.3 documents beyond the classic set:
PARSE_URL, SHA2, REGEXP_COUNT / REGEXP_INSTR / REGEXP_SUBSTR / REGEXP_EXTRACT_ALL,
PRINTF, URL_ENCODE / URL_DECODE, JSON_QUOTE / JSON_UNQUOTE, ELT, ENCODE / DECODE,
INET_ATON / INET_NTOA, IS_ALPHA / IS_DIGIT / IS_DECIMAL, HEX / UNHEX / BIN, TYPEOF,
RAND_INTEGER, CURRENT_DATABASE.

Their results are what Flink's Java implementations print (java.net.URL parts,
java.util.Formatter, URLEncoder, Long.toHexString, ...), reproduced here. Most have no
Arrow kernel: they run a Python function once per *distinct* value (`map_distinct`) or per
distinct combination of arguments (`grouped_apply`), never once per row; ELT, INET_NTOA
and SHA2's dispatch are plain vectorized Arrow/numpy.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import common_type, to_array
from runtime.functions._text_common import (
    check_arity,
    grouped_apply,
    is_integerish,
    is_stringish,
    map_distinct_any,
    np_ints,
    np_valid,
    require,
)
from runtime.functions._text_java import java_double_str, java_float_str, python_regex
from runtime.functions.numeric import JavaRandom, constant_seed, seeded_random
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import ARRAY, BIGINT, BOOLEAN, BYTES, INT, STRING, DataType

STR = pa.string()


def _nullable(types: list[DataType]) -> bool:
    return any(t.nullable for t in types)


def _is_binary(t: DataType) -> bool:
    return t.name in ("BINARY", "VARBINARY", "NULL")


def _string_fn(name: str, lo: int, hi: int, checks: list[Any], form: str, result: DataType):  # noqa: ANN202
    def infer(types: list[DataType]) -> DataType:
        check_arity(name, types, lo, hi)
        require(name, types, checks, form)
        # Flink declares these results nullable (explicit(...) output types): they give NULL
        # for input they cannot read, and a NOT NULL type would fail the job there
        return result.with_nullable(True)

    return infer


# ---------------------------------------------------------------------- PARSE_URL
_URL_PROTOCOLS = {"http", "https", "ftp", "file", "jar", "mailto", "netdoc"}
_URL_PARTS = ("HOST", "PATH", "QUERY", "REF", "PROTOCOL", "FILE", "AUTHORITY", "USERINFO")


def _url_part(url: str, part: str, key: str | None) -> str | None:
    """A part of `url` as java.net.URL reports it; None for an unknown protocol or part."""
    if part not in _URL_PARTS:
        return None
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", url)
    if m is None or m.group(1).lower() not in _URL_PROTOCOLS:
        return None
    try:
        sp = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    authority = sp.netloc if "//" in url[: len(m.group(0)) + 2] else None
    query = sp.query if "?" in url else None
    if part == "QUERY" and key is not None:
        if query is None:
            return None
        found = re.search(r"(?:^|&)" + re.escape(key) + r"=([^&]*)", query)
        return found.group(1) if found else None
    if part == "HOST":
        if authority is None:
            return None
        host = authority.rsplit("@", 1)[-1]
        return host[: host.index("]") + 1] if host.startswith("[") and "]" in host else host.split(":", 1)[0]
    if part == "PATH":
        return sp.path
    if part == "QUERY":
        return query
    if part == "REF":
        return sp.fragment if "#" in url else None
    if part == "PROTOCOL":
        return m.group(1)
    if part == "FILE":
        return sp.path + ("?" + query if query is not None else "")
    if part == "AUTHORITY":
        return authority
    if part == "USERINFO":
        if authority is None or "@" not in authority:
            return None
        return authority.rsplit("@", 1)[0]
    return None


@scalar(
    "parse_url",
    _string_fn(
        "parse_url",
        2,
        3,
        [is_stringish, is_stringish, is_stringish],
        "PARSE_URL(<STRING>, <STRING>[, <STRING>])",
        STRING(),
    ),
)
def _parse_url(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Vectorized: one RE2 split of every URL into its parts (per distinct part / key
    argument); a URL whose protocol java.net.URL does not know gives NULL."""
    params = list(range(1, len(args)))

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        part, key = p[0], (p[1] if len(p) > 1 else None)
        if isinstance(sub[0], pa.Scalar):
            v = sub[0].as_py()
            return pa.scalar(None if v is None else _url_part(v, part, key), STR)
        return _url_parts_vectorized(sub[0], part, key)

    return grouped_apply(args, params, run, ctx.num_rows, STR)


_SCHEME = r"^[A-Za-z][A-Za-z0-9+.-]*:"


def _group(text: pa.Array, pattern: str) -> pa.Array:
    """Group `g` of `pattern` per row (NULL where it does not match)."""
    return pc.struct_field(pc.extract_regex(text, pattern), "g")


def _url_parts_vectorized(urls: pa.Array, part: str, key: str | None) -> pa.Array:
    """The part of each URL, with one small RE2 pattern per part (a single pattern for the
    whole URL is several times slower in RE2)."""
    if part not in _URL_PARTS:
        return pa.nulls(len(urls), STR)
    text = urls.cast(STR)
    known = pa.array(np.zeros(len(text), dtype=bool))
    for proto in sorted(_URL_PROTOCOLS):
        known = pc.or_(known, pc.fill_null(pc.starts_with(text, proto + ":", ignore_case=True), False))
    none = pa.scalar(None, STR)
    if part in ("QUERY", "FILE"):
        query = _group(text, r"^[^?#]*\?(?P<g>[^#]*)")
    if part == "QUERY" and key is not None:
        out = _group(query, r"(?:^|&)" + re.escape(key) + r"=(?P<g>[^&]*)")
    elif part in ("HOST", "AUTHORITY", "USERINFO"):
        authority = _group(text, _SCHEME + r"//(?P<g>[^/?#]*)")
        if part == "AUTHORITY":
            out = authority
        elif part == "USERINFO":
            out = _group(authority, r"^(?P<g>.*)@")
        else:
            out = _group(authority, r"^(?:.*@)?(?P<g>\[[^\]]*\]|[^:]*)")
    elif part in ("PATH", "FILE"):
        path = _group(text, _SCHEME + r"(?://[^/?#]*)?(?P<g>[^?#]*)")
        out = (
            path
            if part == "PATH"
            else pc.if_else(pc.is_null(query), path, pc.binary_join_element_wise(path, query, "?"))
        )
    elif part == "QUERY":
        out = query
    elif part == "REF":
        out = _group(text, r"#(?P<g>.*)$")
    else:  # PROTOCOL
        out = _group(text, r"^(?P<g>[A-Za-z][A-Za-z0-9+.-]*):")
    return pc.if_else(known, out, none)


# ---------------------------------------------------------------------- SHA2
@scalar(
    "sha2",
    _string_fn("sha2", 2, 2, [is_stringish, is_integerish], "SHA2(<STRING>, <INTEGER>)", STRING()),
)
def _sha2(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """SHA-2 of the UTF-8 bytes as lower-case hex; the bit length must be 224, 256, 384 or
    512 (0 means 256), anything else fails the job as Flink's "Unsupported algorithm"."""

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        bits = int(p[0])
        bits = 256 if bits == 0 else bits
        if bits not in (224, 256, 384, 512):
            raise EvaluationError(f"SHA2: Unsupported algorithm (hash length {p[0]}; use 224, 256, 384 or 512)")
        algo = f"sha{bits}"
        return map_distinct_any(sub[0], lambda s: hashlib.new(algo, s.encode("utf-8")).hexdigest(), STR)

    return grouped_apply(args, [1], run, ctx.num_rows, STR)


# ---------------------------------------------------------------------- REGEXP_*
def _regex_kernel(out_type: pa.DataType, one: Any):  # noqa: ANN202
    """A kernel applying `one(compiled_regex, text, extra_params)` per distinct text, per
    distinct pattern; an invalid pattern gives NULL (as Flink)."""

    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
            rx = python_regex(p[0])
            s = sub[0]
            if rx is None:
                return pa.scalar(None, out_type) if isinstance(s, pa.Scalar) else pa.nulls(len(s), out_type)
            return map_distinct_any(s, lambda v: one(rx, v, p[1:]), out_type)

        return grouped_apply(args, list(range(1, len(args))), run, ctx.num_rows, out_type)

    return kernel


_SS = [is_stringish, is_stringish]

scalar("regexp_count", _string_fn("regexp_count", 2, 2, _SS, "REGEXP_COUNT(<STRING>, <STRING>)", INT()))(
    _regex_kernel(pa.int32(), lambda rx, v, _p: sum(1 for _ in rx.finditer(v)))
)


def _instr(rx: re.Pattern[str], v: str, _p: list[Any]) -> int:
    m = rx.search(v)
    return 0 if m is None else m.start() + 1


scalar("regexp_instr", _string_fn("regexp_instr", 2, 2, _SS, "REGEXP_INSTR(<STRING>, <STRING>)", INT()))(
    _regex_kernel(pa.int32(), _instr)
)


def _substr(rx: re.Pattern[str], v: str, _p: list[Any]) -> str | None:
    m = rx.search(v)
    return None if m is None else m.group(0)


scalar(
    "regexp_substr",
    _string_fn("regexp_substr", 2, 2, _SS, "REGEXP_SUBSTR(<STRING>, <STRING>)", STRING()),
)(_regex_kernel(STR, _substr))


def _infer_extract_all(types: list[DataType]) -> DataType:
    check_arity("regexp_extract_all", types, 2, 3)
    require(
        "regexp_extract_all",
        types,
        [is_stringish, is_stringish, is_integerish],
        "REGEXP_EXTRACT_ALL(<STRING>, <STRING>[, <INTEGER>])",
    )
    return ARRAY(STRING(), True)  # NULL for a group that does not exist


def _extract_all(rx: re.Pattern[str], v: str, p: list[Any]) -> list[str | None] | None:
    k = int(p[0]) if p else 1
    if k < 0 or k > rx.groups:
        return None
    return [m.group(k) for m in rx.finditer(v)]


@scalar("regexp_extract_all", _infer_extract_all)
def _regexp_extract_all(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Group `k` (default 1) of every match; NULL when the pattern has fewer groups."""
    return _regex_kernel(pa.list_(STR), _extract_all)(args, types, rt, ctx)


# ---------------------------------------------------------------------- PRINTF
_SPEC = re.compile(r"%(\d+\$)?([-#+ 0,(]*)(\d+)?(\.\d+)?([a-zA-Z%])")


class _FormatError(Exception):
    pass


def _java_format(fmt: str, values: list[Any], types: list[DataType]) -> str:
    """java.util.Formatter for the common conversions (s S d x X o f e E g b B c n %)."""
    out: list[str] = []
    pos = 0
    next_arg = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        index, flags, width, prec, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if conv == "n":
            out.append("\n")
            continue
        if index:
            i = int(index[:-1]) - 1
        else:
            i = next_arg
            next_arg += 1
        if i >= len(values):
            raise _FormatError(f"Format specifier '{m.group(0)}' has no argument")
        v, t = values[i], types[i]
        out.append(_format_one(v, t, flags, width, prec, conv))
    out.append(fmt[pos:])
    return "".join(out)


def _format_one(v: Any, t: DataType, flags: str, width: str | None, prec: str | None, conv: str) -> str:
    lower = conv.lower()
    if lower == "s":
        text = _java_str(v, t)
        if prec:
            text = text[: int(prec[1:])]
    elif lower == "b":
        text = "false" if v is None else ("true" if not isinstance(v, bool) else str(v).lower())
    elif v is None:
        text = "null"
    elif lower in ("d", "x", "o"):
        if not t.is_integer:
            raise _FormatError(f"%{conv} needs an integer")
        if lower == "d":
            text = f"{v:,d}" if "," in flags else str(v)
            if "+" in flags and v >= 0:
                text = "+" + text
        else:
            raw = v if v >= 0 else v + (1 << {"TINYINT": 8, "SMALLINT": 16, "INT": 32}.get(t.name, 64))
            text = format(raw, "x" if lower == "x" else "o")
    elif lower in ("f", "e", "g"):
        if t.name not in ("DOUBLE", "FLOAT"):
            raise _FormatError(f"%{conv} needs a floating-point value")  # Flink passes DECIMAL as DecimalData
        p = int(prec[1:]) if prec else 6
        spec = ("," if "," in flags else "") + f".{p}{lower}"
        text = format(float(v), spec)
        if "+" in flags and float(v) >= 0:
            text = "+" + text
    elif lower == "c":
        text = chr(v) if isinstance(v, int) else str(v)
    else:
        raise _FormatError(f"unknown conversion %{conv}")
    if conv.isupper():
        text = text.upper()
    if width:
        w = int(width)
        if "-" in flags:
            text = text.ljust(w)
        elif "0" in flags and lower in ("d", "x", "o", "f", "e", "g"):
            sign = text[0] if text[:1] in "+-" else ""
            text = sign + text[len(sign) :].rjust(w - len(sign), "0")
        else:
            text = text.rjust(w)
    return text


def _java_str(v: Any, t: DataType) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if t.name == "DOUBLE":
        return java_double_str(v)
    if t.name == "FLOAT":
        return java_float_str(v)
    if isinstance(v, Decimal):
        return str(v)
    return str(v)


def _infer_printf(types: list[DataType]) -> DataType:
    if not types or not is_stringish(types[0]):
        raise FunctionTypeError("Invalid input arguments. PRINTF(<STRING>, <ANY>...) needs a format string")
    return STRING(True)  # NULL when the format does not fit (so never NOT NULL)


@scalar("printf", _infer_printf)
def _printf(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Java's String.format; a format that does not fit its arguments gives NULL (Flink
    catches the formatter's exception). A NULL format gives NULL; a NULL argument prints
    as `null`."""
    arg_types = types[1:]
    fast = _printf_vectorized(args, types, ctx.num_rows)
    if fast is not None:
        return fast

    def run(_sub: list[ArgValue], p: list[Any]) -> ArgValue:
        if p[0] is None:
            return pa.scalar(None, STR)
        try:
            return pa.scalar(_java_format(p[0], p[1:], arg_types), STR)
        except (_FormatError, ValueError, TypeError, OverflowError):
            return pa.scalar(None, STR)

    return grouped_apply(args, list(range(len(args))), run, ctx.num_rows, STR, null_on_null_param=False)


def _printf_vectorized(args: list[ArgValue], types: list[DataType], n: int) -> ArgValue | None:
    """The common case without a per-row step: a literal format of plain `%s` / `%d` (and
    `%%`, `%n`) over string, integer or boolean arguments becomes one element-wise string
    join. None when the format needs the general formatter."""
    fmt = args[0]
    if not isinstance(fmt, pa.Scalar) or not fmt.is_valid or any(isinstance(a, pa.Scalar) for a in args[1:]):
        return None
    text = fmt.as_py()
    pieces: list[Any] = []
    pos = 0
    k = 0
    for m in _SPEC.finditer(text):
        index, flags, width, prec, conv = m.groups()
        pieces.append(text[pos : m.start()])
        pos = m.end()
        if conv in ("%", "n") and not (index or flags or width or prec):
            pieces.append("%" if conv == "%" else "\n")
            continue
        if index or flags or width or prec or conv not in ("s", "d") or k >= len(args) - 1:
            return None
        t = types[k + 1]
        col = to_array(args[k + 1], n)
        if conv == "d" and not t.is_integer:
            return None
        if t.is_string or t.is_integer:
            rendered = pc.cast(col, STR)
        elif t.name == "BOOLEAN":
            rendered = pc.if_else(col, pa.scalar("true"), pa.scalar("false"))
        else:
            return None
        pieces.append(pc.fill_null(rendered, "null"))
        k += 1
    pieces.append(text[pos:])
    cols = [p if isinstance(p, pa.Array) else pa.scalar(p, STR) for p in pieces if not (isinstance(p, str) and p == "")]
    if not any(isinstance(c, pa.Array) for c in cols):
        return None
    return pc.binary_join_element_wise(*cols, "")


# ---------------------------------------------------------------------- URL_ENCODE / URL_DECODE
def _url_encode(s: str) -> str:
    """java.net.URLEncoder.encode(s, UTF-8): keeps A-Za-z0-9 . - * _, space becomes +."""
    return urllib.parse.quote_plus(s, safe="*").replace("~", "%7E")


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _url_decode(s: str) -> str | None:
    """java.net.URLDecoder.decode(s, UTF-8); a malformed escape gives NULL (as Flink)."""
    if _BAD_ESCAPE.search(s):
        return None
    return urllib.parse.unquote_plus(s, errors="replace")


@scalar("url_encode", _string_fn("url_encode", 1, 1, [is_stringish], "URL_ENCODE(<STRING>)", STRING()))
def _url_encode_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return map_distinct_any(args[0], _url_encode, STR)


@scalar("url_decode", _string_fn("url_decode", 1, 1, [is_stringish], "URL_DECODE(<STRING>)", STRING()))
def _url_decode_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return map_distinct_any(args[0], _url_decode, STR)


# ---------------------------------------------------------------------- JSON_QUOTE / JSON_UNQUOTE
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_quote(s: str) -> str:
    """Flink's JSON_QUOTE: the JSON escapes, and every UTF-16 unit above 127 as `\\uXXXX`;
    for a surrogate pair it prints the code point of the pair then the low surrogate
    (`😀` → `\\u1f600\\ude00`), as Flink 2.3 does."""
    out = ['"']
    for c in s:
        cp = ord(c)
        if c in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[c])
        elif cp > 0xFFFF:
            low = 0xDC00 + ((cp - 0x10000) & 0x3FF)
            out.append(f"\\u{cp:04x}\\u{low:04x}")
        elif cp > 127:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


_UNESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json_unquote(s: str) -> str:
    """The text of a JSON string literal; anything that is not one is returned unchanged.
    `\\uXXXX` takes four hex digits; a lone surrogate becomes `?` (Java's UTF-8 encoder)."""
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        return s
    units: list[int] = []
    i, body = 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c == '"':
            return s
        if c != "\\":
            units.extend(_utf16(c))
            i += 1
            continue
        if i + 1 >= len(body):
            return s
        e = body[i + 1]
        if e == "u":
            digits = body[i + 2 : i + 6]
            if len(digits) != 4 or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                return s
            units.append(int(digits, 16))
            i += 6
        elif e in _UNESCAPES:
            units.extend(_utf16(_UNESCAPES[e]))
            i += 2
        else:
            return s
    return _from_utf16(units)


def _utf16(c: str) -> list[int]:
    cp = ord(c)
    if cp <= 0xFFFF:
        return [cp]
    cp -= 0x10000
    return [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]


def _from_utf16(units: list[int]) -> str:
    raw = b"".join(u.to_bytes(2, "big") for u in units)
    text = raw.decode("utf-16-be", errors="surrogatepass")
    return text.encode("utf-8", errors="replace").decode("utf-8").replace("\ufffd", "?") if _has_lone(units) else text


def _has_lone(units: list[int]) -> bool:
    i = 0
    while i < len(units):
        u = units[i]
        if 0xD800 <= u <= 0xDBFF and i + 1 < len(units) and 0xDC00 <= units[i + 1] <= 0xDFFF:
            i += 2
            continue
        if 0xD800 <= u <= 0xDFFF:
            return True
        i += 1
    return False


@scalar("json_quote", _string_fn("json_quote", 1, 1, [is_stringish], "JSON_QUOTE(<STRING>)", STRING()))
def _json_quote_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return map_distinct_any(args[0], _json_quote, STR)


@scalar("json_unquote", _string_fn("json_unquote", 1, 1, [is_stringish], "JSON_UNQUOTE(<STRING>)", STRING()))
def _json_unquote_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return map_distinct_any(args[0], _json_unquote, STR)


# ---------------------------------------------------------------------- ELT
def _infer_elt(types: list[DataType], literals: list[object] | None = None) -> DataType:
    if len(types) < 2 or not (types[0].is_integer or types[0].name == "NULL"):
        raise FunctionTypeError("Invalid input arguments. ELT(<INTEGER>, <ANY>, ...) takes an index and values")
    # Flink's index argument strategy rejects only a negative literal; 0 (like any index
    # past the last value) gives NULL at runtime
    if literals and isinstance(literals[0], int) and literals[0] < 0:
        raise FunctionTypeError(f"Index must be an integer starting from '0', but was '{literals[0]}'.")
    t = common_type(types[1:])
    if t is None:
        raise FunctionTypeError("Invalid input arguments. ELT's values must have a common type")
    if t.name == "CHAR" and len({x.precision for x in types[1:] if x.name != "NULL"}) > 1:
        t = DataType("VARCHAR", True, precision=max(x.precision or 1 for x in types[1:]))
    return t.with_nullable(True)


@scalar("elt", lambda types: _infer_elt(types), infer_with_literals=_infer_elt)
def _elt(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The index-th value (1-based); NULL for an index out of range or NULL."""
    n = ctx.num_rows
    out_t = rt.to_arrow()
    vals = [
        pa.nulls(n, out_t) if t.name == "NULL" else to_array(a, n).cast(out_t)
        for a, t in zip(args[1:], types[1:], strict=True)
    ]
    idx_a = to_array(args[0], n)
    idx = pc.fill_null(pc.cast(idx_a, pa.int64()), 0).to_numpy(zero_copy_only=False)
    ok = (idx >= 1) & (idx <= len(vals))
    chosen = pc.choose(pa.array(np.where(ok, idx - 1, 0).astype(np.int64)), *vals)
    return pc.if_else(pa.array(ok), chosen, pa.scalar(None, out_t))


# ---------------------------------------------------------------------- ENCODE / DECODE
_CHARSETS = {
    "UTF-8": "utf-8",
    "UTF8": "utf-8",
    "ISO-8859-1": "latin-1",
    "LATIN1": "latin-1",
    "US-ASCII": "ascii",
    "ASCII": "ascii",
    "UTF-16BE": "utf-16-be",
    "UTF-16LE": "utf-16-le",
    "UTF-16": "utf-16",
    "UTF-32": "utf-32-be",
    "UTF-32BE": "utf-32-be",
    "UTF-32LE": "utf-32-le",
}


def _charset(name: str) -> str:
    codec = _CHARSETS.get(name.upper())
    if codec is None:
        raise EvaluationError(f"Unsupported character set '{name}' (java.io.UnsupportedEncodingException)")
    return codec


def _encode(s: str, codec: str) -> bytes:
    if codec == "utf-16":
        return b"\xfe\xff" + s.encode("utf-16-be", errors="replace")  # Java: big-endian with a BOM
    out = s.encode(codec, errors="replace")
    return out


@scalar(
    "encode",
    _string_fn("encode", 2, 2, _SS, "ENCODE(<STRING>, <STRING>)", BYTES()),
)
def _encode_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The string's bytes in the charset; unmappable characters become `?`."""

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        codec = _charset(p[0])
        return map_distinct_any(sub[0], lambda s: _encode(s, codec), pa.binary())

    return grouped_apply(args, [1], run, ctx.num_rows, pa.binary())


def _decode(b: bytes, codec: str) -> str:
    if codec == "utf-16":
        if b[:2] == b"\xff\xfe":
            return b[2:].decode("utf-16-le", errors="replace")
        return (b[2:] if b[:2] == b"\xfe\xff" else b).decode("utf-16-be", errors="replace")
    return b.decode(codec, errors="replace")


@scalar(
    "decode",
    _string_fn("decode", 2, 2, [_is_binary, is_stringish], "DECODE(<BINARY>, <STRING>)", STRING()),
)
def _decode_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The bytes read in the charset; malformed input becomes U+FFFD."""

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        codec = _charset(p[0])
        return map_distinct_any(sub[0], lambda b: _decode(b, codec), STR)

    return grouped_apply(args, [1], run, ctx.num_rows, STR)


# ---------------------------------------------------------------------- INET_ATON / INET_NTOA
_IPV4 = re.compile(r"^\d+(\.\d+){0,3}$")


def _inet_aton(s: str) -> int | None:
    """a.b.c.d as a number; fewer parts fill the last one (1.2.3 = 1.2.0.3), as inet_aton."""
    if not _IPV4.match(s):
        return None
    parts = [int(x) for x in s.split(".")]
    if any(x > 255 for x in parts[:-1]):
        return None
    last_bits = 8 * (5 - len(parts))
    if parts[-1] >= 1 << last_bits:
        return None
    out = 0
    for x in parts[:-1]:
        out = (out << 8) | x
    return (out << last_bits) | parts[-1]


@scalar("inet_aton", _string_fn("inet_aton", 1, 1, [is_stringish], "INET_ATON(<STRING>)", BIGINT()))
def _inet_aton_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return map_distinct_any(args[0], _inet_aton, pa.int64())


@scalar("inet_ntoa", _string_fn("inet_ntoa", 1, 1, [is_integerish], "INET_NTOA(<INTEGER>)", STRING()))
def _inet_ntoa_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Dotted quad of a number in [0, 2^32); NULL outside."""
    n = ctx.num_rows
    a = to_array(args[0], n)
    v = pc.fill_null(pc.cast(a, pa.int64()), -1).to_numpy(zero_copy_only=False)
    ok = (v >= 0) & (v < (1 << 32))
    safe = np.where(ok, v, 0)
    octets = [pa.array(((safe >> s) & 255).astype(np.int64)).cast(STR) for s in (24, 16, 8, 0)]
    out = pc.binary_join_element_wise(*octets, ".")
    res = pc.if_else(pa.array(ok), out, pa.scalar(None, STR))
    return res[0] if isinstance(args[0], pa.Scalar) else res


# ---------------------------------------------------------------------- IS_ALPHA / IS_DIGIT / IS_DECIMAL
_JAVA_NUMBER = re.compile(
    r"^[\x00-\x20]*[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)|0[xX][0-9a-fA-F]+)[\x00-\x20]*$"
)


def _is_fn(name: str, test: Any):  # noqa: ANN202
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        """TRUE when the (non-empty) string passes; FALSE for NULL (never NULL)."""
        out = map_distinct_any(args[0], lambda s: bool(s) and bool(test(s)), pa.bool_())
        if isinstance(out, pa.Scalar):
            return pa.scalar(bool(out.as_py()), pa.bool_())
        return pc.fill_null(out, False)

    scalar(name, _string_fn(name, 1, 1, [is_stringish], f"{name.upper()}(<STRING>)", BOOLEAN(False)))(kernel)


_is_fn("is_alpha", str.isalpha)
_is_fn("is_digit", lambda s: all(c.isdigit() for c in s))
_is_fn("is_decimal", _JAVA_NUMBER.match)


# ---------------------------------------------------------------------- HEX / UNHEX / BIN
def _infer_hex(types: list[DataType]) -> DataType:
    check_arity("hex", types, 1, 1)
    t = types[0]
    if not (t.is_integer or t.is_string or t.name == "NULL"):
        raise FunctionTypeError(
            f"Cannot apply 'HEX' to arguments of type 'HEX(<{t.with_nullable(True)}>)'. "
            "Supported form(s): 'HEX(<INTEGER>)'\n'HEX(<CHARACTER>)'"
        )
    return STRING(t.nullable)


@scalar("hex", _infer_hex)
def _hex(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Long.toHexString (two's complement for negatives) in upper case, or the hex of a
    string's UTF-8 bytes."""
    if types[0].is_integer:
        return map_distinct_any(args[0], lambda x: format(x & 0xFFFFFFFFFFFFFFFF, "X"), STR)
    return map_distinct_any(args[0], lambda s: s.encode("utf-8").hex().upper(), STR)


def _unhex(s: str) -> bytes | None:
    if len(s) % 2:
        # Flink reads an odd-length string's first digit as a zero byte
        rest = _unhex(s[1:])
        return None if rest is None or s[0] not in "0123456789abcdefABCDEF" else b"\x00" + rest
    try:
        return bytes.fromhex(s) if all(c in "0123456789abcdefABCDEF" for c in s) else None
    except ValueError:
        return None


@scalar("unhex", _string_fn("unhex", 1, 1, [is_stringish], "UNHEX(<STRING>)", BYTES()))
def _unhex_k(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Bytes of a hex string; NULL when it holds a non-hex character."""
    return map_distinct_any(args[0], _unhex, pa.binary())


@scalar("bin", _string_fn("bin", 1, 1, [is_integerish], "BIN(<INTEGER>)", STRING()))
def _bin(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Long.toBinaryString: 64-bit two's complement for negatives."""
    return map_distinct_any(args[0], lambda x: format(x & 0xFFFFFFFFFFFFFFFF, "b"), STR)


# ---------------------------------------------------------------------- TYPEOF
def _infer_typeof(types: list[DataType]) -> DataType:
    if not 1 <= len(types) <= 2 or (len(types) == 2 and types[1].name != "BOOLEAN"):
        raise FunctionTypeError("Invalid input arguments. TYPEOF(<ANY>[, <BOOLEAN>])")
    return STRING(False)


@scalar("typeof", _infer_typeof)
def _typeof(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The argument's logical type as Flink prints it (`INT NOT NULL`, `ARRAY<INT>`)."""
    return pa.scalar(str(types[0].as_time_attr(None)), STR)


# ---------------------------------------------------------------------- RAND_INTEGER
def _java_random_ints(rnd: JavaRandom, bound: int, n: int) -> np.ndarray:
    """n draws of java.util.Random.nextInt(bound) (Flink: one Random per call site, one
    draw per row). The generator is sequential, so this loops over the draws."""
    return np.fromiter((rnd.next_int(bound) for _ in range(n)), dtype=np.int32, count=n)


def _infer_rand_integer(types: list[DataType]) -> DataType:
    if not 1 <= len(types) <= 2 or not all(t.is_integer for t in types):
        raise FunctionTypeError("Invalid input arguments. RAND_INTEGER([<INTEGER> seed, ]<INTEGER> bound)")
    return INT(_nullable(types))


@scalar("rand_integer", _infer_rand_integer, deterministic=False)
def _rand_integer(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    bound_v = args[-1]
    if not isinstance(bound_v, pa.Scalar):
        return _rand_integer_per_row(args, ctx)
    bound = bound_v.as_py()
    if bound is None:
        return pa.nulls(n, pa.int32())
    if bound <= 0:
        raise EvaluationError("RAND_INTEGER: bound must be positive")
    if len(args) == 2:
        seed = constant_seed(args[0], "RAND_INTEGER")
        if seed is None:
            return pa.nulls(n, pa.int32())
        return pa.array(_java_random_ints(seeded_random(ctx, int(seed), int(bound)), int(bound), n), pa.int32())
    return pa.array(np.random.default_rng().integers(0, bound, n, dtype=np.int32), pa.int32())


def _rand_integer_per_row(args: list[ArgValue], ctx: EvalContext) -> pa.Array:
    """RAND_INTEGER with a bound from a column: each row draws below its own bound (Flink
    calls nextInt(bound) per record); a NULL bound or seed gives NULL."""
    bounds = args[-1]
    valid = np_valid(bounds)
    b = np_ints(bounds)
    if (valid & (b <= 0)).any():
        raise EvaluationError("RAND_INTEGER: bound must be positive")
    if len(args) == 1:
        draws = np.floor(np.random.default_rng().random(len(b)) * np.where(valid, b, 1)).astype(np.int32)
        return pa.array(draws, pa.int32(), mask=~valid)
    seed = constant_seed(args[0], "RAND_INTEGER")
    if seed is None:
        return pa.nulls(len(b), pa.int32())
    rnd = seeded_random(ctx, int(seed))
    # sequential: a row's draw depends on the generator's state after the rows before it
    draws = np.fromiter(
        (rnd.next_int(int(x)) if ok else 0 for x, ok in zip(b, valid, strict=True)), dtype=np.int32, count=len(b)
    )
    return pa.array(draws, pa.int32(), mask=~valid)


# ---------------------------------------------------------------------- CURRENT_DATABASE
def _infer_current_database(types: list[DataType]) -> DataType:
    if types:
        raise FunctionTypeError("CURRENT_DATABASE takes no arguments")
    return STRING(False)


@scalar("current_database", _infer_current_database)
def _current_database(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The session's database: streamsql has one catalog with Flink's default database."""
    return pa.scalar("default_database", STR)


document(
    {
        "parse_url": (
            "PARSE_URL(url, part[, key])",
            "PARSE_URL('http://a.com/p?k1=v1&k2=v2#r', 'QUERY', 'k2')",
        ),
        "sha2": ("SHA2(string, bits)", "SHA2('abc', 224)"),
        "regexp_count": ("REGEXP_COUNT(string, regex)", "REGEXP_COUNT('ababab', 'ab')"),
        "regexp_instr": ("REGEXP_INSTR(string, regex)", "REGEXP_INSTR('hello world', 'o')"),
        "regexp_substr": ("REGEXP_SUBSTR(string, regex)", "REGEXP_SUBSTR('hello 123 world 456', '[0-9]+')"),
        "regexp_extract_all": (
            "REGEXP_EXTRACT_ALL(string, regex[, group])",
            "REGEXP_EXTRACT_ALL('a1b22c333', '([a-z])([0-9]+)', 2)",
        ),
        "printf": ("PRINTF(format, arg, ...)", "PRINTF('%s-%05d|%-4s|', 'a', 42, 'b')"),
        "url_encode": ("URL_ENCODE(string)", "URL_ENCODE('a b&c=d/é')"),
        "url_decode": ("URL_DECODE(string)", "URL_DECODE('a+b%26c%3Dd')"),
        "json_quote": ("JSON_QUOTE(string)", "JSON_QUOTE('a\"b/é')"),
        "json_unquote": ("JSON_UNQUOTE(string)", "JSON_UNQUOTE('\"a\\\\tb\"')"),
        "elt": ("ELT(index, expr, ...)", "ELT(2, 'a', 'b', 'c')"),
        "encode": ("ENCODE(string, charset)", "ENCODE('日本', 'UTF-16BE')"),
        "decode": ("DECODE(binary, charset)", "DECODE(ENCODE('日本', 'UTF-8'), 'UTF-8')"),
        "inet_aton": ("INET_ATON(string)", "INET_ATON('127.0.0.1')"),
        "inet_ntoa": ("INET_NTOA(integer)", "INET_NTOA(3232235786)"),
        "is_alpha": ("IS_ALPHA(string)", "IS_ALPHA('日本')"),
        "is_digit": ("IS_DIGIT(string)", "IS_DIGIT('123')"),
        "is_decimal": ("IS_DECIMAL(string)", "IS_DECIMAL('-1.5e3')"),
        "hex": ("HEX(integer | string)", "HEX(255)"),
        "unhex": ("UNHEX(string)", "UNHEX('616263')"),
        "bin": ("BIN(integer)", "BIN(12)"),
        "typeof": ("TYPEOF(expr[, force_serializable])", "TYPEOF(ARRAY[1, 2])"),
        "rand_integer": ("RAND_INTEGER([seed, ]bound)", "RAND_INTEGER(42, 100)"),
        "current_database": ("CURRENT_DATABASE()", "CURRENT_DATABASE()"),
    }
)
