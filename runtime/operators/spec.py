"""Operator specs: everything the planner, EXPLAIN, the executors and the Spark runner need
to know about one operator kind, declared once, next to its runtime class.

An operator kind lives in one module (e.g. `runtime/operators/group_agg.py`) that holds

- its typed parameters: a frozen dataclass (subclass of `OperatorParams`), the node's
  `params` in the physical plan and in the JobGraph, serialized field by field (field name
  = JSON key; `Expr`, `DataType` and `Field` values are tagged as before);
- its runtime class (an `Operator` subclass);
- its spec: an `OperatorSpec` subclass instance registered with `register_spec`, declaring
  the kind's name, params class and runtime class, changelog-mode inference, EXPLAIN line,
  which input columns the params read and how to remap them, the input distribution it
  needs, whether it runs at parallelism > 1 / can be rescaled, and its Spark capability.

Everything else looks the spec up (`spec_for(name)`, `spec_of(params)`, `all_specs()`) and
never spells an operator name: the planner builds a node with `plan_node(params, ...)`
(the name comes from the params class), compares names with `SPEC.name`.
tests/unit/test_operator_names.py fails when an operator name appears as a string literal
outside its spec module.

Why in the runtime: the JobGraph is the runtime's input and the runtime must not import the
planner, so the declarations the planner also reads live on this side of the boundary.
The registry fills when the operator modules are imported (`runtime.plugins`, on the first
look-up, so `import runtime` stays cheap).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from runtime.expr.ir import Call, InputRef, Literal, expr_from_json, expr_to_json
from runtime.frozen import frozen_dataclass
from runtime.plugins import import_submodules
from runtime.types import DataType, Field

if TYPE_CHECKING:
    from runtime.graph import Node
    from runtime.operators.base import Operator, OperatorContext

# The JobGraph JSON format version (runtime/graph.py writes it, refuses any other).
GRAPH_FORMAT_VERSION = 1

# Required input distributions (`OperatorSpec.input_distribution`).
ANY = "any"  # no requirement: runs on whatever part of the data reaches its subtask
KEYED = "keyed"  # rows of one key on one subtask: fed by a hash Exchange on its keys
SINGLE = "single"  # all rows on one subtask (a global sort, a LIMIT, ...)

_P = TypeVar("_P", bound="OperatorParams")

# Upsert keys of a plan node's output: sets of column indexes (None: none known).
UpsertKeys = frozenset[frozenset[int]] | None


@frozen_dataclass
class OperatorParams:
    """Base class of every kind's typed parameters (frozen dataclass subclasses)."""

    @classmethod
    def of(cls: type[_P], node: PlanView | Node) -> _P:
        """`node.params` as this class (a node of another kind is a programming error)."""
        p = node.params
        if not isinstance(p, cls):
            raise TypeError(f"{node.operator} node has params {type(p).__name__}, expected {cls.__name__}")
        return p


class PlanView(Protocol):
    """What a spec sees of a physical plan node (planner.physical.PhysicalNode)."""

    @property
    def operator(self) -> str: ...
    @property
    def params(self) -> Any: ...
    @property
    def fields(self) -> tuple[Field, ...]: ...
    @property
    def inputs(self) -> Sequence[PlanView]: ...
    @property
    def changelog_mode(self) -> str: ...
    @property
    def info(self) -> dict[str, Any]: ...


class PlanRefusedError(Exception):
    """A plan the operator cannot run (e.g. an update stream into a window aggregate); the
    planner reports it as an UnsupportedSqlError with this message."""


@frozen_dataclass
class SparkCapability:
    """Whether the Spark runner runs the kind, per mode, and the note docs/spark.md prints.
    Checks that depend on the params are in runtime/executor/spark/capabilities.py."""

    batch: bool
    streaming: bool
    note: str


