"""Group and over windows of the Table API, shaped like PyFlink's `pyflink.table.window`.

    t.window(Tumble.over(lit(10).minutes).on(col('ts')).alias('w'))
     .group_by(col('w'), col('k'))
     .select(col('k'), col('w').start, col('v').sum)

Group windows lower to Flink's group window syntax (`GROUP BY TUMBLE(ts, INTERVAL ...)`,
`TUMBLE_START(...)`), which is what the Table API's windows are in Flink as well, and plans
to the same WindowAggregate as the window TVFs. Over windows lower to `OVER (PARTITION BY
... ORDER BY ... ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT ROW)`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.errors import UnsupportedSqlError
from runtime.frozen import frozen_dataclass
from streamsql.expressions import CURRENT_ROW, UNBOUNDED_RANGE, Expression, RenderCtx, col

__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]


def _expr(v: Any) -> Expression:
    return v if isinstance(v, Expression) else col(str(v))


def _interval_sql(e: Expression, what: str) -> str:
    if e._rows is not None:
        raise UnsupportedSqlError(
            f"Row-count windows are not supported yet ({what} = row_interval); use a time interval"
        )
    return e._render(RenderCtx())


@frozen_dataclass
class GroupWindow:
    """A tumbling/sliding/session window over a time attribute, named by `alias`."""

    kind: str  # TUMBLE | HOP | SESSION
    intervals: tuple[Expression, ...]  # TUMBLE: size; HOP: slide, size; SESSION: gap
    time_field: Expression | None = None
    name: str | None = None

    def on(self, time_field: Any) -> GroupWindow:
        return replace(self, time_field=_expr(time_field))

    def alias(self, alias: str) -> GroupWindow:
        return replace(self, name=alias)

    def render(self, ctx: RenderCtx) -> tuple[str, str, list[str]]:
        """(function, time column SQL, interval SQLs) for the RenderCtx of a windowed select."""
        if self.time_field is None:
            raise UnsupportedSqlError(f"A {self.kind} window needs .on(col('time_attribute'))")
        if not self.name:
            raise UnsupportedSqlError(f"A {self.kind} window needs .alias('w') to be referenced in group_by")
        return self.kind, self.time_field._render(ctx), [_interval_sql(i, self.kind) for i in self.intervals]


class Tumble:
    @staticmethod
    def over(size: Expression) -> GroupWindow:
        return GroupWindow("TUMBLE", (size,))


class _SlideWithSize:
    def __init__(self, size: Expression) -> None:
        self._size = size

    def every(self, slide: Expression) -> GroupWindow:
        return GroupWindow("HOP", (slide, self._size))


class Slide:
    @staticmethod
    def over(size: Expression) -> _SlideWithSize:
        return _SlideWithSize(size)


class Session:
    @staticmethod
    def with_gap(gap: Expression) -> GroupWindow:
        return GroupWindow("SESSION", (gap,))


@frozen_dataclass
class OverWindow:
    """An over window: partitioning, order (a time attribute), preceding/following bounds."""

    partition: tuple[Expression, ...] = ()
    order: Expression | None = None
    preceding_: Expression | None = None
    following_: Expression | None = None
    name: str | None = None

    def order_by(self, order_by: Any) -> OverWindow:
        return replace(self, order=_expr(order_by))

    def preceding(self, preceding: Expression) -> OverWindow:
        return replace(self, preceding_=preceding)

    def following(self, following: Expression) -> OverWindow:
        return replace(self, following_=following)

    def alias(self, alias: str) -> OverWindow:
        return replace(self, name=alias)

    def render(self, ctx: RenderCtx) -> str:
        """The `(PARTITION BY ... ORDER BY ... frame)` text."""
        if self.order is None:
            raise UnsupportedSqlError("An over window needs .order_by(col('time_attribute'))")
        parts = []
        if self.partition:
            parts.append("PARTITION BY " + ", ".join(p._render(ctx) for p in self.partition))
        parts.append("ORDER BY " + self.order._render(ctx))
        pre = self.preceding_ if self.preceding_ is not None else UNBOUNDED_RANGE
        fol = self.following_ if self.following_ is not None else CURRENT_ROW
        rows = pre._rows is not None or pre._special in ("UNBOUNDED_ROW", "CURRENT_ROW")
        if pre._special in ("UNBOUNDED_ROW", "UNBOUNDED_RANGE"):
            lower = "UNBOUNDED PRECEDING"
        elif pre._special in ("CURRENT_ROW", "CURRENT_RANGE"):
            lower = "CURRENT ROW"
        else:
            lower = f"{pre._render(ctx)} PRECEDING"
        if fol._special not in ("CURRENT_ROW", "CURRENT_RANGE"):
            raise UnsupportedSqlError("Over windows support only CURRENT_ROW / CURRENT_RANGE as the following bound")
        parts.append(f"{'ROWS' if rows else 'RANGE'} BETWEEN {lower} AND CURRENT ROW")
        return "(" + " ".join(parts) + ")"


class _PartitionedOver:
    def __init__(self, partition: tuple[Expression, ...]) -> None:
        self._partition = partition

    def order_by(self, order_by: Any) -> OverWindow:
        return OverWindow(self._partition, _expr(order_by))


class Over:
    @staticmethod
    def partition_by(*partition_by: Any) -> _PartitionedOver:
        return _PartitionedOver(tuple(_expr(p) for p in partition_by))

    @staticmethod
    def order_by(order_by: Any) -> OverWindow:
        return OverWindow((), _expr(order_by))
