"""sqlglot DataType (as the flink dialect parses it) → `runtime.types.DataType`.

The binder uses this for CAST targets, the DDL parser for column types. Flink's defaults
apply: DECIMAL = DECIMAL(10, 0), TIMESTAMP = TIMESTAMP(6), TIME = TIME(0), CHAR / BINARY
without length = length 1, VARCHAR / VARBINARY without length = the maximum length (Flink's
type system's default precision, so `CAST(x AS VARCHAR)` is STRING and cuts nothing),
STRING = VARCHAR(MAX), BYTES = VARBINARY(MAX).

Precisions above a type's maximum are lowered to it, as Calcite's type factory does with
Flink's type system (`FlinkTypeSystem.getMaxPrecision`): TIMESTAMP(10) is TIMESTAMP(9),
DECIMAL(40) is DECIMAL(38, 0), TIME(6) is TIME(3) (Calcite's datetime maximum, which Flink
keeps for TIME). What Flink's logical types then refuse is refused with their messages
(`DECIMAL(0)`, a scale above the precision).
"""

from __future__ import annotations

from sqlglot import exp

from runtime import types as rt
from runtime.types import DataType

__all__ = ["to_data_type", "UnknownTypeError"]

T = exp.DataType.Type


class UnknownTypeError(ValueError):
    """A type Flink does not have (the caller turns it into a SqlError with a position)."""


_SIMPLE: dict[object, str] = {
    T.TINYINT: "TINYINT",
    T.SMALLINT: "SMALLINT",
    T.INT: "INT",
    T.BIGINT: "BIGINT",
    T.FLOAT: "FLOAT",
    T.DOUBLE: "DOUBLE",
    T.BOOLEAN: "BOOLEAN",
    T.DATE: "DATE",
}


def _params(dt: exp.DataType) -> list[int]:
    out: list[int] = []
    for p in dt.expressions:
        node = p.this if isinstance(p, exp.DataTypeParam) else p
        try:
            out.append(int(node.name))
        except (TypeError, ValueError) as e:
            raise UnknownTypeError(f"Invalid type parameter '{node.sql()}'") from e
    return out


def to_data_type(dt: exp.DataType) -> DataType:
    """Convert one parsed type (nested types recursively). `nullable=False` on the sqlglot
    node (set by `NOT NULL`) gives a NOT NULL type."""
    result = _convert(dt)
    if dt.args.get("nullable") is False:
        result = result.not_null()
    return result


def _convert(dt: exp.DataType) -> DataType:  # noqa: C901 - one branch per type family
    kind = dt.this
    if kind in _SIMPLE:
        return DataType(_SIMPLE[kind])
    if kind == T.USERDEFINED and str(dt.args.get("kind") or "").upper() == "RAW":
        raise UnknownTypeError(
            "Unsupported type 'RAW': a RAW type is a Java class with its Java serializer snapshot, "
            "which streamsql cannot read; declare the value's SQL type (or BYTES)"
        )
    if kind == T.INTERVAL or isinstance(kind, exp.Interval):
        raise UnknownTypeError(
            f"Unsupported type '{dt.sql()}': an INTERVAL type cannot be declared here (Flink's DDL refuses "
            "it as a column type); INTERVAL values come from interval literals and expressions"
        )
    params = _params(dt) if not dt.args.get("nested") else []
    if kind in (T.DECIMAL, T.BIGDECIMAL):
        return _decimal(params)
    if kind == T.TEXT:
        return rt.STRING()
    if kind in (T.VARCHAR, T.NVARCHAR):
        return rt.VARCHAR(params[0] if params else rt.MAX_VARCHAR)
    if kind in (T.CHAR, T.NCHAR):
        return rt.CHAR(params[0] if params else 1)
    if kind == T.VARBINARY:
        return DataType("VARBINARY", precision=params[0] if params else rt.MAX_VARCHAR)
    if kind == T.BINARY:
        return DataType("BINARY", precision=params[0] if params else 1)
    if kind == T.TIME:
        return rt.TIME(_capped("TIME", params[0]) if params else 0)
    if kind in (T.TIMESTAMP, T.DATETIME, T.TIMESTAMPNTZ):
        return rt.TIMESTAMP(_capped("TIMESTAMP", params[0]) if params else 6)
    if kind == T.TIMESTAMPLTZ:
        return rt.TIMESTAMP_LTZ(_capped("TIMESTAMP_LTZ", params[0]) if params else 6)
    if kind == T.ARRAY:
        return rt.ARRAY(_element(dt, 0))
    if kind == T.MAP:
        return rt.MAP(_element(dt, 0), _element(dt, 1))
    if kind == T.STRUCT:
        fields: list[tuple[str, DataType]] = []
        descriptions: list[str | None] = []
        for f in dt.expressions:
            if isinstance(f, exp.ColumnDef):
                fields.append((f.name, to_data_type(f.args["kind"])))
                descriptions.append(f.meta.get("description"))
            else:
                raise UnknownTypeError(f"Invalid ROW field '{f.sql()}'")
        if dt.meta.get("class_name") is not None:  # STRUCTURED<'class', ...>
            return rt.STRUCTURED(dt.meta["class_name"], fields, descriptions=tuple(descriptions))
        return rt.ROW(fields, descriptions=tuple(descriptions))
    if kind == T.USERDEFINED:
        name = str(dt.args.get("kind") or "").upper()
        if name == "MULTISET":
            return DataType("MULTISET", children=(_element(dt, 0),))
        if name == "BYTES":
            return rt.BYTES()
        if name == "STRING":
            return rt.STRING()
        raise UnknownTypeError(f"Unknown type '{dt.args.get('kind')}'")
    if kind == T.NULL:
        return rt.NULL()
    if kind in (T.TIMESTAMPTZ, T.TIMETZ):
        # Flink's parser knows the type, its planner has no TIMESTAMP WITH TIME ZONE
        raise UnknownTypeError("Unsupported type 'TIMESTAMP WITH TIME ZONE': use TIMESTAMP_LTZ")
    raise UnknownTypeError(f"Unsupported type '{dt.sql()}'")


# The largest precision per type (larger ones are lowered to it, as Calcite does).
_MAX_PRECISION = {"TIMESTAMP": 9, "TIMESTAMP_LTZ": 9, "TIME": 3, "DECIMAL": 38}


def _capped(kind: str, precision: int) -> int:
    return min(precision, _MAX_PRECISION[kind])


def _decimal(params: list[int]) -> DataType:
    """DECIMAL(p, s) with Flink's defaults (10, 0) and DecimalType's checks."""
    p = _capped("DECIMAL", params[0]) if params else 10
    s = params[1] if len(params) > 1 else 0
    if p < 1:
        raise UnknownTypeError("Decimal precision must be between 1 and 38 (both inclusive).")
    if not 0 <= s <= p:
        raise UnknownTypeError(f"Decimal scale must be between 0 and the precision {p} (both inclusive).")
    return rt.DECIMAL(p, s)


def _element(dt: exp.DataType, i: int) -> DataType:
    elems = dt.expressions
    if len(elems) <= i or not isinstance(elems[i], exp.DataType):
        raise UnknownTypeError(f"Incomplete type '{dt.sql()}'")
    return to_data_type(elems[i])