class OperatorSpec(Generic[_P]):
    """One operator kind, generic over its params class. Subclass, set the class
    attributes, override what differs, and register an instance with `register_spec` in
    the kind's module."""

    # The kind's name (Flink's ExecNode name), as EXPLAIN prints it and the JobGraph stores it.
    name: ClassVar[str]
    params_type: type[_P]
    # The runtime class (constructed as `operator_class(node, ctx)`); None: planner-only.
    operator_class: ClassVar[type[Operator] | None] = None
    # Passes its input's changelog through unchanged and makes no update itself (Calc,
    # Exchange, WatermarkAssigner): changelog errors name the operator below it.
    forwards_changelog: ClassVar[bool] = False
    # What its input must look like across subtasks: ANY, KEYED (hash Exchange on
    # `input_keys`) or SINGLE. The planner places the Exchanges from it
    # (planner/physical.py `distributed`); the parallel planner checks them.
    input_distribution: ClassVar[str] = ANY
    # May run once per subtask on part of the data without a keyed Exchange in front
    # (stateless, per-split, or pre-aggregating per batch).
    parallel: ClassVar[bool] = False
    # Its state can be re-split by key group when restored with another parallelism.
    rescalable: ClassVar[bool] = False
    # Its keyed state expires with state TTL (`table.exec.state.ttl`, STATE_TTL hints).
    state_ttl: ClassVar[bool] = False
    # Folds larger batches better: the planner puts MiniBatchAssigners into a plan with
    # such an operator when mini-batch is enabled (planner/optimizer/mini_batch.py).
    wants_mini_batch: ClassVar[bool] = False
    # On Spark (None: refused with "not in the Spark runner's capability table").
    spark: ClassVar[SparkCapability | None] = None

    # ------------------------------------------------------------------ changelog
    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        """STREAMING: the row kinds the node emits ("I", "I,UB,UA", "I,UB,UA,D",
        "I,UA,D"), given its inputs (their `changelog_mode` is already set). Raise
        `PlanRefusedError` for an input it cannot consume. Default: forwards input 0's."""
        return inputs[0].changelog_mode if inputs else "I"

    def batch_changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str | None:
        """BATCH: insert-only unless an input is a changelog (a CDC source); then the mode
        the node emits, or None if it refuses a changelog input (the planner then names
        the source table, as Flink does)."""
        if all(i.changelog_mode == "I" for i in inputs):
            return "I"
        if self.forwards_changelog:
            return inputs[0].changelog_mode
        return None

    # ------------------------------------------------------------------ UPDATE_BEFORE
    # (planner/changelog.py `require_update_before`, Flink's SatisfyUpdateKindTraitVisitor:
    # after the modes above, top-down, which updating edges must carry -U rows.)
    #
    # The runtime operator leaves -U out when its node's changelog mode has UA but no UB
    # (every consumer does without them: an upsert sink keyed like the updates, an EXPLAIN
    # of a query). False: it always emits -U with its updates, so the planner keeps UB in
    # the node's mode and, where a consumer wants none, falls back to -U everywhere below
    # that consumer's sink, as Flink falls back when a node cannot satisfy ONLY_UPDATE_AFTER.
    drops_update_before: ClassVar[bool] = False
    # Passes the row kinds of its input(s) through as they come (row-wise operators, Union):
    # an input carries -U exactly when the node's consumers want them.
    forwards_update_before: ClassVar[bool] = False

    def input_update_before(
        self, node: PlanView, input_index: int, emit_update_before: bool, input_keys: UpsertKeys
    ) -> tuple[bool, ...]:
        """Whether input `input_index` (if it carries updates) must carry -U, given whether this
        node emits them: the options in order of preference (Flink tries ONLY_UPDATE_AFTER
        first where an operator takes either); empty: the node cannot do without -U here
        (its consumer then falls back to wanting them). `input_keys`: the input's upsert
        keys. Default: a forwarding kind wants what its consumers want; any other consumes
        updates as retractions and wants -U (aggregates, Top-N, joins, OVER)."""
        if self.forwards_changelog or self.forwards_update_before:
            return (emit_update_before,)
        return (True,)

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """Sets of output columns each of which identifies the row an update replaces
        (Flink's upsert keys), given the inputs' (None: unknown). An upsert sink does
        without -U only when its PRIMARY KEY is one of them. Default: a forwarding kind over
        the same columns keeps its input's; any other has none known."""
        if self.forwards_changelog and len(node.inputs) == 1 and node.fields == node.inputs[0].fields:
            return inputs[0]
        return None

    # ------------------------------------------------------------------ EXPLAIN
    def explain(self, node: PlanView) -> list[str]:
        """The `key=[value]` parts of the node's EXPLAIN line (without changelogMode)."""
        return []

    def explain_changelog(self, node: PlanView) -> str:
        """What EXPLAIN CHANGELOG_MODE prints for the node (a sink: NONE)."""
        return node.changelog_mode

    # ------------------------------------------------------------------ params
    def params(self, node: PlanView | Node) -> _P:
        """`node.params`, typed."""
        return self.params_type.of(node)

    # ------------------------------------------------------------------ distribution
    def input_keys(self, params: _P, input_index: int) -> tuple[int, ...]:
        """For a KEYED kind: the columns of input `input_index` its rows are hashed on (the
        planner puts an Exchange on them in front of the input; empty: all rows to one
        subtask, as for a global aggregate). SINGLE kinds: empty. Unused for ANY."""
        return ()

    # ------------------------------------------------------------------ executors
    def runs_in_parent(self, params: _P) -> bool:
        """With parallelism > 1: runs once, in the parent process, fed by every worker
        (sinks that only one process can write)."""
        return False

    def create(self, node: Node, ctx: OperatorContext) -> Operator:
        """The runtime operator for `node`."""
        if self.operator_class is None:
            raise ValueError(f"operator {self.name} has no runtime class")
        return self.operator_class(node, ctx)

    # ------------------------------------------------------------------ JSON
    def encode_params(self, params: _P) -> dict[str, Any]:
        return typing.cast(dict[str, Any], encode_value(params))

    def decode_params(self, data: dict[str, Any]) -> _P:
        return typing.cast(_P, decode_value(data, self.params_type))

    def __repr__(self) -> str:
        return f"<operator spec {self.name}>"


