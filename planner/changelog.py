"""Changelog-mode inference (the optimizer's last phase): which row kinds each physical
node emits, as Flink's EXPLAIN CHANGELOG_MODE prints them ("I", "I,UB,UA", "I,UB,UA,D",
"I,UA,D"). In BATCH mode every node is insert-only (final results), except that a CDC
source is a bounded changelog that row-wise operators forward and a GroupAggregate applies.

Two passes, as Flink's FlinkChangelogModeInferenceProgram: bottom-up, the row kinds each
node can emit (`infer_changelog_modes`: Flink's ModifyKindSet, with -U wherever there are
updates); then top-down, which of those updating edges must really carry -U
(`require_update_before`: Flink's UpdateKind, ONLY_UPDATE_AFTER or BEFORE_AND_AFTER). A
consumer that applies updates by key (an upsert sink whose PRIMARY KEY is the updates' upsert
key, blackhole, the top of an EXPLAINed query) does without -U, and so does every node below
it that can: their modes lose UB and their runtime operators emit no -U rows (less work, and
printed changelogs match Flink's). A consumer that retracts (an aggregate, Top-N, a join, a
retract sink such as print, a query's collected result) wants them."""

from __future__ import annotations

from typing import Any

from planner.errors import UnsupportedSqlError
from planner.physical import PhysicalNode
from runtime.graph import BATCH
from runtime.operators.sink import SINK, SinkParams, sink_changelog_mode, sink_update_hint
from runtime.operators.source import TableSourceScanParams
from runtime.operators.spec import OperatorSpec, PlanRefusedError, UpsertKeys, producer_line, spec_for

_ORDER = ("I", "UB", "UA", "D")


def _flags(mode: str) -> set[str]:
    return set(mode.split(","))


def _mode(flags: set[str]) -> str:
    return ",".join(k for k in _ORDER if k in flags)


def is_insert_only(mode: str) -> bool:
    return mode == "I"


def infer_changelog_modes(node: PhysicalNode, mode: str) -> PhysicalNode:
    """`node` (and its inputs) with `changelog_mode` set."""
    memo: dict[int, PhysicalNode] = {}

    def visit(n: PhysicalNode) -> PhysicalNode:
        if id(n) in memo:
            return memo[id(n)]
        inputs = tuple(visit(i) for i in n.inputs)
        out = n.with_mode(_infer(n, inputs, mode), inputs)
        memo[id(n)] = out
        return out

    return visit(node)


def _infer_batch(n: PhysicalNode, inputs: tuple[PhysicalNode, ...]) -> str:
    """BATCH: a CDC source is read as a bounded changelog (a GroupAggregate applies it and
    emits final, insert-only rows); row-wise operators forward it; any other operator
    refuses it as Flink does."""
    op = n.operator
    in_modes = [i.changelog_mode for i in inputs]
    spec = spec_for(op)
    if spec is not None:
        try:
            out = spec.batch_changelog_mode(n, inputs)
        except PlanRefusedError as e:
            raise UnsupportedSqlError(str(e)) from None
        if out is not None:
            return out
    if all(is_insert_only(m) for m in in_modes):
        return "I"
    scan = inputs[0]
    while scan.inputs:
        scan = scan.inputs[0]
    table = scan.params.table if isinstance(scan.params, TableSourceScanParams) else "?"
    raise UnsupportedSqlError(
        "Querying a table in batch mode is currently only possible for INSERT-only table sources. But the source "
        f"for table '{table}' produces other changelog messages than just INSERT."
    )


def _infer(n: PhysicalNode, inputs: tuple[PhysicalNode, ...], mode: str) -> str:
    if mode == BATCH:  # (a changelog reaching a BATCH sink is refused as a source's, as Flink does)
        return _infer_batch(n, inputs)
    if n.is_kind(SINK):
        check_sink_changelog(n, inputs[0])
    op = n.operator
    in_modes = [i.changelog_mode for i in inputs]
    spec = spec_for(op)
    if spec is not None:
        try:
            return spec.changelog_mode(n, inputs)
        except PlanRefusedError as e:
            raise UnsupportedSqlError(str(e)) from None
    return in_modes[0] if in_modes else "I"


# Flink's ModifyKind of each row kind, in the order its messages list them.
_MODIFY_KINDS = (("insert", {"I"}), ("update", {"UB", "UA"}), ("delete", {"D"}))


