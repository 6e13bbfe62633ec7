"""Flink's logical types, shared by the planner (type inference) and the runtime (Arrow layout).

The runtime owns this module because the runtime may not import the planner, while the
planner may import the runtime: one definition of a type serves both sides and the JobGraph.
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any

import pyarrow as pa

from runtime.checkpoint.format import register_state_type
from runtime.frozen import frozen_dataclass
from runtime.map_values import map_arrow_type

MAX_VARCHAR = 2147483647

INTEGER_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT")
APPROX_TYPES = ("FLOAT", "DOUBLE")
NUMERIC_TYPES = INTEGER_TYPES + ("DECIMAL",) + APPROX_TYPES
CHARACTER_TYPES = ("CHAR", "VARCHAR")
BINARY_TYPES = ("BINARY", "VARBINARY")
TIMESTAMP_TYPES = ("TIMESTAMP", "TIMESTAMP_LTZ")
INTERVAL_TYPES = ("INTERVAL_DAY_TIME", "INTERVAL_YEAR_MONTH")
ALL_TYPE_NAMES = (
    NUMERIC_TYPES
    + CHARACTER_TYPES
    + BINARY_TYPES
    + TIMESTAMP_TYPES
    + INTERVAL_TYPES
    + ("BOOLEAN", "DATE", "TIME", "ARRAY", "MAP", "MULTISET", "ROW", "STRUCTURED", "NULL", "BITMAP", "VARIANT")
)

# Default precisions, as Flink's LogicalType classes define them.
_DEFAULT_PRECISION = {"TIMESTAMP": 6, "TIMESTAMP_LTZ": 6, "TIME": 0, "DECIMAL": 10, "CHAR": 1, "VARCHAR": 1}


@register_state_type
@frozen_dataclass
class DataType:
    """One Flink logical type.

    `name` is one of ALL_TYPE_NAMES. `time_attr` marks a time attribute ("ROWTIME" or
    "PROCTIME"): the planner tracks it through projections; the runtime ignores it.
    `class_name` is a STRUCTURED type's class (Flink's inline structured type: a class
    name and named fields, as OBJECT_OF builds; no Java class is needed or loaded).
    """

    name: str
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None
    children: tuple[DataType, ...] = ()
    field_names: tuple[str, ...] = ()
    time_attr: str | None = field(default=None, compare=False)
    class_name: str | None = None
    # A ROW's field descriptions (`ROW<n INT 'd'>`), None where a field has none: shown in
    # the type's text, as Flink's RowField prints them; not part of the type's identity.
    field_descriptions: tuple[str | None, ...] = field(default=(), compare=False)

    # ------------------------------------------------------------------ predicates
    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC_TYPES

    @property
    def is_integer(self) -> bool:
        return self.name in INTEGER_TYPES

    @property
    def is_string(self) -> bool:
        return self.name in CHARACTER_TYPES

    @property
    def is_timestamp(self) -> bool:
        return self.name in TIMESTAMP_TYPES

    @property
    def is_time_attribute(self) -> bool:
        return self.time_attr is not None

    # ------------------------------------------------------------------ variants
    def with_nullable(self, nullable: bool) -> DataType:
        return replace(self, nullable=nullable)

    def not_null(self) -> DataType:
        return replace(self, nullable=False)

    def as_time_attr(self, kind: str | None) -> DataType:
        return replace(self, time_attr=kind)

    # ------------------------------------------------------------------ text
    def __str__(self) -> str:
        text = self._summary()
        if not self.nullable:
            text += " NOT NULL"
        if self.time_attr:
            text += f" *{self.time_attr}*"
        return text

    def _summary(self) -> str:
        n = self.name
        if n == "VARCHAR" and self.precision == MAX_VARCHAR:
            return "STRING"
        if n == "VARBINARY" and self.precision == MAX_VARCHAR:
            return "BYTES"
        if n in ("CHAR", "VARCHAR", "BINARY", "VARBINARY", "TIME"):
            return f"{n}({self.precision})"
        if n == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if n == "TIMESTAMP":
            return f"TIMESTAMP({self.precision})"
        if n == "TIMESTAMP_LTZ":
            return f"TIMESTAMP_LTZ({self.precision})"
        if n == "INTERVAL_DAY_TIME":
            return "INTERVAL SECOND(3)"
        if n == "INTERVAL_YEAR_MONTH":
            return "INTERVAL MONTH"
        if n in ("ARRAY", "MULTISET"):
            return f"{n}<{self.children[0]}>"
        if n == "MAP":
            return f"MAP<{self.children[0]}, {self.children[1]}>"
        if n == "ROW":
            return f"ROW<{', '.join(self._fields_text())}>"
        if n == "STRUCTURED":
            parts = [f"'{self.class_name}'", *self._fields_text()]
            return f"STRUCTURED<{', '.join(parts)}>"
        return n

    def _fields_text(self) -> list[str]:
        """A ROW's / STRUCTURED's fields as Flink prints them: `` `n` TYPE ['description'] ``."""
        descs = self.field_descriptions or (None,) * len(self.children)
        return [
            f"`{fn}` {ft}" + ("" if d is None else " '" + d.replace("'", "''") + "'")
            for fn, ft, d in zip(self.field_names, self.children, descs, strict=True)
        ]

    # ------------------------------------------------------------------ arrow
    def to_arrow(self) -> pa.DataType:
        """The Arrow type that carries values of this type in a RecordBatch."""
        n = self.name
        simple = _SIMPLE_ARROW.get(n)
        if simple is not None:
            return simple
        if n == "DECIMAL":
            p = self.precision or 10
            return pa.decimal128(p, self.scale or 0) if p <= 38 else pa.decimal256(p, self.scale or 0)
        if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            unit = timestamp_unit(self.precision)
            return pa.timestamp(unit, tz="UTC" if n == "TIMESTAMP_LTZ" else None)
        if n == "ARRAY" or n == "MULTISET":
            return pa.list_(self.children[0].to_arrow())
        if n == "MAP":
            # not Arrow's map type, which cannot hold Flink's NULL keys: runtime/map_values.py
            return map_arrow_type(self.children[0].to_arrow(), self.children[1].to_arrow())
        if n in ("ROW", "STRUCTURED"):
            return pa.struct(
                [
                    pa.field(fn, ft.to_arrow(), ft.nullable)
                    for fn, ft in zip(self.field_names, self.children, strict=True)
                ]
            )
        raise ValueError(f"no Arrow layout for type {self}")

    # ------------------------------------------------------------------ json
    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if not self.nullable:
            d["nullable"] = False
        if self.precision is not None:
            d["precision"] = self.precision
        if self.scale is not None:
            d["scale"] = self.scale
        if self.children:
            d["children"] = [c.to_json() for c in self.children]
        if self.field_names:
            d["field_names"] = list(self.field_names)
        if self.time_attr:
            d["time_attr"] = self.time_attr
        if self.class_name is not None:
            d["class_name"] = self.class_name
        if any(x is not None for x in self.field_descriptions):
            d["field_descriptions"] = list(self.field_descriptions)
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> DataType:
        return DataType(
            name=d["name"],
            nullable=d.get("nullable", True),
            precision=d.get("precision"),
            scale=d.get("scale"),
            children=tuple(DataType.from_json(c) for c in d.get("children", ())),
            field_names=tuple(d.get("field_names", ())),
            time_attr=d.get("time_attr"),
            class_name=d.get("class_name"),
            field_descriptions=tuple(d.get("field_descriptions", ())),
        )


_SIMPLE_ARROW: dict[str, pa.DataType] = {
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "CHAR": pa.string(),
    "VARCHAR": pa.string(),
    "BINARY": pa.binary(),
    "VARBINARY": pa.binary(),
    "DATE": pa.date32(),
    "TIME": pa.time32("ms"),
    "INTERVAL_DAY_TIME": pa.duration("ms"),
    "INTERVAL_YEAR_MONTH": pa.int32(),
    "NULL": pa.null(),
    # Flink's BITMAP (a RoaringBitmap of 32-bit unsigned ints): the sorted distinct values
    # (runtime/functions/bitmap.py)
    "BITMAP": pa.list_(pa.uint32()),
    # Flink's VARIANT: its canonical JSON text (runtime/functions/variant.py)
    "VARIANT": pa.string(),
}


def plain(t: DataType) -> DataType:
    """The type without its time-attribute marker (a computed value is no time attribute)."""
    return t.as_time_attr(None) if t.time_attr else t


def timestamp_unit(precision: int | None) -> str:
    """Arrow unit for a TIMESTAMP(p): milliseconds up to p=3, then micro, then nano."""
    p = 6 if precision is None else precision
    if p <= 3:
        return "ms"
    if p <= 6:
        return "us"
    return "ns"


# ---------------------------------------------------------------------- constructors
def TINYINT(nullable: bool = True) -> DataType:  # noqa: N802 - Flink's spelling
    return DataType("TINYINT", nullable)


def SMALLINT(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("SMALLINT", nullable)


def INT(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("INT", nullable)


def BIGINT(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("BIGINT", nullable)


def FLOAT(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("FLOAT", nullable)


def DOUBLE(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("DOUBLE", nullable)


def BOOLEAN(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("BOOLEAN", nullable)


def STRING(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("VARCHAR", nullable, precision=MAX_VARCHAR)


def VARCHAR(n: int = MAX_VARCHAR, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("VARCHAR", nullable, precision=n)


def CHAR(n: int = 1, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("CHAR", nullable, precision=n)


def BYTES(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("VARBINARY", nullable, precision=MAX_VARCHAR)


def DECIMAL(p: int = 10, s: int = 0, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("DECIMAL", nullable, precision=p, scale=s)


def DATE(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("DATE", nullable)


def TIME(p: int = 0, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("TIME", nullable, precision=p)


def TIMESTAMP(p: int = 6, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("TIMESTAMP", nullable, precision=p)


def TIMESTAMP_LTZ(p: int = 6, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("TIMESTAMP_LTZ", nullable, precision=p)


def INTERVAL_DAY_TIME(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("INTERVAL_DAY_TIME", nullable, precision=3)


def INTERVAL_YEAR_MONTH(nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("INTERVAL_YEAR_MONTH", nullable)


def ARRAY(element: DataType, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("ARRAY", nullable, children=(element,))


def MAP(key: DataType, value: DataType, nullable: bool = True) -> DataType:  # noqa: N802
    return DataType("MAP", nullable, children=(key, value))


def ROW(  # noqa: N802
    fields: list[tuple[str, DataType]], nullable: bool = True, descriptions: tuple[str | None, ...] = ()
) -> DataType:
    """A ROW of named fields; `descriptions` (one per field, None for none) as declared
    by `ROW<n t 'description'>`."""
    return DataType(
        "ROW",
        nullable,
        children=tuple(t for _, t in fields),
        field_names=tuple(n for n, _ in fields),
        field_descriptions=descriptions if any(d is not None for d in descriptions) else (),
    )


def STRUCTURED(  # noqa: N802
    class_name: str,
    fields: list[tuple[str, DataType]],
    nullable: bool = True,
    descriptions: tuple[str | None, ...] = (),
) -> DataType:
    """An inline structured type: a class name and named (optionally described) fields."""
    return DataType(
        "STRUCTURED",
        nullable,
        children=tuple(t for _, t in fields),
        field_names=tuple(n for n, _ in fields),
        class_name=class_name,
        field_descriptions=descriptions if any(d is not None for d in descriptions) else (),
    )


def NULL() -> DataType:  # noqa: N802
    return DataType("NULL", True)


@frozen_dataclass
class Field:
    """A named column of a schema."""

    name: str
    type: DataType

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type.to_json()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Field:
        return Field(d["name"], DataType.from_json(d["type"]))


def arrow_schema(fields: list[Field] | tuple[Field, ...]) -> pa.Schema:
    """The Arrow schema of the data columns of a batch with these fields."""
    return pa.schema([pa.field(f.name, f.type.to_arrow(), f.type.nullable) for f in fields])
