"""PyFlink's Row and RowKind: what `TableResult.collect()` yields and what Python functions
receive for ROW values (re-exported by `streamsql.row`, `streamsql.common`)."""

from __future__ import annotations

from enum import Enum
from typing import Any


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


class Row(tuple):  # noqa: SLOT001 - a tuple subclass like PyFlink's Row
    """A row with a kind and optional field names (access by index, name or attribute).

    As in PyFlink: `Row(1, 'a')`, `Row(name='Alice', age=11)`, and `Person = Row('name',
    'age')` makes a row "class" whose call `Person('Alice', 11)` gives a named row.
    """

    _fields: tuple[str, ...] | None
    _kind: RowKind

    def __new__(cls, *values: Any, **named: Any) -> Row:
        if values and named:
            raise ValueError("Can not use both args and kwargs to create Row")
        if named:
            row = super().__new__(cls, tuple(named.values()))
            row._fields = tuple(named.keys())
        else:
            row = super().__new__(cls, values)
            row._fields = None
        row._kind = RowKind.INSERT
        return row

    @classmethod
    def of(cls, values: tuple[Any, ...], names: tuple[str, ...] | None, kind: RowKind = RowKind.INSERT) -> Row:
        row = super().__new__(cls, values)
        row._fields = names
        row._kind = kind
        return row

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def __call__(self, *args: Any) -> Row:
        """A row "class" (`Row('name', 'age')`) called with values gives a named row."""
        if len(args) > len(self):
            raise ValueError(f"Can not create Row with fields {self!r}, expected {len(self)} values but got {args}")
        return Row.of(tuple(args), tuple(str(f) for f in self), self._kind)

    def get_row_kind(self) -> RowKind:
        return self._kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self._fields = tuple(field_names)

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        return [self[n] for n in names]

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

        return {n: (conv(v) if recursive else v) for n, v in zip(self._fields, self, strict=True)}

    def __contains__(self, item: object) -> bool:
        if self._fields is not None:
            return item in self._fields
        return tuple.__contains__(self, item)

    def __getitem__(self, item: Any) -> Any:  # type: ignore[override]
        if isinstance(item, str):
            if self._fields is None or item not in self._fields:
                raise KeyError(item)
            return tuple.__getitem__(self, self._fields.index(item))
        return tuple.__getitem__(self, item)

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        if fields is not None and name in fields:
            return tuple.__getitem__(self, fields.index(name))
        raise AttributeError(name)

    def __repr__(self) -> str:
        # PyFlink's text: named rows as Row(a=1, b='x'), others as <Row(1, 'x')>.
        if self._fields:
            return "Row(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True)) + ")"
        return "<Row(" + ", ".join(repr(v) for v in self) + ")>"
