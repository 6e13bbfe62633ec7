"""What the Spark runner can run, per operator kind and mode.

Each kind declares its capability on its spec (`OperatorSpec.spark`: batch, streaming, a
note); that drives both the refusal (`check_graph`, before the job starts) and the
generated documentation (docs/spark.md and the README section), so the two cannot drift.
A kind without a capability is refused. Checks that depend on an operator's parameters
(aggregate functions, window kinds, connectors, formats) are in `check_graph`.
"""

from __future__ import annotations

from collections.abc import Sequence

from runtime.executor.spark.expressions import check_expr
from runtime.executor.spark.translate import watermark_delay_ms
from runtime.executor.spark.types import SparkUnsupportedError, check_type
from runtime.executor.spark.windowed import correlate_refusal, limit_refusal, over_refusal
from runtime.graph import BATCH, JobGraph, Node
from runtime.operators.calc import CalcParams
from runtime.operators.correlate import CorrelateParams
from runtime.operators.expand import ExpandParams
from runtime.operators.group_agg import GROUP_AGGREGATE, GroupAggregateParams
from runtime.operators.interval_join import INTERVAL_JOIN, IntervalJoinParams
from runtime.operators.join import JoinParams
from runtime.operators.over import OverAggregateParams
from runtime.operators.rank import RankParams, SortLimitParams
from runtime.operators.rank_dedup import DeduplicateParams
from runtime.operators.rank_sort import LimitParams
from runtime.operators.rank_window import WindowRankParams
from runtime.operators.sink import SinkParams
from runtime.operators.source import TABLE_SOURCE_SCAN, TableSourceScanParams
from runtime.operators.spec import SparkCapability, all_specs, spec_for
from runtime.operators.union import EXCHANGE
from runtime.operators.values import VALUES
from runtime.operators.watermark import WATERMARK_ASSIGNER, WatermarkAssignerParams
from runtime.operators.window_agg import WINDOW_AGGREGATE, WindowAggregateParams
from runtime.operators.window_join import WindowJoinParams
from runtime.operators.window_tvf import WindowTableFunctionParams
from runtime.plan_params import AggCallParams
from runtime.state.ttl import operator_ttl

Capability = SparkCapability

# Prose for docs/spark.md after the function list (generated with the rest of the page).
DOC_NOTES = [
    "## Arrival order and run-time refusals",
    "",
    "The local runner (like Flink) breaks ties by arrival order; Spark does not define it. Where a result",
    "depends on it, the Spark job checks the data and fails naming the operator instead of guessing:",
    "ROW_NUMBER / deduplication ties at the kept range, OVER aggregates whose ROWS frame or ROW_NUMBER /",
    "NTILE / LAG / LEAD meet rows with equal ORDER BY keys that differ, and LIMIT without ORDER BY over more",
    "than FETCH differing rows. RANGE frames and RANK / DENSE_RANK see peers and never depend on it.",
    "",
    "## Scalar functions: forms refused before the job runs",
    "",
    "- Nondeterministic functions (CURRENT_TIMESTAMP, NOW, CURRENT_DATE, LOCALTIMESTAMP, PROCTIME,",
    "  UNIX_TIMESTAMP(), RAND, UUID): Spark evaluates them at other instants than the local runner.",
    "- Text to time: CAST / TRY_CAST of a string to DATE, TIMESTAMP(p <= 6) and TIMESTAMP_LTZ (read in",
    "  `table.local-time-zone`), TO_DATE and TO_TIMESTAMP (with or without a Java pattern) and DATE_FORMAT",
    "  of a string are parsed field by field with the local runner's own rules (Spark's parsers are not",
    "  used): CAST fails the job on text that is no date / timestamp, TRY_CAST and TO_* give NULL, TO_DATE",
    "  is lenient (trailing text ignored, `32.01.2024` is 2024-02-01), TO_TIMESTAMP strict. A pattern with",
    "  letters other than `y M L d D H k h K m s S a` (E G z Z X x are matched, not read) is refused, naming",
    "  the pattern. CAST to TIME is refused (Spark has no TIME type).",
    "- UNIX_TIMESTAMP / TO_TIMESTAMP_LTZ with a format, or of a string (TO_TIMESTAMP_LTZ):",
    "  only Flink's default `yyyy-MM-dd HH:mm:ss[.fraction]` text is parsed on Spark. UNIX_TIMESTAMP",
    "  reproduces SimpleDateFormat's lenient field overflow (Feb 30 is Mar 1) and Long.MIN_VALUE for text",
    "  not starting with a digit; other partial text fails the job.",
    "- DATE_FORMAT / FROM_UNIXTIME patterns: only the letter runs `yyyy yy MM MMM MMMM dd HH hh mm ss SSS",
    "  a EEE EEEE`, quoted text and punctuation mean the same in Java and Spark.",
    "- REGEXP_EXTRACT needs a literal pattern and group (NULL when nothing matches or the group did not",
    "  take part in the match, as in Flink); EXTRACT units: YEAR QUARTER MONTH WEEK DAY DOY DOW HOUR",
    "  MINUTE SECOND. Time fields of TIMESTAMP_LTZ values are in `table.local-time-zone`.",
]

