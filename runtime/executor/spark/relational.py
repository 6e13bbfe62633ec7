"""Relational operators on Spark: joins, interval joins, sorting, ranking, deduplication and
grouping-set expansion (a mixin of `Translator`, translate.py).

Arrival order is not defined on Spark, so every operator whose result depends on it in
the local runner (ROW_NUMBER ties, keep-first/keep-last ties on the time attribute, a Top-N
boundary inside a group of equal sort keys) checks at run time that the tie cannot change
the result, and fails the job naming the operator otherwise: never a silently different
result. A tie group of identical rows is harmless (any of them gives the same output).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from runtime.executor.spark.dispatch import translates
from runtime.executor.spark.expressions import to_column
from runtime.executor.spark.types import spark_type
from runtime.graph import Node
from runtime.operators.expand import ExpandParams
from runtime.operators.interval_join import IntervalJoinParams
from runtime.operators.join import JoinParams
from runtime.operators.rank import RankParams, SortLimitParams
from runtime.operators.rank_common import SortKey
from runtime.operators.rank_dedup import DeduplicateParams
from runtime.operators.rank_sort import SortParams
from runtime.types import DataType

JOIN_HOW = {
    "INNER": "inner",
    "LEFT": "left_outer",
    "RIGHT": "right_outer",
    "FULL": "full_outer",
    "SEMI": "left_semi",
    "ANTI": "left_anti",
}


def _rname(i: int) -> str:
    return f"r{i}"


class RelationalMixin:
    """Translator methods for the relational JobGraph operators (see the module doc)."""

    F: Any
    graph: Any
    streaming: bool
    ctx: Any

    def df(self, nid: int) -> Any:
        raise NotImplementedError  # provided by Translator

    def width(self, nid: int) -> int:
        raise NotImplementedError  # provided by Translator

    # ------------------------------------------------------------------ joins
    def _sides(self, node: Node) -> tuple[Any, Any, int, int]:
        """Left (c*) and right (renamed r*) frames so the join's columns never clash."""
        left = self.df(node.inputs[0])
        right = self.df(node.inputs[1])
        lw, rw = self.width(node.inputs[0]), self.width(node.inputs[1])
        right = right.select(*[right[f"c{i}"].alias(_rname(i)) for i in range(rw)])
        left = left.select(*[left[f"c{i}"] for i in range(lw)])
        return left, right, lw, rw

    def _key_condition(
        self,
        left: Any,
        right: Any,
        left_keys: Sequence[int],
        right_keys: Sequence[int],
        key_types: Sequence[DataType | None] = (),
        null_safe: Sequence[bool] = (),
    ) -> Any:
        """The equi-key condition (keys compared in `key_types`, NULL-safe where flagged)."""
        cond = None
        types = key_types or [None] * len(left_keys)
        null_safe = null_safe or [False] * len(left_keys)
        for lk, rk, t, ns in zip(left_keys, right_keys, types, null_safe, strict=True):
            lc, rc = left[f"c{lk}"], right[_rname(rk)]
            if t is not None:
                lc, rc = lc.cast(spark_type(t)), rc.cast(spark_type(t))
            c = lc.eqNullSafe(rc) if ns else lc == rc
            cond = c if cond is None else cond & c
        return cond

    def _join_output(self, joined: Any, node: Node, lw: int, rw: int, semi: bool) -> Any:
        cols = [joined[f"c{i}"] for i in range(lw)]
        if not semi:
            cols += [joined[_rname(i)] for i in range(rw)]
        return joined.select(*[c.alias(f"c{i}") for i, c in enumerate(cols)])

    @translates(JoinParams)
    def _Join(self, node: Node) -> Any:  # noqa: N802 - operator names
        F = self.F  # noqa: N806
        p = JoinParams.of(node)
        left, right, lw, rw = self._sides(node)
        if p.single_row_right:  # scalar subquery: Flink fails on a second row
            from pyspark.sql import Window

            n = F.count(F.lit(1)).over(Window.partitionBy())
            msg = F.lit("Scalar subquery returned more than one row")
            right = right.filter(F.when(n > 1, F.raise_error(msg).cast("boolean")).otherwise(F.lit(True)))
        cond = self._key_condition(left, right, p.left_keys, p.right_keys, p.key_types, p.null_safe)
        if p.condition is not None:
            cols = [left[f"c{i}"] for i in range(lw)] + [right[_rname(i)] for i in range(rw)]
            residual = to_column(p.condition, cols, self.ctx)
            cond = residual if cond is None else cond & residual
        how = JOIN_HOW[p.join_type]
        if cond is None:
            joined = left.crossJoin(right) if how == "inner" else left.join(right, F.lit(True), how)
        else:
            joined = left.join(right, cond, how)
        return self._join_output(joined, node, lw, rw, how in ("left_semi", "left_anti"))

    @translates(IntervalJoinParams)
    def _IntervalJoin(self, node: Node) -> Any:  # noqa: N802
        """`lower_ms <= r.ts - l.ts <= upper_ms` as interval arithmetic Spark's stream-stream
        join recognises as a time bound (it drops state below the watermarks with it)."""
        F = self.F  # noqa: N806
        p = IntervalJoinParams.of(node)
        left, right, lw, rw = self._sides(node)
        lt, rt = left[f"c{p.left_time}"], right[_rname(p.right_time)]
        lo = F.expr(f"INTERVAL {p.lower_ms} MILLISECONDS")
        hi = F.expr(f"INTERVAL {p.upper_ms} MILLISECONDS")
        cond = self._key_condition(left, right, p.left_keys, p.right_keys)
        bounds = (rt >= lt + lo) & (rt <= lt + hi)
        cond = bounds if cond is None else cond & bounds
        if p.condition is not None:
            cols = [left[f"c{i}"] for i in range(lw)] + [right[_rname(i)] for i in range(rw)]
            cond = cond & to_column(p.condition, cols, self.ctx)
        joined = left.join(right, cond, JOIN_HOW[p.kind])
        return self._join_output(joined, node, lw, rw, p.kind in ("SEMI", "ANTI"))

    # ------------------------------------------------------------------ order
    def _sort_cols(self, df: Any, order: Sequence[SortKey]) -> list[Any]:
        out = []
        for k in order:
            c = df[f"c{k.index}"]
            if k.descending:
                out.append(c.desc_nulls_first() if k.nulls_first else c.desc_nulls_last())
            else:
                out.append(c.asc_nulls_first() if k.nulls_first else c.asc_nulls_last())
        return out

    @translates(SortParams)
    def _Sort(self, node: Node) -> Any:  # noqa: N802
        src = self.df(node.inputs[0])
        return src.orderBy(*self._sort_cols(src, SortParams.of(node).order))

    def _ranked(
        self,
        node: Node,
        src: Any,
        keys: Sequence[int],
        order: Sequence[SortKey],
        kind: str,
        lo: int,
        hi: int | None,
        output_rank: bool = False,
    ) -> Any:
        """`src` with its rank in `__rn`, rows outside [lo, hi] removed, and a run-time failure
        when a tie among different rows makes the kept set (or ROW_NUMBER) arrival-dependent."""
        from pyspark.sql import Window

        F = self.F  # noqa: N806
        n = self.width(node.inputs[0])
        part = [src[f"c{i}"] for i in keys]
        w = Window.partitionBy(*part).orderBy(*self._sort_cols(src, order))
        fn = {"ROW_NUMBER": F.row_number, "RANK": F.rank, "DENSE_RANK": F.dense_rank}[kind]
        df = src.withColumn("__rn", fn().over(w))
        if kind == "ROW_NUMBER":
            tie = Window.partitionBy(*part, *[df[f"c{k.index}"] for k in order])
            rows = F.struct(*[df[f"c{i}"] for i in range(n)])
            df = (
                df.withColumn("__tmin", F.min("__rn").over(tie))
                .withColumn("__tmax", F.max("__rn").over(tie))
                .withColumn("__tdistinct", F.size(F.collect_set(rows).over(tie)))
            )
            in_lo, in_hi = F.col("__tmin") >= lo, F.lit(True) if hi is None else F.col("__tmax") <= hi
            touches = (F.col("__tmax") >= lo) & (F.lit(True) if hi is None else F.col("__tmin") <= hi)
            straddles = touches & ~(in_lo & in_hi)
            numbered = touches & F.lit(output_rank)
            bad = (F.col("__tdistinct") > 1) & (straddles | numbered)
            msg = F.lit(
                f"{node.operator} (node {node.id}): rows with equal sort keys straddle the kept range (or carry "
                "different row numbers); the local runner breaks such ties by arrival order, which Spark does "
                "not define, so the Spark runner refuses rather than give a different result"
            )
            df = df.filter(F.when(bad, F.raise_error(msg).cast("boolean")).otherwise(F.lit(True)))
        keep = F.col("__rn") >= lo
        if hi is not None:
            keep = keep & (F.col("__rn") <= hi)
        return df.filter(keep)

    @translates(RankParams)
    def _Rank(self, node: Node) -> Any:  # noqa: N802 - also WindowRank / WindowDeduplicate (batch)
        p = RankParams.of(node)
        src = self.df(node.inputs[0])
        n = self.width(node.inputs[0])
        df = self._ranked(
            node, src, p.partition_keys, p.order, p.rank_type, p.rank_start, p.rank_end, output_rank=p.output_rank
        )
        cols = [df[f"c{i}"] for i in range(n)]
        if p.output_rank:
            cols.append(df["__rn"].cast("long"))
        return df.select(*[c.alias(f"c{i}") for i, c in enumerate(cols)])

    @translates(SortLimitParams)
    def _SortLimit(self, node: Node) -> Any:  # noqa: N802
        return self._sort_limit(node, SortLimitParams.of(node), node.inputs[0])

    def _sort_limit(self, node: Node, p: SortLimitParams, input_id: int) -> Any:
        """ORDER BY ... OFFSET / FETCH over node `input_id` (a SortLimit, or a Limit over a Sort)."""
        src = self.df(input_id)
        n = self.width(input_id)
        hi = None if p.fetch is None else p.offset + p.fetch
        df = self._ranked(node, src, [], p.order, "ROW_NUMBER", p.offset + 1, hi)
        return df.select(*[df[f"c{i}"] for i in range(n)]).orderBy(*self._sort_cols(df, p.order))

    @translates(DeduplicateParams)
    def _Deduplicate(self, node: Node) -> Any:  # noqa: N802
        p = DeduplicateParams.of(node)
        src = self.df(node.inputs[0])
        n = self.width(node.inputs[0])
        order = [replace(p.order[0], descending=p.keep_last)]
        df = self._ranked(node, src, p.partition_keys, order, "ROW_NUMBER", 1, 1)
        return df.select(*[df[f"c{i}"] for i in range(n)])

    @translates(ExpandParams)
    def _Expand(self, node: Node) -> Any:  # noqa: N802
        src = self.df(node.inputs[0])
        n = self.width(node.inputs[0])
        cols = [src[f"c{i}"] for i in range(n)]
        out = None
        for proj in ExpandParams.of(node).projects:
            sel = src.select(
                *[
                    to_column(e, cols, self.ctx).cast(spark_type(f.type)).alias(f"c{i}")
                    for i, (e, f) in enumerate(zip(proj, node.schema, strict=True))
                ]
            )
            out = sel if out is None else out.unionByName(sel)
        return out