_SPECS: dict[str, OperatorSpec[Any]] = {}
_BY_PARAMS: dict[type, OperatorSpec[Any]] = {}
_S = TypeVar("_S", bound="OperatorSpec[Any]")


def register_spec(spec: _S) -> _S:
    """Register `spec` (at import of its kind's module); returns it for a module constant."""
    if spec.name in _SPECS and type(_SPECS[spec.name]) is not type(spec):
        raise ValueError(f"operator {spec.name} is declared twice")
    _SPECS[spec.name] = spec
    _BY_PARAMS[spec.params_type] = spec
    return spec


def _load() -> None:
    import_submodules("runtime.operators", skip=("base", "spec"))


def spec_for(name: str) -> OperatorSpec[Any] | None:
    """The spec of operator kind `name`, or None (not declared as a spec)."""
    if name not in _SPECS:
        _load()
    return _SPECS.get(name)


def spec_of(params: OperatorParams) -> OperatorSpec[Any]:
    """The spec whose params class `params` is an instance of. The kind's module (params
    and spec together) is loaded when its params exist, so the other kinds' modules load
    only when a look-up misses (start-up: `SELECT 1` loads the few kinds it uses)."""
    spec = _BY_PARAMS.get(type(params))
    if spec is None:
        _load()
        spec = _BY_PARAMS.get(type(params))
    if spec is None:
        raise TypeError(f"{type(params).__name__} is not an operator's params class")
    return spec


def all_specs() -> list[OperatorSpec[Any]]:
    """Every registered spec, by name."""
    _load()
    return [_SPECS[k] for k in sorted(_SPECS)]


def explain_line(node: PlanView, changelog: bool = False) -> str:
    """`Name(k=[v], ...)` for a node whose kind has a spec (planner.explain for the rest)."""
    spec = spec_for(node.operator)
    parts = list(spec.explain(node)) if spec is not None else []
    if changelog:
        mode = spec.explain_changelog(node) if spec is not None else node.changelog_mode
        parts.append(f"changelogMode=[{mode}]")
    # Calcite's RelWriter: no parentheses around no attributes (`DropUpdateBefore`)
    return f"{node.operator}({', '.join(parts)})" if parts else node.operator