VARIANCE = {"stddev_pop", "stddev_samp", "stddev", "var_pop", "var_samp", "variance"}
SUPPORTED_AGGS_BATCH = {"count", "sum", "avg", "min", "max"} | VARIANCE
SUPPORTED_AGGS_STREAMING = {"count", "sum", "avg", "min", "max"} | VARIANCE
# Aggregates whose value depends on arrival order, which Spark does not define.
ARRIVAL_ORDER_AGGS = {"listagg", "first_value", "last_value", "collect", "array_agg"}
FORMATS = {"csv", "json", "parquet"}
SINK_CONNECTORS = {"filesystem", "print", "blackhole"}


def _refuse(node: Node, reason: str) -> SparkUnsupportedError:
    return SparkUnsupportedError(f"{node.operator} (node {node.id}) cannot run on Spark: {reason}")


def check_graph(graph: JobGraph) -> None:
    """Raise SparkUnsupportedError (naming the operator and the reason) unless every node of
    `graph` runs on Spark with the local runner's semantics in the graph's mode."""
    streaming = graph.mode != BATCH and any(n.is_kind(TABLE_SOURCE_SCAN) for n in graph.nodes)
    mode = "streaming" if streaming else "batch"
    for node in graph.nodes:
        cap = capability(node.operator)
        if cap is None or not (cap.streaming if streaming else cap.batch):
            note = cap.note if cap else "the operator is not in the Spark runner's capability table"
            raise _refuse(node, f"not supported in {mode} mode ({note})")
        for f in node.schema:
            check_type(f.type, f"{node.operator} (node {node.id})")
        _check_params(graph, node, streaming)
    if streaming:
        for node in graph.nodes:
            if node.is_kind(VALUES):
                raise _refuse(node, "Structured Streaming cannot combine a VALUES input with a stream")
            if _expires_state(node) and any(operator_ttl(graph.config, node.params, i) for i in (0, 1)):
                raise _refuse(node, "state TTL (table.exec.state.ttl / STATE_TTL hint) has no Spark counterpart")
        _check_streaming_shape(graph)


# Operators whose keyed state expires with state TTL (runtime/state/ttl.py): kinds whose
# spec says `state_ttl`, and these params classes.
_TTL_PARAMS = (JoinParams, RankParams, DeduplicateParams, SortLimitParams)


def _expires_state(node: Node) -> bool:
    if isinstance(node.params, WindowRankParams):  # a RankParams whose state is per window
        return False
    spec = spec_for(node.operator)
    return (spec is not None and spec.state_ttl) or isinstance(node.params, _TTL_PARAMS)


