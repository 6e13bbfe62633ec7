"""JobGraph → PySpark DataFrames, node by node.

Every node becomes a DataFrame whose data columns are named `c0..c{n-1}` (positional, as the
IR is), so expressions never clash with user column names; the executor renames them to the
schema's names at the end. In STREAMING mode, an updating GroupAggregate also carries its
grouping keys as hidden `__k*` columns through the projections above it, so the result
collector can turn Spark's update-mode output back into a -U/+U changelog.

Bounded sources in STREAMING mode: Flink fires every open window when a bounded input ends
(MAX_WATERMARK). Spark has no end-of-input watermark, so each WatermarkAssigner unions its
input with a one-row "end" stream whose rowtime is END_TS; it moves Spark's watermark past
every window and is filtered out right after `withWatermark` (Spark never pushes a filter on
the event-time column below the watermark).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import pyarrow as pa

from runtime.checkpoint.uid import operator_uids
from runtime.config.core import session_time_zone
from runtime.connectors.base import get_connector
from runtime.executor.spark.dispatch import translates, translation_for
from runtime.executor.spark.expressions import VARIANCE_FUNCS, Ctx, literal, to_column
from runtime.executor.spark.relational import RelationalMixin
from runtime.executor.spark.stateful import END_TS_MICROS
from runtime.executor.spark.types import SparkUnsupportedError, spark_schema, spark_type
from runtime.executor.spark.windowed import WindowedMixin
from runtime.expr.ir import Call, InputRef, Literal
from runtime.graph import JobGraph, Node
from runtime.map_values import has_map, to_external
from runtime.operators.calc import CalcParams
from runtime.operators.group_agg import GROUP_AGGREGATE, GroupAggregateParams
from runtime.operators.source import TableSourceScanParams
from runtime.operators.union import ExchangeParams, UnionParams
from runtime.operators.values import ValuesParams
from runtime.operators.watermark import WatermarkAssignerParams
from runtime.operators.window_agg import WindowAggregateParams
from runtime.operators.window_tvf import WindowTableFunctionParams
from runtime.plan_params import AggCallParams, WindowParams
from runtime.types import STRING, Field

HIDDEN = "__k"


def cname(i: int) -> str:
    return f"c{i}"


def watermark_delay_ms(node: Node) -> int | None:
    """The delay of a WATERMARK `ts - INTERVAL 'n' unit` (or `ts`), None for other forms."""
    p = WatermarkAssignerParams.of(node)
    wm, idx = p.watermark, p.rowtime_index
    if isinstance(wm, InputRef) and wm.index == idx:
        return 0
    if (
        isinstance(wm, Call)
        and wm.name == "minus"
        and isinstance(wm.args[0], InputRef)
        and wm.args[0].index == idx
        and isinstance(wm.args[1], Literal)
        and wm.args[1].type.name == "INTERVAL_DAY_TIME"
    ):
        return int(wm.args[1].value)
    return None


class Translator(RelationalMixin, WindowedMixin):
    def __init__(self, spark: Any, graph: JobGraph, streaming: bool, tmpdir: str) -> None:
        from pyspark.sql import functions as F  # noqa: N812

        self.F = F
        self.spark = spark
        self.graph = graph
        self.streaming = streaming
        self.tmpdir = tmpdir
        # Where the end-of-input streams live: the checkpoint root when the job has one, so a
        # job restarted from its checkpoint replays its offsets against the same files.
        self.end_dir = tmpdir
        # Stable operator ids (runtime/checkpoint/uid.py) name what lives in the checkpoint.
        self.node_uids = operator_uids(graph)
        cfg = graph.config or {}
        self.ctx = Ctx(session_time_zone(cfg))
        self._dfs: dict[int, Any] = {}
        self.update_mode = streaming and any(n.is_kind(GROUP_AGGREGATE) for n in graph.nodes)

    # ------------------------------------------------------------------ helpers
    def df(self, nid: int) -> Any:
        if nid not in self._dfs:
            node = self.graph.node(nid)
            method = translation_for(node)
            if method is None:
                raise SparkUnsupportedError(f"{node.operator} (node {nid}) is not mapped to Spark")
            self._dfs[nid] = method(self, node)
        return self._dfs[nid]

    def _cols(self, df: Any, n: int) -> list[Any]:
        return [df[cname(i)] for i in range(n)]

    def _hidden(self, df: Any) -> list[str]:
        return [c for c in df.columns if c.startswith(HIDDEN)]

    def width(self, nid: int) -> int:
        return len(self.graph.node(nid).schema)

    # ------------------------------------------------------------------ sources
    @translates(TableSourceScanParams)
    def _TableSourceScan(self, node: Node) -> Any:  # noqa: N802 - operator names
        F = self.F  # noqa: N806
        p = TableSourceScanParams.of(node)
        opts = p.options
        own = get_connector(p.connector).spark_module
        if own:  # the connector reads itself (runtime/connectors/base.py `spark_module`)
            physical = list(p.physical_schema)
            names = [cname(i) for i in range(len(physical))]
            schema = spark_schema(physical, names)
            df = importlib.import_module(own).read_frame(
                self.spark, dict(opts), tuple(physical), schema, self.streaming
            )
            if p.projection is not None:
                df = df.select(*[df[names[j]].alias(cname(k)) for k, j in enumerate(p.projection)])
            return df
        fmt = opts.get("format")
        path = opts.get("path", "")
        path = os.path.abspath(os.path.expanduser(path[7:] if path.startswith("file://") else path))
        physical = list(p.physical_schema)
        names = [cname(i) for i in range(len(physical))]
        text_fields = [f.type.name not in ("ARRAY", "MAP", "ROW") for f in physical]
        reader = self.spark.readStream if self.streaming else self.spark.read
        if os.path.isdir(path):
            reader = reader.option("recursiveFileLookup", "true")
        elif self.streaming:  # a file stream watches a directory: watch the file's own one
            reader = reader.option("pathGlobFilter", os.path.basename(path))
            path = os.path.dirname(path)
        if fmt == "parquet":  # parquet and json match columns by name: rename after reading
            df = reader.schema(spark_schema(physical, [f.name for f in physical])).parquet(path)
            df = df.select(*[df[f"`{f.name}`"].alias(n) for f, n in zip(physical, names, strict=True)])
        else:
            read_fields = [Field(f.name, STRING()) if t else f for f, t in zip(physical, text_fields, strict=True)]
            schema = spark_schema(read_fields, names)
            if fmt == "csv":
                df = (
                    reader.schema(schema)
                    .option("sep", opts.get("csv.field-delimiter", ","))
                    .option("quote", opts.get("csv.quote-character", '"'))
                    .option("escape", opts.get("csv.quote-character", '"'))
                    .option("nullValue", "\u0000streamsql-no-null\u0000")
                    .option("emptyValue", "")
                    .option("mode", "FAILFAST")
                    .option("comment", "#" if opts.get("csv.allow-comments") == "true" else "\u0000")
                    .csv(path)
                )
            else:
                by_name = spark_schema(read_fields, [f.name for f in physical])
                df = reader.schema(by_name).option("mode", "FAILFAST").json(path)
                df = df.select(*[df[f"`{f.name}`"].alias(n) for f, n in zip(physical, names, strict=True)])
            cols = []
            null_literal = opts.get("csv.null-literal") if fmt == "csv" else None
            lenient = opts.get(f"{fmt}.ignore-parse-errors") == "true"
            for i, (f, is_text) in enumerate(zip(physical, text_fields, strict=True)):
                c = df[names[i]]
                if is_text:
                    if fmt == "csv" and null_literal != "":
                        # Spark reads an unquoted empty field as NULL; Flink reads '' (only the
                        # null literal is NULL), so an empty numeric field fails as in Flink.
                        c = F.coalesce(c, F.lit(""))
                    if null_literal is not None:
                        c = F.when(c == F.lit(null_literal), F.lit(None).cast("string")).otherwise(c)
                    c = self._parse_text(c, f, lenient)
                cols.append(c.alias(names[i]))
            df = df.select(*cols)
        proj = p.projection
        if proj is not None:
            df = df.select(*[df[names[j]].alias(cname(k)) for k, j in enumerate(proj)])
        return df

    def _parse_text(self, c: Any, f: Any, lenient: bool) -> Any:
        """Text → typed value with the Java parsing rules Flink's formats use."""
        F = self.F  # noqa: N806
        t = f.type
        if t.is_string:
            return c
        if t.name == "BOOLEAN":  # Boolean.parseBoolean: anything but "true" is false
            return F.when(c.isNull(), F.lit(None).cast("boolean")).otherwise(F.lower(c) == F.lit("true"))

        trimmed = F.trim(c)
        value = trimmed.try_cast(spark_type(t))
        ok = value.isNotNull()
        if t.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            pattern = r"^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}(:\d{2}(\.\d{1,9})?)?$"
            ok = ok & trimmed.rlike(pattern)
        elif t.name == "DATE":
            ok = ok & trimmed.rlike(r"^\d{4}-\d{1,2}-\d{1,2}$")
        elif t.is_integer:
            ok = ok & trimmed.rlike(r"^[+-]?\d+$")
        if lenient:
            return F.when(ok, value)
        message = F.concat(F.lit(f"Failed to deserialize field '{f.name}' ({t}) from text: '"), c, F.lit("'"))
        return (
            F.when(c.isNull(), F.lit(None).cast(spark_type(t)))
            .when(ok, value)
            .otherwise(F.raise_error(message).cast(spark_type(t)))
        )

    @translates(ValuesParams)
    def _Values(self, node: Node) -> Any:  # noqa: N802
        table = self._values_table(node)
        if not table.num_rows:
            return self.spark.createDataFrame([], spark_schema(node.schema, table.column_names))
        df = self.spark.createDataFrame(table)
        return df.select(
            *[
                df[n].cast(s.dataType)
                for n, s in zip(table.column_names, spark_schema(node.schema, table.column_names), strict=True)
            ]
        )

    def _values_table(self, node: Node) -> pa.Table:
        """The rows of VALUES `node` as an Arrow table with columns `c0..`."""
        from decimal import Decimal

        cols = []
        for i, f in enumerate(node.schema):
            column = [r[i] for r in ValuesParams.of(node).rows]
            vals = [v.value if isinstance(v, Literal) else None for v in column]
            if f.type.name == "DECIMAL":
                vals = [None if v is None else Decimal(str(v)) for v in vals]
            col = pa.array(vals, type=f.type.to_arrow())
            cols.append(to_external(col, f.type, "the Spark runner") if has_map(f.type) else col)
        return pa.Table.from_arrays(cols, names=[cname(i) for i in range(len(cols))])

    # ------------------------------------------------------------------ row-wise
    @translates(CalcParams)
    def _Calc(self, node: Node) -> Any:  # noqa: N802
        src = self.df(node.inputs[0])
        cols = self._cols(src, self.width(node.inputs[0]))
        p = CalcParams.of(node)
        if p.condition is not None:
            src = src.filter(to_column(p.condition, cols, self.ctx))
            cols = self._cols(src, self.width(node.inputs[0]))
        out = [to_column(e, cols, self.ctx).alias(cname(i)) for i, e in enumerate(p.projections)]
        return src.select(*out, *self._hidden(src))

    @translates(ExchangeParams)
    def _Exchange(self, node: Node) -> Any:  # noqa: N802
        return self.df(node.inputs[0])

    @translates(UnionParams)
    def _Union(self, node: Node) -> Any:  # noqa: N802
        dfs = [self.df(i) for i in node.inputs]
        out = dfs[0]
        for d in dfs[1:]:
            out = out.unionByName(d)
        return out

    @translates(WatermarkAssignerParams)
    def _WatermarkAssigner(self, node: Node) -> Any:  # noqa: N802
        src = self.df(node.inputs[0])
        if not self.streaming:
            return src
        F = self.F  # noqa: N806
        delay = watermark_delay_ms(node)
        time_col = cname(WatermarkAssignerParams.of(node).rowtime_index)
        end = self._end_stream(node, src)
        merged = src.unionByName(end)
        wm = merged.withWatermark(time_col, f"{delay} milliseconds")
        return wm.filter(wm[time_col] != F.timestamp_micros(F.lit(END_TS_MICROS)))

    def _end_stream(self, node: Node, src: Any) -> Any:
        """A one-row parquet stream with the end-of-input rowtime (see the module doc)."""
        import pyarrow.parquet as pq

        d = os.path.join(self.end_dir, f"end-{self.node_uids[node.id]}")
        os.makedirs(d, exist_ok=True)
        if os.path.exists(os.path.join(d, "end.parquet")):  # a restart: the stream has seen it
            return self.spark.readStream.schema(src.schema).parquet(d)
        ri = WatermarkAssignerParams.of(node).rowtime_index
        schema = src.schema
        cols = []
        for i, f in enumerate(node.schema):
            if i == ri:
                cols.append(pa.array([END_TS_MICROS], pa.timestamp("us", tz="UTC")))
            else:
                cols.append(pa.nulls(1, f.type.to_arrow()))
        names = [cname(i) for i in range(len(node.schema))]
        pq.write_table(pa.Table.from_arrays(cols, names=names), os.path.join(d, "end.parquet"))
        return self.spark.readStream.schema(schema).parquet(d)

    # ------------------------------------------------------------------ windows
    def _window_column(self, spec: WindowParams, t: Any) -> Any:
        F = self.F  # noqa: N806
        kind = spec.kind
        if kind == "TUMBLE":
            size = int(spec.size_ms or 0)
            return F.window(t, f"{size} milliseconds", None, f"{(spec.offset_ms or 0) % size} milliseconds")
        if kind == "HOP":
            slide = int(spec.slide_ms or 0)
            return F.window(
                t,
                f"{spec.size_ms} milliseconds",
                f"{slide} milliseconds",
                f"{(spec.offset_ms or 0) % slide} milliseconds",
            )
        if kind == "SESSION":
            return F.session_window(t, f"{spec.gap_ms} milliseconds")
        raise SparkUnsupportedError(f"{kind} window")

    def _cumulate(self, df: Any, spec: WindowParams, t: Any) -> Any:
        """Batch CUMULATE: each row joins every window [start, start + k*step) that holds it."""
        F = self.F  # noqa: N806
        size, step, off = int(spec.size_ms or 0), int(spec.step_ms or 0), spec.offset_ms or 0
        ms = F.unix_millis(t)
        start = ms - F.pmod(ms - F.lit(off), F.lit(size))
        first_k = F.floor((ms - start) / F.lit(step)).cast("int") + 1
        k = F.explode(F.sequence(first_k, F.lit(size // step)))
        df = df.withColumn("__cum_k", k).withColumn("__cum_start", start)
        w = F.struct(
            F.timestamp_millis(df["__cum_start"]).alias("start"),
            F.timestamp_millis(df["__cum_start"] + df["__cum_k"] * F.lit(step)).alias("end"),
        )
        return df.withColumn("__win", w)

    @translates(WindowAggregateParams)
    def _WindowAggregate(self, node: Node) -> Any:  # noqa: N802
        F = self.F  # noqa: N806
        src = self.df(node.inputs[0])
        n_in = self.width(node.inputs[0])
        p = WindowAggregateParams.of(node)
        spec = p.window
        cols = self._cols(src, n_in)
        t = cols[p.time_index]
        if spec.kind == "CUMULATE":
            src = self._cumulate(src, spec, t)
            win = src["__win"]
            cols = self._cols(src, n_in)
        else:
            win = self._window_column(spec, t)
        keys = [cols[i].alias(f"g{j}") for j, i in enumerate(p.grouping)]
        aggs = [self._agg(a, cols).alias(f"a{j}") for j, a in enumerate(p.aggs)]
        # A window GROUP BY without aggregates (a per-window DISTINCT): Spark needs one.
        out = src.groupBy(win.alias("__w"), *keys).agg(*(aggs or [F.count(F.lit(1)).alias("__n")]))
        ng = len(p.grouping)
        sel = [out[f"g{j}"] for j in range(ng)] + [_agg_final(out[f"a{j}"], a, F) for j, a in enumerate(p.aggs)]
        props = {
            "window_start": out["__w.start"],
            "window_end": out["__w.end"],
            "window_time": out["__w.end"] - F.make_dt_interval(secs=F.lit(0.001)),
        }
        sel += [props[w] for w in p.window_props]
        return out.select(*[c.alias(cname(i)) for i, c in enumerate(sel)])

    @translates(WindowTableFunctionParams)
    def _WindowTableFunction(self, node: Node) -> Any:  # noqa: N802
        F = self.F  # noqa: N806
        src = self.df(node.inputs[0])
        n_in = self.width(node.inputs[0])
        tp = WindowTableFunctionParams.of(node)
        spec = tp.window
        t = self._cols(src, n_in)[tp.time_index]
        if spec.kind == "CUMULATE":
            src = self._cumulate(src, spec, t)
        else:
            src = src.withColumn("__win", self._window_column(spec, t))
        w = src["__win"]
        extra = [w["start"], w["end"], w["end"] - F.make_dt_interval(secs=F.lit(0.001))]
        sel = self._cols(src, n_in) + extra
        return src.select(*[c.alias(cname(i)) for i, c in enumerate(sel)])

    def _agg(self, a: AggCallParams, cols: list[Any]) -> Any:
        F = self.F  # noqa: N806
        name = a.name
        x = cols[a.args[0]] if a.args else F.lit(1)
        if a.filter is not None:
            x = F.when(cols[a.filter], x)
        distinct = a.distinct
        if name == "count":
            return F.count_distinct(x) if distinct else F.count(x)
        if name == "sum":
            return F.sum_distinct(x) if distinct else F.sum(x)
        if name == "avg":
            t = a.type
            if t.is_integer:  # Flink: SUM / COUNT in the argument's integer type (truncating)
                s = F.sum_distinct(x) if distinct else F.sum(x)
                c = F.count_distinct(x) if distinct else F.count(x)
                return F.call_function("div", s, c)
            return F.avg(F.array_distinct(F.collect_list(x))) if distinct else F.avg(x)
        if name in ("min", "max"):
            return getattr(F, name)(x)
        if name in VARIANCE_FUNCS:  # NULL for no rows (and one row for the sample forms), as Flink
            return VARIANCE_FUNCS[name](F)(x.cast("double"))
        raise SparkUnsupportedError(f"aggregate {name.upper()} is not mapped to Spark")

    @translates(GroupAggregateParams)
    def _GroupAggregate(self, node: Node) -> Any:  # noqa: N802
        F = self.F  # noqa: N806
        src = self.df(node.inputs[0])
        cols = self._cols(src, self.width(node.inputs[0]))
        p = GroupAggregateParams.of(node)
        keys = [cols[i].alias(f"g{j}") for j, i in enumerate(p.grouping)]
        aggs = [self._agg(a, cols).alias(f"a{j}") for j, a in enumerate(p.aggs)]
        # Row count: Spark needs one aggregate, and a streaming global aggregate over no
        # rows emits nothing in Flink (count only grows on insert-only input: safe to filter).
        aggs.append(F.count(F.lit(1)).alias("__n"))
        out = src.groupBy(*keys).agg(*aggs) if keys else src.agg(*aggs)
        if self.streaming and not keys:
            out = out.filter(out["__n"] > 0)
        ng = len(p.grouping)
        sel = [out[f"g{j}"] for j in range(ng)] + [_agg_final(out[f"a{j}"], a, F) for j, a in enumerate(p.aggs)]
        named = [c.alias(cname(i)) for i, c in enumerate(sel)]
        if self.streaming:
            named += [out[f"g{j}"].alias(f"{HIDDEN}{node.id}_{j}") for j in range(ng)]
            if not ng:
                named.append(F.lit(0).alias(f"{HIDDEN}{node.id}_global"))
        return out.select(*named)


def _agg_final(c: Any, a: AggCallParams, F: Any) -> Any:  # noqa: N803
    """An aggregate's value cast to the binder's result type (Flink's SUM(INT) is INT, ...)."""

    return c.cast(spark_type(a.type))


def literal_column(value: Any, t: Any) -> Any:
    return literal(value, t)
