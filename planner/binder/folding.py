"""What Flink's planner does to constant expressions before a job runs, where it changes
the answer.

Flink simplifies every expression with Calcite's `RexSimplify` and reduces constant calls
while planning (its `ExpressionReducer` runs the generated code once and turns the result
into a literal). Most of that is invisible: the runtime kernels compute the same value
later. These rules are the exceptions, each an answer the Flink 2.3 oracle corpus
(tests/conformance/functions) records:

- `x = x` (also `<=`, `>=`) over the same expression is `NULL OR x IS NOT NULL`, and
  `x <> x` (also `<`, `>`) is `NULL AND x IS NULL`: Calcite never compares the values, so
  `CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)` is TRUE. This holds even for a
  nondeterministic x (`UUID() <> UUID()` is FALSE): Flink's Calc is a Calcite RexProgram,
  which registers equal subexpressions once, as one local reference, and simplifies
  `$t0 <> $t0` (a reference counts as deterministic). Separate columns `RAND(), RAND()` still
  get two values (the generated code expands each reference again).
- Two string literals are compared by Calcite as Java Strings, in UTF-16 code units:
  `'😀' > '￿'` is FALSE (over columns Flink compares UTF-8 bytes, i.e. code points).
- A CAST of an exact numeric literal keeps its decimal value through a chain of casts
  to FLOAT/DOUBLE (Calcite's literal holds a BigDecimal): `CAST(CAST(0.1 AS FLOAT) AS
  DOUBLE)` is 0.1, not 0.10000000149011612.
- A TRY_CAST of a numeric literal to FLOAT that overflows fails planning: the reducer
  cannot turn Infinity back into a literal (`NumberFormatException: Infinite or NaN`).
- `ARRAY[...][i]` / `MAP[...][k]` over constructors of literals whose element type is
  NOT NULL, with an index out of range or a missing key, reduce to the Java primitive
  default the generated code starts from (`-1`, `-1.0`, `FALSE`, `''`), not NULL.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from runtime.expr.ir import Call, Expr, Literal
from runtime.types import BOOLEAN, DataType

_SAME_OPERAND = {
    "equals": True,
    "less_than_or_equal": True,
    "greater_than_or_equal": True,
    "not_equals": False,
    "less_than": False,
    "greater_than": False,
}

_COMPARE = {
    "equals": lambda c: c == 0,
    "not_equals": lambda c: c != 0,
    "less_than": lambda c: c < 0,
    "less_than_or_equal": lambda c: c <= 0,
    "greater_than": lambda c: c > 0,
    "greater_than_or_equal": lambda c: c >= 0,
}

_FLOAT_MAX = 3.4028234663852886e38

# The value Flink's generated code holds for a NOT NULL result before it is assigned
# (CodeGenUtils.primitiveDefaultValue), by type name.
_PRIMITIVE_DEFAULT: dict[str, object] = {
    "TINYINT": -1,
    "SMALLINT": -1,
    "INT": -1,
    "BIGINT": -1,
    "FLOAT": -1.0,
    "DOUBLE": -1.0,
    "BOOLEAN": False,
    "CHAR": "",
    "VARCHAR": "",
}


def _same(a: Expr, b: Expr) -> bool:
    try:
        return bool(a == b)
    except TypeError:  # pragma: no cover - unhashable/uncomparable literal values
        return False


def fold_comparison(name: str, args: list[Expr]) -> Expr | None:
    """A comparison Flink's planner decides without comparing values, or None."""
    if name not in _COMPARE or len(args) != 2:
        return None
    a, b = args
    if _same(a, b):
        reflexive = _SAME_OPERAND[name]
        if not a.type.nullable:
            return Literal(reflexive, BOOLEAN(nullable=False))
        # NULL OR x IS NOT NULL  /  NULL AND x IS NULL
        test = Call("is_not_null" if reflexive else "is_null", (a,), BOOLEAN(nullable=False))
        return Call("or" if reflexive else "and", (Literal(None, BOOLEAN()), test), BOOLEAN())
    if (
        isinstance(a, Literal)
        and isinstance(b, Literal)
        and a.type.is_string
        and b.type.is_string
        and isinstance(a.value, str)
        and isinstance(b.value, str)
    ):
        x, y = _java_string(a), _java_string(b)
        if x == y:
            return None  # equal or padded-equal: the runtime's CHAR rules decide
        ux, uy = x.encode("utf-16-be"), y.encode("utf-16-be")
        c = (ux > uy) - (ux < uy)
        return Literal(bool(_COMPARE[name](c)), BOOLEAN(nullable=False))
    return None


