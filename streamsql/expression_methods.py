"""Function methods of Table API expressions (math, strings, aggregates, composite types),
kept apart from `streamsql.expressions` to keep modules small. `Expression` inherits them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import streamsql.expressions as _x  # noqa: PLW0406 - resolved at call time (circular on purpose)
from streamsql.expression_enums import (
    JsonExistsOnError,
    JsonQueryOnEmptyOrError,
    JsonQueryWrapper,
    JsonType,
    JsonValueOnEmptyOrError,
)

if TYPE_CHECKING:
    from runtime.types import DataType
    from streamsql.expressions import Expression, TimeIntervalUnit


class FunctionMethods:
    """Mixin: every method builds a new Expression (see streamsql.expressions)."""

    if TYPE_CHECKING:  # provided by Expression
        _agg: tuple[str, tuple[Expression, ...], bool] | None

        def _render(self, ctx: Any) -> str: ...

    # ------------------------------------------------------------------ math
    @property
    def abs(self) -> Expression:
        return _x._fn("ABS", self)

    @property
    def sqrt(self) -> Expression:
        return _x._fn("SQRT", self)

    @property
    def exp(self) -> Expression:
        return _x._fn("EXP", self)

    @property
    def ln(self) -> Expression:
        return _x._fn("LN", self)

    @property
    def log10(self) -> Expression:
        return _x._fn("LOG10", self)

    @property
    def log2(self) -> Expression:
        return _x._fn("LOG2", self)

    def log(self, base: Any = None) -> Expression:
        return _x._fn("LOG", self) if base is None else _x._fn("LOG", base, self)

    def power(self, other: Any) -> Expression:
        return _x._fn("POWER", self, other)

    @property
    def sign(self) -> Expression:
        return _x._fn("SIGN", self)

    @property
    def sin(self) -> Expression:
        return _x._fn("SIN", self)

    @property
    def cos(self) -> Expression:
        return _x._fn("COS", self)

    @property
    def tan(self) -> Expression:
        return _x._fn("TAN", self)

    @property
    def degrees(self) -> Expression:
        return _x._fn("DEGREES", self)

    @property
    def radians(self) -> Expression:
        return _x._fn("RADIANS", self)

    def round(self, places: Any = None) -> Expression:
        return _x._fn("ROUND", self) if places is None else _x._fn("ROUND", self, places)

    def truncate(self, n: Any = None) -> Expression:
        return _x._fn("TRUNCATE", self) if n is None else _x._fn("TRUNCATE", self, n)

    def floor(self, time_interval_unit: TimeIntervalUnit | None = None) -> Expression:
        """FLOOR(x), or FLOOR(x TO unit) for a temporal value."""
        unit = time_interval_unit
        if unit is None:
            return _x._fn("FLOOR", self)
        a = self
        return _x.Expression(lambda c: f"FLOOR({a._render(c)} TO {_x._unit(unit)})")

    def ceil(self, time_interval_unit: TimeIntervalUnit | None = None) -> Expression:
        unit = time_interval_unit
        if unit is None:
            return _x._fn("CEIL", self)
        a = self
        return _x.Expression(lambda c: f"CEIL({a._render(c)} TO {_x._unit(unit)})")

    @property
    def hex(self) -> Expression:
        return _x._fn("HEX", self)

    # ------------------------------------------------------------------ strings
    @property
    def upper_case(self) -> Expression:
        return _x._fn("UPPER", self)

    @property
    def lower_case(self) -> Expression:
        return _x._fn("LOWER", self)

    @property
    def init_cap(self) -> Expression:
        return _x._fn("INITCAP", self)

    @property
    def char_length(self) -> Expression:
        return _x._fn("CHAR_LENGTH", self)

    def trim(self, character: Any = None) -> Expression:
        return self._trim("BOTH", character)

    def trim_leading(self, character: Any = None) -> Expression:
        return self._trim("LEADING", character)

    def trim_trailing(self, character: Any = None) -> Expression:
        return self._trim("TRAILING", character)

    def _trim(self, side: str, character: Any) -> Expression:
        a = self
        ch = _x._e(" " if character is None else character)
        return _x.Expression(lambda c: f"TRIM({side} {ch._render(c)} FROM {a._render(c)})")

    def ltrim(self, trim_str: Any = None) -> Expression:
        return _x._fn("LTRIM", self) if trim_str is None else _x._fn("LTRIM", self, trim_str)

    def rtrim(self, trim_str: Any = None) -> Expression:
        return _x._fn("RTRIM", self) if trim_str is None else _x._fn("RTRIM", self, trim_str)

    def btrim(self, trim_str: Any = None) -> Expression:
        return _x._fn("BTRIM", self) if trim_str is None else _x._fn("BTRIM", self, trim_str)

    def substring(self, begin_index: Any, length: Any = None) -> Expression:
        a, b = self, _x._e(begin_index)
        if length is None:
            return _x.Expression(lambda c: f"SUBSTRING({a._render(c)} FROM {b._render(c)})")
        n = _x._e(length)
        return _x.Expression(lambda c: f"SUBSTRING({a._render(c)} FROM {b._render(c)} FOR {n._render(c)})")

    substr = substring

    def replace(self, search: Any, replacement: Any) -> Expression:
        return _x._fn("REPLACE", self, search, replacement)

    def position(self, haystack: Any) -> Expression:
        a, h = self, _x._e(haystack)
        return _x.Expression(lambda c: f"POSITION({a._render(c)} IN {h._render(c)})")

    def lpad(self, length: Any, pad: Any) -> Expression:
        return _x._fn("LPAD", self, length, pad)

    def rpad(self, length: Any, pad: Any) -> Expression:
        return _x._fn("RPAD", self, length, pad)

    def repeat(self, n: Any) -> Expression:
        return _x._fn("REPEAT", self, n)

    def regexp_replace(self, regex: Any, replacement: Any) -> Expression:
        return _x._fn("REGEXP_REPLACE", self, regex, replacement)

    def regexp_extract(self, regex: Any, extract_index: Any = None) -> Expression:
        return (
            _x._fn("REGEXP_EXTRACT", self, regex)
            if extract_index is None
            else _x._fn("REGEXP_EXTRACT", self, regex, extract_index)
        )

    def regexp(self, regex: Any) -> Expression:
        return _x._fn("REGEXP", self, regex)

    def split_index(self, separator: Any, index: Any) -> Expression:
        return _x._fn("SPLIT_INDEX", self, separator, index)

    def concat(self, other: Any) -> Expression:
        return _x._bin("||", self, other)

    def starts_with(self, start_expr: Any) -> Expression:
        return _x._fn("STARTSWITH", self, start_expr)

    def ends_with(self, end_expr: Any) -> Expression:
        return _x._fn("ENDSWITH", self, end_expr)

    @property
    def md5(self) -> Expression:
        return _x._fn("MD5", self)

    @property
    def to_base64(self) -> Expression:
        return _x._fn("TO_BASE64", self)

    @property
    def from_base64(self) -> Expression:
        return _x._fn("FROM_BASE64", self)

    # ------------------------------------------------------------------ aggregates
    def _aggregate(self, fn: str, *extra: Any) -> Expression:
        args = (cast("Expression", self), *(_x._e(x) for x in extra))
        return _x._agg_expr(fn, args, False)

    @property
    def count(self) -> Expression:
        return self._aggregate("COUNT")

    @property
    def sum(self) -> Expression:
        return self._aggregate("SUM")

    @property
    def sum0(self) -> Expression:
        a = self._aggregate("SUM")
        return _x.Expression(lambda c: f"COALESCE({a._render(c)}, 0)", agg=a._agg)

    @property
    def avg(self) -> Expression:
        return self._aggregate("AVG")

    @property
    def min(self) -> Expression:
        return self._aggregate("MIN")

    @property
    def max(self) -> Expression:
        return self._aggregate("MAX")

    @property
    def stddev_pop(self) -> Expression:
        return self._aggregate("STDDEV_POP")

    @property
    def stddev_samp(self) -> Expression:
        return self._aggregate("STDDEV_SAMP")

    @property
    def var_pop(self) -> Expression:
        return self._aggregate("VAR_POP")

    @property
    def var_samp(self) -> Expression:
        return self._aggregate("VAR_SAMP")

    @property
    def collect(self) -> Expression:
        return self._aggregate("COLLECT")

    @property
    def first_value(self) -> Expression:
        return self._aggregate("FIRST_VALUE")

    @property
    def last_value(self) -> Expression:
        return self._aggregate("LAST_VALUE")

    def list_agg(self, separator: Any = None) -> Expression:
        return self._aggregate("LISTAGG") if separator is None else self._aggregate("LISTAGG", separator)

    @property
    def distinct(self) -> Expression:
        """`col('a').count.distinct` → COUNT(DISTINCT a)."""
        if self._agg is None:
            raise _x._validation(
                "distinct can only be applied to an aggregate expression, e.g. col('a').count.distinct"
            )
        fn, args, _ = self._agg
        return _x._agg_expr(fn, args, True)

    # ------------------------------------------------------------------ composite types
    def get(self, name_or_index: Any) -> Expression:
        """A field of a ROW by name, or by position counted from 0 (PyFlink's `get`, Flink's
        built-in GET); `at` is the 1-based ARRAY / key-based MAP access."""
        a = self
        if isinstance(name_or_index, str):
            return _x.Expression(lambda c: f"{a._render(c)}.{_x.quote(name_or_index)}")
        return _x._fn("GET", self, name_or_index)

    def at(self, index: Any) -> Expression:
        a, i = self, _x._e(index)
        return _x.Expression(lambda c: f"{a._render(c)}[{i._render(c)}]")

    @property
    def cardinality(self) -> Expression:
        return _x._fn("CARDINALITY", self)

    @property
    def element(self) -> Expression:
        return _x._fn("ELEMENT", self)

    # ------------------------------------------------------------------ more math
    @property
    def acos(self) -> Expression:
        return _x._fn("ACOS", self)

    @property
    def asin(self) -> Expression:
        return _x._fn("ASIN", self)

    @property
    def atan(self) -> Expression:
        return _x._fn("ATAN", self)

    @property
    def cot(self) -> Expression:
        return _x._fn("COT", self)

    @property
    def cosh(self) -> Expression:
        return _x._fn("COSH", self)

    @property
    def sinh(self) -> Expression:
        return _x._fn("SINH", self)

    @property
    def tanh(self) -> Expression:
        return _x._fn("TANH", self)

    @property
    def bin(self) -> Expression:
        return _x._fn("BIN", self)

    @property
    def unhex(self) -> Expression:
        return _x._fn("UNHEX", self)

    # ------------------------------------------------------------------ more strings
    @property
    def ascii(self) -> Expression:
        return _x._fn("ASCII", self)

    @property
    def chr(self) -> Expression:
        return _x._fn("CHR", self)

    @property
    def reverse(self) -> Expression:
        return _x._fn("REVERSE", self)

    def decode(self, charset: Any) -> Expression:
        return _x._fn("DECODE", self, charset)

    def encode(self, charset: Any) -> Expression:
        return _x._fn("ENCODE", self, charset)

    def left(self, length: Any) -> Expression:
        return _x._fn("LEFT", self, length)

    def right(self, length: Any) -> Expression:
        return _x._fn("RIGHT", self, length)

    def instr(self, s: Any) -> Expression:
        return _x._fn("INSTR", self, s)

    def locate(self, s: Any, pos: Any = None) -> Expression:
        """LOCATE(self, s[, pos]): where `self` first occurs in `s` (PyFlink's argument order)."""
        return _x._fn("LOCATE", self, s) if pos is None else _x._fn("LOCATE", self, s, pos)

    def overlay(self, new_string: Any, starting: Any, length: Any = None) -> Expression:
        a, n, st = self, _x._e(new_string), _x._e(starting)
        ln = None if length is None else _x._e(length)

        def render(c: Any) -> str:
            tail = "" if ln is None else f" FOR {ln._render(c)}"
            return f"OVERLAY({a._render(c)} PLACING {n._render(c)} FROM {st._render(c)}{tail})"

        return _x.Expression(render)

    def translate(self, from_str: Any, to_str: Any) -> Expression:
        return _x._fn("TRANSLATE", self, from_str, to_str)

    def url_decode(self) -> Expression:
        return _x._fn("URL_DECODE", self)

    def url_encode(self) -> Expression:
        return _x._fn("URL_ENCODE", self)

    def parse_url(self, part_to_extract: Any, key: Any = None) -> Expression:
        return (
            _x._fn("PARSE_URL", self, part_to_extract)
            if key is None
            else _x._fn("PARSE_URL", self, part_to_extract, key)
        )

    def printf(self, *obj: Any) -> Expression:
        return _x._fn("PRINTF", self, *obj)

    def elt(self, expr: Any, *exprs: Any) -> Expression:
        """ELT(self, expr, *exprs): the self-th of the following expressions."""
        return _x._fn("ELT", self, expr, *exprs)

    def split(self, delimiter: Any) -> Expression:
        return _x._fn("SPLIT", self, delimiter)

    def str_to_map(self, list_delimiter: Any = None, key_value_delimiter: Any = None) -> Expression:
        if list_delimiter is None:
            return _x._fn("STR_TO_MAP", self)
        return _x._fn("STR_TO_MAP", self, list_delimiter, key_value_delimiter)

    def regexp_count(self, regex: Any) -> Expression:
        return _x._fn("REGEXP_COUNT", self, regex)

    def regexp_extract_all(self, regex: Any, extract_index: Any = None) -> Expression:
        return (
            _x._fn("REGEXP_EXTRACT_ALL", self, regex)
            if extract_index is None
            else _x._fn("REGEXP_EXTRACT_ALL", self, regex, extract_index)
        )

    def regexp_instr(self, regex: Any) -> Expression:
        return _x._fn("REGEXP_INSTR", self, regex)

    def regexp_substr(self, regex: Any) -> Expression:
        return _x._fn("REGEXP_SUBSTR", self, regex)

    def inet_aton(self) -> Expression:
        return _x._fn("INET_ATON", self)

    def inet_ntoa(self) -> Expression:
        return _x._fn("INET_NTOA", self)

    # ------------------------------------------------------------------ hashes
    @property
    def sha1(self) -> Expression:
        return _x._fn("SHA1", self)

    @property
    def sha224(self) -> Expression:
        return _x._fn("SHA224", self)

    @property
    def sha256(self) -> Expression:
        return _x._fn("SHA256", self)

    @property
    def sha384(self) -> Expression:
        return _x._fn("SHA384", self)

    @property
    def sha512(self) -> Expression:
        return _x._fn("SHA512", self)

    def sha2(self, hash_length: Any) -> Expression:
        return _x._fn("SHA2", self, hash_length)

    # ------------------------------------------------------------------ JSON
    def is_json(self, json_type: JsonType | None = None) -> Expression:
        a = self
        suffix = "" if json_type is None else f" {json_type.value}"
        return _x.Expression(lambda c: f"({a._render(c)} IS JSON{suffix})")

    def json_exists(self, path: str, on_error: JsonExistsOnError | None = None) -> Expression:
        a, p = self, _x._e(path)
        tail = "" if on_error is None else f" {on_error.value} ON ERROR"
        return _x.Expression(lambda c: f"JSON_EXISTS({a._render(c)}, {p._render(c)}{tail})")

    def json_value(
        self,
        path: str,
        returning_type: DataType | None = None,
        on_empty: JsonValueOnEmptyOrError = JsonValueOnEmptyOrError.NULL,
        default_on_empty: Any = None,
        on_error: JsonValueOnEmptyOrError = JsonValueOnEmptyOrError.NULL,
        default_on_error: Any = None,
    ) -> Expression:
        """JSON_VALUE(self, path RETURNING type {NULL|ERROR|DEFAULT x} ON EMPTY ... ON ERROR)."""
        a, p = self, _x._e(path)
        d_empty = None if default_on_empty is None else _x._e(default_on_empty)
        d_error = None if default_on_error is None else _x._e(default_on_error)

        def behaviour(kind: JsonValueOnEmptyOrError, default: Expression | None, c: Any) -> str:
            if kind is JsonValueOnEmptyOrError.DEFAULT:
                return f"DEFAULT {default._render(c) if default is not None else 'NULL'}"
            return kind.value

        def render(c: Any) -> str:
            ret = "" if returning_type is None else f" RETURNING {_x.type_sql(returning_type)}"
            return (
                f"JSON_VALUE({a._render(c)}, {p._render(c)}{ret} {behaviour(on_empty, d_empty, c)} ON EMPTY "
                f"{behaviour(on_error, d_error, c)} ON ERROR)"
            )

        return _x.Expression(render)

    def json_query(
        self,
        path: str,
        wrapping_behavior: JsonQueryWrapper = JsonQueryWrapper.WITHOUT_ARRAY,
        on_empty: JsonQueryOnEmptyOrError = JsonQueryOnEmptyOrError.NULL,
        on_error: JsonQueryOnEmptyOrError = JsonQueryOnEmptyOrError.NULL,
    ) -> Expression:
        a, p = self, _x._e(path)
        return _x.Expression(
            lambda c: (
                f"JSON_QUERY({a._render(c)}, {p._render(c)} {wrapping_behavior.value} WRAPPER "
                f"{on_empty.value} ON EMPTY {on_error.value} ON ERROR)"
            )
        )

    def json_quote(self) -> Expression:
        return _x._fn("JSON_QUOTE", self)

    def json_unquote(self) -> Expression:
        return _x._fn("JSON_UNQUOTE", self)

    # ------------------------------------------------------------------ collections
    def array_append(self, addition: Any) -> Expression:
        return _x._fn("ARRAY_APPEND", self, addition)

    def array_prepend(self, addition: Any) -> Expression:
        return _x._fn("ARRAY_PREPEND", self, addition)

    def array_concat(self, *arrays: Any) -> Expression:
        return _x._fn("ARRAY_CONCAT", self, *arrays)

    def array_contains(self, needle: Any) -> Expression:
        return _x._fn("ARRAY_CONTAINS", self, needle)

    def array_distinct(self) -> Expression:
        return _x._fn("ARRAY_DISTINCT", self)

    def array_except(self, array: Any) -> Expression:
        return _x._fn("ARRAY_EXCEPT", self, array)

    def array_intersect(self, array: Any) -> Expression:
        return _x._fn("ARRAY_INTERSECT", self, array)

    def array_union(self, array: Any) -> Expression:
        return _x._fn("ARRAY_UNION", self, array)

    def array_join(self, delimiter: Any, null_replacement: Any = None) -> Expression:
        if null_replacement is None:
            return _x._fn("ARRAY_JOIN", self, delimiter)
        return _x._fn("ARRAY_JOIN", self, delimiter, null_replacement)

    def array_max(self) -> Expression:
        return _x._fn("ARRAY_MAX", self)

    def array_min(self) -> Expression:
        return _x._fn("ARRAY_MIN", self)

    def array_position(self, needle: Any) -> Expression:
        return _x._fn("ARRAY_POSITION", self, needle)

    def array_remove(self, needle: Any) -> Expression:
        return _x._fn("ARRAY_REMOVE", self, needle)

    def array_reverse(self) -> Expression:
        return _x._fn("ARRAY_REVERSE", self)

    def array_slice(self, start_offset: Any, end_offset: Any = None) -> Expression:
        if end_offset is None:
            return _x._fn("ARRAY_SLICE", self, start_offset)
        return _x._fn("ARRAY_SLICE", self, start_offset, end_offset)

    def array_sort(self, ascending_order: Any = None, null_first: Any = None) -> Expression:
        args = [x for x in (ascending_order, null_first) if x is not None]
        return _x._fn("ARRAY_SORT", self, *args)

    @property
    def map_keys(self) -> Expression:
        return _x._fn("MAP_KEYS", self)

    @property
    def map_values(self) -> Expression:
        return _x._fn("MAP_VALUES", self)

    @property
    def map_entries(self) -> Expression:
        return _x._fn("MAP_ENTRIES", self)

    def map_union(self, *maps: Any) -> Expression:
        return _x._fn("MAP_UNION", self, *maps)

    @property
    def flatten(self) -> Expression:
        """All fields of a composite value as columns (`r.*`)."""
        a = self
        return _x.Expression(lambda c: f"{a._render(c)}.*")

    def object_update(self, *kv: Any) -> Expression:
        return _x._fn("OBJECT_UPDATE", self, *kv)

    def as_argument(self, name: str) -> Expression:
        """A named argument of a function call (`name => value`)."""
        a = self
        return _x.Expression(lambda c: f"{name} => {a._render(c)}")

    # ------------------------------------------------------------------ more aggregates
    @property
    def array_agg(self) -> Expression:
        return self._aggregate("ARRAY_AGG")

    def percentile(self, percentage: Any, frequency: Any = None) -> Expression:
        return (
            self._aggregate("PERCENTILE", percentage)
            if frequency is None
            else self._aggregate("PERCENTILE", percentage, frequency)
        )

    # ------------------------------------------------------------------ bitmaps
    def bitmap_build(self) -> Expression:
        return _x._fn("BITMAP_BUILD", self)

    def bitmap_cardinality(self) -> Expression:
        return _x._fn("BITMAP_CARDINALITY", self)

    def bitmap_from_bytes(self) -> Expression:
        return _x._fn("BITMAP_FROM_BYTES", self)

    def bitmap_to_array(self) -> Expression:
        return _x._fn("BITMAP_TO_ARRAY", self)

    def bitmap_to_bytes(self) -> Expression:
        return _x._fn("BITMAP_TO_BYTES", self)

    def bitmap_to_string(self) -> Expression:
        return _x._fn("BITMAP_TO_STRING", self)

    def bitmap_and(self, bitmap2: Any) -> Expression:
        return _x._fn("BITMAP_AND", self, bitmap2)

    def bitmap_andnot(self, bitmap2: Any) -> Expression:
        return _x._fn("BITMAP_ANDNOT", self, bitmap2)

    def bitmap_or(self, bitmap2: Any) -> Expression:
        return _x._fn("BITMAP_OR", self, bitmap2)

    def bitmap_xor(self, bitmap2: Any) -> Expression:
        return _x._fn("BITMAP_XOR", self, bitmap2)

    def bitmap_build_agg(self) -> Expression:
        return self._aggregate("BITMAP_BUILD_AGG")

    def bitmap_build_cardinality_agg(self) -> Expression:
        return self._aggregate("BITMAP_BUILD_CARDINALITY_AGG")

    def bitmap_and_agg(self) -> Expression:
        return self._aggregate("BITMAP_AND_AGG")

    def bitmap_and_cardinality_agg(self) -> Expression:
        return self._aggregate("BITMAP_AND_CARDINALITY_AGG")

    def bitmap_or_agg(self) -> Expression:
        return self._aggregate("BITMAP_OR_AGG")

    def bitmap_or_cardinality_agg(self) -> Expression:
        return self._aggregate("BITMAP_OR_CARDINALITY_AGG")

    def bitmap_xor_agg(self) -> Expression:
        return self._aggregate("BITMAP_XOR_AGG")

    def bitmap_xor_cardinality_agg(self) -> Expression:
        return self._aggregate("BITMAP_XOR_CARDINALITY_AGG")