def producer_line(node: PlanView) -> str:
    """The EXPLAIN line of the operator that made `node`'s changelog (skipping operators
    that only forward it), for errors about an update stream reaching an operator."""
    while node.inputs:
        spec = spec_for(node.operator)
        if spec is None or not spec.forwards_changelog:
            break
        node = node.inputs[0]
    return explain_line(node)


def insert_only_input(node: PlanView, inputs: Sequence[PlanView], what: str, operator: str | None = None) -> None:
    """Raise PlanRefusedError unless input 0 is insert-only (`what`: the operator's role;
    `operator`: the name the message uses, default the node's)."""
    mode = inputs[0].changelog_mode
    if mode != "I":
        raise PlanRefusedError(
            f"{operator or node.operator} doesn't support consuming update and delete changes which is produced by node "
            f"{producer_line(inputs[0])}: {what} (its input's changelog mode is [{mode}])"
        )


# ---------------------------------------------------------------------- JSON codec
def encode_value(v: Any) -> Any:
    """JSON form of a params value: dataclasses field by field, tuples as lists, `Expr` /
    `DataType` / `Field` tagged (`{"@expr": ...}`, `{"@type": ...}`, `{"@field": ...}`)."""
    if isinstance(v, (InputRef, Literal, Call)):
        return {"@expr": expr_to_json(v)}
    if isinstance(v, DataType):
        return {"@type": v.to_json()}
    if isinstance(v, Field):
        return {"@field": v.to_json()}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: encode_value(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, dict):
        return {k: encode_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [encode_value(x) for x in v]
    return v


def plain_params(v: Any) -> Any:
    """Params as plain Python data (dataclasses as dicts, tuples as lists; `Expr`,
    `DataType` and `Field` values kept): the shape the untyped params had, for code that
    hashes or compares params generically (runtime/checkpoint/uid.py)."""
    if isinstance(v, (InputRef, Literal, Call, DataType, Field)):
        return v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: plain_params(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, dict):
        return {k: plain_params(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain_params(x) for x in v]
    return v


def decode_untyped(v: Any) -> Any:
    """Inverse of `encode_value` without a type: tagged values restored, lists stay lists."""
    if isinstance(v, dict):
        if len(v) == 1:
            if "@expr" in v:
                return expr_from_json(v["@expr"])
            if "@type" in v:
                return DataType.from_json(v["@type"])
            if "@field" in v:
                return Field.from_json(v["@field"])
        return {k: decode_untyped(x) for k, x in v.items()}
    if isinstance(v, list):
        return [decode_untyped(x) for x in v]
    return v


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def decode_value(v: Any, hint: Any) -> Any:
    """Inverse of `encode_value` guided by the type hint `hint` (a params dataclass, a
    tuple / list / dict of values, an optional, a plain JSON type, Expr / DataType / Field)."""
    if v is None:
        return None
    if hint is not Any and isinstance(hint, type) and isinstance(v, hint):
        return v  # already decoded
    if hint in (DataType, Field, InputRef, Literal, Call):
        return decode_untyped(v)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return decode_value(v, options[0]) if len(options) == 1 else decode_untyped(v)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode_value(x, args[0]) for x in v)
        if args:
            return tuple(decode_value(x, a) for x, a in zip(v, args, strict=True))
        return tuple(decode_untyped(x) for x in v)
    if origin is list:
        (arg,) = typing.get_args(hint) or (Any,)
        return [decode_value(x, arg) for x in v]
    if origin is dict:
        args = typing.get_args(hint)
        val = args[1] if len(args) == 2 else Any
        return {k: decode_value(x, val) for k, x in v.items()}
    if hint in (DataType, Field):
        return v if isinstance(v, hint) else decode_untyped(v)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(v, hint):
            return v
        if not isinstance(v, dict):
            raise ValueError(f"{hint.__name__}: expected an object, got {v!r}")
        hints = _hints(hint)
        known = {f.name for f in dataclasses.fields(hint)}
        unknown = set(v) - known
        if unknown:
            raise ValueError(f"{hint.__name__}: unknown parameter(s) {', '.join(sorted(unknown))}")
        return hint(**{k: decode_value(x, hints[k]) for k, x in v.items()})
    return decode_untyped(v)
