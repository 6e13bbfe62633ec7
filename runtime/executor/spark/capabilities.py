"""What the Spark runner can run, per operator kind and mode.

Each kind declares its capability on its spec (`OperatorSpec.spark`: batch, streaming, a
note); that drives both the refusal (`check_graph`, before the job starts) and the
generated documentation (docs/spark.md and the README section), so the two cannot drift.
A kind without a capability is refused. Checks that depend on an operator's parameters
(aggregate functions, window kinds, connectors, formats) are in `check_graph`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime.connectors.base import get_connector
from runtime.errors import ConnectorError
from runtime.executor.spark.expressions import check_expr, runtime_calc_refusal
from runtime.executor.spark.streaming import CHANGELOG_FORMATS, calc_exprs, native_calc, native_kinds
from runtime.executor.spark.ties import ARRIVAL_ORDER_AGGS
from runtime.executor.spark.translate import watermark_delay_ms
from runtime.executor.spark.types import SparkUnsupportedError, check_type
from runtime.executor.spark.windowed import correlate_refusal, limit_refusal, over_refusal
from runtime.graph import BATCH, JobGraph, Node
from runtime.operators.calc import CALC, CalcParams
from runtime.operators.correlate import CorrelateParams
from runtime.operators.expand import ExpandParams
from runtime.operators.group_agg import GroupAggregateParams
from runtime.operators.interval_join import IntervalJoinParams
from runtime.operators.join import JoinParams
from runtime.operators.lookup_join import LOOKUP_JOIN
from runtime.operators.over import OverAggregateParams
from runtime.operators.rank_dedup import DeduplicateParams
from runtime.operators.rank_sort import LimitParams
from runtime.operators.sink import SinkParams
from runtime.operators.source import TABLE_SOURCE_SCAN, TableSourceScanParams
from runtime.operators.spec import SparkCapability, all_specs, spec_for
from runtime.operators.union import EXCHANGE, UNION
from runtime.operators.watermark import WatermarkAssignerParams
from runtime.operators.window_agg import WindowAggregateParams
from runtime.operators.window_join import WindowJoinParams
from runtime.plan_params import AggCallParams

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
    "In STREAMING (runtime/executor/spark/ties.py) the job fails naming the operator when rows that differ",
    "tie where the local runner's arrival order decides: a ROW_NUMBER Top-N (Rank, ORDER BY ... LIMIT) or",
    "window Top-N / deduplication whose tie straddles the kept range (or carries different row numbers),",
    "a rowtime deduplication with several rows of a key at the rowtime it keeps, and a rowtime OVER with a",
    "ROWS frame or an order-sensitive function (ROW_NUMBER, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE,",
    "LISTAGG ...) whose partition fires rows with equal timestamps together, or such an OVER over an",
    "ORDER BY that is no time attribute whose partition holds rows with equal ORDER BY values (over an",
    "insert-only input: over an updating one that OVER is not checked). LIMIT without ORDER BY is",
    "refused before the job starts. Such ties are accepted, and broken as the local runner breaks them,",
    "in a key group whose rows all came from one Spark task reading one file straight from the source",
    "(no other stateful operator in between): that task reads the file in its order, the local runner's.",
    "Once a key group has rows of two tasks (two files, a file Spark splits, a directory, UNION ALL of two",
    "tables, rows of an aggregate or join), its ties are checked as above.",
    "",
    "An event-time operator (window, OVER, MATCH_RECOGNIZE, interval join ...) that reads the rowtime of a",
    "UNION ALL of several inputs is refused before the job starts: the union's watermark is the minimum of",
    "its inputs' as their rows interleave, which Spark does not reproduce. A union whose rowtime no stateful",
    "operator reads (a projection, a GROUP BY of other columns) runs.",
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
    "  the pattern. CAST to TIMESTAMP / TIMESTAMP_LTZ reads Flink's default timestamp form as the local",
    "  runner: `yyyy-M-d[ H:m:s[.fraction]]`, untrimmed, one space (no 'T'), both colons; a day past the",
    "  month's end is its last day (`2024-02-30` is 2024-02-29), `24:00:00` the next midnight. CAST to",
    "  DATE trims, ignores text after a space and takes years 0..9999. CAST / TRY_CAST of text to TIME",
    "  (Flink's parseTime: `'123'` is 123 hours, printed 23:00:00; `'12:60'` is 13:00; a `-h:m` zone) runs",
    "  only inside CAST(... AS STRING): Spark has no TIME type, so any other use of a TIME is refused.",
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
FORMATS = {"csv", "json", "parquet"}
SINK_CONNECTORS = {"filesystem", "print", "blackhole"}


def _refuse(node: Node, reason: str) -> SparkUnsupportedError:
    return SparkUnsupportedError(f"{node.operator} (node {node.id}) cannot run on Spark: {reason}")


def check_graph(graph: JobGraph) -> None:
    """Raise SparkUnsupportedError (naming the operator and the reason) unless every node of
    `graph` runs on Spark with the local runner's semantics in the graph's mode."""
    streaming = graph.mode != BATCH and any(n.is_kind(TABLE_SOURCE_SCAN) for n in graph.nodes)
    if streaming:
        _check_streaming(graph)
        return
    for node in graph.nodes:
        cap = capability(node.operator)
        if cap is None or not cap.batch:
            note = cap.note if cap else "the operator is not in the Spark runner's capability table"
            raise _refuse(node, f"not supported in batch mode ({note})")
        for f in node.schema:
            check_type(f.type, f"{node.operator} (node {node.id})")
        _check_params(graph, node, False)


def _check_streaming(graph: JobGraph) -> None:
    """STREAMING: native nodes (streaming.native_kinds) are checked as in batch; every other
    operator runs as streamsql's own operator inside Spark (stateful.py) unless
    `runtime_operator_refusal` names a reason."""
    native = native_kinds()
    for node in graph.nodes:
        reason = None if node.operator in native else runtime_operator_refusal(graph, node)
        if reason:  # before the types: the operator's own reason is the one that counts
            raise _refuse(node, f"not supported in streaming mode ({reason})")
        for f in node.schema:
            check_type(f.type, f"{node.operator} (node {node.id})")
        if node.is_kind(CALC) and not native_calc(node):  # streamsql's own Calc (streaming.py)
            refusal = runtime_calc_refusal(calc_exprs(node), f"{node.operator} (node {node.id})")
            if refusal:
                raise SparkUnsupportedError(refusal)
            continue
        if node.operator in native:
            cap = capability(node.operator)
            if cap is None or not cap.streaming:
                note = cap.note if cap else "the operator is not in the Spark runner's capability table"
                raise _refuse(node, f"not supported in streaming mode ({note})")
            _check_params(graph, node, True)


def runtime_operator_refusal(graph: JobGraph, node: Node) -> str | None:
    """Why streamsql's operator for `node` cannot run inside Spark with the local runner's
    results (None when it can): processing time, lookups of an external table, aggregates
    whose value is the order rows arrive in and LIMIT without ORDER BY. (A ROW_NUMBER Top-N
    runs and fails the job on a tie that arrival order would break: ties.py.)"""
    spec = spec_for(node.operator)
    if spec is None or spec.operator_class is None:
        return "the runtime has no such operator"
    kind = _kind_refusal(node.operator)
    if kind is not None:
        return kind.removeprefix("Streaming: ").rstrip(".")
    for nid in node.inputs:
        for f in graph.node(nid).schema:
            if f.type.time_attr == "PROCTIME":
                return "processing-time operators depend on when rows arrive, which Spark does not reproduce"
    union = _event_time_union(graph, node)
    if union is not None:
        return (
            f"it reads the rowtime of a UNION ALL (node {union}): the union's watermark is the minimum of its "
            "inputs' as their rows interleave, which Spark does not reproduce (it would judge each row late "
            "against its own input's watermark); run the job on the local runner"
        )
    p = node.params
    if isinstance(p, DeduplicateParams) and p.time_kind != "ROWTIME":
        return "deduplication on processing time is not reproducible on Spark"
    if isinstance(p, LimitParams):
        return "LIMIT without ORDER BY keeps the first rows in arrival order, which Spark does not define"
    for a in getattr(p, "aggs", None) or ():
        name = a.name if isinstance(a, AggCallParams) else a.get("name") if isinstance(a, dict) else None
        if name in ARRIVAL_ORDER_AGGS:
            return f"aggregate function {str(name).upper()} depends on arrival order, which Spark does not define"
    return None


def _event_time_union(graph: JobGraph, node: Node) -> int | None:
    """The id of a UNION ALL of several inputs whose rowtime attribute reaches `node`'s
    input through the nodes Spark runs row by row (Calc, Exchange, Union), or None. A
    stateful operator reading such a union's rowtime (a window, OVER, MATCH_RECOGNIZE, an
    interval join) would see each row with its own input's watermark, not the union's; one
    whose input has no rowtime column left (a GROUP BY of other columns) is not affected."""
    todo = list(node.inputs)
    seen: set[int] = set()
    while todo:
        n = graph.node(todo.pop())
        if n.id in seen or not (n.is_kind(CALC) or n.is_kind(EXCHANGE) or n.is_kind(UNION)):
            continue
        if not any(f.type.time_attr == "ROWTIME" for f in n.schema):
            continue
        seen.add(n.id)
        if n.is_kind(UNION) and len(n.inputs) > 1:
            return n.id
        todo.extend(n.inputs)
    return None


def _check_aggs(node: Node, calls: Sequence[AggCallParams]) -> None:
    for a in calls:
        if a.name in ARRIVAL_ORDER_AGGS:
            raise _refuse(
                node,
                f"aggregate function {a.name.upper()} depends on arrival order, which Spark does not define "
                "(a partition's order is lost at every shuffle)",
            )
        if a.name not in SUPPORTED_AGGS_BATCH:
            raise _refuse(node, f"aggregate function {a.name.upper()} is not mapped to Spark")


# Connectors whose factory names a `spark_module` (jdbc: psycopg from Spark's Python workers,
# runtime/connectors/jdbc_spark.py) are read and written by it. postgres-cdc is not: Spark has
# no logical-decoding source, and a replication slot has one reader.
_NO_CDC = (
    "reads a PostgreSQL replication slot, which has no Spark source (a slot has one reader and its position "
    "advances with streamsql's checkpoints); run the job on the local runner"
)


def _spark_connector(connector: str) -> Any:
    """The connector's factory when it names a `spark_module`, else None."""
    try:
        factory = get_connector(connector)
    except ConnectorError:
        return None
    return factory if factory.spark_module else None


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
        if p.connector == "postgres-cdc":
            raise _refuse(node, f"connector '{p.connector}' {_NO_CDC}")
        own = _spark_connector(p.connector)
        if own is not None:
            if streaming and not own.spark_streaming_scan:
                raise _refuse(
                    node,
                    f"connector '{p.connector}' is read by Spark in BATCH mode only (its scan is bounded and has no "
                    "Spark streaming source); run the job in BATCH mode or on the local runner",
                )
        elif p.connector in _KAFKA_CONNECTORS:
            raise _refuse(node, f"connector '{p.connector}' {_NO_KAFKA_JAR}")
        elif p.connector != "filesystem":
            raise _refuse(
                node, f"connector '{p.connector}' (Spark reads 'filesystem' tables and connectors with a Spark mapping)"
            )
        elif p.options.get("format") not in FORMATS and not (
            streaming and p.options.get("format") in CHANGELOG_FORMATS
        ):
            changelog = ", ".join(CHANGELOG_FORMATS)
            fmt = p.options.get("format")
            raise _refuse(node, f"format '{fmt}' (csv, json and parquet are supported; {changelog} in streaming mode)")
    elif isinstance(p, CalcParams):
        for e in p.projections:
            check_expr(e, where)
        if p.condition is not None:
            check_expr(p.condition, where)
    elif isinstance(p, (GroupAggregateParams, WindowAggregateParams)):
        _check_aggs(node, p.aggs)
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
    elif isinstance(p, WatermarkAssignerParams):
        if streaming and watermark_delay_ms(node) is None:
            raise _refuse(node, "only WATERMARK FOR ts AS ts [- INTERVAL ...] maps to withWatermark")
    elif isinstance(p, SinkParams):
        if p.connector in _KAFKA_CONNECTORS:
            raise _refuse(node, f"sink connector '{p.connector}' {_NO_KAFKA_JAR}")
        if p.connector not in SINK_CONNECTORS and _spark_connector(p.connector) is None:
            raise _refuse(node, f"sink connector '{p.connector}'")
        if p.connector == "filesystem" and p.options.get("format") not in FORMATS:
            raise _refuse(node, "sink format (csv, json and parquet are supported)")
        if p.connector == "filesystem" and (p.options.get("auto-compaction") or "").strip().lower() == "true":
            raise _refuse(node, "'auto-compaction' (Spark writes its own part files)")
    if isinstance(p, (SinkParams, TableSourceScanParams)) and p.options.get("$internal.partition-keys"):
        raise _refuse(node, "PARTITIONED BY tables are not mapped to Spark's partitioned layout yet")


