"""Type rules the binder applies itself (everything else comes from the function registry):
literal typing, the least restrictive common type of VALUES / UNION ALL columns, and the
implicit casts Flink allows when writing into a sink.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from runtime.expr.ir import Literal
from runtime.functions.cast import implicit_cast_supported
from runtime.types import (
    BIGINT,
    BINARY_TYPES,
    CHARACTER_TYPES,
    DECIMAL,
    DOUBLE,
    INT,
    MAX_VARCHAR,
    NUMERIC_TYPES,
    TIMESTAMP_TYPES,
    DataType,
    plain,
)

# Digits an integer type needs as a DECIMAL (Flink's LogicalTypeMerging).
_INT_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}
_INT_RANK = {"TINYINT": 0, "SMALLINT": 1, "INT": 2, "BIGINT": 3}
MAX_DECIMAL_PRECISION = 38


def _type_family(t: DataType) -> str:
    """Calcite's SqlTypeFamily of a type, as its "No match found for function signature"
    message names each argument (`<CHARACTER>`, `<NUMERIC>`, ...); a type without a family
    (ROW, STRUCTURED, RAW-like ones) is named by itself, as Calcite does."""
    if t.name in NUMERIC_TYPES:
        return "NUMERIC"
    if t.name in CHARACTER_TYPES:
        return "CHARACTER"
    if t.name in BINARY_TYPES:
        return "BINARY"
    if t.name in TIMESTAMP_TYPES:
        return "TIMESTAMP"
    if t.name in ("BOOLEAN", "DATE", "TIME", "ARRAY", "MAP", "MULTISET", "NULL"):
        return t.name
    if t.name.startswith("INTERVAL"):
        return t.name
    return str(plain(t))


def calcite_signature(types: list[DataType]) -> str:
    """The argument list of Calcite's "No match found for function signature F(...)"."""
    return ", ".join(f"<{_type_family(t)}>" for t in types)


def number_literal(text: str) -> Literal:
    """Type a numeric literal as Calcite does: INT (BIGINT when it does not fit), exact
    decimals as DECIMAL(p, s), scientific notation as DOUBLE; all NOT NULL."""
    if "e" in text.lower():
        return Literal(float(text), DOUBLE(nullable=False))
    if "." in text:
        # Calcite's `SqlLiteral.createExactNumeric`: every digit written counts toward the
        # precision, a leading zero too (`0.011` is DECIMAL(4, 3), as Flink's Data Types page
        # notes), the scale is the digits after the point
        d = Decimal(text)
        whole, fraction = text.lstrip("-+").split(".", 1)
        scale = len(fraction)
        precision = max(len(whole) + scale, 1) if fraction else max(len(whole), 1)
        return Literal(str(d), DECIMAL(precision, scale, nullable=False))
    v = int(text)
    if -(2**31) <= v < 2**31:
        return Literal(v, INT(nullable=False))
    if -(2**63) <= v < 2**63:
        return Literal(v, BIGINT(nullable=False))
    d = Decimal(text)
    return Literal(str(d), DECIMAL(len(text.lstrip("-+")), 0, nullable=False))


def negate_literal(lit: Literal) -> Literal:
    """`-<literal>` folded into one literal, as Calcite does for numeric literals."""
    t = lit.type
    if lit.value is None:
        return lit
    if t.name == "DECIMAL" and t.scale == 0 and Decimal(lit.value) == 2**63:
        return Literal(-(2**63), BIGINT(nullable=False))
    if t.name == "DECIMAL":
        text = str(-Decimal(lit.value))
        return Literal(text, t)
    # Calcite reads `-2147483648` as one INT literal (and `-9223372036854775808` as BIGINT),
    # though the unsigned text alone would not fit
    if t.name == "BIGINT" and lit.value == 2**31:
        return Literal(-lit.value, INT(nullable=False))
    if t.name in ("DOUBLE", "FLOAT") and lit.value == 0:
        # Calcite folds `-0.0e0` through BigDecimal, where -0 is 0: Flink sees 0.0
        # (COT(-0.0e0) is Infinity, CAST(-0.0e0 AS STRING) is '0.0')
        return Literal(0.0, t)
    if t.name in _INT_DIGITS:  # Java negation wraps: -(-2147483648) = -2147483648
        bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[t.name]
        v = -lit.value
        half = 1 << (bits - 1)
        return Literal((v + half) % (1 << bits) - half, t)
    return Literal(-lit.value, t)


def _as_decimal(t: DataType) -> tuple[int, int] | None:
    if t.name == "DECIMAL":
        return (t.precision or 10, t.scale or 0)
    if t.name in _INT_DIGITS:
        return (_INT_DIGITS[t.name], 0)
    return None


