"""Pattern matching: LIKE and SIMILAR TO (with an optional ESCAPE character).

Both translate the SQL pattern to an anchored RE2 regex once per distinct pattern and match
the whole column with Arrow's `match_substring_regex`. A pattern that is a column is
handled by grouping rows by their distinct pattern values.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import calcite_name, null_mask, to_array
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import BOOLEAN, DataType

_RE_SPECIAL = set("\\.^$|?*+()[]{}")


def _quote(c: str) -> str:
    return "\\" + c if c in _RE_SPECIAL else c


def like_to_regex(pattern: str, escape: str | None = None) -> str:
    """SQL LIKE pattern → anchored regex: `%` any sequence, `_` any one character."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape:
            if i + 1 >= len(pattern):
                raise EvaluationError(f"Invalid escape sequence '{pattern}', {i}")
            nxt = pattern[i + 1]
            if nxt not in ("%", "_", escape):
                raise EvaluationError(f"Invalid escape sequence '{pattern}', {i}")
            out.append(_quote(nxt))
            i += 2
            continue
        if c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(_quote(c))
        i += 1
    return "(?s)^" + "".join(out) + "$"


def similar_to_regex(pattern: str, escape: str | None = None) -> str:
    """SQL SIMILAR TO pattern → anchored regex: `%`/`_` as in LIKE, `| * + ? {m,n} ( ) [...]`
    and `.` as in regular expressions (as Flink has it), every other character literal."""
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape:
            if i + 1 >= len(pattern):
                raise EvaluationError(f"Invalid escape sequence '{pattern}', {i}")
            out.append(_quote(pattern[i + 1]))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c if c not in "\\" else "\\\\")
        elif c == "[":
            in_class = True
            out.append(c)
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c in "|*+?{}(),.":
            # '.' too: Flink (Calcite's sqlToRegexSimilar) leaves it a regex wildcard, so
            # 'abc' SIMILAR TO 'a.c' is TRUE
            out.append(c)
        else:
            out.append(_quote(c))
        i += 1
    return "(?s)^(?:" + "".join(out) + ")$"


def _infer(name: str):
    def infer(types: list[DataType]) -> DataType:
        if len(types) not in (2, 3):
            raise FunctionTypeError(f"Invalid number of arguments to '{name}'")
        for t in types:
            if not (t.is_string or t.name == "NULL"):
                sig = f" {name} ".join(f"<{calcite_name(x)}>" for x in types[:2])
                raise FunctionTypeError(
                    f"Cannot apply '{name}' to arguments of type '{sig}'. Supported form(s): '<STRING> {name} <STRING>'"
                )
        return BOOLEAN(any(t.nullable for t in types))

    return infer


def _match(translate):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        n = ctx.num_rows
        if any(t.name == "NULL" for t in types):
            return pa.nulls(n, pa.bool_())
        x = args[0]
        escape: str | None = translate.default_escape
        if len(args) == 3:
            if not isinstance(args[2], pa.Scalar):
                return _match_escape_column(translate, x, args[1], args[2], n)
            escape = args[2].as_py()
            if escape is None:
                return pa.nulls(n, pa.bool_())
            _check_escape(escape)
        pattern = args[1]
        if isinstance(pattern, pa.Scalar):
            if not pattern.is_valid:
                return pa.nulls(n, pa.bool_())
            return pc.match_substring_regex(x, translate(pattern.as_py(), escape))
        # a column of patterns: one regex per distinct pattern
        xs = to_array(x, n)
        pats = to_array(pattern, n)
        result = np.zeros(n, dtype=bool)
        nulls = null_mask(xs) | null_mask(pats)
        encoded = pc.dictionary_encode(pats)
        codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
        for code, p in enumerate(encoded.dictionary.to_pylist()):
            rows = np.flatnonzero(codes == code)
            if len(rows) == 0:
                continue
            m = pc.match_substring_regex(xs.take(pa.array(rows)), translate(p, escape))
            result[rows] = pc.fill_null(m, False).to_numpy(zero_copy_only=False)
        return pa.array(result, pa.bool_(), mask=nulls)

    return kernel


def _check_escape(escape: str) -> None:
    if len(escape) != 1:
        raise EvaluationError(f"Invalid escape character '{escape}'")


def _match_escape_column(translate, x: ArgValue, pattern: ArgValue, escape: pa.Array, n: int) -> pa.Array:
    """LIKE / SIMILAR TO with an ESCAPE that is a column: one regex per distinct (pattern,
    escape) pair, as Flink evaluates such a call row by row (SqlLikeUtils)."""
    xs, pats, escs = to_array(x, n), to_array(pattern, n).cast(pa.string()), escape.cast(pa.string())
    nulls = null_mask(xs) | null_mask(pats) | null_mask(escs)
    bad = pc.fill_null(pc.not_equal(pc.utf8_length(escs), 1), False).to_numpy(zero_copy_only=False) & ~nulls
    if bad.any():
        _check_escape(escs[int(np.flatnonzero(bad)[0])].as_py())
    # the escape is one character, so "<escape><pattern>" identifies the pair
    keys = pc.binary_join_element_wise(escs, pats, "")
    encoded = pc.dictionary_encode(keys)
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    result = np.zeros(n, dtype=bool)
    for code, key in enumerate(encoded.dictionary.to_pylist()):
        rows = np.flatnonzero(codes == code)
        if len(rows):
            m = pc.match_substring_regex(xs.take(pa.array(rows)), translate(key[1:], key[0]))
            result[rows] = pc.fill_null(m, False).to_numpy(zero_copy_only=False)
    return pa.array(result, pa.bool_(), mask=nulls)


# Flink 2.3 (FLINK-39424): LIKE has no default escape character
like_to_regex.default_escape = None  # type: ignore[attr-defined]
similar_to_regex.default_escape = None  # type: ignore[attr-defined]

scalar("like", _infer("LIKE"))(_match(like_to_regex))
scalar("similar_to", _infer("SIMILAR TO"))(_match(similar_to_regex))


# docs/functions.md: signature and one example per function of this module
document(
    {
        "like": ("string [NOT] LIKE pattern [ESCAPE c]", "'abc' LIKE 'a%'"),
        "similar_to": ("string [NOT] SIMILAR TO pattern [ESCAPE c]", "'abc' SIMILAR TO 'a(b|x)c'"),
    }
)
