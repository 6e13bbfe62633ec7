"""PyFlink's DataViews (`pyflink.table.ListView` / `MapView`): collections an aggregate
function keeps in its accumulator. They live in the runtime because the runtime keeps
accumulators in operator state: runtime/udaf.py registers them as state types, so a
checkpoint writes a ListView as its list and a MapView as its dict (no pickle) and a
restore rebuilds them. `streamsql.udf` re-exports them.

PyFlink backs a DataView with keyed state when the accumulator type declares it
(`DataTypes.LIST_VIEW` / `MAP_VIEW`); here it is always an in-memory collection inside the
accumulator object, checkpointed with it.
"""

from __future__ import annotations

from typing import Any


class DataView:
    """Base of ListView / MapView: collections held in an aggregate function's accumulator."""

    def clear(self) -> None:
        raise NotImplementedError


class ListView(DataView):
    """A list in an accumulator (PyFlink's ListView): `add`, `add_all`, `get`, `clear`."""

    def __init__(self) -> None:
        self._list: list[Any] = []

    def get(self) -> list[Any]:
        return self._list

    def add(self, value: Any) -> None:
        self._list.append(value)

    def add_all(self, values: list[Any]) -> None:
        self._list.extend(values)

    def clear(self) -> None:
        self._list = []

    def __iter__(self) -> Any:
        return iter(self._list)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListView) and other._list == self._list

    __hash__ = None  # type: ignore[assignment]


class MapView(DataView):
    """A map in an accumulator (PyFlink's MapView)."""

    def __init__(self) -> None:
        self._dict: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        return self._dict.get(key)

    def put(self, key: Any, value: Any) -> None:
        self._dict[key] = value

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        self._dict.update(dict_value)

    def remove(self, key: Any) -> None:
        self._dict.pop(key, None)

    def contains(self, key: Any) -> bool:
        return key in self._dict

    def items(self) -> Any:
        return self._dict.items()

    def keys(self) -> Any:
        return self._dict.keys()

    def values(self) -> Any:
        return self._dict.values()

    def is_empty(self) -> bool:
        return not self._dict

    def clear(self) -> None:
        self._dict = {}

    def __getitem__(self, key: Any) -> Any:
        return self.get(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: Any) -> None:
        self.remove(key)

    def __contains__(self, key: Any) -> bool:
        return self.contains(key)

    def __iter__(self) -> Any:
        return iter(self._dict)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MapView) and other._dict == self._dict

    __hash__ = None  # type: ignore[assignment]
