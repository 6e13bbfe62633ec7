"""Keyed shuffle in front of a sink with a PRIMARY KEY (Flink's `table.exec.sink.keyed-shuffle`).

An upsert sink (upsert-kafka, jdbc with a key, ...) applies the changes of one key in the
order they reach it. At parallelism > 1 every subtask writes on its own (a producer per
subtask), so the changes of one key must all come through one subtask, in order: else a
-D from one subtask and a +I from another race, and the topic's compacted view ends wrong.
This rule runs after changelog-mode inference (STREAMING) and puts a hash Exchange on the
sink's PRIMARY KEY in front of the sink when its input is an update stream that is not
already distributed on (a subset of) the key columns. With `FORCE` also for an insert-only
input; with `NONE` never. In Flink `AUTO` adds the shuffle when the sink's parallelism
differs from its input's; streamsql runs every operator at the job's parallelism, so `AUTO`
decides from the input's distribution instead (the case Flink covers with its upsert
materializer's keyed exchange).

`sink.parallelism` (runtime/connectors/base.py `SINK_PARALLELISM`), as Flink's CommonExecSink:
a value <= 0 is refused; an update stream into a sink without a PRIMARY KEY at a parallelism
other than its input's is refused with Flink's message; with a PRIMARY KEY the rows are
hashed on it when the sink's parallelism differs from the input's and is not 1 (`AUTO`) or
is not 1 (`FORCE`), so one key reaches one writer; otherwise, when the parallelisms differ,
batches are dealt round-robin (Flink's rebalance). The Exchange carries the sink's
parallelism, so the executors send its rows to that many writers. The input's parallelism
is the job's (`parallelism.default`): streamsql runs every other operator at it. The same
rules hold in BATCH mode.

`table.exec.sink.upsert-materialize` (runtime/operators/sink.py): where Flink plans a
SinkUpsertMaterializer (planner/changelog.py `upsert_materialize`), the Sink's params say
so (EXPLAIN: `upsertMaterialize=[true]`), its input is hashed on exactly the PRIMARY KEY
(unless it is distributed so already), and planner/lower.py puts the SinkMaterializer node
(runtime/operators/sink_materializer.py) between that input and the Sink.

Why here and not in the Sink's spec: whether the shuffle is needed depends on the input's
changelog mode, known only after inference.
"""

from __future__ import annotations

from dataclasses import replace

from planner.changelog import upsert_materialize
from planner.errors import SqlValidationError
from planner.physical import PhysicalNode
from runtime.config.core import SINK_KEYED_SHUFFLE, job_parallelism
from runtime.expr.ir import Call, Expr, InputRef
from runtime.graph import STREAMING
from runtime.operators.calc import CalcParams
from runtime.operators.sink import SINK, SINK_UPSERT_MATERIALIZE, SinkParams
from runtime.operators.spec import ANY, spec_for
from runtime.operators.union import EXCHANGE, FORWARD, REBALANCE, ExchangeParams