def check_sink_changelog(sink: PhysicalNode, child: PhysicalNode) -> None:
    """Refuse, when the job is planned, an input with changes the sink's connector does not
    take (its declared `sink_changelog_mode`), with Flink's message naming the sink and the
    node that produces them (FlinkChangelogModeInferenceProgram), and the connector's hint."""
    p = SinkParams.of(sink)
    accepted = sink_changelog_mode(p)
    if accepted is None or is_insert_only(child.changelog_mode):
        return
    have, takes = _flags(child.changelog_mode), _flags(accepted)
    missing = [name for name, kinds in _MODIFY_KINDS if have & kinds and not takes & kinds]
    if not missing:
        return
    table = ".".join(sink.info.get("path") or (p.table,))
    raise UnsupportedSqlError(
        f"Table sink '{table}' doesn't support consuming {' and '.join(missing)} changes which is produced by "
        f"node {producer_line(child)}",
        hint=sink_update_hint(p) or None,
        flink_class="org.apache.flink.table.api.TableException",
    )


# ---------------------------------------------------------------------- UPDATE_BEFORE
def _updates(mode: str) -> bool:
    return "UA" in _flags(mode)


def _without_ub(mode: str) -> str:
    return _mode(_flags(mode) - {"UB"})


def upsert_keys(node: PhysicalNode) -> UpsertKeys:
    """`node`'s upsert keys (Flink's FlinkRelMdUpsertKeys, for the kinds that declare them)."""
    memo: dict[int, UpsertKeys] = {}

    def visit(n: PhysicalNode) -> UpsertKeys:
        if id(n) not in memo:
            spec = spec_for(n.operator)
            keys = [visit(i) for i in n.inputs]
            memo[id(n)] = spec.upsert_keys(n, keys) if spec is not None else None
        return memo[id(n)]

    return visit(node)


def upsert_materialize(sink: PhysicalNode, setting: str) -> tuple[bool, tuple[int, ...]]:
    """Whether the sink gets a SinkMaterializer (`table.exec.sink.upsert-materialize` =
    `setting`), as Flink's analyzeUpsertMaterializeStrategy decides: FORCE, for a sink with a
    PRIMARY KEY; AUTO, also only for an updating input none of whose upsert keys lies within
    the PRIMARY KEY (a join's, or a projection that drops the updates' key); NONE never. With
    it, the input's smallest upsert key (by which the materializer matches rows; () for none)."""
    p = SinkParams.of(sink)
    child = sink.inputs[0]
    names = [f.name for f in p.schema]
    if setting == "NONE" or not p.primary_key or not all(k in names for k in p.primary_key):
        return False, ()
    keys = upsert_keys(child) or frozenset()
    smallest = min(keys, key=lambda k: (len(k), sorted(k)), default=frozenset())
    if setting == "AUTO":
        pk = {names.index(k) for k in p.primary_key}
        accepted = sink_changelog_mode(p)
        if is_insert_only(child.changelog_mode) or accepted == "I" or any(k <= pk for k in keys):
            return False, ()
    return True, tuple(sorted(smallest))


def sink_wants_update_before(sink: PhysicalNode) -> tuple[bool, ...]:
    """What a sink asks of its updating input, in order of preference (Flink's
    inferSinkRequiredTraits): a retract sink (print, a changelog format) wants -U; an upsert
    sink (upsert-kafka, jdbc, blackhole) prefers none, unless it has a PRIMARY KEY that is not
    an upsert key of its input (then only -U keep the rows right)."""
    p = SinkParams.of(sink)
    accepted = sink_changelog_mode(p)
    if accepted is None or "UB" in _flags(accepted) or accepted == "I":
        return (True,)
    if p.primary_key:
        names = [f.name for f in sink.inputs[0].fields]
        if not all(k in names for k in p.primary_key):
            return (True,)
        pk = frozenset(names.index(k) for k in p.primary_key)
        if pk not in (upsert_keys(sink.inputs[0]) or frozenset()):
            return (True,)
    return (False, True)


