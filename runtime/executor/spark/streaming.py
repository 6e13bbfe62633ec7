"""STREAMING mode on Spark: changelog edges as append-only rows (docs/spark.md).

Every streaming DataFrame carries the row kind in an `__op` column (+I/-U/+U/-D as
runtime.batch numbers them), and every query runs in Spark's Append output mode (the only
mode Spark's file sink accepts): a retraction is a row like any other.

- Sources, projections / filters (Calc), UNION ALL, Exchange and WATERMARK stay native
  Spark (translate.py's mapping, `__op` passed through).
- Every other operator runs as streamsql's own runtime operator (stateful.py): a stateful
  one through `transformWithStateInPandas` grouped by key group, a stateless one through
  `mapInArrow`. The results are the local runner's, including retractions, timers and
  operators Structured Streaming has no counterpart for.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_WATERMARK
from runtime.config.core import MAX_PARALLELISM
from runtime.connectors.base import get_connector
from runtime.executor.spark import stateful
from runtime.executor.spark.expressions import check_expr
from runtime.executor.spark.translate import Translator, cname, watermark_delay_ms
from runtime.executor.spark.types import SparkUnsupportedError, spark_schema
from runtime.expr.ir import Expr
from runtime.graph import JobGraph, Node
from runtime.operators.base import Operator, checkpointing_mode
from runtime.operators.calc import CALC, CalcParams
from runtime.operators.sink import SINK
from runtime.operators.source import TABLE_SOURCE_SCAN, TableSourceScanParams
from runtime.operators.spec import spec_for
from runtime.operators.union import EXCHANGE, HASH, UNION, ExchangeParams
from runtime.operators.values import VALUES
from runtime.operators.watermark import WATERMARK_ASSIGNER, WatermarkAssignerParams

# File formats of change events: Spark reads the lines, streamsql's format decodes them.
CHANGELOG_FORMATS = ("debezium-json",)


def native_kinds() -> frozenset[str]:
    """Operators mapped to native Spark in STREAMING mode (everything else: stateful.py):
    sources (VALUES: refused next to a stream), sinks, WATERMARK, projections / filters,
    UNION ALL and exchanges."""
    return frozenset(s.name for s in (TABLE_SOURCE_SCAN, SINK, WATERMARK_ASSIGNER, CALC, UNION, EXCHANGE, VALUES))


def calc_exprs(node: Node) -> tuple[Expr, ...]:
    """The projections and the condition of Calc `node`."""
    p = CalcParams.of(node)
    return (*p.projections, *(() if p.condition is None else (p.condition,)))


def native_calc(node: Node) -> bool:
    """Whether every expression of Calc `node` maps to a Spark function with Flink's semantics
    (expressions.check_expr). Otherwise STREAMING runs streamsql's own Calc over each Arrow
    batch (`mapInArrow`), unless `expressions.runtime_calc_refusal` names a reason."""
    try:
        for e in calc_exprs(node):
            check_expr(e, f"{node.operator} (node {node.id})")
    except SparkUnsupportedError:
        return False
    return True


def is_stateless(node: Node) -> bool:
    """Whether the runtime operator of `node` keeps nothing between batches."""
    spec = spec_for(node.operator)
    cls = spec.operator_class if spec is not None else None
    if cls is None or not issubclass(cls, Operator):
        return False
    probe = cls.__new__(cls)
    probe.node = node
    return checkpointing_mode(probe) == "stateless"


def runs_as_processor(node: Node) -> bool:
    """Whether STREAMING runs `node` as a processor keeping state in Spark's state store
    (stateful.py), rather than natively or as a stateless `mapInArrow`."""
    return node.operator not in native_kinds() and not (is_stateless(node) and len(node.inputs) == 1)


def keeps_state(graph: JobGraph) -> set[int]:
    """The nodes whose progress or state a Spark checkpoint keeps: sources (their offsets),
    WATERMARKs (the end-of-input stream beside each, Spark's event time) and processors."""
    kept = (TABLE_SOURCE_SCAN, VALUES, WATERMARK_ASSIGNER)
    return {n.id for n in graph.nodes if any(n.is_kind(k) for k in kept) or runs_as_processor(n)}


def has_event_time(graph: JobGraph, nid: int) -> bool:
    """Whether a WATERMARK is upstream of node `nid` (its Spark input carries a watermark)."""
    todo = [nid]
    seen: set[int] = set()
    while todo:
        n = graph.node(todo.pop())
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.is_kind(WATERMARK_ASSIGNER):
            return True
        todo.extend(n.inputs)
    return False


class StreamingTranslator(Translator):
    """Translator for STREAMING mode with `__op` on every edge (see the module doc)."""

    def __init__(self, spark: Any, graph: JobGraph, tmpdir: str, uid: str | None = None) -> None:
        super().__init__(spark, graph, True, tmpdir)
        self.update_mode = False
        self.uid = uid or uuid.uuid4().hex
        self.max_parallelism = MAX_PARALLELISM.get(graph.config or {})
        self.config = dict(graph.config or {})

    def df(self, nid: int) -> Any:
        if nid not in self._dfs:
            node = self.graph.node(nid)
            if node.operator in native_kinds():
                self._dfs[nid] = getattr(self, "_" + node.operator)(node)
            else:
                self._dfs[nid] = self._runtime_operator(node)
        return self._dfs[nid]

    def _hidden(self, df: Any) -> list[str]:
        return [c for c in (ROW_KIND, ROW_WATERMARK, stateful.BEFORE_WM) if c in df.columns]

    def _TableSourceScan(self, node: Node) -> Any:  # noqa: N802 - operator names
        p = TableSourceScanParams.of(node)
        if p.options.get("format") in CHANGELOG_FORMATS:
            return self._changelog_scan(node, p)
        df = super()._TableSourceScan(node)
        return df.withColumn(ROW_KIND, self.F.lit(0).cast("byte"))

    def _changelog_scan(self, node: Node, p: TableSourceScanParams) -> Any:
        """A file of change events: its lines read by Spark's text source (in file order: the
        packed edges keep a task's order, stateful.py), decoded by streamsql's format."""
        path = p.options.get("path", "")
        path = os.path.abspath(os.path.expanduser(path[7:] if path.startswith("file://") else path))
        reader = self.spark.readStream
        if os.path.isdir(path):
            reader = reader.option("recursiveFileLookup", "true")
        else:
            reader = reader.option("pathGlobFilter", os.path.basename(path))
        lines = reader.text(path if os.path.isdir(path) else os.path.dirname(path))
        decoder = stateful.LineDecoder(str(p.options["format"]), p.physical_schema, p.options, p.projection, path)
        return lines.mapInArrow(decoder, self._rows_schema(node))

    def _Values(self, node: Node) -> Any:  # noqa: N802
        """VALUES beside a stream: its rows written once to a parquet file read as a stream
        (on a restart the stream has seen the file and reads nothing more)."""
        import pyarrow.parquet as pq

        names = [cname(i) for i in range(len(node.schema))]
        d = os.path.join(self.end_dir, f"values-{self.node_uids[node.id]}")
        os.makedirs(d, exist_ok=True)
        target = os.path.join(d, "values.parquet")
        if not os.path.exists(target):
            table = self._values_table(node)
            cols = [
                stateful.to_spark_column(table.column(i).combine_chunks(), t)
                for i, t in enumerate(stateful.spark_arrow_types(node.schema))
            ]
            pq.write_table(pa.Table.from_arrays(cols, names=names), target + ".tmp")
            os.replace(target + ".tmp", target)
        df = self.spark.readStream.schema(spark_schema(node.schema, names)).parquet(d)
        return df.withColumn(ROW_KIND, self.F.lit(0).cast("byte"))

    def _Calc(self, node: Node) -> Any:  # noqa: N802
        """Spark's functions where they all map (native_calc), else streamsql's own Calc."""
        return super()._Calc(node) if native_calc(node) else self._runtime_operator(node)

    def _Union(self, node: Node) -> Any:  # noqa: N802
        out = None
        for i in node.inputs:
            d = self.df(i)
            out = d if out is None else out.unionByName(d, allowMissingColumns=True)
        return out

    def _WatermarkAssigner(self, node: Node) -> Any:  # noqa: N802
        """The input and the end-of-input row (translate.py) under Spark's `withWatermark`
        (for the timers), then streamsql's own WatermarkAssigner over each Arrow batch: it
        stamps every row with `__wm` (the watermark before it, in the order the task reads
        them) so operators decide lateness per row as Flink does, and drops the end-of-input
        row. That opaque step comes after `withWatermark` on purpose: Spark pushes a filter
        that does not read the event-time column through `withWatermark` and the union, and a
        WHERE above would otherwise drop the end-of-input row (its other columns are NULL),
        so the windows that close only at the end of the input would never fire."""
        src = self.graph.node(node.inputs[0])
        delay = watermark_delay_ms(node)
        ri = WatermarkAssignerParams.of(node).rowtime_index
        frame = self._frame(src.id)
        merged = frame.unionByName(self._end_stream(node, frame))
        marked = merged.withWatermark(cname(ri), f"{delay} milliseconds")
        stamp = stateful.StatelessRunner(
            node, src.schema, self.config, src.changelog_mode, keep_watermark=True, drop_end=ri
        )
        return marked.mapInArrow(stamp, self._rows_schema(node, watermark=True))

    def _frame(self, nid: int) -> Any:
        """Node `nid`'s rows as exactly `c0..`, `__op` (and `__wm` / `__bw` when it has them)."""
        df = self.df(nid)
        hidden = [c for c in self._hidden(df) if c != ROW_KIND]
        return df.select(*[cname(i) for i in range(self.width(nid))], ROW_KIND, *hidden)

    def _rows_schema(self, node: Node, watermark: bool = False, before: bool = False) -> Any:
        from pyspark.sql import types as st

        schema = spark_schema(node.schema, [cname(i) for i in range(len(node.schema))])
        extra = [st.StructField(ROW_WATERMARK, st.LongType(), True)] if watermark else []
        if before:
            extra.append(st.StructField(stateful.BEFORE_WM, st.LongType(), True))
        return st.StructType([*schema.fields, st.StructField(ROW_KIND, st.ByteType(), True), *extra])

    def ordered_input(self, nid: int) -> bool:
        """Whether each Spark task of node `nid` holds rows in the order the local runner sees
        them: rows straight from file sources that are one file each (a task reads one file in
        its order; a directory's files are packed into tasks in Spark's own order) or VALUES,
        through row-wise nodes only. Rows another processor emitted come in Spark's key-group
        order: not ordered. The processor accepts arrival-order ties among rows of one task
        (stateful.Packer, ties.py)."""
        node = self.graph.node(nid)
        if node.is_kind(TABLE_SOURCE_SCAN):
            p = TableSourceScanParams.of(node)
            if get_connector(p.connector).spark_module:
                return False
            path = p.options.get("path", "")
            path = os.path.abspath(os.path.expanduser(path[7:] if path.startswith("file://") else path))
            return os.path.isfile(path)
        if node.is_kind(VALUES):
            return True
        return not runs_as_processor(node) and all(self.ordered_input(i) for i in node.inputs)

    def _runtime_operator(self, node: Node) -> Any:
        modes = [self.graph.node(i).changelog_mode for i in node.inputs]
        if not runs_as_processor(node):
            src = self.graph.node(node.inputs[0])
            frame = self._frame(src.id)
            keep = ROW_WATERMARK in frame.columns
            before = stateful.BEFORE_WM in frame.columns
            runner = stateful.StatelessRunner(
                node, src.schema, self.config, modes[0], keep_watermark=keep, keep_before=before
            )
            return frame.mapInArrow(runner, self._rows_schema(node, watermark=keep, before=before))
        packed = None
        for idx, nid in enumerate(node.inputs):
            src = self.graph.node(nid)
            keys: tuple[int, ...] = ()
            if src.is_kind(EXCHANGE):
                p = ExchangeParams.of(src)
                keys = p.keys if p.distribution == HASH else ()
            packer = stateful.Packer(src.schema, keys, idx, self.max_parallelism, self.ordered_input(nid))
            part = self._frame(nid).mapInArrow(packer, stateful.wire_schema())
            packed = part if packed is None else packed.unionByName(part)
        assert packed is not None  # a stateful operator has an input
        event_time = has_event_time(self.graph, node.id)
        processor = stateful.processor_class()(
            f"{self.uid}/{self.node_uids[node.id]}", node, self.config, modes, event_time
        )
        out = packed.groupBy(stateful.BUCKET).transformWithStateInPandas(
            statefulProcessor=processor,
            outputStructType=stateful.output_schema(event_time),
            outputMode="Append",
            timeMode="EventTime" if event_time else "None",
            eventTimeColumnName=stateful.EVENT_TIME if event_time else "",
        )
        unpacker = stateful.Unpacker(node.schema, event_time)
        return out.mapInArrow(unpacker, self._rows_schema(node, before=event_time))


def python_env() -> None:
    """Spark's Python workers run this interpreter (the job's modules and packages)."""
    import sys

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
