"""The planner's entry points (used by streamsql): plan a query, plan INSERTs, EXPLAIN.

    Planner(catalog, config).plan_query(Query) -> PlannedQuery(graph, schema, changelog_mode)
    Planner(catalog, config).plan_inserts([InsertInto, ...]) -> JobGraph
    Planner(catalog, config).explain(Explain) -> str

Pipeline: bind → logical phases (planner.optimizer.phases) → physical → changelog-mode
inference → lower. The runtime mode comes from `execution.runtime-mode`.
"""

from __future__ import annotations

from planner.binder import bind_insert, bind_query
from planner.catalog import Catalog
from planner.changelog import infer_changelog_modes, require_update_before
from planner.errors import SqlError
from planner.explain import explain_text
from planner.logical import LogicalNode
from planner.lower import lower
from planner.optimizer import optimize_logical
from planner.optimizer.phases import NON_DETERMINISTIC_UPDATE
from planner.optimizer.physical_rules import to_physical
from planner.optimizer.sink_keyed_shuffle import keyed_sink_shuffle
from planner.optimizer.two_phase_agg import local_global_advice
from planner.physical import PhysicalNode
from planner.statements import Explain, InsertInto, Query, StatementSet
from runtime.config.core import RUNTIME_MODE
from runtime.frozen import frozen_dataclass
from runtime.graph import BATCH, STREAMING, JobGraph
from runtime.types import Field


@frozen_dataclass
class PlannedQuery:
    """A query planned for running: the job, the result's columns and whether it is
    insert-only or an updating changelog (the printers and collectors need it)."""

    graph: JobGraph
    schema: tuple[Field, ...]
    changelog_mode: str


class Planner:
    def __init__(self, catalog: Catalog, config: dict[str, str] | None = None) -> None:
        self.catalog = catalog
        self.config = dict(config or {})

    @property
    def mode(self) -> str:
        return BATCH if RUNTIME_MODE.get(self.config) == "batch" else STREAMING

    # ------------------------------------------------------------------ stages
    def bind(self, stmt: Query | InsertInto) -> LogicalNode:
        """The logical plan as bound (EXPLAIN's abstract syntax tree)."""
        try:
            if isinstance(stmt, InsertInto):
                return bind_insert(stmt, self.catalog, self.mode, self.config)
            return bind_query(stmt.query, self.catalog, stmt.sql, self.mode)
        except SqlError as e:
            if e.sql is None:
                e.with_source(stmt.sql)
            raise

    def optimize(self, plan: LogicalNode, sql: str | None = None, collected: bool = True) -> PhysicalNode:
        """Logical phases, then physical, then changelog-mode inference. `collected`: a
        query's result is collected (it keeps its -U rows, as Flink's collect sink takes
        every row kind); False for a query only EXPLAINed (Flink then plans it without a
        sink and leaves -U out wherever it can). An INSERT's sink decides for itself."""
        try:
            logical = optimize_logical(plan, self.config, self.mode)
            physical = to_physical(logical, self.mode, self.config)
            modes = require_update_before(infer_changelog_modes(physical, self.mode), self.mode, collected)
            planned = keyed_sink_shuffle(modes, self.config, self.mode)
            if self.mode == STREAMING and NON_DETERMINISTIC_UPDATE.get(self.config) == "TRY_RESOLVE":
                from planner.optimizer.non_deterministic_update import check_non_deterministic_updates

                check_non_deterministic_updates(planned, collected)
            return planned
        except SqlError as e:
            if e.sql is None and sql:
                e.with_source(sql)
            raise

    # ------------------------------------------------------------------ API
    def validate(self, stmt: Query | InsertInto) -> tuple[Field, ...]:
        """Bind and optimize without lowering: raises the statement's SqlError, if any, and
        returns the result schema (empty for an INSERT)."""
        plan = self.bind(stmt)
        self.optimize(plan, stmt.sql)
        return tuple(plan.fields)

    def plan_query(self, stmt: Query) -> PlannedQuery:
        plan = self.bind(stmt)
        physical = self.optimize(plan, stmt.sql)
        graph = lower([physical], self.mode, self.config, result_root=physical, name="query")
        return PlannedQuery(graph, tuple(plan.fields), physical.changelog_mode)

    def plan_inserts(self, inserts: list[InsertInto] | tuple[InsertInto, ...]) -> JobGraph:
        roots = [self.optimize(self.bind(i), i.sql) for i in inserts]
        tables = ",".join(i.table[-1] for i in inserts)
        return lower(roots, self.mode, self.config, name=f"insert-into_{tables}")

    def explain(self, stmt: Explain) -> str:
        inner = stmt.statement
        stmts: list[Query | InsertInto]
        if isinstance(inner, StatementSet):
            stmts = list(inner.inserts)
        else:
            stmts = [inner]
        logical = [self.bind(s) for s in stmts]
        physical = [self.optimize(p, s.sql, collected=False) for p, s in zip(logical, stmts, strict=True)]
        details = {d.upper() for d in stmt.details}
        advised: set[int] = set()
        advice = None
        if "PLAN_ADVICE" in details:
            advised, advice = local_global_advice(physical, self.config, self.mode)
        text = explain_text(logical, physical, changelog="CHANGELOG_MODE" in details, advice=dict.fromkeys(advised, 1))
        if "PLAN_ADVICE" in details:
            # Flink's aggregation-phase advice (GroupAggregationAnalyzer); its non-determinism
            # warnings have no counterpart here. Without advice, Flink's "no advice" notice.
            head, sep, tail = text.partition("\n\n== Optimized Execution Plan ==")
            head = head.replace("== Optimized Physical Plan ==", "== Optimized Physical Plan With Advice ==", 1)
            note = f"advice[1]: [ADVICE] {advice}" if advice else "No available advice..."
            text = head + "\n\n" + note + sep + tail
        if "JSON_EXECUTION_PLAN" in details:
            # streamsql's executable plan is its JobGraph: shown as its JSON.
            tables = ",".join(s.table[-1] for s in stmts if isinstance(s, InsertInto))
            graph = lower(physical, self.mode, self.config, name=f"insert-into_{tables}" if tables else "collect")
            text += "\n\n== Physical Execution Plan ==\n" + graph.to_json()
        return text