def _check_aggs(node: Node, calls: Sequence[AggCallParams], streaming: bool) -> None:
    allowed = SUPPORTED_AGGS_STREAMING if streaming else SUPPORTED_AGGS_BATCH
    for a in calls:
        if a.name in ARRIVAL_ORDER_AGGS:
            raise _refuse(
                node,
                f"aggregate function {a.name.upper()} depends on arrival order, which Spark does not define "
                "(a partition's order is lost at every shuffle)",
            )
        if a.name not in allowed:
            raise _refuse(node, f"aggregate function {a.name.upper()} is not mapped to Spark")
        if streaming and a.distinct:
            raise _refuse(node, "DISTINCT aggregates are not supported by Structured Streaming")


# PostgreSQL connectors: Spark reads and writes them only through the PostgreSQL JDBC driver
# (a jar streamsql does not ship), so they are refused with that reason.
_POSTGRES_CONNECTORS = ("jdbc", "postgres-cdc")
_NO_JDBC_JAR = (
    "needs the PostgreSQL JDBC driver jar on Spark's classpath, which streamsql does not ship "
    "(Spark has no logical-decoding source for postgres-cdc either); run the job on the local runner"
)


# Kafka connectors: Spark's Kafka source and sink live in the spark-sql-kafka-0-10 package
# (a jar pyspark does not include), so they are refused with that reason.
_KAFKA_CONNECTORS = ("kafka", "upsert-kafka")
_NO_KAFKA_JAR = (
    "needs Spark's Kafka integration (the spark-sql-kafka-0-10 jar), which pyspark does not include; "
    "run the job on the local runner"
)


def _check_params(graph: JobGraph, node: Node, streaming: bool) -> None:
    where = f"{node.operator} (node {node.id})"
    p = node.params
    if isinstance(p, TableSourceScanParams):
        if p.connector in _POSTGRES_CONNECTORS:
            raise _refuse(node, f"connector '{p.connector}' {_NO_JDBC_JAR}")
        if p.connector in _KAFKA_CONNECTORS:
            raise _refuse(node, f"connector '{p.connector}' {_NO_KAFKA_JAR}")
        if p.connector != "filesystem":
            raise _refuse(node, f"connector '{p.connector}' (only 'filesystem' is read by Spark)")
        fmt = p.options.get("format")
        if fmt not in FORMATS:
            raise _refuse(node, f"format '{fmt}' (csv, json and parquet are supported)")
    elif isinstance(p, CalcParams):
        for e in p.projections:
            check_expr(e, where)
        if p.condition is not None:
            check_expr(p.condition, where)
    elif isinstance(p, (GroupAggregateParams, WindowAggregateParams)):
        _check_aggs(node, p.aggs, streaming)
        if isinstance(p, WindowAggregateParams) and streaming and p.window.kind == "CUMULATE":
            raise _refuse(node, "CUMULATE windows have no Structured Streaming counterpart")
        if graph.node(node.inputs[0]).changelog_mode != "I":
            raise _refuse(node, "its input is a changelog (Spark aggregates insert-only input)")
    elif isinstance(p, (JoinParams, IntervalJoinParams, WindowJoinParams)):
        if p.condition is not None:
            check_expr(p.condition, where)
    elif isinstance(p, OverAggregateParams):
        reason = over_refusal(node)
        if reason:
            raise _refuse(node, reason)
    elif isinstance(p, CorrelateParams):
        reason = correlate_refusal(node)
        if reason:
            raise _refuse(node, reason)
        if p.function.expr is not None:
            check_expr(p.function.expr, where)
    elif isinstance(p, LimitParams):
        reason = limit_refusal(node)
        if reason:
            raise _refuse(node, reason)
    elif isinstance(p, ExpandParams):
        for proj in p.projects:
            for e in proj:
                check_expr(e, where)
    elif isinstance(p, DeduplicateParams):
        if p.time_kind != "ROWTIME":
            raise _refuse(node, "deduplication on processing time is not reproducible on Spark")
    elif isinstance(p, WindowTableFunctionParams):
        if p.window.kind == "SESSION":
            raise _refuse(node, "SESSION window TVF without aggregation")
    elif isinstance(p, WatermarkAssignerParams):
        if streaming and watermark_delay_ms(node) is None:
            raise _refuse(node, "only WATERMARK FOR ts AS ts [- INTERVAL ...] maps to withWatermark")
    elif isinstance(p, SinkParams):
        if p.connector in _POSTGRES_CONNECTORS:
            raise _refuse(node, f"sink connector '{p.connector}' {_NO_JDBC_JAR}")
        if p.connector in _KAFKA_CONNECTORS:
            raise _refuse(node, f"sink connector '{p.connector}' {_NO_KAFKA_JAR}")
        if p.connector not in SINK_CONNECTORS:
            raise _refuse(node, f"sink connector '{p.connector}'")
        if p.connector == "filesystem" and p.options.get("format") not in FORMATS:
            raise _refuse(node, "sink format (csv, json and parquet are supported)")
    if isinstance(p, (SinkParams, TableSourceScanParams)) and p.options.get("$internal.partition-keys"):
        raise _refuse(node, "PARTITIONED BY tables are not mapped to Spark's partitioned layout yet")


