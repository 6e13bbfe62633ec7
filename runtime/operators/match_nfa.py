"""The pattern automaton of MATCH_RECOGNIZE (helper of `runtime.operators.match`).

A flat pattern `V1 q1 V2 q2 ...` is run as Flink's CEP NFA runs it: every row of a
partition (in ORDER BY order) advances every partial match ("thread") and starts a new
one; strict contiguity (a row a thread cannot map to ends the thread). A greedy looping
variable proceeds to the next variable only when the row does *not* satisfy its own
condition (Flink's NFACompiler adds NOT(take) to the proceed edge); reluctant variables
explore both. Completed matches are held back while a partial match that started
earlier is still alive (it would take precedence), then emitted in start order and the
AFTER MATCH SKIP strategy prunes partial matches that started too early. WITHIN drops
partial matches once `start_ts + within <= ts`.

Where this loops in Python: the stepping is per row within a partition (pattern
matching is sequential), and building navigation indices is per candidate thread. The
DEFINE conditions are evaluated vectorized: a condition that reads only the current row
is computed once per flush over all flushed rows; one with navigations (PREV, A.col,
FIRST/LAST, aggregates) is computed per row step for all candidate threads at once.
Navigation slots (`MatchSlot`) are gathered with Arrow `take`, aggregates
through the shared `AggregateSet` (so types and semantics equal GROUP BY's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.aggset import AggregateSet
from runtime.checkpoint.format import register_state_type
from runtime.errors import JobError
from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Expr, input_refs
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.functions.registry import EvalContext
from runtime.plan_params import AggCallParams
from runtime.types import DataType


@register_state_type
@frozen_dataclass
class PatternElement:
    """One pattern variable with its quantifier: `max` None = unbounded."""

    var: str
    min: int
    max: int | None
    greedy: bool

    def text(self) -> str:
        """The variable as the PATTERN clause spells it (`A`, `B+`, `C{2,}?`)."""
        if self.min == 1 and self.max == 1:
            q = ""
        elif self.min == 0 and self.max is None:
            q = "*"
        elif self.min == 1 and self.max is None:
            q = "+"
        elif self.min == 0 and self.max == 1:
            q = "?"
        elif self.max is None:
            q = f"{{{self.min},}}"
        elif self.min == self.max:
            q = f"{{{self.min}}}"
        else:
            q = f"{{{self.min},{self.max}}}"
        return self.var + q + ("" if self.greedy or not q else "?")


@frozen_dataclass
class MatchSlot:
    """A navigation slot: DEFINE / MEASURES expressions read slot j as column `n + j` of an
    extended row. `kind` prev | first | last | rowtime | agg; `var` the pattern variable
    (None: all rows of the match); `col` the input column (None: `*` of an aggregate);
    `offset` PREV's / FIRST's / LAST's; `type` the slot's type; `agg` the aggregate call
    (over column 0 of the gathered values) of an `agg` slot."""

    kind: str
    var: str | None
    col: int | None
    offset: int
    type: DataType
    agg: AggCallParams | None = None

    def display(self, names: Sequence[str]) -> str:
        """How EXPLAIN shows the slot (`PREV(price, 1)`, `LAST(A.price, 0)`, `SUM(A.price)`)."""
        col = names[self.col] if self.col is not None else "*"
        var = self.var
        qual = f"{var}.{col}" if var else col
        if self.kind == "prev":
            return f"PREV({col}, {self.offset})"
        if self.kind == "rowtime":
            return "MATCH_ROWTIME()"
        if self.kind == "last" and self.offset == 0:
            return qual if var else f"LAST({col}, 0)"
        if self.kind in ("first", "last"):
            return f"{self.kind.upper()}({qual}, {self.offset})"
        assert self.agg is not None
        inner = qual if self.col is not None else (f"{var}.*" if var else "*")
        return f"{self.agg.name.upper()}({inner})"


@register_state_type
@frozen_dataclass
class Thread:
    """A partial (or complete) match: rows (store ids) and the element each row maps to."""

    start_seq: int
    start_ts: int
    elem: int
    count: int
    rows: tuple[int, ...]
    labels: tuple[int, ...]


@register_state_type
@mutable_dataclass
class PartitionState:
    threads: list[Thread] = field(default_factory=list)
    held: list[Thread] = field(default_factory=list)
    seq: int = 0
    # Store ids of the last rows processed (as many as the largest PREV offset).
    history: list[int] = field(default_factory=list)


Seq = tuple[tuple[int, ...], tuple[int, ...]]


class Navigator:
    """Computes navigation slots and evaluates extended-row expressions over a row store
    (a `pa.Table` whose row `id - base` is the row with store id `id`)."""

    def __init__(self, pattern: list[PatternElement], slots: Sequence[MatchSlot], n_cols: int) -> None:
        self.pattern = pattern
        self.slots = slots
        self.n = n_cols
        self.var_of = [p.var for p in pattern]
        self.store: pa.Table | None = None
        self.base = 0

    def _take(self, col: int, ids: np.ndarray) -> pa.Array:
        assert self.store is not None
        rel = ids - self.base
        idx = pa.array(rel, type=pa.int64(), mask=ids < 0)
        column = self.store.column(col)
        return (column.take(idx) if len(ids) else column.slice(0, 0)).combine_chunks()

    def _select(self, rows: tuple[int, ...], labels: tuple[int, ...], var: str | None) -> list[int] | tuple[int, ...]:
        if var is None:
            return rows
        return [r for r, lab in zip(rows, labels, strict=True) if self.var_of[lab] == var]

    def slot_array(self, j: int, seqs: list[Seq]) -> pa.Array:
        s = self.slots[j]
        kind, var, off = s.kind, s.var, s.offset
        k = len(seqs)
        if kind == "agg":
            return self._aggregate(s, seqs)
        ids = np.full(k, -1, dtype=np.int64)
        for c, (rows, labels) in enumerate(seqs):  # per candidate: index bookkeeping only
            if kind == "prev":
                i = len(rows) - 1 - off
                ids[c] = rows[i] if i >= 0 else -1
            elif kind == "rowtime":
                ids[c] = rows[-1]
            else:
                sel = self._select(rows, labels, var)
                i = len(sel) - 1 - off if kind == "last" else off
                ids[c] = sel[i] if 0 <= i < len(sel) else -1
        assert s.col is not None
        return self._take(s.col, ids)

    def _aggregate(self, s: MatchSlot, seqs: list[Seq]) -> pa.Array:
        var, col = s.var, s.col
        owner: list[int] = []
        flat: list[int] = []
        for c, (rows, labels) in enumerate(seqs):
            sel = self._select(rows, labels, var)
            owner.extend([c] * len(sel))
            flat.extend(sel)
        ids = np.asarray(flat, dtype=np.int64)
        values = self._take(col if col is not None else 0, ids)
        assert s.agg is not None
        aggset = AggregateSet([s.agg], [values.type], retract=False)
        aggset.grow(len(seqs))
        batch = pa.RecordBatch.from_arrays([values], names=["v"])
        aggset.fold(np.asarray(owner, dtype=np.int64), np.ones(len(owner), dtype=np.int64), batch)
        return aggset.results(np.arange(len(seqs), dtype=np.int64))[0]

    def evaluate(
        self,
        expr: Expr,
        cur_ids: np.ndarray,
        seqs: list[Seq],
        ctx: EvalContext,
        slot_rows: dict[int, np.ndarray] | None = None,
    ) -> pa.Array:
        """`expr` over extended rows: current rows `cur_ids`, slots from `seqs` (or, for
        slots in `slot_rows`, the given store ids; -1 = NULL)."""

        assert self.store is not None
        refs = input_refs(expr)
        cols: list[pa.Array] = []
        for i in range(self.n):
            if i in refs:
                cols.append(self._take(i, cur_ids))
            else:
                cols.append(pa.nulls(len(cur_ids), type=self.store.schema.field(i).type))
        for j, s in enumerate(self.slots):
            if self.n + j in refs and slot_rows is not None and j in slot_rows:
                assert s.col is not None
                cols.append(self._take(s.col, slot_rows[j]))
            elif self.n + j in refs:
                cols.append(self.slot_array(j, seqs))
            else:
                cols.append(pa.nulls(len(cur_ids), type=s.type.to_arrow()))
        batch = pa.RecordBatch.from_arrays(cols, names=[f"c{i}" for i in range(len(cols))])
        return evaluate(expr, batch, ctx)


class PatternMatcher:
    """Steps partitions row by row; returns completed matches in emission order."""

    def __init__(
        self,
        pattern: list[PatternElement],
        define: dict[str, Expr],
        nav: Navigator,
        after: tuple[str, str | None],
        within_ms: int | None,
    ) -> None:
        self.pattern = pattern
        self.define = define
        self.nav = nav
        self.after = after
        self.within = within_ms
        # Conditions reading only the current row: evaluated once per flush.
        self.pure = {v: e for v, e in define.items() if all(r < nav.n for r in input_refs(e))}
        self.pure_values: dict[str, np.ndarray] = {}
        # Conditions whose navigations are all PREV: within a match PREV(x, n) is the
        # partition's n-th previous row once the match has n rows, so they are computed
        # per flush too (with PREV from the partition order, and with PREV = NULL for a
        # match's first row); only matches shorter than n rows need a per-step evaluation.
        self.prev_slots: dict[str, list[int]] = {}
        for v, e in define.items():
            slots = [r - nav.n for r in input_refs(e) if r >= nav.n]
            if v not in self.pure and slots and all(nav.slots[j].kind == "prev" for j in slots):
                self.prev_slots[v] = slots
        self.max_prev = max([nav.slots[j].offset for js in self.prev_slots.values() for j in js], default=0)
        self.prev_values: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}

    def precompute(self, flush_ids: np.ndarray, prev_ids: dict[int, np.ndarray], ctx: EvalContext) -> None:
        """Evaluate the current-row-only and PREV-only conditions over all rows of a flush
        (vectorized). `prev_ids[k]`: store id of each row's k-th predecessor in its
        partition (-1 = none)."""
        self.pure_values = {}
        for v, e in self.pure.items():
            res = self.nav.evaluate(e, flush_ids, [], ctx)
            self.pure_values[v] = _bools(res)
        self.prev_values = {}
        none = np.full(len(flush_ids), -1, dtype=np.int64)
        for v, slots in self.prev_slots.items():
            e = self.define[v]
            offsets = {j: self.nav.slots[j].offset for j in slots}
            full = self.nav.evaluate(e, flush_ids, [], ctx, {j: prev_ids[k] for j, k in offsets.items()})
            first = self.nav.evaluate(e, flush_ids, [], ctx, {j: none for j in slots})
            self.prev_values[v] = (_bools(full), _bools(first), max(offsets.values()))

    # ------------------------------------------------------------------ one row
    def step(self, part: PartitionState, row_id: int, ts: int, pos: int, ctx: EvalContext) -> list[Thread]:
        p = self.pattern
        n_el = len(p)
        if self.within is not None:
            part.threads = [t for t in part.threads if t.start_ts + self.within > ts]
        seq = part.seq
        part.seq += 1
        threads = part.threads + [Thread(seq, ts, 0, 0, (), ())]
        options: list[list[tuple[int, int]]] = []
        for t in threads:
            opts: list[tuple[int, int]] = []
            e = t.elem
            mx = p[e].max
            if mx is None or t.count < mx:
                opts.append((e, t.count + 1))
            if t.count >= p[e].min:
                e2 = e + 1
                while e2 < n_el:
                    opts.append((e2, 1))
                    if p[e2].min != 0:
                        break
                    e2 += 1
            options.append(opts)
        ok = self._conditions(threads, options, row_id, pos, ctx)
        new_threads: list[Thread] = []
        completed: list[Thread] = []
        for t, opts, res in zip(threads, options, ok, strict=True):
            for (x, cnt), good in zip(opts, res, strict=True):
                if not good:
                    continue
                start_seq, start_ts = (t.start_seq, t.start_ts) if t.rows else (seq, ts)
                nt = Thread(start_seq, start_ts, x, cnt, t.rows + (row_id,), t.labels + (x,))
                if cnt >= p[x].min and all(p[k].min == 0 for k in range(x + 1, n_el)):
                    completed.append(nt)
                else:
                    new_threads.append(nt)
                if p[x].greedy:
                    break  # greedy: a satisfied take excludes the later alternatives
        part.threads = new_threads
        part.held.extend(completed)
        return self._emit(part)

    def _conditions(
        self, threads: list[Thread], options: list[list[tuple[int, int]]], row_id: int, pos: int, ctx: EvalContext
    ) -> list[list[bool]]:
        out = [[True] * len(o) for o in options]
        by_var: dict[str, list[tuple[int, int]]] = {}
        for ti, opts in enumerate(options):
            for oi, (x, _) in enumerate(opts):
                by_var.setdefault(self.pattern[x].var, []).append((ti, oi))
        for var, cands in by_var.items():
            expr = self.define.get(var)
            if expr is None:
                continue
            if var in self.pure_values:
                v = bool(self.pure_values[var][pos])
                for ti, oi in cands:
                    out[ti][oi] = v
                continue
            if var in self.prev_values:
                full, first, need = self.prev_values[var]
                rest = []
                for ti, oi in cands:
                    n_rows = len(threads[ti].rows)
                    if n_rows >= need:
                        out[ti][oi] = bool(full[pos])
                    elif n_rows == 0:
                        out[ti][oi] = bool(first[pos])
                    else:
                        rest.append((ti, oi))
                cands = rest
                if not cands:
                    continue
            seqs: list[Seq] = []
            for ti, oi in cands:
                x = options[ti][oi][0]
                seqs.append((threads[ti].rows + (row_id,), threads[ti].labels + (x,)))
            cur = np.full(len(cands), row_id, dtype=np.int64)
            res = self.nav.evaluate(expr, cur, seqs, ctx)
            vals = pc.fill_null(res, False).to_numpy(zero_copy_only=False)
            for (ti, oi), b in zip(cands, vals, strict=True):
                out[ti][oi] = bool(b)
        return out

    # ------------------------------------------------------------------ emission
    def _emit(self, part: PartitionState) -> list[Thread]:
        emitted: list[Thread] = []
        while part.held:
            part.held.sort(key=lambda t: t.start_seq)
            m = part.held[0]
            if any(t.start_seq < m.start_seq for t in part.threads):
                break  # an earlier partial match may still complete first
            emitted.append(m)
            part.held.pop(0)
            kind, var = self.after
            last = m.start_seq + len(m.rows) - 1
            if kind == "PAST_LAST_ROW":
                prune, strict = last, False
            elif kind == "TO_NEXT_ROW":
                prune, strict = m.start_seq, False
            else:
                idx = [i for i, lab in enumerate(m.labels) if self.pattern[lab].var == var]
                # Flink's SkipToElementStrategy (throwExceptionOnMiss, as its planner sets
                # it): no row of the variable, or a skip back to the match's first row
                # (an endless loop), fails the job
                if not idx:
                    raise JobError(f"Could not skip to {var}. No such element in the found match.")
                if (idx[0] if kind == "TO_FIRST" else idx[-1]) == 0:
                    raise JobError("Could not skip to first element of a match.")
                prune, strict = m.start_seq + (idx[0] if kind == "TO_FIRST" else idx[-1]), True

            def keep(t: Thread, prune: int = prune, strict: bool = strict) -> bool:
                return t.start_seq >= prune if strict else t.start_seq > prune

            part.threads = [t for t in part.threads if keep(t)]
            part.held = [t for t in part.held if keep(t)]
        return emitted

    def referenced_rows(self, parts: list[PartitionState]) -> int | None:
        """The smallest store id any partial or held match (or PREV history) references."""
        low: int | None = None
        for ps in parts:
            if ps.history:
                m = min(ps.history)
                low = m if low is None else min(low, m)
            for t in ps.threads + ps.held:
                if t.rows:
                    m = min(t.rows)
                    low = m if low is None else min(low, m)
        return low


def _bools(res: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(res, False).to_numpy(zero_copy_only=False), dtype=bool)