def require_update_before(plan: PhysicalNode, mode: str, root_wants_update_before: bool = True) -> PhysicalNode:
    """`plan` (its modes inferred) with UB left out of every edge whose consumers do without
    -U (module docstring). The root is a sink (it says what it wants) or a query's result:
    `root_wants_update_before` for a result that is collected (Flink's collect sink takes every
    row kind), False for an EXPLAINed query (Flink plans it without a sink and prefers
    ONLY_UPDATE_AFTER). BATCH plans are returned as they are."""
    if mode == BATCH:
        return plan
    if plan.is_kind(SINK):
        options = sink_wants_update_before(plan) if _updates(plan.inputs[0].changelog_mode) else (True,)
    else:
        options = (True,) if root_wants_update_before else (False, True)
    forced: set[int] = set()
    for _ in range(4):
        visitor = _UpdateBeforeVisitor(forced)
        for ub in options:
            out = visitor.visit(plan, ub) if not plan.is_kind(SINK) else visitor.visit_sink(plan, ub)
            if out is not None:
                break
        if out is None:  # cannot happen: every node can emit -U; keep the modes as inferred
            return plan
        # a node shared by consumers that want different things: -U for all of them
        shared = visitor.both()
        if not shared - forced:
            return out
        forced |= shared
    return plan


def _drop_update_before(scan: PhysicalNode) -> PhysicalNode:
    """A CDC source's changelog without its -U rows, as Flink puts a DropUpdateBefore above a
    source that has them where no consumer wants them."""
    from runtime.operators.drop_update_before import DropUpdateBeforeParams

    node = PhysicalNode.of(DropUpdateBeforeParams(), (scan,), scan.fields)
    return node.with_mode(_without_ub(scan.changelog_mode), (scan,))


class _UpdateBeforeVisitor:
    """One top-down pass: `visit(node, ub)` is `node` with its subtree's modes settled so
    that its output carries -U iff `ub` (and it has updates), or None when it cannot."""

    def __init__(self, forced: set[int]) -> None:
        self.forced = forced  # ids of shared nodes that emit -U for every consumer
        self.memo: dict[tuple[int, bool], PhysicalNode | None] = {}
        self.seen: dict[int, set[bool]] = {}
        self.keys: dict[int, UpsertKeys] = {}

    def both(self) -> set[int]:
        return {i for i, wants in self.seen.items() if len(wants) > 1}

    def visit_sink(self, sink: PhysicalNode, ub: bool) -> PhysicalNode | None:
        child = self.visit(sink.inputs[0], ub)
        return None if child is None else sink.with_mode(child.changelog_mode, (child,))

    def visit(self, n: PhysicalNode, ub: bool) -> PhysicalNode | None:
        if not _updates(n.changelog_mode):
            ub = False  # no updates: nothing to ask of it, but its inputs may have some
        elif id(n) in self.forced:
            if not ub:
                return None
        memo_key = (id(n), ub)
        if memo_key not in self.memo:
            self.seen.setdefault(id(n), set()).add(ub)
            self.memo[memo_key] = self._visit(n, ub)
        return self.memo[memo_key]

    def _upsert_keys(self, n: PhysicalNode) -> UpsertKeys:
        if id(n) not in self.keys:
            self.keys[id(n)] = upsert_keys(n)
        return self.keys[id(n)]

    def _visit(self, n: PhysicalNode, ub: bool) -> PhysicalNode | None:
        spec = spec_for(n.operator)
        if spec is None or not n.inputs:
            return self._settle(n, spec, ub, n.inputs)
        inputs: list[PhysicalNode] = []
        for i, child in enumerate(n.inputs):
            if _updates(child.changelog_mode):
                options = spec.input_update_before(n, i, ub, self._upsert_keys(child))
            else:
                options = (False,)
            new = None
            for want in options:
                new = self.visit(child, want)
                if new is not None:
                    break
            if new is None:
                return None
            inputs.append(new)
        return self._settle(n, spec, ub, tuple(inputs))

    def _settle(
        self, n: PhysicalNode, spec: OperatorSpec[Any] | None, ub: bool, inputs: tuple[PhysicalNode, ...]
    ) -> PhysicalNode | None:
        """The node's mode over its settled inputs, without UB where it can emit none."""
        if inputs == n.inputs or spec is None:
            out_mode = n.changelog_mode
        else:
            try:
                out_mode = spec.changelog_mode(n.with_mode(n.changelog_mode, inputs), inputs)
            except PlanRefusedError:
                return None
        if _updates(out_mode) and "UB" in _flags(out_mode) and not ub:
            if isinstance(n.params, TableSourceScanParams):
                return _drop_update_before(n)
            if spec is None or not spec.drops_update_before:
                return None
            out_mode = _without_ub(out_mode)
        if _updates(out_mode) and "UB" not in _flags(out_mode) and ub:
            return None  # an upsert changelog where -U are wanted (never planned so)
        if out_mode == n.changelog_mode and inputs == n.inputs:
            return n
        return n.with_mode(out_mode, inputs)
