"""Scalar expressions: a sqlglot expression over a scope → typed runtime IR.

SQL syntax maps to the canonical function names of docs/architecture.md; every call's
result type comes from the function registry (`lookup(name).infer`), so typing and
computing cannot disagree. Aggregates and legacy window properties are delegated to an
`agg` handler (see `planner.binder.aggregates`), which is absent where they are illegal.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from decimal import Decimal
from typing import Protocol

from sqlglot import exp

from planner.binder import folding, json_sql
from planner.binder.datatypes import to_data_type
from planner.binder.scope import Scope, error
from planner.binder.types import calcite_signature, common_type, negate_literal, number_literal, plain
from planner.binder.udf_calls import scalar_udf_call
from planner.dialect.flink import is_typed_literal
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.functions_catalog import lookup_function, lookup_function_path
from runtime.aggregates.types import AGGREGATE_FUNCTIONS
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.functions._common import calcite_name
from runtime.functions.cast import cast_hint, cast_refusal
from runtime.functions.registry import FunctionTypeError, lookup
from runtime.types import (
    BOOLEAN,
    CHAR,
    INTERVAL_DAY_TIME,
    INTERVAL_YEAR_MONTH,
    NULL,
    STRING,
    TIMESTAMP_LTZ,
    DataType,
)

# The execution mode of the statement being bound ("STREAMING" | "BATCH"; set by
# `planner.binder.bind_query`), for the expression rules that depend on it: CURRENT_WATERMARK
# needs a rowtime attribute, which a BATCH query does not have.
BINDING_MODE: ContextVar[str] = ContextVar("streamsql_binding_mode", default="STREAMING")

# Legacy group-window auxiliary functions: name → (window kind, property).
WINDOW_PROPERTY_FUNCTIONS = {
    f"{kind.lower()}_{prop}": (kind, out)
    for kind in ("TUMBLE", "HOP", "SESSION")
    for prop, out in (
        ("start", "window_start"),
        ("end", "window_end"),
        ("rowtime", "window_time"),
        ("proctime", "window_proctime"),
    )
}

_BINARY = {
    exp.Add: "plus",
    exp.Sub: "minus",
    exp.Mul: "times",
    exp.Div: "divide",
    exp.Mod: "mod",
    exp.DPipe: "concat",
    exp.EQ: "equals",
    exp.NEQ: "not_equals",
    exp.LT: "less_than",
    exp.LTE: "less_than_or_equal",
    exp.GT: "greater_than",
    exp.GTE: "greater_than_or_equal",
    exp.NullSafeEQ: "is_not_distinct_from",
    exp.NullSafeNEQ: "is_distinct_from",
}

# sqlglot function classes whose Flink name differs from sqlglot's `sql_name()`.
_FUNC_NAMES = {
    "JSONArray": "json_array",
    "JSONObject": "json_object",
    "Length": "char_length",
    "Pow": "power",
    "Trunc": "truncate",
    "Variance": "var_samp",
    "VariancePop": "var_pop",
    "StddevPop": "stddev_pop",
    "StddevSamp": "stddev_samp",
    "Stddev": "stddev",
    "GroupConcat": "listagg",
    "ArrayAgg": "array_agg",
    "CurrentTimestamp": "current_timestamp",
    "CurrentDate": "current_date",
    "CurrentTime": "current_time",
    "Localtimestamp": "localtimestamp",
    "Localtime": "localtime",
    "FirstValue": "first_value",
    "LastValue": "last_value",
    "ConcatWs": "concat_ws",
    "RegexpReplace": "regexp_replace",
    "RegexpExtract": "regexp_extract",
    "RegexpLike": "regexp",
    "StrPosition": "position",
    "Nullif": "nullif",
    "Coalesce": "coalesce",
    "Count": "count",
}

_DAY_TIME_MS = {
    "MILLISECOND": 1,
    "SECOND": 1000,
    "MINUTE": 60_000,
    "HOUR": 3_600_000,
    "DAY": 86_400_000,
    "WEEK": 7 * 86_400_000,
}
_YEAR_MONTH = {"MONTH": 1, "YEAR": 12, "QUARTER": 3}


class AggHandler(Protocol):
    """What the binder calls for aggregates, grouped sub-expressions and window props."""

    def match_group(self, node: exp.Expression) -> Expr | None: ...

    def aggregate(
        self,
        name: str,
        node: exp.Expression,
        call: exp.Expression,
        distinct: bool,
        filter_node: exp.Expression | None,
        args: list[exp.Expression],
    ) -> Expr: ...

    def window_property(self, name: str, node: exp.Expression, args: list[exp.Expression]) -> Expr: ...

    def ungrouped(self, node: exp.Expression) -> Exception: ...


def function_name(node: exp.Expr) -> str:
    """The lower-case Flink name of a function call node.

    Takes sqlglot's base `Expr`: `exp.Func` (what isinstance checks narrow to) is not an
    `exp.Expression` in sqlglot 30, only its concrete subclasses are."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    meta = node._meta  # noqa: SLF001 - the flink dialect records the name as written
    if meta and meta.get("original_name"):
        return str(meta["original_name"]).lower()
    cls = type(node).__name__
    if cls in _FUNC_NAMES:
        return _FUNC_NAMES[cls]
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return node.key.lower()


