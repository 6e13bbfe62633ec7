"""`frozen_dataclass` behaves as `@dataclass(frozen=True)`: each class shape below is declared
twice, once with each decorator, and every observable (construction, errors, repr, ==, hash,
dataclasses' functions, signature, pickling, freezing) must agree. The last test keeps the
stdlib decorator out of streamsql's packages: a frozen stdlib dataclass cannot inherit from a
`frozen_dataclass` (dataclasses refuses to mix), and each one costs start-up time."""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from runtime.frozen import frozen_dataclass, mutable_dataclass

ROOT = Path(__file__).resolve().parents[3]


def _shapes(deco: Callable[..., Any], deco_no_eq: Callable[..., Any]) -> dict[str, Any]:
    """The same classes under one decorator pair (module-level names, so pickle finds them)."""

    @deco
    class Plain:
        a: int
        b: str = "x"

    @deco
    class Factories:
        items: tuple[int, ...] = field(default_factory=tuple)
        tags: dict[str, int] = field(default_factory=dict, compare=False)
        note: str = field(default="", repr=False, hash=False)

    @deco
    class KwOnly:
        a: int
        b: int = field(default=2, kw_only=True)
        c: int = field(kw_only=True, default=3)

    @deco
    class Base:
        name: str
        size: int = 0

    @deco
    class Child(Base):
        extra: tuple[int, ...] = ()

    @deco
    class Checked:
        low: int
        high: int

        def __post_init__(self) -> None:
            if self.low > self.high:
                raise ValueError("low > high")
            object.__setattr__(self, "_span", self.high - self.low)

    @deco
    class OwnMethods:
        a: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OwnMethods)

        def __hash__(self) -> int:
            return 7

    @deco
    class Empty:
        pass

    @deco_no_eq
    class Identity:
        a: int

    return {c.__name__: c for c in (Plain, Factories, KwOnly, Base, Child, Checked, OwnMethods, Empty, Identity)}


STD = _shapes(dataclass(frozen=True), dataclass(frozen=True, eq=False))
OURS = _shapes(frozen_dataclass, frozen_dataclass(eq=False))
MUTABLE_STD = _shapes(dataclass, dataclass(eq=False))
MUTABLE_OURS = _shapes(mutable_dataclass, mutable_dataclass)  # eq=False is not offered: Identity is skipped

CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("Plain", (1,), {}),
    ("Plain", (1, "y"), {}),
    ("Plain", (), {"a": 1, "b": "z"}),
    ("Plain", (), {}),
    ("Plain", (1, "y", 3), {}),
    ("Plain", (1,), {"a": 2}),
    ("Plain", (1,), {"zzz": 2}),
    ("Factories", (), {}),
    ("Factories", ((1,),), {"tags": {"k": 1}, "note": "n"}),
    ("KwOnly", (1,), {}),
    ("KwOnly", (1,), {"c": 9}),
    ("KwOnly", (1, 2), {}),
    ("Base", ("n",), {}),
    ("Child", ("n", 1, (2,)), {}),
    ("Child", ("n",), {"extra": (1,)}),
    ("Checked", (1, 3), {}),
    ("Checked", (3, 1), {}),
    ("OwnMethods", (1,), {}),
    ("Empty", (), {}),
    ("Empty", (1,), {}),
    ("Identity", (1,), {}),
]


