"""The JobGraph JSON: versioned, and every operator kind's typed params round-trip."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import pytest

from runtime.expr.ir import Call, InputRef, Literal
from runtime.graph import STREAMING, GraphFormatError, JobGraph, Node
from runtime.operators.spec import GRAPH_FORMAT_VERSION, OperatorSpec, all_specs, decode_value, encode_value
from runtime.types import BIGINT, INT, VARCHAR, DataType, Field


def _sample(hint: Any, depth: int = 0) -> Any:
    """A non-default value of type `hint` (so a field dropped by the codec shows)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _sample(next(a for a in typing.get_args(hint) if a is not type(None)), depth)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return (_sample(args[0], depth + 1), _sample(args[0], depth + 1))
        return tuple(_sample(a, depth + 1) for a in args)
    if origin is list:
        return [_sample(typing.get_args(hint)[0], depth + 1)]
    if origin is dict:
        return {"k": _sample(typing.get_args(hint)[1], depth + 1)}
    if hint is bool:
        return True
    if hint is int:
        return 7
    if hint is float:
        return 2.5
    if hint is str:
        return "s"
    if hint is DataType:
        return BIGINT(nullable=False)
    if hint is Field:
        return Field("f", VARCHAR())
    if hint is Any or hint is object:
        return {"any": [1, "x", None]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return hint(**{f.name: _sample(hints[f.name], depth + 1) for f in dataclasses.fields(hint)})
    if "Expr" in str(hint) or hint in (InputRef, Literal, Call):
        return Call("plus", (InputRef(0, INT()), Literal(1, INT())), INT())
    raise AssertionError(f"no sample for {hint!r}")


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.name)
def test_every_kinds_params_round_trip_through_json(spec: OperatorSpec[Any]) -> None:
    params = _sample(spec.params_type)
    node = Node(0, spec.name, (), (Field("a", INT()),), params)
    graph = JobGraph((node,), STREAMING, {"k": "v"}, 0, "job")
    text = graph.to_json()
    again = JobGraph.from_json(text)
    assert type(again.nodes[0].params) is spec.params_type
    assert encode_value(again.nodes[0].params) == encode_value(params)
    assert again.nodes[0].params == params
    assert again.to_json() == text


def test_graph_json_carries_its_format_version() -> None:
    doc = json.loads(JobGraph((), STREAMING).to_json())
    assert doc["format_version"] == GRAPH_FORMAT_VERSION


@pytest.mark.parametrize("version", [None, 0, GRAPH_FORMAT_VERSION + 1, "1"])
def test_a_graph_with_another_or_no_version_is_refused(version: object) -> None:
    doc = json.loads(JobGraph((), STREAMING).to_json())
    if version is None:
        del doc["format_version"]
    else:
        doc["format_version"] = version
    with pytest.raises(GraphFormatError, match=r"Cannot read this JobGraph: it has .*format_version"):
        JobGraph.from_json(json.dumps(doc))


def test_params_with_an_unknown_field_are_refused_naming_the_operator() -> None:
    spec = all_specs()[0]
    doc = json.loads(JobGraph((Node(0, spec.name, (), (), _sample(spec.params_type)),), STREAMING).to_json())
    doc["nodes"][0]["params"]["no_such_field"] = 1
    with pytest.raises(GraphFormatError, match=f"operator {spec.name}.*no_such_field"):
        JobGraph.from_json(json.dumps(doc))


def test_decode_follows_the_type_hints() -> None:
    assert decode_value([1, 2], tuple[int, ...]) == (1, 2)
    assert decode_value(None, int | None) is None
    assert decode_value({"a": [1]}, dict[str, tuple[int, ...]]) == {"a": (1,)}
    e = Call("plus", (InputRef(0, INT()), Literal(1, INT())), INT())
    assert decode_value(encode_value([e]), tuple[Any, ...]) == (e,)
