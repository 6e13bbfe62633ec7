"""PyFlink-shaped Row and RowKind, what `TableResult.collect()` yields."""

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


class Row(tuple):  # noqa: SLOT001 - a tuple subclass like PyFlink's Row
    """An immutable row with a kind and optional field names (access by index or name)."""

    _fields: tuple[str, ...] | None
    _kind: RowKind

    def __new__(cls, *values: Any, **named: Any) -> Row:
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

    def get_row_kind(self) -> RowKind:
        return self._kind

    def set_row_kind(self, kind: RowKind) -> None:
        self._kind = kind

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        return [self[n] for n in names]

    def as_dict(self) -> dict[str, Any]:
        if self._fields is None:
            raise TypeError("this Row has no field names")
        return dict(zip(self._fields, self, strict=True))

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
        if self._fields:
            inner = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
        else:
            inner = ", ".join(repr(v) for v in self)
        return f"<Row({inner})>" if self._kind is RowKind.INSERT else f"<Row[{self._kind}]({inner})>"