def _outcome(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        obj = cls(*args, **kwargs)
    except (TypeError, ValueError) as e:
        return type(e).__name__
    return obj


@pytest.mark.parametrize(("name", "args", "kwargs"), CALLS)
def test_construction_and_value_semantics_match_the_stdlib(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    std, ours = _outcome(STD[name], args, kwargs), _outcome(OURS[name], args, kwargs)
    _same_value_semantics(std, ours, OURS[name], args, kwargs)
    if isinstance(std, str):
        return
    fields = dataclasses.fields(ours)
    if fields:
        first = fields[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(ours, first, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(ours, first)
        changed = dataclasses.replace(ours, **{first: getattr(ours, first)})
        assert repr(changed) == repr(ours)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.other = 1  # the class itself takes no new attribute either


@pytest.mark.parametrize(("name", "args", "kwargs"), [c for c in CALLS if c[0] != "Identity"])
def test_mutable_classes_match_the_stdlib(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    std, ours = _outcome(MUTABLE_STD[name], args, kwargs), _outcome(MUTABLE_OURS[name], args, kwargs)
    _same_value_semantics(std, ours, MUTABLE_OURS[name], args, kwargs)
    if isinstance(std, str):
        return
    assert (type(ours).__hash__ is None) == (type(std).__hash__ is None)
    for f in dataclasses.fields(ours):
        setattr(ours, f.name, "changed")
        setattr(std, f.name, "changed")
    assert repr(ours).partition("(")[2] == repr(std).partition("(")[2]


def _same_value_semantics(std: Any, ours: Any, cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if isinstance(std, str):
        assert ours == std  # the same exception type
        return
    assert repr(ours) == repr(std)
    twin = cls(*args, **kwargs)
    std_twin = type(std)(*args, **kwargs)
    assert (ours == twin) == (std == std_twin)
    assert (ours != twin) == (std != std_twin)
    if type(std).__hash__ is not None:
        assert (hash(ours) == hash(twin)) == (hash(std) == hash(std_twin))
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(std)]
    assert dataclasses.astuple(ours) == dataclasses.astuple(std)
    assert ours.__match_args__ == std.__match_args__
    assert str(inspect.signature(type(ours))) == str(inspect.signature(type(std)))
    assert dataclasses.is_dataclass(type(ours))


def test_equality_and_hash_follow_compare_and_hash_flags() -> None:
    factories = OURS["Factories"]
    a, b = factories((1,), {"x": 1}, "n"), factories((1,), {"y": 2}, "n")
    assert a == b and hash(a) == hash(b)  # tags has compare=False
    assert factories((1,), note="a") != factories((1,), note="b")  # note: in == but not in hash
    assert hash(factories((1,), note="a")) == hash(factories((1,), note="b"))
    kw = OURS["KwOnly"]
    assert hash(kw(1)) == hash(kw(1, b=2, c=3))
    assert kw(1) != kw(1, c=4)
    assert OURS["Base"]("n") != OURS["Child"]("n")  # different classes never equal
    ident = OURS["Identity"]
    one = ident(1)
    assert one == one and one != ident(1)
    assert OURS["OwnMethods"](1) == OURS["OwnMethods"](2) and hash(OURS["OwnMethods"](1)) == 7
    assert repr(OURS["OwnMethods"](1)) == "own"


def test_defaults_are_fresh_per_instance_and_post_init_runs() -> None:
    factories = OURS["Factories"]
    first, second = factories(), factories()
    assert first.tags == {} and first.tags is not second.tags
    checked = OURS["Checked"](1, 4)
    assert checked._span == 3
    with pytest.raises(ValueError, match="low > high"):
        OURS["Checked"](4, 1)


def test_error_messages_name_the_class_and_argument() -> None:
    plain = OURS["Plain"]
    with pytest.raises(TypeError, match=r"Plain.__init__\(\) missing 1 required argument\(s\): 'a'"):
        plain()
    with pytest.raises(TypeError, match="unexpected keyword argument 'zzz'"):
        plain(1, zzz=2)
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        plain(1, a=2)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
        plain(1).a = 2  # type: ignore[misc]


def test_a_value_inside_its_own_repr_prints_dots() -> None:
    decorators: tuple[Any, ...] = (mutable_dataclass, dataclass)
    for deco in decorators:

        class Node:
            name: str
            children: list[Any] = field(default_factory=list)

        made: Any = deco(Node)
        node = made("a")
        node.children.append(node)
        assert repr(node).endswith("(name='a', children=[...])")


def test_instances_pickle_and_copy() -> None:
    obj = PickledChild("n", 2, (1, 2))
    assert pickle.loads(pickle.dumps(obj)) == obj
    assert copy.deepcopy(obj) == obj and copy.copy(obj) == obj


def test_class_definitions_it_refuses() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen_dataclass
        class Wrong:
            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):

        @frozen_dataclass
        class Mutating:
            a: int

            def __setattr__(self, name: str, value: Any) -> None:
                object.__setattr__(self, name, value)


def test_a_plain_subclass_with_its_own_init_keeps_its_signature() -> None:
    class Loose(PickledBase):
        def __init__(self, label: str) -> None:
            object.__setattr__(self, "name", label)
            object.__setattr__(self, "size", 0)

    assert list(inspect.signature(Loose).parameters) == ["label"]
    assert Loose("q").name == "q"


@frozen_dataclass
class PickledBase:
    name: str
    size: int = 0


@frozen_dataclass
class PickledChild(PickledBase):
    extra: tuple[int, ...] = ()


def test_streamsql_packages_use_these_decorators() -> None:
    """The stdlib's `@dataclass` in streamsql, planner or runtime costs ~0.6 ms of start-up per
    class, and a frozen one cannot subclass (or be subclassed by) the frozen_dataclass classes.
    (runtime/frozen.py itself calls dataclasses.dataclass to collect the fields.)"""
    found = []
    for package in ("streamsql", "planner", "runtime"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "runtime" / "frozen.py":
                continue
            text = path.read_text()
            if not re.search(r"\bdataclass\b", text):
                continue  # (parsing every module takes seconds; most never name it)
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, ast.Name | ast.Attribute) and "dataclass" in (
                    getattr(node, "id", None),
                    getattr(node, "attr", None),
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "use runtime.frozen's frozen_dataclass or mutable_dataclass, not dataclass: " + ", ".join(found)
