"""Window-frame computation for OverAggregate, vectorized through DuckDB's window functions.

`compute_over(table, spec)` evaluates every OVER call of one window group for every row of
`table` (an Arrow table of the operator's input columns plus `__seq`, the arrival order)
and returns one Arrow array per call, in the table's row order, typed as the planner
typed the call. DuckDB does the partitioning, sorting and frame evaluation (segment trees,
so a ROWS/RANGE frame costs O(n log n), not O(n * frame)); this module only translates the
Flink semantics that differ:

- ties: ROWS frames, ROW_NUMBER, LAG/LEAD, FIRST/LAST_VALUE break order-key ties by arrival
  (`__seq`), as Flink processes rows with equal timestamps in arrival order; RANGE frames
  and RANK/DENSE_RANK see peers.
- RANGE offsets over a TIMESTAMP order key are milliseconds (compared on epoch ms).
- AVG over integers is Flink's integer division (truncated), computed from SUM and COUNT.
- LAG/LEAD's default applies only where the offset row does not exist (not where its value
  is NULL).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.expr.ir import Literal
from runtime.frozen import frozen_dataclass
from runtime.operators.rank_common import SortKey
from runtime.plan_params import AggCallParams
from runtime.types import DataType
from runtime.udaf import frame_aggregate


@frozen_dataclass
class OverFrame:
    """ROWS or RANGE frame. Bounds are offsets from the current row (negative = PRECEDING,
    0 = CURRENT ROW, positive = FOLLOWING; in ms for a RANGE over a time column, in order-key
    units otherwise); None = UNBOUNDED (PRECEDING for `lower`, FOLLOWING for `upper`)."""

    kind: str  # ROWS | RANGE
    lower: int | None
    upper: int | None

    def text(self) -> str:
        """Flink's rendering (`RANG` for unbounded RANGE frames is Flink's own spelling)."""

        def bound(v: int | None, unbounded: str) -> str:
            if v is None:
                return f"UNBOUNDED {unbounded}"
            if v == 0:
                return "CURRENT ROW"
            return f"{abs(v)} {'PRECEDING' if v < 0 else 'FOLLOWING'}"

        kind = self.kind
        if kind == "RANGE" and self.lower is None:
            kind = "RANG"
        return f"{kind} BETWEEN {bound(self.lower, 'PRECEDING')} AND {bound(self.upper, 'FOLLOWING')}"


SEQ = "__seq"
_RID = "__rid"
_ORD = "__ord"

_DUCK_NAMES = {
    "sum": "SUM",
    "min": "MIN",
    "max": "MAX",
    "first_value": "FIRST_VALUE",
    "last_value": "LAST_VALUE",
    "stddev_pop": "STDDEV_POP",
    "stddev_samp": "STDDEV_SAMP",
    "stddev": "STDDEV_SAMP",
    "var_pop": "VAR_POP",
    "var_samp": "VAR_SAMP",
    "variance": "VAR_SAMP",
    "bit_and": "BIT_AND",
    "bit_or": "BIT_OR",
    "bit_xor": "BIT_XOR",
}
_TIE_BREAK = ("row_number", "ntile", "lag", "lead", "first_value", "last_value")
_PEERS = ("rank", "dense_rank", "percent_rank", "cume_dist")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _bound(v: int | None, unbounded: str, ts_range: bool) -> str:
    if v is None:
        return f"UNBOUNDED {unbounded}"
    if v == 0:
        return "CURRENT ROW"
    side = "PRECEDING" if v < 0 else "FOLLOWING"
    return f"{abs(v)} {side}"


def _int_arrow(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def _epoch_ms(a: pa.Array) -> pa.Array:
    """Timestamps as int64 epoch milliseconds (other types unchanged)."""
    if pa.types.is_timestamp(a.type):
        factor = {"s": -1000, "ms": 1, "us": 1000, "ns": 1_000_000}[a.type.unit]
        raw = a.cast(pa.int64())
        if factor == 1:
            return raw
        if factor < 0:
            return pc.multiply(raw, -factor)
        return pc.divide(raw, factor)
    return a


class OverComputer:
    """Evaluates one window group's calls with DuckDB. `width` is the number of input data
    columns; `partition`/`order`/`frame`/`calls` are the OverAggregate params."""

    def __init__(
        self,
        width: int,
        partition: Sequence[int],
        order: Sequence[SortKey],
        frame: OverFrame,
        calls: Sequence[AggCallParams],
    ) -> None:
        self.width = width
        self.partition: list[int] = list(partition)
        self.order: list[SortKey] = list(order)
        self.frame = frame
        self.calls: list[AggCallParams] = list(calls)
        import duckdb  # deferred: start-up should not pay for DuckDB unless an OVER runs

        self.con = duckdb.connect()

    # ------------------------------------------------------------------ SQL
    def _window(self, order_cols: list[str], tie_break: bool, frame: str | None) -> str:
        parts = []
        if self.partition:
            parts.append("PARTITION BY " + ", ".join(_q(f"c{i}") for i in self.partition))
        keys = []
        for k, name in zip(self.order, order_cols, strict=True):
            keys.append(f"{_q(name)} {'DESC' if k.descending else 'ASC'} NULLS {'FIRST' if k.nulls_first else 'LAST'}")
        if tie_break:
            keys.append(f"{_q(SEQ)} ASC")
        if keys:
            parts.append("ORDER BY " + ", ".join(keys))
        if frame:
            parts.append(frame)
        return "(" + " ".join(parts) + ")"

    def _frame_sql(self) -> str:
        f = self.frame
        return f"{f.kind} BETWEEN {_bound(f.lower, 'PRECEDING', False)} AND {_bound(f.upper, 'FOLLOWING', False)}"

    def _call_sql(self, call: AggCallParams, order_cols: list[str], types: list[pa.DataType]) -> list[str]:
        name = call.name
        args = [_q(f"c{i}") for i in call.args]
        params = call.params
        rows_frame = self.frame.kind == "ROWS"
        win = self._window(order_cols, rows_frame, self._frame_sql())
        if name in _PEERS:
            return [f"{name.upper()}() OVER {self._window(order_cols, False, None)}"]
        if name == "row_number":
            return [f"ROW_NUMBER() OVER {self._window(order_cols, True, None)}"]
        if name == "ntile":
            return [f"NTILE({int(params['buckets'])}) OVER {self._window(order_cols, True, None)}"]
        if name in ("lag", "lead"):
            off = int(params.get("offset", 1))
            w = self._window(order_cols, True, None)
            return [f"{name.upper()}({args[0]}, {off}) OVER {w}", f"{name.upper()}(1, {off}) OVER {w}"]
        distinct = "DISTINCT " if call.distinct else ""
        if name == "count":
            inner = f"{distinct}{args[0]}" if args else "*"
            return [f"COUNT({inner}) OVER {win}"]
        if name == "sum0":
            return [f"COALESCE(SUM({distinct}{args[0]}) OVER {win}, 0)"]
        if name == "avg":
            t = types[call.args[0]]
            if _int_arrow(t):
                return [f"SUM({distinct}{args[0]}) OVER {win}", f"COUNT({distinct}{args[0]}) OVER {win}"]
            return [f"AVG({distinct}{args[0]}) OVER {win}"]
        if name == "listagg":
            sep = str(params.get("separator", ",")).replace("'", "''")
            return [f"STRING_AGG({distinct}{args[0]}, '{sep}') OVER {win}"]
        if name in _DUCK_NAMES:
            return [f"{_DUCK_NAMES[name]}({distinct}{', '.join(args)}) OVER {win}"]
        raise ValueError(f"OVER function {name.upper()} is not supported by the OverAggregate operator")

    # ------------------------------------------------------------------ run
    def compute(self, table: pa.Table) -> list[pa.Array]:
        """One array per call for every row of `table` (input columns, then `__seq`)."""
        n = table.num_rows
        if n == 0:
            return [pa.array([], type=_arrow(c.type)) for c in self.calls]
        cols: dict[str, pa.Array] = {}
        types = []
        for i in range(self.width):
            a = table.column(i).combine_chunks()
            cols[f"c{i}"] = a
            types.append(a.type)
        cols[SEQ] = table.column(SEQ).combine_chunks()
        cols[_RID] = pa.array(np.arange(n, dtype=np.int64))
        order_cols = [f"c{o.index}" for o in self.order]
        ranged = self.frame.kind == "RANGE" and (self.frame.lower or self.frame.upper)
        if ranged and len(self.order) == 1 and pa.types.is_timestamp(types[self.order[0].index]):
            cols[_ORD] = _epoch_ms(cols[order_cols[0]])
            order_cols = [_ORD]
        exprs: list[str] = []
        spans: list[tuple[int, int]] = []
        for call in self.calls:
            sql = [] if "udf" in call.params else self._call_sql(call, order_cols, types)
            spans.append((len(exprs), len(sql)))
            exprs.extend(sql)
        tbl = pa.table(cols)
        self.con.register("__over_input", tbl)
        try:
            res = None
            if exprs:
                select = ", ".join(f"{e} AS r{i}" for i, e in enumerate(exprs))
                res = self.con.sql(f"SELECT {select} FROM __over_input ORDER BY {_q(_RID)}").to_arrow_table()
            frames = self._frames(order_cols) if any("udf" in c.params for c in self.calls) else None
        finally:
            self.con.unregister("__over_input")
        out = []
        for call, (start, count) in zip(self.calls, spans, strict=True):
            if "udf" in call.params:
                assert frames is not None
                out.append(self._python_aggregate(call, tbl, *frames))
                continue
            assert res is not None
            parts = [res.column(start + k).combine_chunks() for k in range(count)]
            out.append(_finish(call, parts))
        return out

    # ------------------------------------------------------------------ Python aggregate functions
    def _frames(self, order_cols: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For a Python aggregate function: the rows in partition-then-order sequence
        (`order`, row ids), and each row's frame as [lo, hi] positions in that sequence. A
        frame is contiguous in it (ROWS frames break ties by arrival, RANGE frames hold
        whole peer groups), so DuckDB's MIN/MAX of the position over the frame bound it."""
        keys = [
            f"{_q(n)} {'DESC' if k.descending else 'ASC'} NULLS {'FIRST' if k.nulls_first else 'LAST'}"
            for k, n in zip(self.order, order_cols, strict=True)
        ]
        global_order = ", ".join([*(f"{_q(f'c{i}')} ASC NULLS FIRST" for i in self.partition), *keys, f"{_q(SEQ)} ASC"])
        win = self._window(order_cols, self.frame.kind == "ROWS", self._frame_sql())
        sql = (
            f"WITH p AS (SELECT *, ROW_NUMBER() OVER (ORDER BY {global_order}) - 1 AS __gpos FROM __over_input) "
            f"SELECT {_q(_RID)}, __gpos, MIN(__gpos) OVER {win} AS __lo, MAX(__gpos) OVER {win} AS __hi "
            f"FROM p ORDER BY {_q(_RID)}"
        )
        res = self.con.sql(sql).to_arrow_table()
        gpos = res.column("__gpos").to_numpy()
        order = np.empty(len(gpos), dtype=np.int64)
        order[gpos] = np.arange(len(gpos), dtype=np.int64)  # sequence position -> row id
        return order, res.column("__lo").to_numpy(), res.column("__hi").to_numpy()

    def _python_aggregate(
        self, call: AggCallParams, table: pa.Table, order: np.ndarray, lo: np.ndarray, hi: np.ndarray
    ) -> pa.Array:
        ordered = pa.array(order)
        args = [table.column(f"c{i}").combine_chunks().take(ordered) for i in call.args]
        return frame_aggregate(call, args, lo, hi)


