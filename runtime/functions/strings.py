"""String scalar functions with Flink 2.3 semantics, vectorized over Arrow.

Arrow's utf8 kernels do the work; this module adds what Flink does differently:
Java full case mapping (UPPER('straße') = 'STRASSE'), SUBSTRING's start 0 / negative start
rules, CONCAT_WS skipping NULLs, REGEXP_REPLACE inserting the replacement literally
(Flink quotes it with `Matcher.quoteReplacement`), SPLIT_INDEX with Commons-Lang's
"preserve all tokens" splitting, and NULL instead of an error for invalid regexes.

Arguments that Arrow needs as constants (patterns, widths) are usually literals; when they
are columns, `grouped_apply` runs one kernel call per distinct value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._text_common import (
    any_nullable,
    check_arity,
    const,
    grouped_apply,
    infer_string,
    is_integerish,
    is_scalar,
    is_stringish,
    join_skip,
    map_distinct_any,
    np_ints,
    require,
    string_result,
    to_array,
)
from runtime.functions._text_java import java_regex_to_re2, name_capture_groups, python_regex, special_case_regex
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import ARRAY, BOOLEAN, INT, MAX_VARCHAR, STRING, DataType

STR = pa.string()
_S = [is_stringish]
_SS = [is_stringish, is_stringish]
_SSS = [is_stringish, is_stringish, is_stringish]


def _n(ctx: EvalContext) -> int:
    return ctx.num_rows


# ---------------------------------------------------------------------- infer helpers


def _infer_same_string(name: str):
    """UPPER/LOWER/INITCAP keep the argument's type (CHAR(n) stays CHAR(n))."""

    def infer(types: list[DataType]) -> DataType:
        check_arity(name, types, 1)
        require(name, types, _S, f"{name.upper()}(<CHARACTER>)")
        t = types[0]
        return STRING(True) if t.name == "NULL" else t

    return infer


def _infer_int(name: str, lo: int, hi: int, checks: list[Any], form: str):
    def infer(types: list[DataType]) -> DataType:
        check_arity(name, types, lo, hi)
        require(name, types, checks, form)
        return INT(any_nullable(types))

    return infer


# ---------------------------------------------------------------------- case


def _case_map(arr: ArgValue, mapper: str, ctx: EvalContext) -> ArgValue:
    if is_scalar(arr):
        v = const(arr)
        return pa.scalar(None if v is None else getattr(v, mapper)(), STR)
    base = pc.utf8_upper(arr) if mapper == "upper" else pc.utf8_lower(arr)
    special = pc.match_substring_regex(arr, special_case_regex(mapper))
    if not pc.any(special).as_py():
        return base
    fixed = map_distinct_any(pc.if_else(special, arr, pa.scalar(None, STR)), lambda s: getattr(s, mapper)(), STR)
    return pc.if_else(special, fixed, base)


