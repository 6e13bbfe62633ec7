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
- After a VARIANT-typed constant, the constants of the same SELECT list receive the
  value of an earlier constant (`reducer_handoffs`): `SELECT PARSE_JSON('[1]')[4],
  JSON_STRING(PARSE_JSON('{"a":{"b":[1]}}')['a'])` gives NULL for the second column.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.functions.registry import lookup
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


# ------------------------------------------------------------------ the reducer's hand-off
# Flink 2.3's ExpressionReducer, given the constant expressions Calcite's
# ReduceExpressionsRule found in one Project, evaluates all of them
# except ARRAY/MAP/MULTISET/ROW/STRUCTURED-typed ones in one generated function. Turning
# the results into literals, it walks the same list with a result index that it does not
# advance for a VARIANT constant (the VARIANT keeps its expression). So once a VARIANT
# constant has been passed, the k-th non-VARIANT constant receives the result of the k-th
# evaluated constant, an earlier one. Checked against Flink 2.3.0:
#   SELECT PARSE_JSON('[1]')[5], UPPER('a'), LOWER('B'), CONCAT('p', 'q')
#   -> NULL, 'A' (a NULL for a NOT NULL type keeps the expression), 'A', 'B'.
# A value of another Java class than the receiver's (a VARIANT or a string handed to an INT)
# fails the statement with a ClassCastException; numbers convert as Java narrows them.
# Only SELECT lists are modelled: in a WHERE condition Calcite's simplification first
# rewrites the predicate (`IS NOT NULL` of a NOT NULL COALESCE is TRUE, ranges become a
# Sarg), which removes constants before the reducer sees them.

# Constants the reducer neither evaluates nor counts.
_NOT_EVALUATED = frozenset(("ARRAY", "MAP", "MULTISET", "ROW", "STRUCTURED"))
_NON_CONSTANT, _IRREDUCIBLE, _REDUCIBLE = 0, 1, 2

# (index of the top-level expression, path of argument positions, the constant)
_Found = list[tuple[int, tuple[int, ...], Expr]]


def _add_constant(found: _Found, top: int, path: tuple[int, ...], e: Expr) -> None:
    # Calcite never reduces a CAST of a literal (RexSimplify has made it a literal already).
    if isinstance(e, Call) and e.name in ("cast", "try_cast") and isinstance(e.args[0], Literal):
        return
    found.append((top, path, e))


def _constancy(e: Expr, top: int, path: tuple[int, ...], found: _Found) -> int:
    """Calcite's ReducibleExprLocator: a call is a reducible constant when its operands are
    constants and it is deterministic; the maximal reducible subtrees are collected in the
    order Calcite finds them (a call's constant operands when the call turns out not to be
    constant, after everything found inside its operands)."""
    if isinstance(e, InputRef):
        return _NON_CONSTANT
    if isinstance(e, Literal):
        return _IRREDUCIBLE
    states = [_constancy(a, top, (*path, j), found) for j, a in enumerate(e.args)]
    fn = lookup(e.name)
    if _NON_CONSTANT in states or (fn is not None and not fn.deterministic) or e.name == "row":
        for j, state in enumerate(states):
            if state == _REDUCIBLE:
                _add_constant(found, top, (*path, j), e.args[j])
        return _NON_CONSTANT
    return _REDUCIBLE


def _replaced(e: Expr, top: int, path: tuple[int, ...], repl: dict[tuple[int, tuple[int, ...]], Expr]) -> Expr:
    hit = repl.get((top, path))
    if hit is not None:
        return hit
    if not isinstance(e, Call) or not any(k[0] == top and k[1][: len(path)] == path for k in repl):
        return e
    return Call(e.name, tuple(_replaced(a, top, (*path, j), repl) for j, a in enumerate(e.args)), e.type)


def reducer_handoffs(exprs: list[Expr]) -> list[Expr]:
    """`exprs` (one SELECT list's expressions) with each constant that
    Flink's reducer fills from another constant's result wrapped in `constant_handoff(source,
    itself)` (runtime.functions.variant carries the value over). Unchanged without a
    VARIANT constant followed by another constant."""
    found: _Found = []
    for i, e in enumerate(exprs):
        if _constancy(e, i, (), found) == _REDUCIBLE:
            _add_constant(found, i, (), e)
    evaluated = [f for f in found if f[2].type.name not in _NOT_EVALUATED]
    if not any(c.type.name == "VARIANT" for _, _, c in evaluated):
        return exprs
    repl: dict[tuple[int, tuple[int, ...]], Expr] = {}
    k = 0
    for pos, (top, path, c) in enumerate(evaluated):
        if c.type.name == "VARIANT":
            continue
        if k != pos:
            repl[(top, path)] = Call("constant_handoff", (evaluated[k][2], c), c.type)
        k += 1
    return [_replaced(e, i, (), repl) for i, e in enumerate(exprs)] if repl else exprs
