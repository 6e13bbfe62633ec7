"""BATCH operators over Spark windows and joins: OVER aggregates, window Top-N /
deduplication, window joins, UNNEST (Correlate) and LIMIT (a mixin of `Translator`).

The local runner breaks ties on the ORDER BY keys by arrival order (ROWS frames, ROW_NUMBER,
NTILE, LAG / LEAD; the rows a LIMIT without ORDER BY keeps). Spark does not define arrival
order, so where such a tie among *different* rows could change the result, the job fails at
run time naming the operator (as `relational.py` does for Rank): never a silently different
result. A tie among identical rows is harmless (any order gives the same multiset of rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from runtime.executor.spark.dispatch import translates
from runtime.executor.spark.expressions import VARIANCE_FUNCS, literal, to_column
from runtime.executor.spark.relational import JOIN_HOW
from runtime.executor.spark.ties import TIE_BREAK_CALLS
from runtime.executor.spark.types import SparkUnsupportedError, spark_type
from runtime.expr.ir import Literal
from runtime.graph import Node
from runtime.operators.correlate import UNNEST, CorrelateParams
from runtime.operators.over import OverAggregateParams
from runtime.operators.rank import SortLimitParams
from runtime.operators.rank_common import SortKey
from runtime.operators.rank_sort import SORT, LimitParams, SortParams
from runtime.operators.rank_window import WindowDeduplicateParams, WindowRankParams
from runtime.operators.union import EXCHANGE
from runtime.operators.window_join import WindowJoinParams
from runtime.plan_params import AggCallParams

# OVER calls whose value for a row depends on how ties on the ORDER BY keys are broken.
PEER_CALLS = {"rank", "dense_rank", "percent_rank", "cume_dist"}
OVER_AGGS = {"count", "sum", "sum0", "avg", "min", "max"} | {
    "stddev_pop",
    "stddev_samp",
    "stddev",
    "var_pop",
    "var_samp",
    "variance",
}
OVER_CALLS = TIE_BREAK_CALLS | PEER_CALLS | OVER_AGGS


def over_refusal(node: Node) -> str | None:
    """Why an OverAggregate cannot run on Spark with the local runner's semantics (None if it can)."""
    p = OverAggregateParams.of(node)
    frame = p.frame
    for c in p.calls:
        if c.name not in OVER_CALLS:
            return f"OVER function {c.name.upper()} is not mapped to Spark"
        if c.distinct:
            return "DISTINCT aggregates over a window have no Spark counterpart"
    if not p.order and (frame.lower is not None or frame.upper is not None):
        return "a bounded frame without ORDER BY"
    ranged = frame.kind == "RANGE" and any(b not in (None, 0) for b in (frame.lower, frame.upper))
    if ranged:
        if len(p.order) != 1:
            return "a RANGE frame with an offset needs exactly one ORDER BY key"
        if any(not isinstance(b, (int, type(None))) for b in (frame.lower, frame.upper)):
            return "a RANGE offset that is not a whole number (of milliseconds)"
    return None


def limit_refusal(node: Node) -> str | None:
    p = LimitParams.of(node)
    if p.fetch is not None and p.fetch < 0:
        return "a negative FETCH"
    return None


def correlate_refusal(node: Node) -> str | None:
    fn = CorrelateParams.of(node).function
    if fn.kind != UNNEST:
        return "a Python table function (LATERAL TABLE) runs in the local runner only"
    if fn.element == "multiset":
        return "UNNEST of a MULTISET"
    return None


