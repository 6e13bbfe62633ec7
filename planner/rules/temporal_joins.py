"""Joins with `FOR SYSTEM_TIME AS OF` (a `LogicalSnapshot` right input).

- Event time (`AS OF l.rowtime`): a versioned table (PRIMARY KEY + WATERMARK, or a view
  deduplicating on a key such as `ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) = 1`)
  → `TemporalJoin` (INNER / LEFT), STREAMING only: Flink's batch planner refuses it
  ("unexpected correlate variable $cor0 in the plan"), so does streamsql.
- Processing time (`AS OF l.proctime`) against a lookup source → `LookupJoin`: connector
  'duckdb'; a 'filesystem' table that sets `lookup.*` options; and, beyond Flink, a static
  'filesystem' table (no `source.monitor-interval`) WITHOUT a primary key: a side input whose
  rows are all current (Nexmark q13; Flink asks for a primary key there). A table that
  declares a PRIMARY KEY is a versioned table, whose versions a processing-time join cannot
  follow: Flink's "Processing-time temporal join is not supported yet." (case 913).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.binder.scope import uniquify
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import (
    LogicalCalc,
    LogicalFilter,
    LogicalJoin,
    LogicalNode,
    LogicalProject,
    LogicalTableScan,
    LogicalWatermarkAssigner,
)
from planner.physical import PhysicalNode, register_physical
from planner.rules.joins import convert_join, drop_computed_keys, join_keys, key_pair, widen
from planner.rules.time_joins import (
    LogicalSnapshot,
    and_all,
    compose_chain,
    conjuncts,
    convert_interval_join,
    convert_window_join,
    equi_pair,
    interval_bounds,
    output_fields,
    rebuild_chain,
    snapshot_below,
    snapshot_error,
    window_join_shape,
)
from runtime.connectors.lookup import supports_lookup
from runtime.expr.ir import Call, Expr, InputRef, input_refs, remap_refs
from runtime.graph import BATCH
from runtime.operators.calc import CalcParams
from runtime.operators.lookup_join import LookupJoinParams
from runtime.operators.temporal_join import TemporalJoinParams
from runtime.types import Field

if TYPE_CHECKING:
    from planner.physical import PhysicalPlanner


def convert_snapshot_join(
    planner: PhysicalPlanner, node: LogicalJoin, snap: LogicalSnapshot, chain: list[LogicalNode]
) -> PhysicalNode:
    kind = node.kind.upper()
    if kind not in ("INNER", "LEFT"):
        raise snapshot_error(
            UnsupportedSqlError,
            f"Temporal table join currently only supports INNER JOIN and LEFT JOIN, but was {kind} JOIN.",
            snap,
        )
    if snap.period.type.time_attr == "PROCTIME":
        scan = _lookup_scan(snap.input)
        if scan is None or not _supports_lookup(scan):
            raise snapshot_error(UnsupportedSqlError, "Processing-time temporal join is not supported yet.", snap)
        return _lookup_join(planner, node, snap, chain, scan, kind)
    if planner.mode == BATCH:
        raise snapshot_error(
            UnsupportedSqlError,
            "Event-time temporal join is not supported in BATCH mode "
            "(Flink: unexpected correlate variable $cor0 in the plan)",
            snap,
        )
    return _temporal_join(planner, node, snap, chain, kind)


# ---------------------------------------------------------------------- event time
def _unique_key(node: LogicalNode) -> tuple[int, ...] | None:
    """A key the right input is unique on: the partition keys of a deduplication (a node of
    the Top-N/dedup rules exposing `partition_keys`), mapped up through projections."""
    if isinstance(node, (LogicalProject, LogicalCalc)):
        inner = _unique_key(node.input)
        if inner is None:
            return None
        mapping: dict[int, int] = {}
        for i, e in enumerate(node.exprs):
            if isinstance(e, InputRef) and e.index not in mapping:
                mapping[e.index] = i
        return tuple(mapping[k] for k in inner) if all(k in mapping for k in inner) else None
    if isinstance(node, (LogicalFilter, LogicalWatermarkAssigner)):
        return _unique_key(node.input)
    name = type(node).__name__.lower()
    if "rank" in name or "dedup" in name:
        for attr in ("partition_keys", "partition_by", "partition", "keys"):
            v = getattr(node, attr, None)
            if isinstance(v, (tuple, list)) and all(isinstance(k, int) for k in v):
                return tuple(v)
    return None


def _is_rowtime_dedup(node: LogicalNode) -> bool:
    """ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime DESC) = 1 (the Top-N/dedup rules'
    LogicalRank): a versioned view."""
    if type(node).__name__ != "LogicalRank":
        return False
    order: tuple[Any, ...] = tuple(getattr(node, "order", ()))
    inp = node.inputs[0]
    return (
        getattr(node, "rank_type", "") == "ROW_NUMBER"
        and getattr(node, "rank_start", None) == 1
        and getattr(node, "rank_end", None) == 1
        and len(order) == 1
        and order[0].descending
        and inp.fields[order[0].index].type.time_attr == "ROWTIME"
    )


def _strip_dedup(node: LogicalNode) -> LogicalNode | None:
    """The versioned view's plan without its deduplication (projections above it kept), or
    None when `node` is not such a view. The temporal join keeps every version itself, so
    it reads the deduplicated rows directly (dropping, as the deduplication would, rows
    older than the key's latest one: `right_monotonic`)."""
    if _is_rowtime_dedup(node):
        return None if getattr(node, "output_rank", False) else node.inputs[0]
    if isinstance(node, (LogicalProject, LogicalCalc, LogicalFilter)):
        inner = _strip_dedup(node.input)
        if inner is None:
            return None
        if _is_rowtime_dedup(node.input) and getattr(node.input, "output_rank", False):
            return None
        return node.with_inputs((inner,))
    return None


def _is_table(node: LogicalNode) -> bool:
    while isinstance(node, (LogicalWatermarkAssigner, LogicalProject, LogicalCalc)):
        node = node.input
    return isinstance(node, LogicalTableScan)


def _temporal_join(
    planner: PhysicalPlanner, node: LogicalJoin, snap: LogicalSnapshot, chain: list[LogicalNode], kind: str
) -> PhysicalNode:
    nl = len(node.left.fields)
    right_fields = node.right.fields
    rowtimes = [i for i, f in enumerate(right_fields) if f.type.time_attr == "ROWTIME"]
    if not rowtimes:
        raise snapshot_error(
            SqlValidationError,
            "Event-Time Temporal Table Join requires both primary key and row time attribute in versioned table, "
            "but no row time attribute can be found.",
            snap,
        )
    parts = conjuncts(node.condition)
    # `f(o.x) = r.k` is a key too: the left expression computed by a Calc below the left
    # input (`$f4`), as Flink's JoinPushExpressionsRule does before its temporal-join rules.
    keyable = [p for p in parts if _left_key(p, nl)]
    keys = join_keys(and_all(keyable), nl, len(right_fields), null_safe=False)
    wl = nl + len(keys.left_exprs)
    pair_of = {id(p): (li, ri) for p, li, ri in zip(keyable, keys.left, keys.right, strict=True)}
    equi = list(pair_of.values())
    pk = snap.primary_key or _unique_key(snap.input)
    if pk is not None and chain:
        exprs, _ = compose_chain(chain, len(snap.fields), [f.type for f in snap.fields])
        up = {e.index: i for i, e in reversed(list(enumerate(exprs))) if isinstance(e, InputRef)}
        pk = tuple(up[k] for k in pk) if all(k in up for k in pk) else None
    if pk is None:
        if _is_table(snap.input):
            raise snapshot_error(
                SqlValidationError,
                "Temporal Table Join requires primary key in versioned table, but no primary key can be found.",
                snap,
            )
        pk = tuple(dict.fromkeys(r for _, r in equi))  # a view: version by the join keys
    if not pk:
        raise snapshot_error(
            SqlValidationError,
            f"Temporal table join requires an equality condition on fields of table [{snap.table_name}].",
            snap,
        )
    by_right: dict[int, int] = {}
    for lk, rk in equi:
        by_right.setdefault(rk, lk)
    missing = [right_fields[k].name for k in pk if k not in by_right]
    if missing:
        raise snapshot_error(
            SqlValidationError,
            f"Temporal table's primary key [{', '.join(right_fields[k].name for k in pk)}] must be included in the "
            "equivalence condition of temporal join.",
            snap,
        )
    lkeys = [by_right[k] for k in pk]
    used = {(by_right[k], k) for k in pk}
    widened = {i: (i if i < nl else i + wl - nl) for i in range(nl + len(right_fields))}
    left = widen(planner.convert(node.left), keys.left_exprs)
    # every conjunct over the widened left then the right columns (a computed side by its column)
    shown: list[Expr] = []
    residual: list[Expr] = []
    for p in parts:
        pr = pair_of.get(id(p))
        if pr is not None and pr[0] >= nl:
            assert isinstance(p, Call)
            q: Expr = Call(
                p.name,
                (InputRef(pr[0], left.fields[pr[0]].type), InputRef(wl + pr[1], right_fields[pr[1]].type)),
                p.type,
            )
        else:
            q = remap_refs(p, {i: widened[i] for i in input_refs(p)})
        shown.append(q)
        if pr is None or pr not in used:
            residual.append(q)
    stripped = _strip_dedup(snap.input)
    right = planner.convert(rebuild_chain(chain, stripped if stripped is not None else snap.input))
    fields = output_fields(node)
    # The versioned side's rowtime is a plain timestamp after the join.
    fields = fields[:nl] + tuple(Field(f.name, f.type.as_time_attr(None)) for f in fields[nl:])
    joined_fields = fields
    if keys.left_exprs:
        names = uniquify([f.name for f in left.fields] + [f.name for f in fields[nl:]])
        types = [f.type for f in left.fields] + [f.type for f in fields[nl:]]
        joined_fields = tuple(Field(n, t) for n, t in zip(names, types, strict=True))
    params = TemporalJoinParams(
        kind=kind,
        left_keys=tuple(lkeys),
        right_keys=tuple(pk),
        left_time=snap.period.index,
        right_time=rowtimes[0],
        condition=and_all(residual),
        left_width=wl,
        right_monotonic=stripped is not None,
    )
    shown_condition = and_all(shown) if keys.left_exprs else node.condition
    joined = PhysicalNode.distributed(params, (left, right), joined_fields, info={"condition": shown_condition})
    return drop_computed_keys(joined, keys, nl, len(right_fields), fields)


def _left_key(e: Expr, nl: int) -> bool:
    """`e` is `f(left columns) = r.col` (or `l.col = r.col`): a key of the versioned side."""
    pair = key_pair(e, nl, null_safe=False)
    return pair is not None and isinstance(pair[1], InputRef)


# ---------------------------------------------------------------------- lookup
def _lookup_scan(node: LogicalNode) -> LogicalTableScan | None:
    """The scan a lookup join reads (a watermark on the dimension table is ignored)."""
    while isinstance(node, LogicalWatermarkAssigner):
        node = node.input
    return node if isinstance(node, LogicalTableScan) else None


def _supports_lookup(scan: LogicalTableScan) -> bool:
    t = scan.table
    if supports_lookup(t.connector, t.options_dict):
        return True
    static_side_input = t.connector == "filesystem" and "source.monitor-interval" not in t.options_dict
    return static_side_input and not t.primary_key


def _lookup_join(
    planner: PhysicalPlanner,
    node: LogicalJoin,
    snap: LogicalSnapshot,
    chain: list[LogicalNode],
    scan: LogicalTableScan,
    kind: str,
) -> PhysicalNode:
    nl = len(node.left.fields)
    parts = conjuncts(node.condition)
    # Projections/filters pushed onto the looked-up table apply to its rows before the join.
    right_exprs, right_cond = compose_chain(chain, len(snap.fields), [f.type for f in snap.fields])
    keys: list[tuple[int, int]] = []
    residual: list[Expr] = []
    # Probe-side key expressions (`MOD(b.auction, 10000) = s.key`) are computed by a Calc
    # appended to the left input, as Flink does, and projected away after the join.
    computed: list[Expr] = []
    for p in parts:
        pr = equi_pair(p, nl)
        if pr is not None and isinstance(right_exprs[pr[1]], InputRef):
            keys.append(pr)
            continue
        cp = _computed_key(p, nl)
        if cp is not None and isinstance(right_exprs[cp[1]], InputRef):
            keys.append((nl + len(computed), cp[1]))
            computed.append(cp[0])
            continue
        residual.append(p)
    if not keys:
        raise snapshot_error(
            SqlValidationError,
            f"Temporal table join requires an equality condition on fields of table [{scan.table.name}].",
            snap,
        )
    left = widen(planner.convert(node.left), tuple(computed))  # `$f<i>`, as Flink names them
    width = nl + len(computed)
    if computed:
        shift = {i: (i if i < nl else i + len(computed)) for i in range(nl + len(node.right.fields))}
        residual = [remap_refs(r, shift) for r in residual]
    t = scan.table
    fields = output_fields(node)
    table_keys: list[int] = []
    for k in keys:
        ref = right_exprs[k[1]]
        assert isinstance(ref, InputRef)  # keys are only taken where the right side is a column
        table_keys.append(ref.index)
    params = LookupJoinParams(
        kind=kind,
        table=t.name,
        connector=t.connector,
        options=t.options_dict,
        physical_schema=tuple(t.physical_schema),
        projection=tuple(scan.projection) if scan.projection is not None else None,
        left_keys=tuple(k[0] for k in keys),
        right_keys=tuple(k[1] for k in keys),
        table_keys=tuple(table_keys),
        right_projections=None if not chain else tuple(right_exprs),
        right_condition=right_cond,
        condition=and_all(residual),
        left_width=width,
    )
    # The looked-up table's PRIMARY KEY as join output columns, when the lookup is by it (each
    # probe row then meets at most one row: the probe's upsert keys stay keys, and a need for
    # determinism on these columns is met; Flink's getOutputIndexesOfTemporalTablePrimaryKey).
    scan_names = [f.name for f in snap.fields]
    pk_scan = [scan_names.index(c) for c in t.primary_key if c in scan_names]
    by_pk = bool(t.primary_key) and len(pk_scan) == len(t.primary_key) and set(pk_scan) <= set(table_keys)
    pk_outputs = tuple(
        width + j
        for j, e in enumerate(right_exprs)
        if isinstance(e, InputRef) and e.index in pk_scan and (chain or j == e.index)
    )
    joined = PhysicalNode.of(
        params,
        (left,),
        left.fields + fields[nl:] if computed else fields,
        info={
            "condition": node.condition,
            "right_fields": list(node.right.fields),
            "lookup_by_primary_key": by_pk,
            "primary_key_outputs": pk_outputs if by_pk else (),
        },
    )
    if not computed:
        return joined
    keep = [i for i in range(len(joined.fields)) if not nl <= i < width]
    return PhysicalNode.of(CalcParams(tuple(InputRef(i, joined.fields[i].type) for i in keep)), (joined,), fields)


def _computed_key(e: Expr, nl: int) -> tuple[Expr, int] | None:
    """(left-only expression, right index) when `e` is `f(left columns) = r.y`."""
    if not (isinstance(e, Call) and e.name == "equals" and len(e.args) == 2):
        return None
    for a, b in (e.args, e.args[::-1]):
        refs = input_refs(a)
        if isinstance(b, InputRef) and b.index >= nl and refs and max(refs) < nl:
            return a, b.index - nl
    return None


# ---------------------------------------------------------------------- every LogicalJoin
def convert_time_join(planner: PhysicalPlanner, node: LogicalJoin) -> PhysicalNode | None:
    """The physical plan of a time-bounded join, or None when `node` is a regular join."""
    below = snapshot_below(node.right)
    if below is not None:
        return convert_snapshot_join(planner, node, below[0], below[1])
    kind = node.kind.upper()
    shape = window_join_shape(node)
    if shape is not None:
        return convert_window_join(planner, node, shape, kind)
    if kind in ("SEMI", "ANTI"):
        return None
    bounds, rest = interval_bounds(conjuncts(node.condition), len(node.left.fields))
    if bounds is not None and not (bounds.proctime and planner.mode == BATCH):
        return convert_interval_join(planner, node, bounds, rest, kind)
    return None


@register_physical(LogicalJoin)
def _convert_join(planner: PhysicalPlanner, node: LogicalJoin) -> PhysicalNode:
    """Time-bounded joins (interval, temporal, lookup, window) first; any other join is a
    regular join (planner/rules/joins.py)."""
    return convert_time_join(planner, node) or convert_join(planner, node)