def keyed_sink_shuffle(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """`plan` with the keyed shuffles in front of its PRIMARY KEY sinks, and the Exchange in
    front of a sink whose 'sink.parallelism' differs from its input's (module docstring)."""
    setting = SINK_KEYED_SHUFFLE.get(config)
    materialize = SINK_UPSERT_MATERIALIZE.get(config)
    input_parallelism = job_parallelism(config)
    memo: dict[int, PhysicalNode] = {}

    def visit(n: PhysicalNode) -> PhysicalNode:
        if id(n) in memo:
            return memo[id(n)]
        inputs = tuple(visit(i) for i in n.inputs)
        out = replace(n, inputs=inputs) if inputs != n.inputs else n
        if n.is_kind(SINK):
            if mode == STREAMING:
                out = _with_upsert_materialize(out, materialize)
            out = _sink_exchange(out, setting, mode, input_parallelism)
        memo[id(n)] = out
        return out

    return visit(plan)


def _with_upsert_materialize(sink: PhysicalNode, setting: str) -> PhysicalNode:
    """The sink with `upsert_materialize` set where Flink plans a SinkUpsertMaterializer
    (planner/changelog.py `upsert_materialize`; STREAMING only, as in Flink)."""
    on, upsert_key = upsert_materialize(sink, setting)
    if not on:
        return sink
    params = replace(SinkParams.of(sink), upsert_materialize=True, upsert_key=upsert_key)
    return replace(sink, params=params)


def _sink_exchange(sink: PhysicalNode, setting: str, mode: str, input_parallelism: int) -> PhysicalNode:
    p = SinkParams.of(sink)
    child = sink.inputs[0]
    names = [f.name for f in p.schema]
    has_key = bool(p.primary_key) and all(k in names for k in p.primary_key)
    differs = False
    if p.parallelism is not None:  # 'sink.parallelism', with Flink's CommonExecSink rules
        table = ".".join(sink.info.get("path") or (p.table,))
        if p.parallelism <= 0:
            raise SqlValidationError(f"Invalid configured parallelism {p.parallelism} for table '{table}'.")
        differs = p.parallelism != input_parallelism
        if differs and child.changelog_mode != "I" and not p.primary_key:
            raise SqlValidationError(
                f"The sink for table '{table}' has a configured parallelism of {p.parallelism}, while the input "
                f"parallelism is {input_parallelism}. Since the configured parallelism is different from the input's "
                "parallelism and the changelog mode is not insert-only, a primary key is required but could not be "
                "found."
            )
    # the SinkMaterializer keys its state on the PRIMARY KEY: rows hashed on exactly it (Flink keys by it always)
    materialized = p.upsert_materialize and child.changelog_mode != "I"
    if differs:  # Flink: keyed unless NONE or one writer (AUTO and FORCE alike, as the parallelisms differ)
        keyed = has_key and (setting != "NONE" or materialized) and p.parallelism != 1
    elif materialized:
        keyed = distribution_columns(child) != {names.index(k) for k in p.primary_key}
    else:
        keyed = has_key and mode == STREAMING and _update_stream_needs_key(child, p, setting)
    if keyed:
        pk = tuple(names.index(k) for k in p.primary_key)
        exchange = PhysicalNode.of(replace(ExchangeParams.on(pk), parallelism=p.parallelism), (child,), child.fields)
    elif differs:
        exchange = PhysicalNode.of(ExchangeParams(REBALANCE, (), p.parallelism), (child,), child.fields)
    else:
        return sink
    exchange = replace(exchange, changelog_mode=child.changelog_mode)
    return replace(sink, inputs=(exchange,))


def _update_stream_needs_key(child: PhysicalNode, p: SinkParams, setting: str) -> bool:
    """`table.exec.sink.keyed-shuffle` at the job's parallelism: an update stream (any
    stream with FORCE) not already distributed on (a subset of) the key columns."""
    if setting == "NONE" or (setting == "AUTO" and child.changelog_mode == "I"):
        return False
    names = [f.name for f in p.schema]
    pk = {names.index(k) for k in p.primary_key}
    dist = distribution_columns(child)
    return dist is None or not dist <= pk  # else a key's rows are on one subtask already


def _passed_column(e: Expr) -> int | None:
    """The input column `e` is, unchanged (also through the sink's NOT NULL enforcer)."""
    if isinstance(e, Call) and e.name == "enforce_not_null" and e.args:
        e = e.args[0]
    return e.index if isinstance(e, InputRef) else None


def distribution_columns(node: PhysicalNode) -> set[int] | None:
    """Output columns `node`'s rows are hash-distributed on (rows equal on them are on one
    subtask; empty: all rows on one subtask), or None when not known."""
    p = node.params
    if node.is_kind(EXCHANGE):
        assert isinstance(p, ExchangeParams)
        return None if p.distribution in (FORWARD, REBALANCE) else set(p.keys)
    if isinstance(p, CalcParams):
        below = distribution_columns(node.inputs[0])
        if below is None:
            return None
        out: set[int] = set()
        for col in below:
            at = [i for i, e in enumerate(p.projections) if _passed_column(e) == col]
            if not at:
                return None  # a distribution column is not passed through
            out.add(at[0])
        return out
    # a streaming PRIMARY KEY sink of an update stream (start-up: other plans do not load them)
    from runtime.operators.changelog_normalize import ChangelogNormalizeParams
    from runtime.operators.group_agg import GroupAggregateParams

    if isinstance(p, GroupAggregateParams):  # (also the global phase) the group keys come first
        return set(range(len(p.grouping)))
    if isinstance(p, ChangelogNormalizeParams):
        return set(p.keys)
    spec = spec_for(node.operator)
    if spec is not None and spec.forwards_changelog and spec.input_distribution == ANY and len(node.inputs) == 1:
        # a pass-through (watermark / mini-batch assigner) over the same columns
        if node.fields[: len(node.inputs[0].fields)] == node.inputs[0].fields:
            return distribution_columns(node.inputs[0])
    return None