def function_args(node: exp.Expression) -> list[exp.Expression]:
    """A function node's argument expressions, in SQL order."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    if isinstance(node, exp.Initcap):
        return [node.this]  # sqlglot adds a default delimiter set Flink's INITCAP does not take
    if isinstance(node, exp.Log) and function_name(node) in ("log10", "log2") and node.expression is not None:
        return [node.expression]
    out: list[exp.Expression] = []
    for key in node.arg_types:
        v = node.args.get(key)
        if isinstance(v, exp.Expression):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, exp.Expression))
    return out


# Interval qualifiers with two fields (`DAY TO SECOND`): the literal's pattern (Calcite's)
# and the milliseconds of each field after the first; YEAR TO MONTH counts months.
_SPAN_PATTERNS = {
    "YEAR TO MONTH": (r"(\d+)-(\d+)", (12, 1)),
    "DAY TO HOUR": (r"(\d+) (\d+)", (86_400_000, 3_600_000)),
    "DAY TO MINUTE": (r"(\d+) (\d+):(\d+)", (86_400_000, 3_600_000, 60_000)),
    "DAY TO SECOND": (r"(\d+) (\d+):(\d+):(\d+(?:\.\d*)?)", (86_400_000, 3_600_000, 60_000, 1000)),
    "HOUR TO MINUTE": (r"(\d+):(\d+)", (3_600_000, 60_000)),
    "HOUR TO SECOND": (r"(\d+):(\d+):(\d+(?:\.\d*)?)", (3_600_000, 60_000, 1000)),
    "MINUTE TO SECOND": (r"(\d+):(\d+(?:\.\d*)?)", (60_000, 1000)),
}


def interval_ms(node: exp.Interval, sql: str | None) -> Literal:
    """`INTERVAL '10' SECOND` → Literal(10000, INTERVAL_DAY_TIME); months for YEAR/MONTH;
    two-field qualifiers (`'1-1' YEAR TO MONTH`, `'10 00:00:00.004' DAY TO SECOND`) too.
    A leading precision (`DAY(3)`) only bounds the digits, so it is accepted and ignored."""
    unit_node = node.args.get("unit")
    if unit_node is not None and not isinstance(unit_node, exp.Var) and isinstance(unit_node, exp.Expression):
        unit = unit_node.key.upper()  # DAY(3): sqlglot's Day(this=3)
    else:
        unit = (unit_node.name if unit_node is not None else "").upper()
    unit = " ".join(unit.split())
    unit = unit[:-1] if unit.endswith("S") and unit[:-1] in (_DAY_TIME_MS.keys() | _YEAR_MONTH.keys()) else unit
    raw = node.this
    text = raw.name if isinstance(raw, exp.Literal) else (raw.sql() if raw is not None else "")
    text = text.strip()
    sign = 1
    if unit in _SPAN_PATTERNS:
        if text[:1] in "+-":
            sign = -1 if text[0] == "-" else 1
            text = text[1:].strip()
        pattern, weights = _SPAN_PATTERNS[unit]
        m = re.fullmatch(pattern, text)
        if m is None:
            raise error(SqlValidationError, f"Illegal interval literal format '{text}' for INTERVAL {unit}", node, sql)
        total = sum(float(g) * w for g, w in zip(m.groups(), weights, strict=True))
        if unit == "YEAR TO MONTH":
            if int(m.group(2)) > 11:
                raise error(SqlValidationError, f"Illegal interval literal '{text}': month 12 or more", node, sql)
            return Literal(sign * int(total), INTERVAL_YEAR_MONTH(nullable=False))
        return Literal(sign * int(round(total)), INTERVAL_DAY_TIME(nullable=False))
    if unit in _DAY_TIME_MS:
        try:
            value = float(text)
        except ValueError:
            raise error(UnsupportedSqlError, f"Unsupported interval literal '{text}' {unit}", node, sql) from None
        return Literal(int(round(value * _DAY_TIME_MS[unit])), INTERVAL_DAY_TIME(nullable=False))
    if unit in _YEAR_MONTH:
        m = re.fullmatch(r"([+-]?\d+)(?:-(\d+))?", text)
        if m is None:
            raise error(UnsupportedSqlError, f"Unsupported interval literal '{text}' {unit}", node, sql)
        months = int(m.group(1)) * _YEAR_MONTH[unit] + (int(m.group(2)) if m.group(2) else 0)
        return Literal(months, INTERVAL_YEAR_MONTH(nullable=False))
    raise error(UnsupportedSqlError, f"Unsupported interval unit '{unit}'", node, sql)


# Typed literal formats Calcite accepts (pattern, the format its error message names).
_TYPED_LITERAL_FORMATS = {
    "DATE": (r"[+-]?\d{1,4}-\d{1,2}-\d{1,2}", "yyyy-MM-dd"),
    "TIME": (r"(?P<h>\d{1,2}):(?P<mi>\d{1,2}):(?P<s>\d{1,2})(?:\.(?P<f>\d*))?", "HH:mm:ss"),
    "TIMESTAMP": (
        r"\d{1,4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(?:\.(?P<f>\d*))?",
        "yyyy-MM-dd HH:mm:ss",
    ),
    "TIMESTAMP_LTZ": (
        r"\d{1,4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(?:\.(?P<f>\d*))?",
        "yyyy-MM-dd HH:mm:ss",
    ),
}


def _in_gregorian_gap(text: str) -> bool:
    """1582-10-05 .. 1582-10-14 do not exist in Java's GregorianCalendar, which Calcite
    uses to check a DATE literal."""
    m = re.fullmatch(r"0*1582-0*10-0*(\d+)", text)
    return m is not None and 5 <= int(m.group(1)) <= 14


class ExprBinder:
    """Binds expressions over one scope. `clause` names the clause for error messages
    ("WHERE", "GROUP BY", ...); `agg` handles aggregates (None: aggregates are illegal)."""

    def __init__(self, scope: Scope, sql: str | None, *, clause: str = "SELECT", agg: AggHandler | None = None) -> None:
        self.scope = scope
        self.sql = sql
        self.clause = clause
        self.agg = agg

    # ------------------------------------------------------------------ entry
    def bind(self, node: exp.Expression) -> Expr:
        if self.agg is not None and not isinstance(node, (exp.Literal, exp.Boolean, exp.Null, exp.Paren)):
            grouped = self.agg.match_group(node)
            if grouped is not None:
                return grouped
        return self._dispatch(node)

    def err(self, message: str, node: exp.Expression, cls: type = SqlValidationError) -> Exception:
        return error(cls, message, node, self.sql)

    def call(self, name: str, args: list[Expr], node: exp.Expression, result: DataType | None = None) -> Expr:
        """A typed call of registry function `name` (result type from its inference)."""
        fn = lookup(name)
        arg_types = [plain(a.type) for a in args]
        if result is None:
            if fn is None:
                sig = calcite_signature(arg_types)
                raise self.err(f"No match found for function signature {name.upper()}({sig})", node)
            literals = [_literal_value(a) for a in args]
            try:
                result = fn.result_type(arg_types, literals)
            except FunctionTypeError as e:
                raise self.err(str(e), node) from None
        folded = folding.fold_comparison(name, args)
        if folded is None and name == "item" and len(args) == 2:
            folded = folding.fold_item(args[0], args[1], plain(result))
        if folded is not None:
            return folded
        return Call(name, tuple(args), plain(result))

    # ------------------------------------------------------------------ dispatch
    def _dispatch(self, node: exp.Expression) -> Expr:
        if isinstance(node, exp.Paren):
            return self.bind(node.this)
        if isinstance(node, exp.JSONValue):
            return json_sql.bind_json_value(self, node)
        if isinstance(node, exp.JSONExtract) and node.args.get("json_query"):
            return json_sql.bind_json_query(self, node)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.JSON):
            return json_sql.bind_is_json(self, node)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise self.err("'*' is only allowed in the SELECT list or COUNT(*)", node)
            if self.agg is not None:
                raise self.agg.ungrouped(node)
            return self.scope.resolve(node)
        if isinstance(node, exp.Literal):
            if node.is_string:
                text = node.this
                return Literal(text, CHAR(max(len(text), 1), nullable=False) if text else CHAR(0, nullable=False))
            lit = number_literal(node.this)
            if isinstance(node.parent, exp.Neg):
                return lit  # checked once negated (-9223372036854775808 fits)
            return self._checked_number(lit, node)
        if isinstance(node, exp.UnicodeString):
            text = self._unicode_string(node)
            return Literal(text, CHAR(max(len(text), 1), nullable=False) if text else CHAR(0, nullable=False))
        if isinstance(node, exp.HexString):
            # X'0102': a BINARY(n) literal of n bytes
            text = str(node.this)
            if len(text) % 2:
                raise self.err(f"Binary literal string must contain an even number of hexits: X'{text}'", node)
            data = bytes.fromhex(text)
            return Literal(data, DataType("BINARY", False, precision=max(len(data), 1)))
        if isinstance(node, exp.Boolean):
            return Literal(bool(node.this), BOOLEAN(nullable=False))
        if isinstance(node, exp.Null):
            return Literal(None, NULL())
        if isinstance(node, exp.Interval):
            return interval_ms(node, self.sql)
        if isinstance(node, (exp.Floor, exp.Ceil)) and node.args.get("to") is not None:
            # FLOOR(ts TO HOUR) / CEIL(ts TO DAY): runtime.functions.temporal_floor
            unit_name = node.args["to"].name.upper()
            unit_lit = Literal(unit_name, CHAR(max(len(unit_name), 1), nullable=False))
            name = "floor_time" if isinstance(node, exp.Floor) else "ceil_time"
            return self.call(name, [self.bind(node.this), unit_lit], node)
        if isinstance(node, exp.Neg):
            inner = self.bind(node.this)
            if isinstance(inner, Literal) and inner.type.is_numeric:
                return self._checked_number(negate_literal(inner), node)
            return self.call("negate", [inner], node)
        for cls, name in _BINARY.items():
            if type(node) is cls:
                left, right = self.bind(node.this), self.bind(node.expression)
                if (
                    name == "divide"
                    and isinstance(left, Literal)
                    and isinstance(right, Literal)
                    and right.type.name in ("DOUBLE", "FLOAT")
                    and right.value == 0
                ):
                    # Flink folds a constant division while planning, with BigDecimal
                    # arithmetic: 1.0e0 / 0.0e0 fails there (over a column it is Infinity)
                    raise self.err("Division by zero", node)
                return self.call(name, [left, right], node)
        if isinstance(node, (exp.And, exp.Or)):
            parts = _flatten(node, type(node))
            return self.call("and" if isinstance(node, exp.And) else "or", [self.bind(p) for p in parts], node)
        if isinstance(node, exp.Not):
            return self._not(node)
        if isinstance(node, exp.Is):
            return self._is(node, False)
        if isinstance(node, exp.Between):
            x = self.bind(node.this)
            low, high = self.bind(node.args["low"]), self.bind(node.args["high"])
            lo = self.call("greater_than_or_equal", [x, low], node)
            hi = self.call("less_than_or_equal", [x, high], node)
            between = self.call("and", [lo, hi], node)
            if not node.args.get("symmetric"):
                return between
            # BETWEEN SYMMETRIC: either order of the bounds
            lo2 = self.call("greater_than_or_equal", [x, high], node)
            hi2 = self.call("less_than_or_equal", [x, low], node)
            return self.call("or", [between, self.call("and", [lo2, hi2], node)], node)
        if isinstance(node, exp.Overlaps):
            return self._overlaps(node)
        if isinstance(node, exp.In):
            if node.args.get("query") is not None or node.args.get("unnest") is not None:
                raise self.err("IN with a subquery is not supported yet", node, UnsupportedSqlError)
            return self.call("in", [self.bind(node.this)] + [self.bind(e) for e in node.expressions], node)
        if isinstance(node, (exp.Like, exp.SimilarTo, exp.Escape)):
            return self._like(node)
        if isinstance(node, exp.ILike):
            raise self.err("ILIKE is not supported by Flink SQL", node, UnsupportedSqlError)
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If) and node.args.get("true") is not None:
            args: list[Expr] = [self.bind(node.this), self.bind(node.args["true"])]
            if node.args.get("false") is not None:
                args.append(self.bind(node.args["false"]))
            return self.call("if", args, node)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return self._cast(node)
        if isinstance(node, exp.Bracket):
            return self._bracket(node)
        if isinstance(node, exp.Array):
            return self.call("array", [self.bind(e) for e in node.expressions], node)
        if isinstance(node, exp.Tuple) and len(node.expressions) > 1:
            # (a, b, c): Calcite's implicit ROW constructor
            return self.call("row", [self.bind(e) for e in node.expressions], node)
        if isinstance(node, (exp.Map, exp.VarMap)):
            keys = node.args.get("keys")
            values = node.args.get("values")
            if isinstance(keys, exp.Array) and isinstance(values, exp.Array):
                args = []
                for k, v in zip(keys.expressions, values.expressions, strict=False):
                    args += [self.bind(k), self.bind(v)]
                return self.call("map", args, node)
        if isinstance(node, exp.Trim):
            return self._trim(node)
        if isinstance(node, exp.StrPosition) and node.args.get("substr") is not None:
            # POSITION(needle IN hay): sqlglot keeps the haystack in `this`; the function
            # takes (needle, hay) like LOCATE.
            args = [self.bind(node.args["substr"]), self.bind(node.this)]
            if node.args.get("position") is not None:
                args.append(self.bind(node.args["position"]))
            return self.call("position", args, node)
        if isinstance(node, exp.Substring):
            args = [self.bind(node.this), self.bind(node.args["start"])]
            if node.args.get("length") is not None:
                args.append(self.bind(node.args["length"]))
            return self.call("substring", args, node)
        if isinstance(node, exp.Extract):
            unit = node.this.name.upper() if isinstance(node.this, exp.Expression) else str(node.this).upper()
            return self.call(
                "extract", [Literal(unit, CHAR(len(unit), nullable=False)), self.bind(node.expression)], node
            )
        if isinstance(node, exp.JSONObject):
            return self._json_object(node)
        if (
            isinstance(node, exp.IgnoreNulls)
            and isinstance(node.this, exp.Func)
            and isinstance(node.this, exp.Expression)
        ):
            # ARRAY_AGG(x IGNORE NULLS): the aggregate binder reads the flag off `node`
            return self._aggregate(node.this, node, None)
        if isinstance(node, exp.Filter):
            return self._aggregate(node.this, node, node.expression)
        if isinstance(node, (exp.Subquery, exp.Exists, exp.Select)):
            raise self.err("Subqueries in expressions are not supported yet", node, UnsupportedSqlError)
        if isinstance(node, exp.Window):
            raise self.err("OVER windows are not supported yet", node, UnsupportedSqlError)
        if isinstance(node, exp.Func):
            return self._function(node)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            return self._field_access(node)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            return self._qualified_function(node)
        raise self.err(f"Unsupported expression: {node.sql()}", node, UnsupportedSqlError)

    def _field_access(self, node: exp.Dot) -> Expr:
        """`expr.field` on a ROW or STRUCTURED value that is not a column path, e.g.
        `ROW(1, 'a').EXPR$1` (a column's `r.x` is resolved by the scope)."""
        base = self.bind(node.this)
        name = node.expression.name
        t = base.type
        if t.name not in ("ROW", "STRUCTURED"):
            raise self.err(f"Incompatible types: {t} has no field '{name}'", node)
        if name not in t.field_names:
            raise self.err(f"Column '{name}' not found in {t}", node)
        ft = t.children[t.field_names.index(name)]
        return Call("dot", (base, Literal(name, STRING(nullable=False))), ft.with_nullable(ft.nullable or t.nullable))

    def _get(self, node: exp.Expression, args_nodes: list[exp.Expression]) -> Expr:
        """GET(row, field): Flink's built-in GET (PyFlink's `Expression.get`), a ROW field by
        name or by 0-based position; the position must be a literal, as the result type
        depends on it."""
        base, key = self.bind(args_nodes[0]), self.bind(args_nodes[1])
        t = base.type
        if t.name not in ("ROW", "STRUCTURED") or not isinstance(key, Literal) or key.value is None:
            sig = calcite_signature([base.type, key.type])
            raise self.err(
                f"No match found for function signature GET({sig}): GET takes a ROW and a field name or "
                "0-based position literal",
                node,
            )
        if key.type.is_integer:
            if not 0 <= key.value < len(t.field_names):
                raise self.err(f"Field index {key.value} is out of range for {t} (positions start at 0)", node)
            name = t.field_names[key.value]
        elif key.type.is_string:
            name = str(key.value)
            if name not in t.field_names:
                raise self.err(f"Column '{name}' not found in {t}", node)
        else:
            raise self.err(f"GET takes a field name or 0-based position, not {calcite_name(key.type)}", node)
        ft = t.children[t.field_names.index(name)]
        return Call("dot", (base, Literal(name, STRING(nullable=False))), ft.with_nullable(ft.nullable or t.nullable))

    def _qualified_function(self, node: exp.Dot) -> Expr:
        """`db.f(x)` / `cat.db.f(x)`: a catalog function of that database (as in Flink, a
        qualified name never means a built-in function)."""

        func = node.expression
        parts: list[str] = []
        prefix: exp.Expression = node.this
        while isinstance(prefix, exp.Dot):
            parts.insert(0, prefix.expression.name)
            prefix = prefix.this
        parts.insert(0, prefix.name)
        name = func.name.lower() if isinstance(func, exp.Anonymous) else function_name(func)
        args = [self.bind(a) for a in function_args(func)]
        udf = lookup_function_path((*parts, name))
        if udf is None or udf.kind != "scalar":
            sig = calcite_signature([a.type for a in args])
            raise self.err(f"No match found for function signature {name}({sig})", node)

        return scalar_udf_call(udf, args)

    def _unicode_string(self, node: exp.UnicodeString) -> str:
        """The text of `U&'...' [UESCAPE 'c']`: the escape character (default `\\`) followed
        by 4 hex digits, or by `+` and 6 hex digits, is that code point; doubled, itself."""
        raw = str(node.this)
        esc_node = node.args.get("escape")
        esc = str(esc_node.this) if isinstance(esc_node, exp.Literal) else "\\"
        if len(esc) != 1 or esc in "0123456789abcdefABCDEF+'\" \t\n":
            raise self.err(f"UESCAPE '{esc}' is not a valid escape character", node)
        out: list[str] = []
        i = 0
        while i < len(raw):
            c = raw[i]
            if c != esc:
                out.append(c)
                i += 1
                continue
            if raw[i + 1 : i + 2] == esc:
                out.append(esc)
                i += 2
                continue
            six = raw[i + 1 : i + 2] == "+"
            digits = raw[i + 2 : i + 8] if six else raw[i + 1 : i + 5]
            if len(digits) != (6 if six else 4) or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.err(
                    f"Unicode escape sequence starting at character {i} is not exactly "
                    f"{'six' if six else 'four'} hex digits",
                    node,
                )
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise self.err(f"Unicode escape sequence starting at character {i} is not a code point", node)
            out.append(chr(code))
            i += 8 if six else 5
        return "".join(out)

    def _checked_number(self, lit: Literal, node: exp.Expression) -> Literal:
        """Calcite refuses an exact numeric literal whose unscaled value needs more than 63
        bits ("Numeric literal '...' out of range"); DOUBLE literals are not limited."""
        if lit.type.name == "DECIMAL" and lit.value is not None:
            value = Decimal(str(lit.value))
            unscaled = int("".join(map(str, value.as_tuple().digits)) or "0")
            if unscaled.bit_length() > 63:
                raise self.err(f"Numeric literal '{abs(value)}' out of range", node)
        return lit

    # ------------------------------------------------------------------ pieces
    def _not(self, node: exp.Not) -> Expr:
        inner = node.this
        while isinstance(inner, exp.Paren) and isinstance(inner.this, exp.Is):
            inner = inner.this
        if isinstance(inner, exp.Is):
            return self._is(inner, True, node)
        return self.call("not", [self.bind(node.this)], node)

    def _is(self, isnode: exp.Is, negated: bool, pos: exp.Expression | None = None) -> Expr:
        pos = pos if pos is not None else isnode
        target = isnode.this
        what = isnode.expression
        x = self.bind(target)
        if isinstance(what, exp.Null):
            name = "is_not_null" if negated else "is_null"
        elif isinstance(what, exp.Boolean):
            if what.this:
                name = "is_not_true" if negated else "is_true"
            else:
                name = "is_not_false" if negated else "is_false"
        elif isinstance(what, exp.JSON):
            is_json = json_sql.bind_is_json(self, isnode)
            return self.call("not", [is_json], pos) if negated else is_json
        else:
            raise self.err(f"Unsupported IS predicate: {isnode.sql()}", isnode, UnsupportedSqlError)
        return self.call(name, [x], pos)

    def _like(self, node: exp.Expression) -> Expr:
        escape = None
        base = node
        if isinstance(node, exp.Escape):
            base = node.this
            escape = self.bind(node.expression)
        negate = False
        if isinstance(base, exp.Not):
            negate = True
            base = base.this
        name = "similar_to" if isinstance(base, exp.SimilarTo) else "like"
        args = [self.bind(base.this), self.bind(base.expression)]
        if escape is not None:
            args.append(escape)
        out = self.call(name, args, node)
        if negate or base.args.get("negate"):
            out = self.call("not", [out], node)
        return out

    def _overlaps(self, node: exp.Overlaps) -> Expr:
        """(start1, end1 | interval1) OVERLAPS (start2, end2 | interval2), as Calcite rewrites
        it: each pair's end is its second value or start + interval, the two ends are put in
        order, and the periods overlap when each ends at or after the other starts."""
        periods = []
        for side in (node.this, node.expression):
            if not isinstance(side, exp.Tuple) or len(side.expressions) != 2:
                raise self.err("OVERLAPS compares two periods: (start, end or interval) OVERLAPS (start, ...)", side)
            start, second = (self.bind(e) for e in side.expressions)
            if not (start.type.is_timestamp or start.type.name in ("DATE", "TIME")):
                raise self.err(f"OVERLAPS needs a DATE, TIME or TIMESTAMP start, not {calcite_name(start.type)}", side)
            end = self.call("plus", [start, second], side) if second.type.name.startswith("INTERVAL") else second
            if common_type([plain(start.type), plain(end.type)]) is None:
                raise self.err(
                    f"OVERLAPS period ends must have one type: {calcite_name(start.type)} and {calcite_name(end.type)}",
                    side,
                )
            ordered = self.call("less_than_or_equal", [start, end], side)
            periods.append(
                (self.call("case", [ordered, start, end], side), self.call("case", [ordered, end, start], side))
            )
        (s0, e0), (s1, e1) = periods
        ends_after_other_starts = [
            self.call("greater_than_or_equal", [e0, s1], node),
            self.call("greater_than_or_equal", [e1, s0], node),
        ]
        return self.call("and", ends_after_other_starts, node)

    def _case(self, node: exp.Case) -> Expr:
        subject = node.this
        subject_ir = self.bind(subject) if subject is not None else None
        args: list[Expr] = []
        for when in node.args.get("ifs") or []:
            cond_node = when.this
            cond: Expr
            if subject_ir is not None:
                cond = self.call("equals", [subject_ir, self.bind(cond_node)], when)
            else:
                cond = self.bind(cond_node)
            args += [cond, self.bind(when.args["true"])]
        default = node.args.get("default")
        if default is not None:
            args.append(self.bind(default))
        else:
            values = [args[i] for i in range(1, len(args), 2)]
            t = common_type([v.type for v in values]) or NULL()
            args.append(Literal(None, t.with_nullable(True)))
        return self.call("case", args, node)

    def _cast(self, node: exp.Cast) -> Expr:
        target = to_data_type(node.args["to"], node, self.sql)
        if is_typed_literal(node) and isinstance(node.this, exp.Literal):
            target = self._typed_literal_type(node, target)
        inner = self.bind(node.this)
        name = "try_cast" if isinstance(node, exp.TryCast) or node.args.get("safe") else "cast"
        # only a bare NULL skips validation (Calcite's isNullLiteral): CAST(CAST(NULL AS INT)
        # AS DATE) is refused like any INT
        refusal = cast_refusal(plain(inner.type), target)
        if refusal is not None:
            err = error(SqlValidationError, refusal, node, self.sql)
            err.hint = cast_hint(target)
            raise err
        if isinstance(inner, Literal) and inner.value is None:
            return Literal(None, target.with_nullable(True))
        try:
            folded = folding.fold_cast(name, inner, target)
        except folding.PlanningFoldError as e:
            raise self.err(str(e), node) from None
        if folded is not None:
            return folded
        nullable = inner.type.nullable or name == "try_cast"
        return Call(name, (inner,), target.with_nullable(nullable if target.nullable else False))

    def _current_watermark(self, node: exp.Expression, args_nodes: list[exp.Expression]) -> Expr:
        """CURRENT_WATERMARK(rowtime): the argument must be a rowtime attribute (a column
        with a WATERMARK, in a STREAMING query); the result is its type, precision 3."""
        args = [self.bind(a) for a in args_nodes]
        if len(args) != 1:
            raise self.err("CURRENT_WATERMARK takes one argument, a rowtime attribute", node)
        t = args[0].type
        if t.time_attr != "ROWTIME" or BINDING_MODE.get() != "STREAMING":
            raise self.err(
                "Invalid function call:\nThe argument of CURRENT_WATERMARK() must be a rowtime attribute, "
                f"but was '{plain(t)}'.",
                node,
            )
        return self.call("current_watermark", args, node)

    def _typed_literal_type(self, node: exp.Cast, target: DataType) -> DataType:
        """The type of `TIMESTAMP '...'` / `TIME '...'` / `DATE '...'`: Calcite checks the
        format at validation and gives a TIMESTAMP or TIME the precision of the fraction
        written (`TIMESTAMP '2024-01-01 00:00:00'` is TIMESTAMP(0))."""
        text = node.this.name
        kind = {"TIMESTAMP_LTZ": "TIMESTAMP WITH LOCAL TIME ZONE"}.get(target.name, target.name)
        fmt = _TYPED_LITERAL_FORMATS.get(target.name)
        if fmt is None:
            return target
        pattern, shown = fmt
        m = re.fullmatch(pattern, text.strip())
        # Calcite's TimeString checks the fields' ranges too (CAST from a string does not:
        # runtime.functions.cast `_parse_time` takes '24:00:00')
        out_of_range = (
            target.name == "TIME" and m is not None and (int(m["h"]) > 23 or int(m["mi"]) > 59 or int(m["s"]) > 59)
        )
        if m is None or out_of_range or (target.name == "DATE" and _in_gregorian_gap(text.strip())):
            raise self.err(f"Illegal {kind} literal '{text}': not in format '{shown}'", node)
        if target.name == "DATE":
            return target
        fraction = m.group("f") or ""
        if len(fraction) > 9:
            raise self.err(f"Illegal {kind} literal '{text}': not in format '{shown}'", node)
        return DataType(target.name, target.nullable, precision=len(fraction))

    def _bracket(self, node: exp.Bracket) -> Expr:
        base = node.this
        if isinstance(base, exp.Column) and not base.table and base.name.upper() == "MAP":
            return self.call("map", [self.bind(e) for e in node.expressions], node)
        if isinstance(base, exp.Column) and not base.table and base.name.upper() == "ARRAY":
            return self.call("array", [self.bind(e) for e in node.expressions], node)
        if len(node.expressions) != 1:
            raise self.err("Item access takes one index", node)
        target, index = self.bind(base), self.bind(node.expressions[0])
        if (
            target.type.name == "ARRAY"
            and isinstance(index, Literal)
            and index.type.is_integer
            and index.value is not None
            and index.value < 1
        ):
            raise self.err(f"Array element access needs an index starting at 1 but was {index.value}.", node)
        return self.call("item", [target, index], node)

    def _trim(self, node: exp.Trim) -> Expr:
        position = str(node.args.get("position") or "BOTH").upper()
        chars = node.args.get("expression")
        char_ir = self.bind(chars) if chars is not None else Literal(" ", CHAR(1, nullable=False))
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "btrim")
        return self.call(name, [self.bind(node.this), char_ir], node)

    def _json_object(self, node: exp.JSONObject) -> Expr:
        handling = str(node.args.get("null_handling") or "NULL ON NULL").upper()
        mode = "ABSENT" if handling.startswith("ABSENT") else "NULL"
        args: list[Expr] = [Literal(mode, CHAR(len(mode), nullable=False))]
        for kv in node.expressions:
            key = self.bind(kv.this)
            if key.type.nullable and key.type.name != "NULL":
                # Calcite: a JSON_OBJECT key must be NOT NULL (a nullable column is refused)
                raise self.err(f"Argument to function '{kv.this.sql()}' must not be NULL", node)
            args += [key, self._json_value(kv.expression)]
        from runtime.functions.json_functions import mark_nested_json

        return self.call("json_object", list(mark_nested_json(args)), node)

    def _json_value(self, node: exp.Expression) -> Expr:
        """A JSON_OBJECT value / JSON_ARRAY element: the one place JSON(text) is allowed."""
        if isinstance(node, exp.Func) and function_name(node) == "json":
            return self.call("json", [self.bind(a) for a in function_args(node)], node)
        return self.bind(node)

    def _function(self, node: exp.Expression) -> Expr:
        name = function_name(node)

        udf = lookup_function(name)
        if udf is not None and udf.kind == "aggregate":
            return self._aggregate(node, node, None)
        if udf is not None:
            if udf.kind == "table":
                raise self.err(f"Table function {name} can only be called in LATERAL TABLE(...)", node)
            return scalar_udf_call(udf, [self.bind(a) for a in function_args(node)])
        if isinstance(node, exp.Count) or name in AGGREGATE_FUNCTIONS:
            return self._aggregate(node, node, None)
        if name in WINDOW_PROPERTY_FUNCTIONS:
            if self.agg is None:
                raise self.err(
                    f"{name.upper()} is only allowed with a GROUP BY {name.split('_')[0].upper()}(...) window", node
                )
            return self.agg.window_property(name, node, function_args(node))
        if name in ("grouping", "grouping_id", "group_id"):
            handler = getattr(self.agg, "grouping_function", None)
            if handler is None:
                raise self.err(f"{name.upper()} is only allowed with GROUP BY", node)
            return handler(name, node, function_args(node))  # type: ignore[no-any-return]
        if name == "json":
            raise self.err(
                "The JSON() function is currently only supported inside JSON_ARRAY() or as the VALUE param "
                "of JSON_OBJECT()",
                node,
            )
        if name in ("tumble", "hop", "session"):
            raise self.err(f"Group window function {name.upper()} is only allowed in GROUP BY", node)
        if name == "proctime":
            fn = lookup("proctime")
            t = TIMESTAMP_LTZ(3, nullable=False)
            if fn is not None:
                try:
                    t = fn.infer([])
                except FunctionTypeError:
                    pass
            return Call("proctime", (), t.as_time_attr("PROCTIME"))
        args_nodes = function_args(node)
        if name == "get" and len(args_nodes) == 2:
            return self._get(node, args_nodes)
        if name == "current_watermark":
            return self._current_watermark(node, args_nodes)
        if name == "json_array":
            return self._json_array(node, args_nodes)
        if name in ("ltrim", "rtrim", "btrim") and len(args_nodes) == 1:
            return self.call(name, [self.bind(args_nodes[0]), Literal(" ", CHAR(1, nullable=False))], node)
        if name in ("current_timestamp", "current_date", "localtimestamp", "current_time", "localtime"):
            args_nodes = []
        if name in ("timestampadd", "timestampdiff") and args_nodes and isinstance(args_nodes[0], exp.Var):
            # TIMESTAMPDIFF(SECOND, a, b): the unit keyword becomes the canonical 'UNIT' literal.
            unit = args_nodes[0].name.upper()
            rest = [self.bind(a) for a in args_nodes[1:]]
            return self.call(name, [Literal(unit, CHAR(len(unit), nullable=False)), *rest], node)
        return self.call(name, [self.bind(a) for a in args_nodes], node)

    def _json_array(self, node: exp.Expression, args_nodes: list[exp.Expression]) -> Expr:
        mode = "ABSENT"
        handling = node.args.get("null_handling")
        if handling:
            mode = "NULL" if str(handling).upper().startswith("NULL") else "ABSENT"
        values = list(node.expressions) if isinstance(node, exp.JSONArray) else args_nodes
        args: list[Expr] = [Literal(mode, CHAR(len(mode), nullable=False))]
        args += [self._json_value(v) for v in values]
        from runtime.functions.json_functions import mark_nested_json

        return self.call("json_array", list(mark_nested_json(args)), node)

    def _aggregate(self, call: exp.Expression, node: exp.Expression, filter_node: exp.Expression | None) -> Expr:
        if isinstance(filter_node, exp.Where):
            filter_node = filter_node.this
        if self.agg is None:
            if self.clause == "aggregate argument":
                raise self.err("Aggregate expressions cannot be nested", node)
            raise self.err(f"Aggregate expression is illegal in {self.clause} clause", node)
        distinct = False
        args = function_args(call)
        if len(args) == 1 and isinstance(args[0], exp.Distinct):
            distinct = True
            args = list(args[0].expressions)
        if isinstance(call, exp.Count) and (not args or isinstance(args[0], exp.Star)):
            args = []
        return self.agg.aggregate(function_name(call), node, call, distinct, filter_node, args)


