"""PyFlink's Row and RowKind: what `TableResult.collect()` yields and what Python functions
receive for ROW values (re-exported by `streamsql.row`, `streamsql.common`)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import TYPE_CHECKING, Any

from runtime.map_values import pairs

if TYPE_CHECKING:
    import pyarrow as pa

    from runtime.types import DataType


class RowKind(Enum):
    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def short_string(self) -> str:
        return ("+I", "-U", "+U", "-D")[self.value]

    def __str__(self) -> str:
        return self.short_string()

    def to_j_row_kind(self) -> None:
        """PyFlink's conversion to the Java RowKind: there is no JVM here."""
        raise NotImplementedError("RowKind.to_j_row_kind converts to a Java object: streamsql has no JVM")


class Row:
    """A row with a kind and optional field names, as PyFlink's: fields by index, name or
    attribute, and mutable (an aggregate function's `Row(0, 0)` accumulator is updated in
    place). `Row(1, 'a')`, `Row(name='Alice', age=11)`; `Person = Row('name', 'age')` makes a
    row "class" whose call `Person('Alice', 11)` gives a named row.

    Beyond PyFlink, a Row also equals the plain tuple of its values and sorts like it, so
    rows collected from a result compare with tuples in tests and notebooks.
    """

    __slots__ = ("_anonymous", "_fields", "_kind", "_values")
    # The slots a checkpoint writes (runtime/udaf.py registers Row with them): `_anonymous`
    # is not state, a row restored from state reads as not anonymous.
    STATE_FIELDS = ("_fields", "_kind", "_values")

    _fields: tuple[str, ...] | None
    _kind: RowKind
    _values: list[Any]
    # A row from `TableResult.collect()`: PyFlink's have no field names, so it prints,
    # compares and answers `in` as an unnamed row; the names stay readable (row.name,
    # row['name']) as an extension.
    _anonymous: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            self._fields = tuple(kwargs)
            self._values = list(kwargs.values())
        else:
            self._fields = None
            self._values = list(args)
        self._kind = RowKind.INSERT
        self._anonymous = False

    @classmethod
    def of(
        cls,
        values: tuple[Any, ...] | list[Any],
        names: tuple[str, ...] | None,
        kind: RowKind = RowKind.INSERT,
        anonymous: bool = False,
    ) -> Row:
        row = cls.__new__(cls)
        row._values = list(values)
        row._fields = names
        row._kind = kind
        row._anonymous = anonymous
        return row

    def _shown_fields(self) -> tuple[str, ...] | None:
        """The names PyFlink's row would have: none for an anonymous (collected) row."""
        return None if getattr(self, "_anonymous", False) else self._fields

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def __call__(self, *args: Any) -> Row:
        """A row "class" (`Row('name', 'age')`) called with values gives a named row."""
        if len(args) > len(self):
            raise ValueError(f"Can not create Row with fields {self!r}, expected {len(self)} values but got {args}")
        return Row.of(tuple(args), tuple(str(f) for f in self._values), self._kind)

    def get_row_kind(self) -> RowKind:
        return self._kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self._fields = tuple(field_names)
        self._anonymous = False

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        if self._fields is None or list(names) == list(self._fields):
            return list(self._values)
        missing = [n for n in names if n not in self._fields]
        if missing:
            raise KeyError(f"Field names {missing} not exist in {list(self._fields)}.")
        return [self._values[self._fields.index(n)] for n in names]

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        if self._fields is None:
            raise TypeError("Cannot convert a Row class into dict")

        def conv(v: Any) -> Any:
            if isinstance(v, Row) and v._fields is not None:
                return v.as_dict(True)
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, dict):
                return {k: conv(x) for k, x in v.items()}
            return v

        return {n: (conv(v) if recursive else v) for n, v in zip(self._fields, self._values, strict=True)}

    def as_tuple(self) -> tuple[Any, ...]:
        """The values as a tuple, nested Rows too (what Arrow takes for a ROW value)."""
        return tuple(v.as_tuple() if isinstance(v, Row) else v for v in self._values)

    def _index(self, item: str) -> int:
        if self._fields is None or item not in self._fields:
            raise KeyError(item)
        return self._fields.index(item)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return self._values[self._index(item)]
        return self._values[item]

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, str):
            self._values[self._index(key)] = value
        else:
            self._values[key] = value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        fields = self._fields
        if fields is not None and name in fields:
            return self._values[fields.index(name)]
        raise AttributeError(name)

    def __contains__(self, item: object) -> bool:
        fields = self._shown_fields()
        if fields is not None:
            return item in fields
        return item in self._values

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Row):
            mine, theirs = self._shown_fields(), other._shown_fields()
            if (mine is None) != (theirs is None) or self._kind != other._kind:
                return False
            if mine is not None and theirs is not None:
                if sorted(mine) != sorted(theirs):
                    return False
                return all(self[n] == other[n] for n in mine)
            return self._values == other._values
        if isinstance(other, tuple):
            return tuple(self._values) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __lt__(self, other: object) -> bool:
        return tuple(self._values) < tuple(other)  # type: ignore[call-overload,arg-type]

    def __reduce__(self) -> tuple[Any, ...]:
        return (Row.of, (tuple(self._values), self._fields, self._kind, getattr(self, "_anonymous", False)))

    def __repr__(self) -> str:
        # PyFlink's text: named rows as Row(a=1, b='x'), others (collected rows too) as <Row(1, 'x')>.
        fields = self._shown_fields()
        if fields:
            return "Row(" + ", ".join(f"{n}={v!r}" for n, v in zip(fields, self._values, strict=True)) + ")"
        return "<Row(" + ", ".join(repr(v) for v in self._values) + ")>"


def arrow_value(v: Any) -> Any:
    """A Python value as Arrow takes it: Rows (also inside lists) as tuples."""
    if isinstance(v, Row):
        return tuple(arrow_value(x) for x in v)
    if isinstance(v, list):
        return [arrow_value(x) for x in v]
    return v


def python_values(arr: pa.Array, dt: DataType) -> list[Any]:
    """A column as the Python values PyFlink passes to a Python function (scalar, table and
    aggregate UDFs): ROW values as named `Row`s and MAP values as dicts (PyFlink's
    MapCoderImpl decodes a map into a dict; a NULL key is the key None), at any depth;
    everything else as Arrow gives it."""
    values = arr.to_pylist()
    return values if not has_row(dt) else [_pyflink_value(v, dt) for v in values]


def has_row(dt: DataType) -> bool:
    """Whether a type holds a ROW or a MAP at any depth (the values Arrow's `to_pylist()`
    does not give in PyFlink's form)."""
    return dt.name in ("ROW", "MAP") or any(has_row(c) for c in dt.children or ())


def _pyflink_value(v: Any, dt: DataType) -> Any:
    if v is None:
        return None
    if dt.name == "ROW":
        children = dt.children or ()
        names = tuple(dt.field_names or ())
        return Row.of(tuple(_pyflink_value(v.get(n), c) for n, c in zip(names, children, strict=True)), names)
    if dt.name in ("ARRAY", "MULTISET") and dt.children:
        return [_pyflink_value(x, dt.children[0]) for x in v]
    if dt.name == "MAP" and dt.children:
        return {_hashable(_pyflink_value(k, dt.children[0])): _pyflink_value(x, dt.children[1]) for k, x in pairs(v)}
    return v


def _hashable(key: Any) -> Any:
    """A dict key: an ARRAY key (a list) as a tuple (PyFlink itself cannot decode such a map)."""
    return tuple(_hashable(x) for x in key) if isinstance(key, list) else key