def common_type(types: list[DataType]) -> DataType | None:
    """Flink's least restrictive type of `types` (None when there is none). CHARs of
    different lengths give a VARCHAR (Flink's VALUES: 'a' and 'bb' are not padded)."""
    non_null = [plain(t) for t in types if t.name != "NULL"]
    nullable = any(t.nullable for t in types)
    if not non_null:
        return DataType("NULL")
    first = non_null[0]
    names = {t.name for t in non_null}
    result: DataType | None = None
    if names <= {"CHAR", "VARCHAR"}:
        lengths = [t.precision or 1 for t in non_null]
        if names == {"CHAR"} and len(set(lengths)) == 1:
            result = first
        else:
            n = max(lengths)
            result = DataType("VARCHAR", precision=MAX_VARCHAR if n >= MAX_VARCHAR else n)
    elif names <= {"BINARY", "VARBINARY"}:
        n = max(t.precision or 1 for t in non_null)
        result = DataType(
            "VARBINARY" if len(names) > 1 or len({t.precision for t in non_null}) > 1 else first.name, precision=n
        )
    elif all(t.is_numeric for t in non_null):
        if names & {"DOUBLE"} or (names & {"FLOAT"} and names & {"DECIMAL"}):
            result = DOUBLE()
        elif names & {"FLOAT"}:
            result = DataType("FLOAT")
        elif names & {"DECIMAL"}:
            parts = [_as_decimal(t) for t in non_null]
            scale = max(s for _, s in parts if True)  # type: ignore[misc]
            int_digits = max(p - s for p, s in parts)  # type: ignore[misc]
            precision = min(int_digits + scale, MAX_DECIMAL_PRECISION)
            result = DECIMAL(precision, scale)
        else:
            result = DataType(max(names, key=lambda n: _INT_RANK[n]))
    elif len(names) == 1:
        name = first.name
        if name in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIME"):
            result = DataType(name, precision=max(t.precision or 0 for t in non_null))
        elif name in ("ARRAY", "MULTISET", "MAP", "ROW"):
            if len({t.with_nullable(True) for t in non_null}) == 1:
                result = first
            else:
                kids = [common_type([t.children[i] for t in non_null]) for i in range(len(first.children))]
                if any(k is None for k in kids):
                    return None
                result = DataType(name, children=tuple(kids), field_names=first.field_names)  # type: ignore[arg-type]
        else:
            result = first
    if result is None:
        return None
    return result.with_nullable(nullable)


def set_operation_type(types: list[DataType]) -> DataType | None:
    """The type of one column of a set operation over inputs whose column has `types`
    (left to right), time attributes included: Flink types a set operation with Calcite's
    least restrictive type and then casts every input to it.

    - All inputs a time attribute of one kind (ROWTIME or PROCTIME) over one type
      (TIMESTAMP or TIMESTAMP_LTZ): that time attribute (nullable when any input is).
    - The first input a time attribute, every other one of the same type and precision:
      still the first input's time attribute (Calcite keeps its first type; the other
      inputs are cast to it). A union of a rowtime stream and a stream without watermarks
      is a rowtime stream whose watermark waits for the other stream's end.
    - Otherwise the plain common type (`common_type`): a time attribute after the first
      input, or next to a different type, is lost (a window over it is refused as over
      any TIMESTAMP column).
    """
    t = common_type(types)
    typed = [u for u in types if u.name != "NULL"]
    if t is None or not typed or typed[0].time_attr is None:
        return t
    first = typed[0]
    same_attr = all(u.time_attr == first.time_attr and u.name == first.name for u in typed)
    same_type = all(u.name == first.name and u.precision == first.precision for u in typed)
    if same_attr or same_type:
        return first.with_nullable(t.nullable)
    return t


def convert_literal(lit: Literal, target: DataType) -> Literal:
    """Re-encode a literal's value for `target` (a VALUES column's common type)."""
    v = lit.value
    if v is None:
        return Literal(None, target)
    src = lit.type.name
    dst = target.name
    try:
        if dst == "DECIMAL":
            q = Decimal(1).scaleb(-(target.scale or 0))
            return Literal(str(Decimal(str(v)).quantize(q)), target)
        if dst in ("DOUBLE", "FLOAT"):
            return Literal(float(v), target)
        if dst in _INT_DIGITS and src in _INT_DIGITS:
            return Literal(int(v), target)
    except (InvalidOperation, ValueError):
        pass
    return Literal(v, target)


def implicitly_castable(src: DataType, dst: DataType) -> bool:
    """Whether Flink writes a `src` value into a `dst` sink column without an explicit CAST
    (Flink's LogicalTypeCasts implicit rules, `runtime.functions.cast`)."""
    return implicit_cast_supported(plain(src), plain(dst))