def _flatten(node: exp.Expression, cls: type[exp.Expression]) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    for side in (node.this, node.expression):
        inner = side
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if type(inner) is cls and isinstance(inner, exp.Expression):  # isinstance: narrows for mypy
            out.extend(_flatten(inner, cls))
        else:
            out.append(side)
    return out


def is_aggregate_call(node: exp.Expression) -> bool:
    """Whether `node` contains an aggregate call (outside nested subqueries)."""

    for n in node.walk():
        if isinstance(n, exp.Func) and (isinstance(n, exp.Count) or function_name(n) in AGGREGATE_FUNCTIONS):
            return True
        if isinstance(n, exp.Func) and lookup_function(function_name(n), "aggregate") is not None:
            return True
    return False


def literal_only(e: Expr) -> bool:
    return isinstance(e, Literal)


__all__ = [
    "WINDOW_PROPERTY_FUNCTIONS",
    "ExprBinder",
    "InputRef",
    "function_args",
    "function_name",
    "interval_ms",
    "is_aggregate_call",
]


def _literal_value(e: Expr) -> object:
    """The value of a literal argument (also `-n`), or None for anything else."""
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, Call) and e.name == "negate" and isinstance(e.args[0], Literal):
        v = e.args[0].value
        return -v if isinstance(v, (int, float)) else None
    return None
