"""Function methods of Table API expressions (math, strings, aggregates, composite types),
kept apart from `streamsql.expressions` to keep modules small. `Expression` inherits them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import streamsql.expressions as _x  # noqa: PLW0406 - resolved at call time (circular on purpose)

if TYPE_CHECKING:
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

    def floor(self, unit: TimeIntervalUnit | None = None) -> Expression:
        """FLOOR(x), or FLOOR(x TO unit) for a temporal value."""
        if unit is None:
            return _x._fn("FLOOR", self)
        a = self
        return _x.Expression(lambda c: f"FLOOR({a._render(c)} TO {_x._unit(unit)})")

    def ceil(self, unit: TimeIntervalUnit | None = None) -> Expression:
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

    def ltrim(self) -> Expression:
        return _x._fn("LTRIM", self)

    def rtrim(self) -> Expression:
        return _x._fn("RTRIM", self)

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

    def starts_with(self, prefix: Any) -> Expression:
        return _x._fn("STARTSWITH", self, prefix)

    def ends_with(self, suffix: Any) -> Expression:
        return _x._fn("ENDSWITH", self, suffix)

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
        a = self
        if isinstance(name_or_index, str):
            return _x.Expression(lambda c: f"{a._render(c)}.{_x.quote(name_or_index)}")
        return self.at(name_or_index)

    def at(self, index: Any) -> Expression:
        a, i = self, _x._e(index)
        return _x.Expression(lambda c: f"{a._render(c)}[{i._render(c)}]")

    @property
    def cardinality(self) -> Expression:
        return _x._fn("CARDINALITY", self)

    @property
    def element(self) -> Expression:
        return _x._fn("ELEMENT", self)
