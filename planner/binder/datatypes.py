"""sqlglot `exp.DataType` → `DataType`.

The parser's `planner.dialect.types.to_data_type` is the authority; this module falls back
to a local conversion of the common types while that module is missing or declines.
"""

from __future__ import annotations

from sqlglot import exp

from runtime.types import MAX_VARCHAR, DataType

_SIMPLE = {
    "INT": "INT",
    "UINT": "INT",
    "BIGINT": "BIGINT",
    "SMALLINT": "SMALLINT",
    "TINYINT": "TINYINT",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
}


def to_data_type(dt: exp.DataType) -> DataType:
    """The Flink type a parsed type stands for."""
    try:
        from planner.dialect import types as dialect_types
    except ImportError:
        return _local(dt)
    try:
        return dialect_types.to_data_type(dt)
    except Exception:  # noqa: BLE001 - fall back to the local conversion below
        pass
    return _local(dt)


def _params(dt: exp.DataType) -> list[int]:
    out = []
    for p in dt.expressions:
        if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal):
            out.append(int(p.this.this))
    return out


def _local(dt: exp.DataType) -> DataType:
    kind = dt.this.name if hasattr(dt.this, "name") else str(dt.this)
    params = _params(dt)
    nullable = dt.args.get("nullable") is not False
    if kind in _SIMPLE:
        return DataType(_SIMPLE[kind], nullable)
    if kind in ("TEXT", "VARCHAR", "NVARCHAR") and not params:
        return DataType("VARCHAR", nullable, precision=MAX_VARCHAR)
    if kind in ("VARCHAR", "NVARCHAR"):
        return DataType("VARCHAR", nullable, precision=params[0])
    if kind in ("CHAR", "NCHAR"):
        return DataType("CHAR", nullable, precision=params[0] if params else 1)
    if kind in ("DECIMAL", "BIGDECIMAL"):
        p = params[0] if params else 10
        s = params[1] if len(params) > 1 else 0
        return DataType("DECIMAL", nullable, precision=p, scale=s)
    if kind in ("TIMESTAMP", "DATETIME"):
        return DataType("TIMESTAMP", nullable, precision=params[0] if params else 6)
    if kind in ("TIMESTAMPLTZ", "TIMESTAMPTZ"):
        return DataType("TIMESTAMP_LTZ", nullable, precision=params[0] if params else 6)
    if kind == "TIME":
        return DataType("TIME", nullable, precision=params[0] if params else 0)
    if kind in ("VARBINARY", "BINARY", "BLOB"):
        if kind == "BINARY":
            return DataType("BINARY", nullable, precision=params[0] if params else 1)
        return DataType("VARBINARY", nullable, precision=params[0] if params else MAX_VARCHAR)
    if kind == "ARRAY":
        return DataType("ARRAY", nullable, children=(_local(dt.expressions[0]),))
    if kind == "MAP":
        return DataType("MAP", nullable, children=(_local(dt.expressions[0]), _local(dt.expressions[1])))
    raise ValueError(f"unsupported type {dt.sql()}")