def _arrow(t: DataType) -> pa.DataType:
    return t.to_arrow()


def _cast(a: pa.Array, target: pa.DataType) -> pa.Array:
    if a.type == target:
        return a
    try:
        return a.cast(target, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return a


def _finish(call: AggCallParams, parts: list[pa.Array]) -> pa.Array:
    """The call's values in its Flink type from DuckDB's result columns."""
    target = _arrow(call.type)
    name = call.name
    if name == "avg" and len(parts) == 2:
        s = parts[0].cast(pa.float64()).to_numpy(zero_copy_only=False)
        c = parts[1].to_numpy(zero_copy_only=False).astype(np.float64)
        valid = c > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.trunc(np.where(valid, s / np.where(valid, c, 1), 0))
        return pa.array(q, mask=~valid).cast(target, safe=False)
    if name in ("lag", "lead"):
        value, exists = parts
        value = _cast(value, target)
        default = call.params.get("default")
        if default is None:
            return value
        dv = default.value if isinstance(default, Literal) else default
        if dv is None:
            return value
        missing = pc.is_null(exists)
        fill = pa.scalar(dv).cast(target) if not isinstance(dv, pa.Scalar) else dv.cast(target)
        return pc.if_else(missing, fill, value)
    return _cast(parts[0], target)
