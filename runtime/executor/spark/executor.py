"""SparkExecutor: runs a JobGraph on Spark with the LocalExecutor's interface.

`SparkExecutor(graph, stop_event).run()` yields the batches reaching `graph.result_node`
(data columns named as its schema plus `__op`), like `LocalExecutor.run()`, so results are
rendered by the same code (`--format jsonl` prints the same rows).

BATCH (or a streaming job whose sources are all VALUES): one DataFrame job per sink and one
for the result, collected through Arrow. STREAMING: one Structured Streaming query per sink
and one for the result (`foreachBatch` into this generator). Bounded file sources run with
`trigger(availableNow=True)`; with `source.monitor-interval` the query keeps running until
the stop event is set. Updating aggregates run in `update` output mode and the collector
turns each key's new value into -U (previous) / +U (new), or +I the first time; windowed
aggregates and stateless jobs run in `append` mode (+I).

Checkpoint location: `<execution.checkpointing.dir>/spark/<job id>/<query>` (the job id the
local runner keeps its checkpoints under; queries `sink-<table hash>` and `result`), so a
restarted job resumes from where it stopped (Spark's exactly-once file sink and state store),
and a restart whose plan no longer matches its checkpoint fails naming what differs
(restart.py); without the option a temporary directory is used and deleted.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import queue
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND
from runtime.checkpoint.options import CHECKPOINTING_DIR, IGNORE_UNCLAIMED_STATE, JOB_ID
from runtime.config.core import session_time_zone
from runtime.connectors.base import get_connector, parse_duration_ms
from runtime.errors import JobError
from runtime.executor.spark import restart
from runtime.executor.spark.capabilities import check_graph
from runtime.executor.spark.session import get_session
from runtime.executor.spark.streaming import StreamingTranslator, keeps_state
from runtime.executor.spark.translate import Translator, cname, watermark_delay_ms
from runtime.executor.spark.types import to_layout
from runtime.graph import BATCH, JobGraph, Node
from runtime.operators.base import Metrics, OperatorContext, Output, create_operator
from runtime.operators.sink import SINK, SinkParams
from runtime.operators.source import TABLE_SOURCE_SCAN, TableSourceScanParams
from runtime.operators.watermark import WATERMARK_ASSIGNER, WatermarkAssignerParams
from runtime.operators.window_agg import WindowAggregateParams
from runtime.state import create_backend

_DONE = object()

# Spark waits a fixed 10 s (PythonWorkerFactory.createSimpleWorker; no configuration sets it)
# for the Python process it starts for a transformWithState query's driver side to connect
# back. On an overloaded machine the interpreter can take longer to import PySpark, and the
# query fails with one of these texts (Spark's message, its cause's) before it ran anything.
# The query is then started again on its checkpoint location (Spark's exactly-once
# recovery), up to WORKER_START_RETRIES times.
WORKER_START_TIMEOUTS = (
    "Python worker failed to connect back",
    "Timed out while waiting for the Python worker to connect back",
)
WORKER_START_RETRIES = 3


class SparkExecutor:
    def __init__(self, graph: JobGraph, stop_event: threading.Event | None = None) -> None:
        check_graph(graph)  # refuse before starting anything
        self.graph = graph
        self.stop_event = stop_event or threading.Event()
        self.streaming = graph.mode != BATCH and any(n.is_kind(TABLE_SOURCE_SCAN) for n in graph.nodes)
        self.current_watermark: int | None = None
        self.queries: list[Any] = []
        # The DataStreamWriter of each query (same order): a query is started again from it.
        self.writers: list[Any] = []

    # ------------------------------------------------------------------ public
    def run(self) -> Iterator[pa.RecordBatch]:
        cfg = dict(self.graph.config or {})
        spark = get_session(cfg)
        tmp = tempfile.mkdtemp(prefix="streamsql-spark-")
        try:
            if self.streaming:
                yield from self._run_streaming(spark, StreamingTranslator(spark, self.graph, tmp), tmp)
            else:
                yield from self._run_batch(Translator(spark, self.graph, False, tmp))
        except Exception as e:  # noqa: BLE001 - re-raised, as a JobError when the job raised it
            err = _job_error(e)
            if err is e:
                raise
            raise err from e
        finally:
            for q in self.queries:
                try:
                    q.stop()
                except Exception:  # noqa: BLE001 - already stopped or failed
                    pass
            shutil.rmtree(tmp, ignore_errors=True)

    # ------------------------------------------------------------------ batch
    def _run_batch(self, tr: Translator) -> Iterator[pa.RecordBatch]:
        for node in self.graph.nodes:
            if node.is_kind(SINK):
                self._write_batch(tr, node)
        if self.graph.result_node is not None:
            node = self.graph.node(self.graph.result_node)
            df = tr.df(node.id)
            table = df.select(*[cname(i) for i in range(len(node.schema))]).toArrow()
            yield self._to_batch(node, table, np.zeros(table.num_rows, dtype=np.int8))

    def _write_batch(self, tr: Translator, node: Node) -> None:
        conn = SinkParams.of(node).connector
        if _spark_module(conn) is not None:
            _write_own_partitions(node, self._sink_frame(tr, node))
            return
        df = self._sink_frame(tr, node)
        if conn == "blackhole":
            df.write.format("noop").mode("overwrite").save()
        elif conn == "print":
            self._print(node, df.toArrow())
        else:
            self._file_writer(df.write.mode("append"), node).save(self._sink_path(node))

    def _sink_frame(self, tr: Translator, node: Node) -> Any:
        src = tr.df(node.inputs[0])
        p = SinkParams.of(node)
        fields = p.schema or node.schema
        fmt = p.options.get("format") if p.connector == "filesystem" else None
        cols = []
        for i, f in enumerate(fields):
            c = src[cname(i)]
            if fmt in ("csv", "json") and f.type.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
                c = _timestamp_text(c, zone=fmt == "json" and f.type.name == "TIMESTAMP_LTZ")
            cols.append(c.alias(f.name))
        df = src.select(*cols)
        if p.parallelism is not None:  # 'sink.parallelism': that many writer tasks (part files), hashed on
            # the PRIMARY KEY when there is one, else dealt round-robin (Flink's rebalance)
            return df.repartition(p.parallelism, *[df[f"`{k}`"] for k in p.primary_key])
        return df

    def _sink_path(self, node: Node) -> str:
        path = SinkParams.of(node).options.get("path", "")
        return os.path.abspath(path[7:] if path.startswith("file://") else path)

    def _file_writer(self, writer: Any, node: Node) -> Any:
        opts = SinkParams.of(node).options
        fmt = opts.get("format")
        w = writer.format(fmt)
        if fmt == "csv":
            w = (
                w.option("sep", opts.get("csv.field-delimiter", ","))
                .option("nullValue", opts.get("csv.null-literal", ""))
                .option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSS")
                .option("header", "false")
            )
        elif fmt == "json":
            w = w.option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSS").option("ignoreNullFields", "false")
        return w

    def _write_own(self, node: Node, table: pa.Table, kinds: np.ndarray, txn: str) -> None:
        """Rows of a sink whose connector writes itself on Spark (`spark_module`): the rows in
        the sink's Arrow layout plus `__op`, in one transaction, once per `txn`."""
        p = SinkParams.of(node)
        fields = tuple(p.schema or node.schema)
        batch = self._to_batch(node, table, kinds, fields=fields)
        module = _spark_module(p.connector)
        assert module is not None
        module.write_rows(pa.Table.from_batches([batch]), dict(p.options), fields, p.primary_key, txn)

    def _write_own_changelog(self, node: Node, txn_prefix: str, batch_df: Any, epoch_id: int) -> None:
        """foreachBatch target of such a sink: the micro-batch's changelog, exactly once
        (the transaction records `<txn_prefix>-<epoch>`, so a replayed micro-batch is skipped)."""
        n = len(self.graph.node(node.inputs[0]).schema)
        table = batch_df.select(*[cname(i) for i in range(n)], ROW_KIND).toArrow()
        kinds = table.column(n).to_numpy(zero_copy_only=False).astype(np.int8)
        self._write_own(node, table.select(list(range(n))), kinds, f"{txn_prefix}-{epoch_id}")

    def _print_changelog(self, node: Node, batch_df: Any) -> None:
        n = len(self.graph.node(node.inputs[0]).schema)
        table = batch_df.select(*[cname(i) for i in range(n)], ROW_KIND).toArrow()
        kinds = table.column(n).to_numpy(zero_copy_only=False).astype(np.int8)
        self._print(node, table.select(list(range(n))), kinds)

    def _print(self, node: Node, table: pa.Table, kinds: np.ndarray | None = None) -> None:
        """Rows of a print sink go through the local print sink, so the text is the same."""

        cfg = dict(self.graph.config or {})
        ctx = OperatorContext(
            mode=self.graph.mode,
            config=cfg,
            time_zone=session_time_zone(cfg),
            parallelism=1,
            metrics=Metrics(),
            state=create_backend(cfg),
        )
        op = create_operator(node, ctx)
        op.open()
        try:
            k = np.zeros(table.num_rows, dtype=np.int8) if kinds is None else kinds
            op.process_batch(
                self._to_batch(node, table, k, fields=tuple(self.graph.node(node.inputs[0]).schema)), 0, Output()
            )
            op.end_input(0, Output())
        finally:
            op.close()

    def _to_batch(
        self, node: Node, table: pa.Table, kinds: np.ndarray, fields: tuple[Any, ...] | None = None
    ) -> pa.RecordBatch:
        fields = fields or tuple(node.schema)
        cols = to_layout(table, fields)
        cols.append(pa.array(kinds, type=pa.int8()))
        return pa.RecordBatch.from_arrays(cols, names=[f.name for f in fields] + [ROW_KIND])

    # ------------------------------------------------------------------ streaming
    def _checkpoint_root(self, tmp: str) -> str:
        """The job's checkpoint location: stable for the job (its id), not for its plan, so a
        changed plan meets its old checkpoint and is checked against it (restart.py)."""
        base = CHECKPOINTING_DIR.get(self.graph.config)
        if not base:
            return os.path.join(tmp, "checkpoints")
        base = base[7:] if base.startswith("file://") else base
        job = (JOB_ID.get(self.graph.config or {}) or "job").replace(os.sep, "_")
        return os.path.join(os.path.abspath(base), "spark", job)

    def _bounded(self) -> bool:
        return all(not p.options.get("source.monitor-interval") for p in self._scans())

    def _scans(self) -> list[TableSourceScanParams]:
        return [n.params for n in self.graph.nodes if isinstance(n.params, TableSourceScanParams)]

    def _trigger(self, writer: Any) -> Any:
        if self._bounded():
            return writer.trigger(availableNow=True)
        interval = min(p.options.get("source.monitor-interval", "1 s") for p in self._scans())

        return writer.trigger(processingTime=f"{parse_duration_ms(interval)} milliseconds")

    def _check_lateness(self, spark: Any, tmp: str) -> None:
        """Flink decides lateness per record. The streaming translation stamps each row with
        the watermark before it (`__wm`, streaming.py) in the order one Spark task reads the
        input, which is the file order when the input is read as one partition. For an input
        Spark splits into several partitions, a batch pre-pass finds rows that arrive at or
        below the watermark before them (in file order); with none, both engines drop nothing
        and agree; with some, the job fails here rather than give a different result."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F  # noqa: N812

        windows = [n.params.window for n in self.graph.nodes if isinstance(n.params, WindowAggregateParams)]
        spec = windows[0] if windows else None
        pre = Translator(spark, self.graph, False, tmp)
        for node in self.graph.nodes:
            if not node.is_kind(WATERMARK_ASSIGNER):
                continue
            if pre.df(node.inputs[0]).rdd.getNumPartitions() <= 1:
                continue  # one task reads the input in file order: `__wm` is Flink's
            t = cname(WatermarkAssignerParams.of(node).rowtime_index)
            df = pre.df(node.inputs[0]).select(t).withColumn("__pos", F.monotonically_increasing_id())
            before = Window.orderBy("__pos").rowsBetween(Window.unboundedPreceding, -1)
            delay_ms = watermark_delay_ms(node) or 0
            # Flink drops a row from a window when window_end - 1 <= the watermark before it;
            # the row's earliest-ending window decides (session: its own [ts, ts + gap)).
            ms = F.unix_millis(F.col(t))
            wm = F.unix_millis(F.max(t).over(before)) - F.lit(delay_ms)
            if spec is None:  # an interval join drops a row below the watermark (checked per side:
                # Flink's two-input watermark is the smaller one, so this finds a superset)
                late = df.withColumn("__wm", wm).filter(ms < F.col("__wm"))
                first = late.select(t, "__wm").limit(1).collect()
                if first:
                    raise JobError(
                        f"the input of {node.label or node.operator} (node {node.id}) has rows below the "
                        f"watermark when they arrive (first: {first[0][0]} with watermark {first[0][1]}). Flink "
                        "drops late rows per record, Spark per micro-batch, so the Spark runner refuses this input "
                        "rather than give a different result; run it in batch mode or with the local runner."
                    )
                continue
            if spec.kind == "SESSION":
                first_end = ms + F.lit(spec.gap_ms)
            else:
                unit = spec.slide_ms if spec.kind == "HOP" else spec.step_ms or spec.size_ms
                off = spec.offset_ms or 0
                first_end = ms - F.pmod(ms - F.lit(off), F.lit(unit)) + F.lit(unit)
            wm = F.unix_millis(F.max(t).over(before)) - F.lit(delay_ms)
            late = df.withColumn("__wm", wm).filter(first_end - 1 <= F.col("__wm"))
            first = late.select(t, "__wm").limit(1).collect()
            if first:
                raise JobError(
                    f"the input of {node.label or node.operator} (node {node.id}) has rows at or below the "
                    f"watermark when they arrive (first: {first[0][0]} with watermark {first[0][1]}). Flink drops "
                    "late rows per record, Spark per micro-batch, so the Spark runner refuses this input rather "
                    "than give a different result; run it in batch mode or with the local runner."
                )

    def _run_streaming(self, spark: Any, tr: StreamingTranslator, tmp: str) -> Iterator[pa.RecordBatch]:
        if self._bounded():
            self._check_lateness(spark, tmp)
        root = self._checkpoint_root(tmp)
        names = restart.query_names(self.graph)
        record = restart.plan_record(self.graph, keeps_state(self.graph))
        restart.check_and_record(root, record, IGNORE_UNCLAIMED_STATE.get(self.graph.config or {}))
        tr.end_dir = root
        tr.uid = root
        mode = "append"
        out: queue.Queue[Any] = queue.Queue()
        for node in self.graph.nodes:
            if not node.is_kind(SINK):
                continue
            conn = SinkParams.of(node).connector
            own = _spark_module(conn) is not None
            df = tr._frame(node.inputs[0]) if conn == "print" or own else self._sink_frame(tr, node)
            location = os.path.join(root, names[node.id])
            w = df.writeStream.outputMode(mode).option("checkpointLocation", location)
            if conn == "blackhole":
                w = w.format("noop")
            elif conn == "print":
                w = w.foreachBatch(lambda b, _e, n=node: self._print_changelog(n, b))
            elif own:
                prefix = "spark-" + hashlib.sha1(location.encode()).hexdigest()[:20]
                w = w.foreachBatch(lambda b, e, n=node, t=prefix: self._write_own_changelog(n, t, b, e))
            else:
                w = self._file_writer(w, node).option("path", self._sink_path(node))
            self._start(self._trigger(w))
        collector = None
        if self.graph.result_node is not None:
            node = self.graph.node(self.graph.result_node)
            df = tr.df(node.id)
            collector = _ChangelogCollector(self, node, out)
            w = (
                df.writeStream.outputMode(mode)
                .option("checkpointLocation", os.path.join(root, names[node.id]))
                .foreachBatch(collector)
            )
            self._start(self._trigger(w))
        waiter = threading.Thread(target=self._await, args=(out,), daemon=True)
        waiter.start()
        while True:
            try:
                item = out.get(timeout=0.2)
            except queue.Empty:
                if self.stop_event.is_set():
                    return
                continue
            if item is _DONE:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
        waiter.join()

    def _start(self, writer: Any) -> None:
        self.writers.append(writer)
        self.queries.append(writer.start())

    def _await(self, out: queue.Queue[Any]) -> None:
        try:
            for i in range(len(self.queries)):
                retries = 0
                while True:
                    q = self.queries[i]
                    while not _terminated(q):
                        if self.stop_event.is_set():
                            q.stop()
                            break
                    exc = q.exception()
                    if exc is None:
                        break
                    if any(t in str(exc) for t in WORKER_START_TIMEOUTS) and retries < WORKER_START_RETRIES:
                        if self.stop_event.is_set():
                            break
                        retries += 1  # see WORKER_START_TIMEOUTS
                        self.queries[i] = self.writers[i].start()
                        continue
                    raise RuntimeError(f"Spark streaming query failed: {exc}")
        except BaseException as e:  # noqa: BLE001 - re-raised by the generator
            out.put(e)
        out.put(_DONE)


class _ChangelogCollector:
    """foreachBatch target: a micro-batch's result rows (`c0..`, `__op`) → changelog batches
    on the queue, with their row kinds."""

    def __init__(self, ex: SparkExecutor, node: Node, out: queue.Queue[Any]) -> None:
        self.ex = ex
        self.node = node
        self.out = out

    def __call__(self, batch_df: Any, epoch_id: int) -> None:
        n = len(self.node.schema)
        table = batch_df.select(*[cname(i) for i in range(n)], ROW_KIND).toArrow()
        if not table.num_rows:
            return
        kinds = table.column(n).to_numpy(zero_copy_only=False).astype(np.int8)
        self.out.put(self.ex._to_batch(self.node, table.select(list(range(n))), kinds))


def _write_own_partitions(node: Node, df: Any) -> None:
    """BATCH rows of a sink whose connector writes itself (`spark_module`): each Spark
    partition is written by its task, in one transaction recording `spark-<job>-<partition>`,
    so a retried task does not write its rows twice. With a PRIMARY KEY the rows are first
    hashed on it (unless 'sink.parallelism' did), so one key is written by one task."""
    p = SinkParams.of(node)
    fields = tuple(p.schema or node.schema)
    module_name = get_connector(p.connector).spark_module
    options, key = dict(p.options), tuple(p.primary_key)
    if key and p.parallelism is None:
        df = df.repartition(*[df[f"`{k}`"] for k in key])
    job = uuid.uuid4().hex[:16]

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        got = [b for b in batches if b.num_rows]
        n = sum(b.num_rows for b in got)
        if got:
            table = pa.Table.from_batches(got)
            cols = [*to_layout(table, fields), pa.array(np.zeros(n, dtype=np.int8))]
            rows = pa.Table.from_arrays(cols, names=[*(f.name for f in fields), ROW_KIND])
            task = TaskContext.get()
            txn = f"spark-{job}-{task.partitionId() if task is not None else 0}"
            importlib.import_module(module_name).write_rows(rows, options, fields, key, txn)
        yield pa.RecordBatch.from_pydict({"rows": pa.array([n], pa.int64())})

    df.mapInArrow(write, "rows long").collect()


def _timestamp_text(col: Any, zone: bool = False) -> Any:
    """A timestamp as the text the local runner's (Flink's) csv and json formats write:
    `yyyy-MM-dd HH:mm:ss` and the fraction in as few digits as it needs, none for a whole
    second (runtime/connectors/formats/text.py; `zone`: json's TIMESTAMP_LTZ adds 'Z');
    Spark's own formatter has a fixed width."""
    from pyspark.sql import functions as F  # noqa: N812

    micros = F.pmod(F.unix_micros(col), F.lit(1_000_000))
    fraction = F.concat(F.lit("."), F.regexp_replace(F.lpad(micros.cast("string"), 6, "0"), "0+$", ""))
    text = F.concat(F.date_format(col, "yyyy-MM-dd HH:mm:ss"), F.when(micros == 0, F.lit("")).otherwise(fraction))
    return F.concat(text, F.lit("Z")) if zone else text


def _spark_module(connector: str) -> Any:
    """The connector's own Spark module (runtime/connectors/base.py `spark_module`), or None."""
    name = get_connector(connector).spark_module
    return importlib.import_module(name) if name else None


def _terminated(query: Any) -> bool:
    """Whether `query` ended within 0.2 s. PySpark's `awaitTermination` raises the query's
    failure: that is a termination too, read again through `exception()`."""
    try:
        return bool(query.awaitTermination(0.2))
    except Exception:  # noqa: BLE001 - the failure itself is `query.exception()`
        return True


def _job_error(e: Exception) -> Exception:
    """A failure the job raised on purpose (`raise_error`: a bad CSV field, a division by zero,
    an arrival-order tie) as the JobError the local runner would raise; anything else as is."""
    text = str(e)
    marker = "[USER_RAISED_EXCEPTION]"
    if isinstance(e, JobError):
        return e
    if marker in text:
        return JobError(text.split(marker, 1)[1].split(" SQLSTATE")[0].strip())
    worker = "runtime.errors.JobError: "  # raised by streamsql's operator in a Python worker
    if worker in text:
        return JobError(text.rsplit(worker, 1)[1].split("\n", 1)[0].strip())
    return e