@scalar("upper", _infer_same_string("upper"), "ucase")
def upper(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Java's `String.toUpperCase()` (full mapping: 'ß' -> 'SS')."""
    return _folded_length(_case_map(args[0], "upper", ctx), args[0], result_type)


@scalar("lower", _infer_same_string("lower"), "lcase")
def lower(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    return _folded_length(_case_map(args[0], "lower", ctx), args[0], result_type)


def _folded_length(out: ArgValue, arg: ArgValue, result_type: DataType) -> ArgValue:
    """Flink folds a call over a literal into a literal of the call's type, which cuts the
    value to that type's length: UPPER('straße') is CHAR(6) 'STRASS', UPPER('ﬁ') is 'F'."""
    n = result_type.precision
    if not is_scalar(arg) or n is None or n >= MAX_VARCHAR or not isinstance(out, pa.Scalar) or not out.is_valid:
        return out
    return pa.scalar(out.as_py()[:n], STR)


def _initcap_py(s: str) -> str:
    """Calcite's INITCAP: words are runs of ASCII letters/digits; first letter upper, rest lower."""
    out = []
    start = True
    for ch in s:
        if "0" <= ch <= "9":
            start = False
        elif "A" <= ch <= "Z":
            if not start:
                ch = ch.lower()
            start = False
        elif "a" <= ch <= "z":
            if start:
                ch = ch.upper()
            start = False
        else:
            start = True
        out.append(ch)
    return "".join(out)


@scalar("initcap", _infer_same_string("initcap"))
def initcap(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    # A Python loop over the *distinct* strings: no Arrow kernel has Calcite's word rule.
    return map_distinct_any(args[0], _initcap_py, STR)


# ---------------------------------------------------------------------- trim


def _trim_kernel(kind: str):
    fn = {"both": pc.utf8_trim, "leading": pc.utf8_ltrim, "trailing": pc.utf8_rtrim}[kind]

    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        chars_arg = args[1] if len(args) > 1 else pa.scalar(" ", STR)

        def run(sub: list[ArgValue], params: list[Any]) -> ArgValue:
            chars = params[0]
            if chars == "":
                return sub[0]
            return fn(sub[0], characters=chars)

        return grouped_apply([args[0], chars_arg], [1], run, _n(ctx), STR)

    return kernel


for _name, _kind, _aliases in (("btrim", "both", ("trim",)), ("ltrim", "leading", ()), ("rtrim", "trailing", ())):
    scalar(_name, infer_string(_name, 1, 2, _SS, f"{_name.upper()}(<CHARACTER>[, <CHARACTER>])"), *_aliases)(
        _trim_kernel(_kind)
    )


# ---------------------------------------------------------------------- length / position


@scalar(
    "char_length",
    _infer_int("char_length", 1, 1, _S, "CHAR_LENGTH(<CHARACTER>)"),
    "character_length",
    "length",
)
def char_length(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    return pc.cast(pc.utf8_length(args[0]), pa.int32())


def _locate(s: pa.Array, needle: str, start: int) -> pa.Array:
    """Flink's `BinaryStringData.indexOf(needle, start - 1) + 1` over a column: the 1-based
    code-point position of `needle` at or after `start` (a start below 1 counts as 1), 0
    if absent or when `start` lies beyond the string. An empty needle is found at 1 for
    any start (indexOf answers 0 before it looks at the start). NULL where `s` is NULL."""
    if needle == "":
        return pc.if_else(pc.is_valid(s), pa.scalar(1, pa.int32()), pa.scalar(None, pa.int32()))
    offset = start - 1 if start > -(2**31) else 2**31 - 1  # Java's `start - 1` wraps at MIN_VALUE
    offset = max(offset, 0)
    base = s if offset == 0 else pc.utf8_slice_codeunits(s, start=offset)  # "" past the end
    parts = pc.split_pattern(base, pattern=needle, max_splits=1)
    first_len = pc.cast(pc.utf8_length(pc.list_element(parts, 0)), pa.int32())
    found = pc.if_else(pc.greater(pc.list_value_length(parts), 1), pc.add(first_len, 1 + offset), 0)
    return pc.cast(found, pa.int32())  # a NULL `s` gives a NULL condition, so NULL


def _position_kernel(needle_pos: int, hay_pos: int):
    """POSITION(needle IN hay) / LOCATE(needle, hay[, start]): NULL when any argument is
    NULL (row-wise for columns, whole-result for a NULL literal). Arrow's split needs the
    needle and start as constants, so `grouped_apply` runs one split per distinct
    (needle, start) pair; the haystack is broadcast to a column first so that each group
    gets exactly its rows (a literal haystack is not re-expanded to the batch length)."""

    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        hay, needle = args[hay_pos], args[needle_pos]
        from_arg = args[2] if len(args) > 2 else pa.scalar(1, pa.int32())
        all_scalar = is_scalar(hay) and is_scalar(needle) and is_scalar(from_arg)
        n = 1 if all_scalar else _n(ctx)

        def run(sub: list[ArgValue], params: list[Any]) -> ArgValue:
            return _locate(to_array(sub[0], n), params[0], int(params[1]))

        res = grouped_apply([to_array(hay, n), needle, from_arg], [1, 2], run, n, pa.int32())
        if all_scalar:
            return res if is_scalar(res) else res[0]
        return res

    return kernel


scalar(
    "position",
    _infer_int("position", 2, 3, [is_stringish, is_stringish, is_integerish], "POSITION(<STRING> IN <STRING>)"),
)(_position_kernel(0, 1))
scalar(
    "locate",
    _infer_int("locate", 2, 3, [is_stringish, is_stringish, is_integerish], "LOCATE(<STRING>, <STRING>[, <INTEGER>])"),
)(_position_kernel(0, 1))


def _instr_py(s: str, sub: str, start: int, nth: int) -> int:
    if nth <= 0:
        raise FunctionTypeError("nthAppearance must be positive!")
    if start == 0:
        return 0
    if start > 0:
        idx = 0
        from_i = start
        for _ in range(nth):
            idx = s.find(sub, from_i - 1) + 1
            if idx == 0:
                return 0
            from_i = idx + 1
        return idx
    pos = _instr_py(s[::-1], sub[::-1], -start, nth)
    return 0 if pos == 0 else len(s) + 2 - pos - len(sub)


@scalar(
    "instr",
    _infer_int(
        "instr",
        2,
        4,
        [is_stringish, is_stringish, is_integerish, is_integerish],
        "INSTR(<STRING>, <STRING>[, <INTEGER>[, <INTEGER>]])",
    ),
)
def instr(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    n = _n(ctx)
    start = args[2] if len(args) > 2 else pa.scalar(1, pa.int32())
    nth = args[3] if len(args) > 3 else pa.scalar(1, pa.int32())
    if is_scalar(start) and is_scalar(nth) and const(start) == 1 and const(nth) == 1:
        return _position_kernel(1, 0)(args[:2], arg_types, result_type, ctx)

    def run(sub: list[ArgValue], params: list[Any]) -> ArgValue:
        sub_s, st, nt = params[0], int(params[1]), int(params[2])
        return map_distinct_any(sub[0], lambda s: _instr_py(s, sub_s, st, nt), pa.int32())

    return grouped_apply([args[0], args[1], start, nth], [1, 2, 3], run, n, pa.int32())


# ---------------------------------------------------------------------- substring & co


def _substring(s: ArgValue, pos: int, length: int | None) -> ArgValue:
    """Flink's SqlFunctionUtils.subString over a whole column for one (pos, length)."""
    if length is not None and length < 0:
        return pa.scalar(None, STR) if is_scalar(s) else pa.nulls(len(s), STR)
    big = 1 << 40
    ln = big if length is None else length
    if pos > 0:
        return pc.utf8_slice_codeunits(s, start=pos - 1, stop=pos - 1 + ln)
    if pos == 0:
        return pc.utf8_slice_codeunits(s, start=0, stop=ln)
    stop = pos + ln
    sliced = pc.utf8_slice_codeunits(s, start=pos, stop=None if stop >= 0 else stop)
    # Flink: a negative start before the beginning of the string gives ''
    too_far = pc.less(pc.add(pc.cast(pc.utf8_length(s), pa.int64()), pos), 0)
    return pc.if_else(too_far, pa.scalar("", STR), sliced)


_infer_substring = infer_string(
    "substring",
    2,
    3,
    [is_stringish, is_integerish, is_integerish],
    "SUBSTRING(<CHARACTER> FROM <INTEGER> [FOR <INTEGER>])",
)


# nullable: a negative length gives NULL (Flink: SUBSTR('Hello', 2, -1) is NULL, no failure)
@scalar("substring", lambda types: _infer_substring(types).with_nullable(True), "substr")
def substring(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    length = args[2] if len(args) > 2 else pa.scalar(None, pa.int64())
    ln_null_means_all = len(args) <= 2

    def run(sub: list[ArgValue], params: list[Any]) -> ArgValue:
        return _substring(sub[0], int(params[0]), None if params[1] is None else int(params[1]))

    if ln_null_means_all:
        return grouped_apply([args[0], args[1]], [1], lambda sub, p: run(sub, [p[0], None]), _n(ctx), STR)
    return grouped_apply([args[0], args[1], length], [1, 2], run, _n(ctx), STR)


def _left_right(is_left: bool):
    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        def run(sub: list[ArgValue], params: list[Any]) -> ArgValue:
            k = int(params[0])
            if k <= 0:
                return pc.utf8_slice_codeunits(sub[0], start=0, stop=0)
            if is_left:
                return pc.utf8_slice_codeunits(sub[0], start=0, stop=k)
            return pc.utf8_slice_codeunits(sub[0], start=-k)

        return grouped_apply(args, [1], run, _n(ctx), STR)

    return kernel


scalar("left", infer_string("left", 2, 2, [is_stringish, is_integerish], "LEFT(<STRING>, <INTEGER>)"))(
    _left_right(True)
)
scalar("right", infer_string("right", 2, 2, [is_stringish, is_integerish], "RIGHT(<STRING>, <INTEGER>)"))(
    _left_right(False)
)


def _overlay(s: ArgValue, r: str, start: int, length: int) -> ArgValue:
    n_chars = pc.utf8_length(s)
    if start <= 0:
        return s
    head = pc.utf8_slice_codeunits(s, start=0, stop=start - 1)
    tail = (
        pc.utf8_slice_codeunits(s, start=start - 1 + length)
        if length > 0
        else pc.utf8_slice_codeunits(s, start=0, stop=0)
    )
    keep_tail = pc.less_equal(pa.scalar(start + length, pa.int64()), pc.cast(n_chars, pa.int64()))
    tail = pc.if_else(keep_tail, tail, pa.scalar("", STR)) if length > 0 else tail
    out = pc.binary_join_element_wise(head, r, tail, "")
    unchanged = pc.greater(pa.scalar(start, pa.int64()), pc.cast(n_chars, pa.int64()))
    return pc.if_else(unchanged, s, out)


@scalar(
    "overlay",
    infer_string(
        "overlay",
        3,
        4,
        [is_stringish, is_stringish, is_integerish, is_integerish],
        "OVERLAY(<STRING> PLACING <STRING> FROM <INTEGER> [FOR <INTEGER>])",
    ),
)
def overlay(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    if len(args) == 3:

        def run3(sub: list[ArgValue], p: list[Any]) -> ArgValue:
            return _overlay(sub[0], p[0], int(p[1]), len(p[0]))

        return grouped_apply(args, [1, 2], run3, _n(ctx), STR)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        return _overlay(sub[0], p[0], int(p[1]), int(p[2]))

    return grouped_apply(args, [1, 2, 3], run, _n(ctx), STR)


# ---------------------------------------------------------------------- concat


def _infer_concat(types: list[DataType]) -> DataType:
    if len(types) < 1:
        raise FunctionTypeError("Invalid number of arguments to function 'CONCAT'. Was expecting at least 1 argument")
    # Flink 2.3 takes character strings only: CONCAT(X'01', X'02') is a validation error
    require("concat", types, [is_stringish] * len(types), "CONCAT(<CHARACTER>)")
    return string_result(types)


@scalar("concat", _infer_concat)
def concat(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """NULL if any argument is NULL (also for `||`)."""
    if all(is_scalar(a) for a in args):
        vals = [const(a) for a in args]
        return pa.scalar(None if any(v is None for v in vals) else "".join(vals), STR)
    arrays = [a if not is_scalar(a) else a.cast(STR) for a in args]
    return pc.binary_join_element_wise(*arrays, "")


def _infer_concat_ws(types: list[DataType]) -> DataType:
    if len(types) < 2:
        raise FunctionTypeError(
            "Invalid number of arguments to function 'CONCAT_WS'. Was expecting at least 2 arguments"
        )
    require("concat_ws", types, [is_stringish] * len(types), "CONCAT_WS(<STRING>, <STRING>, ...)")
    return STRING(types[0].nullable)


@scalar("concat_ws", _infer_concat_ws)
def concat_ws(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Skips NULL arguments, keeps empty strings; NULL only when the separator is NULL."""
    sep, values = args[0], args[1:]
    n = _n(ctx)
    if all(is_scalar(a) for a in args):
        s = const(sep)
        if s is None:
            return pa.scalar(None, STR)
        return pa.scalar(s.join(v for v in (const(a) for a in values) if v is not None), STR)
    vals = [a.cast(STR) if is_scalar(a) else a for a in values]
    if all(is_scalar(v) for v in vals):
        vals[0] = to_array(vals[0], n)
    return join_skip(vals, sep if not is_scalar(sep) else sep.cast(STR))


# ---------------------------------------------------------------------- replace / regex


@scalar("replace", infer_string("replace", 3, 3, _SSS, "REPLACE(<STRING>, <STRING>, <STRING>)"))
def replace(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        old, new = p
        if old == "":
            # Java inserts the replacement around every character; Arrow would loop forever
            return pc.replace_substring_regex(sub[0], pattern="", replacement=new.replace("\\", "\\\\"))
        return pc.replace_substring(sub[0], pattern=old, replacement=new)

    return grouped_apply(args, [1, 2], run, _n(ctx), STR)


def _re2_ok(pattern: str) -> bool:
    try:
        pc.match_substring_regex(pa.array([""]), pattern)
        return True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False


@scalar("regexp_replace", infer_string("regexp_replace", 3, 3, _SSS, "REGEXP_REPLACE(<STRING>, <STRING>, <STRING>)"))
def regexp_replace(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """All matches replaced by the replacement text taken literally ($1 is not expanded,
    as Flink quotes it); an invalid regex gives NULL."""

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        regex, repl = java_regex_to_re2(p[0]), p[1]
        s = sub[0]
        rx_py = python_regex(p[0])
        # A pattern that matches '' also matches at the end after a match that reached it
        # in Java (REGEXP_REPLACE('aaa', 'a*', 'X') is 'XX'); RE2 skips it, Python does not.
        empty_ok = rx_py is not None and rx_py.fullmatch("") is not None
        if _re2_ok(regex) and not empty_ok:
            return pc.replace_substring_regex(s, pattern=regex, replacement=repl.replace("\\", "\\\\"))
        rx = python_regex(p[0])
        if rx is None:
            return pa.scalar(None, STR) if is_scalar(s) else pa.nulls(len(s), STR)
        return map_distinct_any(s, lambda v: rx.sub(lambda _m: repl, v), STR)

    return grouped_apply(args, [1, 2], run, _n(ctx), STR)


def _infer_regexp_extract(types: list[DataType]) -> DataType:
    check_arity("regexp_extract", types, 2, 3)
    require(
        "regexp_extract",
        types,
        [is_stringish, is_stringish, is_integerish],
        "REGEXP_EXTRACT(<STRING>, <STRING>[, <INTEGER>])",
    )
    return STRING(True)


@scalar("regexp_extract", _infer_regexp_extract)
def regexp_extract(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """Group `idx` (default 0) of the first match; NULL when nothing matches, the group
    does not exist or the regex is invalid."""
    idx = args[2] if len(args) > 2 else pa.scalar(0, pa.int32())

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        s = sub[0]
        regex, k = java_regex_to_re2(p[0]), int(p[1])
        named, count = name_capture_groups(regex)
        if k < 0 or k > count:
            return pa.scalar(None, STR) if is_scalar(s) else pa.nulls(len(s), STR)
        if _re2_ok(named):
            arr = to_array(s, 1) if is_scalar(s) else s
            out = pc.struct_field(pc.extract_regex(arr, named), [k])
            return out[0] if is_scalar(s) else out
        rx = python_regex(p[0])
        if rx is None:
            return pa.scalar(None, STR) if is_scalar(s) else pa.nulls(len(s), STR)

        def one(v: str) -> str | None:
            m = rx.search(v)
            return None if m is None else m.group(k)

        return map_distinct_any(s, one, STR)

    return grouped_apply([args[0], args[1], idx], [1, 2], run, _n(ctx), STR)


def _infer_regexp(types: list[DataType]) -> DataType:
    check_arity("regexp", types, 2)
    require("regexp", types, _SS, "REGEXP(<STRING>, <STRING>)")
    return BOOLEAN(any_nullable(types))


@scalar("regexp", _infer_regexp)
def regexp(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Whether the regex matches anywhere in the string (Java `find`); an empty or invalid
    regex gives FALSE."""

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        s = sub[0]
        regex = java_regex_to_re2(p[0])
        if p[0] == "":
            return pc.if_else(pc.is_null(s), pa.scalar(None, pa.bool_()), False)
        if _re2_ok(regex):
            return pc.match_substring_regex(s, regex)
        rx = python_regex(p[0])
        if rx is None:
            return pc.if_else(pc.is_null(s), pa.scalar(None, pa.bool_()), False)
        return map_distinct_any(s, lambda v: rx.search(v) is not None, pa.bool_())

    return grouped_apply(args, [1], run, _n(ctx), pa.bool_())


# ---------------------------------------------------------------------- split


def _infer_split_index(types: list[DataType]) -> DataType:
    check_arity("split_index", types, 3)
    require(
        "split_index",
        types,
        [is_stringish, lambda t: is_stringish(t) or t.is_integer, is_integerish],
        "SPLIT_INDEX(<STRING>, <STRING>, <INTEGER>)",
    )
    return STRING(True)


def _list_item(lists: pa.Array, idx: int) -> pa.Array:
    """Element `idx` of each list; NULL where the list is shorter (or NULL)."""
    if lists.offset != 0:
        lists = pa.concat_arrays([lists])  # normalise a sliced list array
    lens = np_ints(pc.list_value_length(lists), -1)
    valid = lens > idx
    offsets = lists.offsets.to_numpy()[:-1].astype(np.int64)
    pos = np.where(valid, offsets + idx, 0)
    flat = lists.values
    if len(flat) == 0:
        return pa.nulls(len(lists), STR)
    vals = flat.take(pa.array(pos))
    return pc.if_else(pa.array(valid), vals, pa.scalar(None, STR))


_LAST_SPLIT: list[tuple[tuple[Any, ...], pa.Array, str, pa.Array]] = []


def _identity(arr: pa.Array) -> tuple[Any, ...]:
    """The memory an array views (column wrappers are new objects on every access)."""
    return (arr.type, arr.offset, len(arr), *((b.address, b.size) if b is not None else None for b in arr.buffers()))


def _split_cached(arr: pa.Array, sep: str) -> pa.Array:
    """`pc.split_pattern`, remembering the last result: SPLIT_INDEX(url, '/', 3),
    SPLIT_INDEX(url, '/', 4), ... over one batch (Nexmark q22) split the column once.
    The cached entry keeps its input alive, so its buffers' addresses cannot be reused."""
    ident = _identity(arr)
    last = _LAST_SPLIT[0] if _LAST_SPLIT else None
    if last is not None and last[0] == ident and last[2] == sep:
        return last[3]
    lists = pc.split_pattern(arr, pattern=sep)
    _LAST_SPLIT[:] = [(ident, arr, sep, lists)]
    return lists


@scalar("split_index", _infer_split_index)
def split_index(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Part `idx` (0-based) of the string split at every occurrence of the separator,
    empty parts kept; NULL beyond the last part, for a negative index and for ''."""
    n = _n(ctx)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        sep, idx = p
        if isinstance(sep, int):
            if sep < 1 or sep > 255:
                return pa.nulls(len(sub[0]) if not is_scalar(sub[0]) else 1, STR)
            sep = chr(sep)
        s = sub[0]
        scalar_in = is_scalar(s)
        arr = to_array(s, 1) if scalar_in else s
        idx = int(idx)
        if idx < 0:
            out = pa.nulls(len(arr), STR)
        elif sep == "":
            # Commons-Lang splits on whitespace runs for an empty separator
            out = _list_item(pc.split_pattern_regex(pc.utf8_trim_whitespace(arr), pattern=r"\s+"), idx)
        else:
            out = _list_item(_split_cached(arr, sep), idx)
        out = pc.if_else(pc.equal(arr, ""), pa.scalar(None, STR), out)
        return out[0] if scalar_in else out

    return grouped_apply(args, [1, 2], run, n, STR)


def _infer_split(types: list[DataType]) -> DataType:
    check_arity("split", types, 2)
    require("split", types, _SS, "SPLIT(<STRING>, <STRING>)")
    return ARRAY(STRING(True), any_nullable(types))


@scalar("split", _infer_split)
def split(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """ARRAY<STRING> of the parts (empty parts kept); an empty delimiter splits into
    characters; '' gives an empty array."""
    out_type = pa.list_(STR)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        s = sub[0]
        scalar_in = is_scalar(s)
        arr = to_array(s, 1) if scalar_in else s
        if p[0] == "":
            lists = _chars(arr)
        else:
            lists = pc.split_pattern(arr, pattern=p[0])
        empty = pa.scalar([], out_type)
        lists = pc.if_else(pc.equal(arr, ""), empty, lists)
        return lists[0] if scalar_in else lists

    return grouped_apply(args, [1], run, _n(ctx), out_type)


def _chars(arr: pa.Array) -> pa.Array:
    """Each string as a list of its characters (a loop over distinct values)."""
    return map_distinct_any(arr, list, pa.list_(STR))


# ---------------------------------------------------------------------- misc


@scalar("reverse", infer_string("reverse", 1, 1, _S, "REVERSE(<STRING>)"))
def reverse(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    return pc.utf8_reverse(args[0])


@scalar("repeat", infer_string("repeat", 2, 2, [is_stringish, is_integerish], "REPEAT(<STRING>, <INTEGER>)"))
def repeat(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """A count below 1 gives ''."""
    times = args[1]
    if is_scalar(times):
        k = const(times)
        if k is None:
            return pa.scalar(None, STR) if is_scalar(args[0]) else pa.nulls(len(args[0]), STR)
        return pc.binary_repeat(args[0], max(int(k), 0))
    # max_element_wise skips NULLs (max(NULL, 0) = 0): keep a NULL count NULL
    counts = pc.max_element_wise(pc.cast(times, pa.int64()), 0, skip_nulls=False)
    return pc.binary_repeat(args[0], counts)


def _pad_kernel(left: bool):
    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        n = _n(ctx)

        def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
            width, pad = int(p[0]), p[1]
            s = sub[0]
            scalar_in = is_scalar(s)
            arr = to_array(s, 1) if scalar_in else s
            if width < 0 or pad == "":
                out = pa.nulls(len(arr), STR)
            elif width == 0:
                out = pc.utf8_slice_codeunits(arr, start=0, stop=0)
            else:
                out = _pad(arr, width, pad, left)
            return out[0] if scalar_in else out

        return grouped_apply(args, [1, 2], run, n, STR)

    return kernel


_ASTRAL = "[\U00010000-\U0010ffff]"


def _java_pad(base: str, width: int, pad: str, left: bool) -> str:
    """Flink's LPAD/RPAD on Java strings: lengths count UTF-16 code units, so a character
    outside the BMP (an emoji) counts twice and may be cut in half (shown as '?')."""
    b = base.encode("utf-16-le")
    p = pad.encode("utf-16-le")
    n_base, n_pad, w = len(b) // 2, len(p) // 2, width * 2
    fill_units = max(width - n_base, 0)
    filler = (p * (fill_units // n_pad + 1))[: fill_units * 2]
    kept = b[: (width - fill_units) * 2]
    data = filler + kept if left else kept + filler
    return data[:w].decode("utf-16-le", errors="replace").replace("\ufffd", "?")


def _pad(arr: pa.Array, width: int, pad: str, left: bool) -> pa.Array:
    out = _pad_code_points(arr, width, pad, left)
    # rows with characters outside the BMP: Java's UTF-16 lengths (rare; one per distinct value)
    astral = pc.fill_null(pc.match_substring_regex(arr, _ASTRAL), False)
    if any(ch > "\uffff" for ch in pad):
        astral = pc.is_valid(arr)
    if pc.any(astral).as_py():
        fixed = map_distinct_any(
            pc.if_else(astral, arr, pa.scalar(None, STR)), lambda v: _java_pad(v, width, pad, left), STR
        )
        out = pc.if_else(astral, fixed, out)
    return out


def _pad_code_points(arr: pa.Array, width: int, pad: str, left: bool) -> pa.Array:
    truncated = pc.utf8_slice_codeunits(arr, start=0, stop=width)
    if len(pad) == 1:
        return (
            pc.utf8_lpad(truncated, width=width, padding=pad)
            if left
            else pc.utf8_rpad(truncated, width=width, padding=pad)
        )
    # multi-character padding: the filler depends on each row's length; group by length
    lens = np_ints(pc.utf8_length(truncated))
    fill = (pad * (width // len(pad) + 1))[:width]
    fillers = pa.array([fill[: width - k] for k in range(width + 1)], STR)
    filler = fillers.take(pa.array(np.clip(lens, 0, width)))
    return (
        pc.binary_join_element_wise(filler, truncated, "")
        if left
        else pc.binary_join_element_wise(truncated, filler, "")
    )


scalar(
    "lpad",
    infer_string("lpad", 3, 3, [is_stringish, is_integerish, is_stringish], "LPAD(<STRING>, <INTEGER>, <STRING>)"),
)(_pad_kernel(True))
scalar(
    "rpad",
    infer_string("rpad", 3, 3, [is_stringish, is_integerish, is_stringish], "RPAD(<STRING>, <INTEGER>, <STRING>)"),
)(_pad_kernel(False))


@scalar("ascii", _infer_int("ascii", 1, 1, _S, "ASCII(<STRING>)"))
def ascii_(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Flink's ASCII: the first UTF-8 byte as a Java (signed) byte, so 'é' is -61; 0 for ''."""

    def first_byte(s: str) -> int:
        if not s:
            return 0
        b = s.encode("utf-8")[0]
        return b - 256 if b >= 128 else b

    return map_distinct_any(args[0], first_byte, pa.int32())


_CHR_TABLE = pa.array([chr(i) for i in range(256)], STR)


@scalar("chr", infer_string("chr", 1, 1, [is_integerish], "CHR(<INTEGER>)"))
def chr_(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """The character (code & 0xFF); '' for a negative code."""
    a = args[0]
    arr = to_array(a, 1) if is_scalar(a) else a
    codes = np_ints(arr)
    out = _CHR_TABLE.take(pa.array(codes & 0xFF))
    out = pc.if_else(pa.array(codes < 0), pa.scalar("", STR), out)
    out = pc.if_else(arr.is_null(), pa.scalar(None, STR), out)
    return out[0] if is_scalar(a) else out


# Hashing, base64, TRANSLATE, STR_TO_MAP, UUID, STARTSWITH/ENDSWITH live in a helper
# module (kept under the size limit); importing it registers them.
from runtime.functions import _text_misc  # noqa: E402,F401

# docs/functions.md: signature and one example per function of this module
document(
    {
        "ascii": ("ASCII(string)", "ASCII('A')"),
        "btrim": (
            "TRIM([BOTH|LEADING|TRAILING] [chars] FROM string), BTRIM(string[, chars])",
            "TRIM(BOTH 'x' FROM 'xxaxx')",
        ),
        "char_length": ("CHAR_LENGTH(string)", "CHAR_LENGTH('héllo')"),
        "chr": ("CHR(integer)", "CHR(65)"),
        "concat": ("CONCAT(string, ...), a || b", "CONCAT('a', 'b', 'c')"),
        "concat_ws": ("CONCAT_WS(separator, string, ...)", "CONCAT_WS('-', 'a', 'b')"),
        "initcap": ("INITCAP(string)", "INITCAP('hello wORLD')"),
        "instr": ("INSTR(string, substring)", "INSTR('hello', 'l')"),
        "left": ("LEFT(string, n)", "LEFT('hello', 2)"),
        "locate": ("LOCATE(substring, string[, start])", "LOCATE('l', 'hello', 4)"),
        "lower": ("LOWER(string)", "LOWER('HeLLo')"),
        "lpad": ("LPAD(string, length, pad)", "LPAD('7', 3, '0')"),
        "ltrim": ("LTRIM(string[, chars])", "LTRIM('  a ')"),
        "overlay": ("OVERLAY(string PLACING s FROM pos [FOR len])", "OVERLAY('abcdef' PLACING 'XY' FROM 2 FOR 3)"),
        "position": ("POSITION(substring IN string)", "POSITION('c' IN 'abc')"),
        "regexp": ("REGEXP(string, regex)", "REGEXP('abc123', '[0-9]+')"),
        "regexp_extract": ("REGEXP_EXTRACT(string, regex[, group])", "REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)"),
        "regexp_replace": ("REGEXP_REPLACE(string, regex, replacement)", "REGEXP_REPLACE('a1b2', '[0-9]', '#')"),
        "repeat": ("REPEAT(string, n)", "REPEAT('ab', 3)"),
        "replace": ("REPLACE(string, search, replacement)", "REPLACE('hello', 'l', 'L')"),
        "reverse": ("REVERSE(string)", "REVERSE('abc')"),
        "right": ("RIGHT(string, n)", "RIGHT('hello', 2)"),
        "rpad": ("RPAD(string, length, pad)", "RPAD('7', 3, '0')"),
        "rtrim": ("RTRIM(string[, chars])", "RTRIM(' a  ')"),
        "split": ("SPLIT(string, delimiter)", "SPLIT('a,b,,c', ',')"),
        "split_index": ("SPLIT_INDEX(string, delimiter, index)", "SPLIT_INDEX('a,b,c', ',', 1)"),
        "substring": (
            "SUBSTRING(string FROM start [FOR length]), SUBSTR(string, start[, length])",
            "SUBSTRING('hello' FROM 2 FOR 3)",
        ),
        "upper": ("UPPER(string)", "UPPER('hello')"),
    }
)