def capability(operator: str) -> Capability | None:
    """The Spark capability of operator kind `operator` (its spec's `spark`), or None."""
    spec = spec_for(operator)
    return spec.spark if spec is not None else None


PROCESSOR_NOTE = (
    "Streaming: streamsql's own operator inside Structured Streaming (stateful: `transformWithState` per key "
    "group, state in Spark's RocksDB state store; stateless: `mapInArrow`; docs/spark.md)."
)


def _kind_refusal(kind: str) -> str | None:
    """Why every node of operator kind `kind` is refused in STREAMING (None: none)."""
    if kind == LOOKUP_JOIN.name:
        return "Streaming: a lookup join reads the external table when a row arrives, which Spark does not reproduce."
    return None


def capability_rows() -> list[tuple[str, str, str, str]]:
    """(operator, batch, streaming, note) for the generated docs, by operator name: every
    runtime operator kind. STREAMING runs the native kinds (`streaming.native_kinds`) as their
    capability says and every other kind through streamsql's own operator."""
    yes = {True: "yes", False: "no"}
    native = native_kinds()
    rows = []
    for spec in all_specs():
        if spec.operator_class is None and spec.spark is None:
            continue
        op, c = spec.name, spec.spark
        batch = bool(c and c.batch)
        note = c.note if c else ""
        if op in native:
            streaming = bool(c and c.streaming)
        else:
            refusal = _kind_refusal(op)
            streaming = refusal is None
            note = note.split(" Streaming:")[0].split("Streaming:")[0].strip()
            note = f"{note} {refusal or PROCESSOR_NOTE}".strip()
        rows.append((op, yes[batch], yes[streaming], note or "Not mapped."))
    return sorted(rows)
