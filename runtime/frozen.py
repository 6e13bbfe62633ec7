"""`frozen_dataclass` and `mutable_dataclass`: `@dataclass(frozen=True)` and `@dataclass`
without compiling code for every class.

Why this exists: Python 3.11's dataclasses write the source of `__init__`, `__repr__`,
`__eq__`, `__hash__`, `__setattr__` and `__delattr__` for each class and compile it with
`exec`, ~0.6-1 ms a class. The ~120 plan nodes, types, specs, options and state holders that
`streamsql -e "SELECT 1"` loads spent ~70 ms of its start-up doing that (Python 3.13 halves it
by compiling once per class; this removes it). Here the methods are closures over the
class's field names, made without compiling anything.

What stays the same as the stdlib decorator: the class *is* a dataclass
(`dataclasses.fields`, `replace`, `asdict`, `is_dataclass` and `__match_args__` work, because the
fields are collected by `dataclasses.dataclass` itself); fields with defaults, `default_factory`
and `kw_only`; `compare`, `hash` and `repr` per field; `__post_init__`; `==` compares the
fields of instances of the same class; `repr` prints `QualName(a=1, b='x')`; methods the class
defines itself are kept, as dataclasses keeps them. Frozen: assigning or deleting a field raises
`FrozenInstanceError` and `hash` hashes the compared fields; mutable: `__hash__` is None, as
dataclasses makes it. What differs: `__dataclass_params__` reads `frozen=False` for both
(dataclasses refuses to mix frozen and non-frozen classes in one hierarchy, so every dataclass
in streamsql's packages uses these decorators, which tests/unit/runtime/test_frozen.py checks);
`init=False` fields are not offered; an instance takes ~1 µs longer to create (none is created
per row).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from threading import get_ident
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["frozen_dataclass", "mutable_dataclass"]

_T = TypeVar("_T", bound=type)
_MISSING = dataclasses.MISSING
_set = object.__setattr__


@overload
def frozen_dataclass(cls: _T, /) -> _T: ...


@overload
def frozen_dataclass(*, eq: bool = True) -> Callable[[_T], _T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen_dataclass(cls: Any = None, /, *, eq: bool = True) -> Any:
    """Make `cls` a frozen dataclass, as `@dataclass(frozen=True)` (or `frozen=True, eq=False`)."""
    if cls is None:
        return lambda c: _build(c, eq, frozen=True)
    return _build(cls, eq, frozen=True)


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def mutable_dataclass(cls: _T, /) -> _T:
    """Make `cls` a dataclass whose fields can be assigned, as `@dataclass`."""
    return _build(cls, True, frozen=False)


def _build(cls: _T, eq: bool, frozen: bool) -> _T:
    own = cls.__dict__
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    documented = bool(own.get("__doc__"))
    if not documented:
        cls.__doc__ = cls.__name__  # keeps dataclasses from computing inspect.signature(cls)
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    if not documented:
        cls.__doc__ = f"{cls.__name__}({', '.join(names)})"
    if "__init__" not in own:
        init = _init(cls, fields)
        _put(cls, "__init__", init)
        cls.__signature__ = _LazySignature(init)  # type: ignore[attr-defined]
    if "__repr__" not in own:
        _put(cls, "__repr__", _repr(tuple(f.name for f in fields if f.repr)))
    if eq:
        compared = tuple(f.name for f in fields if f.compare)
        explicit_hash = own.get("__hash__", _MISSING)
        add_hash = explicit_hash is _MISSING or (explicit_hash is None and "__eq__" in own)
        if "__eq__" not in own:
            _put(cls, "__eq__", _eq(compared))
        if add_hash and not frozen:
            cls.__hash__ = None  # type: ignore[assignment]  # a mutable value is unhashable
        elif add_hash:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            _put(cls, "__hash__", _hash(hashed))
    if frozen:
        field_names = frozenset(names)
        _put(cls, "__setattr__", _setattr(cls, field_names))
        _put(cls, "__delattr__", _delattr(cls, field_names))
    return cls


def _put(cls: type, name: str, fn: Callable[..., Any]) -> None:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, fn)


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """One `__init__` for the class's fields: positional fields first, then the keyword-only
    ones, as dataclasses orders them; a default or a factory fills what the caller left out."""
    positional = tuple(f.name for f in fields if f.init and not f.kw_only)
    keyword = tuple(f.name for f in fields if f.init and f.kw_only)
    order = positional + keyword
    known = frozenset(order)
    fill: dict[str, tuple[Any, Any]] = {
        f.name: (f.default, f.default_factory)
        for f in fields
        if f.default is not _MISSING or f.default_factory is not _MISSING
    }
    for f in fields:
        if not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: init=False fields are not offered (give it a default)")
    seen_default = False
    for name in positional:
        if name in fill:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
    count = len(positional)
    post_init = hasattr(cls, "__post_init__")
    qualname = cls.__qualname__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        given = len(args)
        if given > count:
            raise TypeError(f"{qualname}.__init__() takes {count + 1} positional arguments but {given + 1} were given")
        for name, value in zip(positional, args, strict=False):
            _set(self, name, value)
        missing = []
        for name in order[given:]:
            if name in kwargs:
                _set(self, name, kwargs[name])
            elif name in fill:
                default, factory = fill[name]
                _set(self, name, default if factory is _MISSING else factory())
            else:
                missing.append(name)
        if kwargs and not known.issuperset(kwargs):
            extra = next(k for k in kwargs if k not in known)
            raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {extra!r}")
        if kwargs and given:
            twice = [name for name in positional[:given] if name in kwargs]
            if twice:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {twice[0]!r}")
        if missing:
            listed = " and ".join(repr(m) for m in missing)
            raise TypeError(f"{qualname}.__init__() missing {len(missing)} required argument(s): {listed}")
        if post_init:
            self.__post_init__()

    return init


class _LazySignature:
    """`inspect.signature(cls)` for a class whose `__init__` takes `*args, **kwargs`: the
    signature dataclasses would have written, built when someone asks (the Table API's name
    check does; start-up does not). None (inspect's own way) for an instance, or for a
    subclass with an `__init__` of its own."""

    def __init__(self, init: Callable[..., None]) -> None:
        self.init = init

    def __get__(self, instance: object, owner: Any) -> Any:
        if instance is not None or owner.__init__ is not self.init:
            return None
        import inspect  # only for introspection, never on start-up

        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        for f in dataclasses.fields(owner):
            kind = inspect.Parameter.KEYWORD_ONLY if f.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            default = f.default if f.default_factory is _MISSING else _FACTORY
            if default is _MISSING:
                default = inspect.Parameter.empty
            params.append(inspect.Parameter(f.name, kind, default=default, annotation=f.type))
        sig = inspect.Signature(params[1:], return_annotation=None)
        return sig


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()  # what the signature shows for a default_factory, as dataclasses does


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    """`QualName(a=1, b='x')`; an instance met again inside its own repr (a scope whose
    field holds itself) prints `...`, as dataclasses' repr does."""
    running: set[tuple[int, int]] = set()

    def repr_(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({shown})"

    return repr_


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return attrgetter(*names)


def _eq(names: tuple[str, ...]) -> Callable[[Any, object], Any]:
    values = _values(names)

    def eq(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return eq


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def hash_(self: Any) -> int:
        return hash(values(self))

    return hash_


def _setattr(cls: Any, names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def setattr_(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return setattr_


def _delattr(cls: Any, names: frozenset[str]) -> Callable[[Any, str], None]:
    def delattr_(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return delattr_