def _check_streaming_shape(graph: JobGraph) -> None:
    """Structured Streaming runs one output mode per query: an updating GroupAggregate may only
    be followed by projections up to the result; a windowed aggregate must be over a watermark."""
    stateful = [
        n for n in graph.nodes if n.is_kind(GROUP_AGGREGATE) or n.is_kind(WINDOW_AGGREGATE) or n.is_kind(INTERVAL_JOIN)
    ]
    for node in graph.nodes:
        if not node.is_kind(INTERVAL_JOIN):
            continue
        kind = IntervalJoinParams.of(node).kind
        if kind != "INNER":
            # Spark emits an outer join's padded rows in the micro-batch after the watermark
            # passes; a bounded (availableNow) query can stop before that batch runs.
            raise _refuse(node, f"a {kind} interval join's padded rows are not emitted reliably")
        if len(stateful) > 1:
            raise _refuse(node, "Structured Streaming runs a stream-stream join with no other stateful operator here")
        for side in node.inputs:
            if not any(u.is_kind(WATERMARK_ASSIGNER) for u in _upstream(graph, side)):
                raise _refuse(node, "both inputs need a WATERMARK (Spark bounds a stream-stream join's state by it)")
    for node in graph.nodes:
        if not node.is_kind(GROUP_AGGREGATE):
            continue
        for c in _downstream(graph, node.id):
            ok = c.operator == EXCHANGE.name or (isinstance(c.params, CalcParams) and c.params.condition is None)
            if not ok:
                raise _refuse(
                    c,
                    f"it consumes the updates of GroupAggregate (node {node.id}); Structured Streaming "
                    "cannot retract earlier results through it",
                )
        if any(n.is_kind(WINDOW_AGGREGATE) for n in graph.nodes):
            raise _refuse(node, "a job cannot mix updating and windowed (append-mode) aggregates on Spark")
        if any(isinstance(n.params, SinkParams) and n.params.connector == "filesystem" for n in graph.nodes):
            raise _refuse(node, "a filesystem sink cannot take an updating result (as in Flink)")


def _downstream(graph: JobGraph, nid: int) -> list[Node]:
    out: list[Node] = []
    todo = [nid]
    while todo:
        for c in graph.consumers(todo.pop()):
            out.append(c)
            todo.append(c.id)
    return out


def _upstream(graph: JobGraph, nid: int) -> list[Node]:
    out: list[Node] = []
    todo = [nid]
    while todo:
        n = graph.node(todo.pop())
        out.append(n)
        todo.extend(n.inputs)
    return out


def capability(operator: str) -> Capability | None:
    """The Spark capability of operator kind `operator` (its spec's `spark`), or None."""
    spec = spec_for(operator)
    return spec.spark if spec is not None else None


def capability_rows() -> list[tuple[str, str, str, str]]:
    """(operator, batch, streaming, note) for the generated docs, by operator name."""
    yes = {True: "yes", False: "no"}
    caps: dict[str, Capability] = {s.name: s.spark for s in all_specs() if s.spark is not None}
    return [(op, yes[c.batch], yes[c.streaming], c.note) for op, c in sorted(caps.items())]