def _java_string(lit: Literal) -> str:
    """A CHAR(n) literal's value as Calcite holds it (padded to n)."""
    value = str(lit.value)
    if lit.type.name == "CHAR" and lit.type.precision is not None and len(value) < lit.type.precision:
        value = value.ljust(lit.type.precision)
    return value


def _exact_value(e: Expr) -> Decimal | None:
    """The decimal value of an exact numeric literal, seen through casts to FLOAT/DOUBLE."""
    if (
        isinstance(e, Literal)
        and e.value is not None
        and e.type.name in ("DECIMAL", "TINYINT", "SMALLINT", "INT", "BIGINT")
    ):
        try:
            return Decimal(str(e.value))
        except InvalidOperation:  # pragma: no cover - a literal's value is a number
            return None
    if isinstance(e, Call) and e.name == "cast" and e.type.name in ("FLOAT", "DOUBLE") and len(e.args) == 1:
        return _exact_value(e.args[0])
    return None


class PlanningFoldError(Exception):
    """Flink's planner fails while reducing a constant expression (the message is Flink's)."""


def fold_cast(name: str, inner: Expr, target: DataType) -> Expr | None:
    """A CAST / TRY_CAST of a literal that Flink's planner reduces to another answer than
    the runtime cast would give, or None."""
    if target.name not in ("FLOAT", "DOUBLE"):
        return None
    if name == "try_cast" and target.name == "FLOAT" and isinstance(inner, Literal) and inner.type.is_numeric:
        if inner.value is not None and abs(float(inner.value)) > _FLOAT_MAX:
            raise PlanningFoldError("java.lang.NumberFormatException: Infinite or NaN")
        return None
    if name == "cast" and target.name == "DOUBLE" and isinstance(inner, Call) and inner.name == "cast":
        exact = _exact_value(inner)
        if exact is not None:
            return Literal(float(exact), target.with_nullable(False))
    return None


def fold_item(container: Expr, index: Expr, result: DataType) -> Expr | None:
    """`ARRAY[...][i]` / `MAP[...][k]` over literal constructors: the primitive default
    where Flink's reduced code finds no element, or None (the runtime answers)."""
    if not isinstance(index, Literal) or index.value is None:
        return None
    if not isinstance(container, Call) or container.name not in ("array", "map"):
        return None
    if not all(isinstance(a, Literal) for a in container.args):
        return None
    element = container.type.children[0] if container.name == "array" else container.type.children[1]
    if element.nullable or element.name not in _PRIMITIVE_DEFAULT:
        return None
    if container.name == "array":
        if not isinstance(index.value, int) or 1 <= index.value <= len(container.args):
            return None
    else:
        keys = [a.value for a in container.args[0::2] if isinstance(a, Literal)]
        if any(_key_matches(k, index) for k in keys):
            return None
    return Literal(_PRIMITIVE_DEFAULT[element.name], result.with_nullable(False))


def _key_matches(key: object, index: Literal) -> bool:
    if isinstance(key, str) and isinstance(index.value, str):
        return key.rstrip(" ") == index.value.rstrip(" ")
    try:
        return bool(Decimal(str(key)) == Decimal(str(index.value)))
    except InvalidOperation:
        return key == index.value
