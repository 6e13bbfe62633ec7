"""Which `Translator` method turns a JobGraph node into a DataFrame: each method is
registered for its kind's params class with `@translates(XParams)` (exact class: a
WindowRank is not translated as a Rank unless its own method says so). A kind without a
registered method is not mapped to Spark; `capabilities.py` refuses it at planning."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from runtime.graph import Node
from runtime.operators.spec import OperatorParams

Translation = Callable[[Any, Node], Any]
_T = TypeVar("_T", bound=Translation)
_TRANSLATIONS: dict[type[OperatorParams], Translation] = {}


def translates(*params_types: type[OperatorParams]) -> Callable[[_T], _T]:
    """Register the decorated `Translator` method for nodes whose params are of these classes."""

    def deco(fn: _T) -> _T:
        for t in params_types:
            _TRANSLATIONS[t] = fn
        return fn

    return deco


def translation_for(node: Node) -> Translation | None:
    """The method translating `node` (called as `method(translator, node)`), or None."""
    return _TRANSLATIONS.get(type(node.params))