class WindowedMixin:
    """Translator methods for the operators in the module doc."""

    F: Any
    graph: Any
    ctx: Any

    if TYPE_CHECKING:  # provided by Translator / RelationalMixin (which come first in the MRO)

        def df(self, nid: int) -> Any: ...
        def width(self, nid: int) -> int: ...
        def _sort_cols(self, df: Any, order: Sequence[SortKey]) -> list[Any]: ...
        def _Rank(self, node: Node) -> Any: ...  # noqa: N802
        def _sort_limit(self, node: Node, p: SortLimitParams, input_id: int) -> Any: ...
        def _sides(self, node: Node) -> tuple[Any, Any, int, int]: ...
        def _join_output(self, joined: Any, node: Node, lw: int, rw: int, semi: bool) -> Any: ...

    def _tie_guard(self, df: Any, node: Node, part: list[Any], keys: list[Any], n: int, what: str) -> Any:
        """`df`, failing at run time when a group of equal (partition, `keys`) holds
        different rows: the local runner orders those by arrival, Spark cannot."""
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        tie = Window.partitionBy(*part, *keys)
        rows = F.struct(*[df[f"c{i}"] for i in range(n)])
        distinct = F.size(F.collect_set(rows).over(tie))
        msg = F.lit(
            f"{node.operator} (node {node.id}): {what}; the local runner breaks such ties by arrival order, "
            "which Spark does not define, so the Spark runner refuses rather than give a different result"
        )
        df = df.withColumn("__tdistinct", distinct)  # Spark allows window functions in projections only
        df = df.filter(F.when(F.col("__tdistinct") > 1, F.raise_error(msg).cast("boolean")).otherwise(F.lit(True)))
        return df.drop("__tdistinct")

    # ------------------------------------------------------------------ OVER
    def _over_windows(self, node: Node, src: Any) -> tuple[Any, Any, list[Any], list[Any]]:
        """(ordered window, framed window, partition columns, ORDER BY key columns)."""
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        p = OverAggregateParams.of(node)
        frame = p.frame
        order = p.order
        part = [src[f"c{i}"] for i in p.partition]
        order_cols = self._sort_cols(src, order)
        base = Window.partitionBy(*part)
        ordered = base.orderBy(*order_cols) if order_cols else base
        lo, hi = frame.lower, frame.upper
        start = Window.unboundedPreceding if lo is None else int(lo)
        end = Window.unboundedFollowing if hi is None else int(hi)
        if not order_cols:
            framed = base  # the whole partition
        elif frame.kind == "ROWS":
            framed = ordered.rowsBetween(start, end)
        elif lo in (None, 0) and hi in (None, 0):
            framed = ordered.rangeBetween(start, end)  # peers included, as in Flink
        else:  # RANGE with an offset: over the key itself, timestamps as epoch milliseconds
            o = order[0]
            key = src[f"c{o.index}"]
            if self.graph.node(node.inputs[0]).schema[o.index].type.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
                key = F.unix_millis(key)
            if o.descending:
                k = key.desc_nulls_first() if o.nulls_first else key.desc_nulls_last()
            else:
                k = key.asc_nulls_first() if o.nulls_first else key.asc_nulls_last()
            framed = base.orderBy(k).rangeBetween(start, end)
        return ordered, framed, part, [src[f"c{o.index}"] for o in order]

    @translates(OverAggregateParams)
    def _OverAggregate(self, node: Node) -> Any:  # noqa: N802 - operator names
        """Spark window functions; ROWS frames, ROW_NUMBER, NTILE and LAG / LEAD are guarded
        against ties among different rows (see the module doc), RANGE frames see peers."""
        p = OverAggregateParams.of(node)
        src = self.df(node.inputs[0])
        n = self.width(node.inputs[0])
        frame = p.frame
        whole = frame.lower is None and frame.upper is None
        sensitive = any(
            c.name in TIE_BREAK_CALLS or (frame.kind == "ROWS" and not whole and c.name in OVER_AGGS) for c in p.calls
        )
        if sensitive:
            _, _, part, keys = self._over_windows(node, src)
            src = self._tie_guard(src, node, part, keys, n, "rows with equal ORDER BY keys differ")
        ordered, framed, _, _ = self._over_windows(node, src)
        cols = [self._over_call(c, src, ordered, framed).cast(spark_type(c.type)) for c in p.calls]
        return src.select(*[src[f"c{i}"] for i in range(n)], *[c.alias(f"c{n + j}") for j, c in enumerate(cols)])

    def _over_call(self, call: AggCallParams, src: Any, ordered: Any, framed: Any) -> Any:
        F = self.F  # noqa: N806
        name = call.name
        params = call.params
        args = [src[f"c{i}"] for i in call.args]
        if name in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist"):
            return getattr(F, name)().over(ordered)
        if name == "ntile":
            return F.ntile(int(params["buckets"])).over(ordered)
        if name in ("lag", "lead"):
            off = int(params.get("offset", 1))
            default = params.get("default")
            dv = default.value if isinstance(default, Literal) else default
            fn = F.lag if name == "lag" else F.lead
            if dv is None:
                return fn(args[0], off).over(ordered)
            # Spark's default, like Flink's, replaces only a missing row (not a NULL value).
            exists = fn(F.lit(1), off).over(ordered)
            fill = literal(dv, call.type)
            return F.when(exists.isNull(), fill).otherwise(fn(args[0], off).over(ordered).cast(spark_type(call.type)))
        x = args[0] if args else F.lit(1)
        if name == "count":
            return F.count(x).over(framed)
        if name == "sum":
            return F.sum(x).over(framed)
        if name == "sum0":
            return F.coalesce(F.sum(x).over(framed), F.lit(0))
        if name == "avg":
            if call.type.is_integer:  # Flink: SUM / COUNT in the integer type, truncated
                return F.call_function("div", F.sum(x).over(framed), F.count(x).over(framed))
            return F.avg(x).over(framed)
        if name in ("min", "max"):
            return getattr(F, name)(x).over(framed)
        if name in VARIANCE_FUNCS:
            return VARIANCE_FUNCS[name](F)(x.cast("double")).over(framed)
        raise SparkUnsupportedError(f"OVER function {name.upper()} is not mapped to Spark")

    # ------------------------------------------------------------------ window Top-N
    @translates(WindowRankParams)
    def _WindowRank(self, node: Node) -> Any:  # noqa: N802
        """Batch: a Rank partitioned by the window columns and the keys (they are in `partition_keys`)."""
        return self._Rank(node)

    @translates(WindowDeduplicateParams)
    def _WindowDeduplicate(self, node: Node) -> Any:  # noqa: N802
        return self._Rank(node)

    # ------------------------------------------------------------------ window join
    @translates(WindowJoinParams)
    def _WindowJoin(self, node: Node) -> Any:  # noqa: N802
        """Batch: an equi-join on window_start, window_end and the keys (NULL keys never match)."""

        p = WindowJoinParams.of(node)
        left, right, lw, rw = self._sides(node)
        cond = None
        pairs = list(zip(p.left_window, p.right_window, strict=True))
        pairs += list(zip(p.left_keys, p.right_keys, strict=True))
        for lk, rk in pairs:
            c = left[f"c{lk}"] == right[f"r{rk}"]
            cond = c if cond is None else cond & c
        if p.condition is not None:
            cols = [left[f"c{i}"] for i in range(lw)] + [right[f"r{i}"] for i in range(rw)]
            cond = cond & to_column(p.condition, cols, self.ctx)
        how = JOIN_HOW[p.kind]
        joined = left.join(right, cond, how)
        return self._join_output(joined, node, lw, rw, how in ("left_semi", "left_anti"))

    # ------------------------------------------------------------------ UNNEST
    @translates(CorrelateParams)
    def _Correlate(self, node: Node) -> Any:  # noqa: N802
        """UNNEST → `posexplode` (`_outer` for LEFT JOIN): array order is kept, ordinality is
        the 1-based position, a NULL or empty collection gives no row (LEFT: one padded row)."""
        F = self.F  # noqa: N806
        params = CorrelateParams.of(node)
        fn = params.function
        assert fn.expr is not None
        src = self.df(node.inputs[0])
        n = self.width(node.inputs[0])
        cols = [src[f"c{i}"] for i in range(n)]
        coll = to_column(fn.expr, cols, self.ctx)
        outer = params.join_type == "LEFT"
        is_map = fn.expr.type.name == "MAP"
        explode = F.posexplode_outer if outer else F.posexplode
        names = ["__pos", "__k", "__v"] if is_map else ["__pos", "__v"]
        df = src.select(*cols, explode(coll).alias(*names))
        if is_map:
            produced = [df["__k"], df["__v"]]
        elif fn.element == "row":
            elem_type = fn.expr.type.children[0]
            produced = [df["__v"].getField(name) for name in elem_type.field_names]
        else:
            produced = [df["__v"]]
        if fn.ordinality:
            produced.append((df["__pos"] + F.lit(1)).cast("int"))
        out_types = [f.type for f in node.schema[n:]]
        sel = [df[f"c{i}"] for i in range(n)] + [
            c.cast(spark_type(t)) for c, t in zip(produced, out_types, strict=True)
        ]
        return df.select(*[c.alias(f"c{i}") for i, c in enumerate(sel)])

    # ------------------------------------------------------------------ LIMIT
    @translates(LimitParams)
    def _Limit(self, node: Node) -> Any:  # noqa: N802
        """Batch LIMIT without ORDER BY: the rows kept depend on arrival order, except when the
        input has at most OFFSET rows (nothing kept), OFFSET is 0 and it has at most FETCH rows
        (everything kept) or all its rows are equal; otherwise the job fails naming the operator.
        Over a Sort it is a SortLimit (ties across the cut fail, see relational.py)."""
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        p = LimitParams.of(node)
        inner = self.graph.node(node.inputs[0])
        while inner.is_kind(EXCHANGE):
            inner = self.graph.node(inner.inputs[0])
        if inner.is_kind(SORT):  # ORDER BY ... LIMIT planned as Sort + Limit: a SortLimit
            ordered = SortLimitParams(SortParams.of(inner).order, p.offset, p.fetch)
            return self._sort_limit(node, ordered, inner.inputs[0])
        src = self.df(node.inputs[0])
        n = self.width(node.inputs[0])
        offset = p.offset
        fetch = p.fetch
        every = Window.partitionBy()
        total = F.count(F.lit(1)).over(every)
        distinct = F.size(F.collect_set(F.struct(*[src[f"c{i}"] for i in range(n)])).over(every))
        ok = (total <= F.lit(offset)) | (distinct <= 1)
        if offset == 0 and fetch is not None:
            ok = ok | (total <= F.lit(int(fetch)))
        elif offset == 0:
            ok = F.lit(True)
        msg = F.lit(
            f"Limit (node {node.id}): LIMIT without ORDER BY keeps the first rows in arrival order, which Spark "
            "does not define; the Spark runner refuses rather than give a different result (add an ORDER BY)"
        )
        df = src.withColumn("__ok", ok).filter(
            F.when(~F.col("__ok"), F.raise_error(msg).cast("boolean")).otherwise(True)
        )
        rn = F.row_number().over(Window.partitionBy().orderBy(F.monotonically_increasing_id()))
        df = df.withColumn("__rn", rn)
        keep = df["__rn"] > F.lit(offset)
        if fetch is not None:
            keep = keep & (df["__rn"] <= F.lit(offset + int(fetch)))
        df = df.filter(keep)
        return df.select(*[df[f"c{i}"] for i in range(n)])
