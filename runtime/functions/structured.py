"""OBJECT_OF and OBJECT_UPDATE: values of Flink's STRUCTURED type (FLIP-520).

A STRUCTURED type is a class name plus named, typed fields (`runtime.types.STRUCTURED`);
its Arrow layout is a struct, like ROW, and it renders as `(name=Bob, age=42)`. Flink
resolves the class name against its class loader only to attach a Java class when one
exists; an unknown name (the usual case in SQL) gives an inline structured type, which is
what streamsql builds: no JVM is involved.

- `OBJECT_OF(class, key1, value1, ...)`: the class name and every key are non-null string
  literals, keys unique; the fields are the keys in order, typed as their values.
- `OBJECT_UPDATE(object, key1, value1, ...)`: replaces existing fields. Flink 2.3 infers
  the result type by collecting the fields into a `java.util.HashMap`, so the result's
  fields come in HashMap iteration order (by the names' hash codes), while the values stay
  where the input had them (FLINK-40444). Both are reproduced: for most names (e.g. `name`,
  `age`) the orders agree.
"""

from __future__ import annotations

import pyarrow as pa

from runtime.errors import EvaluationError
from runtime.functions._common import null_mask, to_array
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import STRUCTURED, DataType


def _infer_plain(types: list[DataType]) -> DataType:
    raise FunctionTypeError("OBJECT_OF / OBJECT_UPDATE need literal class and field names")


def _key(types: list[DataType], literals: list[object], pos: int, nonnull: str) -> str:
    t = types[pos]
    if not t.is_string:
        raise FunctionTypeError(
            f"The field key at position {pos + 1} must be a {nonnull} character string, but was {t}."
        )
    value = literals[pos]
    if not isinstance(value, str):
        raise FunctionTypeError(f"The field key at position {pos + 1} must be a {nonnull} character string literal.")
    return value


def _infer_object_of(types: list[DataType], literals: list[object]) -> DataType:
    if len(types) % 2 != 1:
        raise FunctionTypeError("OBJECT_OF takes a class name and key-value pairs (an odd number of arguments)")
    if not types[0].is_string:
        raise FunctionTypeError(
            "The first argument must be a non-nullable character string representing the class name, "
            f"but was {types[0]}."
        )
    class_name = literals[0]
    if not isinstance(class_name, str):
        raise FunctionTypeError(
            "The first argument must be a non-nullable character string literal representing the class name."
        )
    fields: list[tuple[str, DataType]] = []
    for pos in range(1, len(types), 2):
        name = _key(types, literals, pos, "non-nullable")
        if any(name == n for n, _ in fields):
            raise FunctionTypeError(f"The field name '{name}' at position {pos + 1} is repeated.")
        fields.append((name, types[pos + 1]))
    return STRUCTURED(class_name, fields)


def _java_hash(s: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as an unsigned 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h


def hash_map_order(names: list[str]) -> list[str]:
    """The iteration order of a java.util.HashMap after putting `names` in order (default
    capacity 16, doubling past 3/4 full; a bucket keeps insertion order)."""
    capacity = 16
    while len(names) > capacity * 3 // 4:
        capacity *= 2

    def bucket(name: str) -> int:
        h = _java_hash(name)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(names, key=lambda n: (bucket(n), names.index(n)))


def _infer_object_update(types: list[DataType], literals: list[object]) -> DataType:
    if len(types) < 3 or len(types) % 2 != 1:
        raise FunctionTypeError("OBJECT_UPDATE takes an object and key-value pairs (an odd number, at least 3)")
    obj = types[0]
    if obj.name != "STRUCTURED":
        raise FunctionTypeError(f"The first argument must be a structured type, but was {obj}.")
    current = dict(zip(obj.field_names, obj.children, strict=True))
    seen: set[str] = set()
    for pos in range(1, len(types), 2):
        name = _key(types, literals, pos, "non-null")
        if name in seen:
            raise FunctionTypeError(f"The field name '{name}' at position {pos + 1} is repeated.")
        seen.add(name)
        if name not in current:
            shown = "[" + ", ".join(hash_map_order(list(obj.field_names))) + "]"
            raise FunctionTypeError(
                f"The field name '{name}' at position {pos + 1} is not part of the structured type attributes. "
                f"Available attributes: {shown}."
            )
        if types[pos + 1] != current[name]:
            current[name] = types[pos + 1]
    order = hash_map_order(list(obj.field_names))
    assert obj.class_name is not None
    return STRUCTURED(obj.class_name, [(n, current[n]) for n in order])


def _struct(columns: list[pa.Array], rt: DataType, n: int, mask: pa.Array | None) -> pa.Array:
    target = rt.to_arrow()
    if not columns:  # an object without fields: one empty struct per row
        return pa.array([{}] * n, type=target) if mask is None else pa.array([{}] * n, type=target, mask=mask)
    cols = []
    for col, f in zip(columns, target, strict=True):
        if col.type != f.type:
            try:
                col = col.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise EvaluationError(
                    f"OBJECT_UPDATE: a value of type {col.type} cannot be stored in field '{f.name}' "
                    f"of type {f.type} (Flink 2.3 fails with a ClassCastException here)"
                ) from e
        cols.append(col)
    return pa.StructArray.from_arrays(cols, fields=list(target), mask=mask)


@scalar("object_of", _infer_plain, infer_with_literals=_infer_object_of)
def _object_of(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    return _struct([to_array(args[i], n) for i in range(2, len(args), 2)], rt, n, None)


@scalar("object_update", _infer_plain, infer_with_literals=_infer_object_update)
def _object_update(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    obj = to_array(args[0], n)
    names = list(types[0].field_names)
    values = [obj.field(i) for i in range(len(names))]
    for pos in range(1, len(args), 2):
        key = args[pos]
        name = key.as_py() if isinstance(key, pa.Scalar) else None
        values[names.index(str(name))] = to_array(args[pos + 1], n)
    nulls = null_mask(obj)
    return _struct(values, rt, n, pa.array(nulls) if nulls.any() else None)


document(
    {
        "object_of": (
            "OBJECT_OF(class_name, [key, value [, key, value]*])",
            "OBJECT_OF('com.example.User', 'name', 'Bob', 'age', 42)",
        ),
        "object_update": (
            "OBJECT_UPDATE(object, key, value [, key, value]*)",
            "OBJECT_UPDATE(OBJECT_OF('com.example.User', 'name', 'Bob', 'age', 14), 'age', 15)",
        ),
    }
)
