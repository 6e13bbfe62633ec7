"""The non-deterministic update check (`table.optimizer.non-deterministic-update.strategy` =
TRY_RESOLVE; Flink's StreamNonDeterministicUpdatePlanVisitor, docs: "Determinism in
Continuous Queries").

A changelog is applied downstream by matching rows: a retract sink deletes the row it was
given before, an aggregate retracts the values it accumulated. When the row is matched by
its whole content (no upsert key), a column recomputed by a non-deterministic function
(NOW(), RAND(), UUID(), a non-deterministic UDF) differs between the +U and its later -U,
and the retraction misses: wrong results or runtime errors. The check walks the optimized
plan from each sink, carrying the set of columns that must be deterministic, as Flink does:

- a sink over updates needs its PRIMARY KEY, or every column when it has none or a
  SinkUpsertMaterializer in front (`upsertMaterialize=[true]`); a query's collected result
  needs every column;
- a Calc over updates must compute the needed columns and its filter deterministically and
  needs the input columns they read; a group or window aggregate, a Top-N / deduplication,
  an OVER aggregate, a table function or a PTF over updates needs every input column; a
  join side over updates needs the needed columns of that side when it has an upsert key,
  or all of them; row-wise and forwarding operators pass the need on; an insert-only input
  needs nothing;
- the columns of an upsert key of an input are deterministic by definition and leave the
  need.

A need that meets a non-deterministic column fails the statement with Flink's message and
the related plan. Flink's TRY_RESOLVE also materializes a lookup join over updates whose
looked-up columns are needed; streamsql has no such materialization and refuses that plan
instead (set IGNORE when the lookup table is static, as Flink's page advises). Only
STREAMING plans are checked (a batch plan has no updates).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from planner.errors import SqlValidationError
from planner.explain import render_tree
from planner.physical import PhysicalNode
from runtime.connectors.base import metadata_columns
from runtime.expr.ir import Call, Expr, Literal, input_refs
from runtime.functions import registry
from runtime.operators.calc import CALC, CalcParams
from runtime.operators.changelog_normalize import CHANGELOG_NORMALIZE
from runtime.operators.correlate import CORRELATE, CorrelateParams
from runtime.operators.drop_update_before import DROP_UPDATE_BEFORE
from runtime.operators.expand import EXPAND, ExpandParams
from runtime.operators.interval_join import INTERVAL_JOIN
from runtime.operators.join import JOIN
from runtime.operators.lookup_join import LOOKUP_JOIN, LookupJoinParams
from runtime.operators.sink import SINK, SinkParams
from runtime.operators.source import TABLE_SOURCE_SCAN, TableSourceScanParams
from runtime.operators.spec import UpsertKeys, explain_line, spec_for
from runtime.operators.temporal_join import TEMPORAL_JOIN
from runtime.operators.window_join import WINDOW_JOIN
from runtime.operators.window_tvf import WINDOW_TABLE_FUNCTION
from runtime.plan_text import format_expr
from runtime.udf_registry import resolve as resolve_udf

TABLE_EXCEPTION = "org.apache.flink.table.api.TableException"
PYTHON_UDF = "python_udf"  # the IR call of a Python scalar UDF (planner/binder/udf_calls.py)

_JOINS = (JOIN.name, INTERVAL_JOIN.name, TEMPORAL_JOIN.name, WINDOW_JOIN.name)

Need = frozenset[int]
_NONE: Need = frozenset()


def non_deterministic_call(e: Expr | None) -> str | None:
    """The name (as Flink prints it: upper case, a UDF by its name) of the first
    non-deterministic function `e` calls. A Python UDF is deterministic unless declared
    otherwise (`udf(..., deterministic=False)`), as in PyFlink."""
    if isinstance(e, Call):
        if e.name == PYTHON_UDF and e.args and isinstance(e.args[0], Literal):
            ref = str(e.args[0].value)
            try:
                deterministic = resolve_udf(ref).deterministic
            except (LookupError, ImportError, ValueError):  # not loadable here: PyFlink's default
                deterministic = True
            if not deterministic:
                return str(json.loads(ref).get("name") or PYTHON_UDF)
        elif not registry.is_deterministic(e.name):
            return e.name.upper()
        for a in e.args:
            found = non_deterministic_call(a)
            if found is not None:
                return found
    return None


def check_non_deterministic_updates(root: PhysicalNode, collected: bool) -> None:
    """Raise Flink's TRY_RESOLVE error when an update of `root`'s plan carries a
    non-deterministic column that a consumer matches rows by. `collected`: a query whose
    result is collected (its rows are applied as a retract changelog)."""
    _Visitor().start(root, collected)


class _Visitor:
    def __init__(self) -> None:
        self._keys: dict[int, UpsertKeys] = {}

    # ------------------------------------------------------------------ facts
    def upsert_keys(self, n: PhysicalNode) -> UpsertKeys:
        if id(n) not in self._keys:
            spec = spec_for(n.operator)
            inputs = [self.upsert_keys(i) for i in n.inputs]
            self._keys[id(n)] = spec.upsert_keys(n, inputs) if spec is not None else None
        return self._keys[id(n)]

    @staticmethod
    def insert_only(n: PhysicalNode) -> bool:
        return all(i.changelog_mode == "I" for i in n.inputs)

    # ------------------------------------------------------------------ walk
    def start(self, root: PhysicalNode, collected: bool) -> None:
        if root.operator == SINK.name or not collected or self.insert_only_output(root):
            self.visit(root, _NONE)
        else:  # the collect sink: a retract sink without a primary key
            self.visit(root, self.exclude_upsert_key(root, frozenset(range(len(root.fields)))))

    @staticmethod
    def insert_only_output(n: PhysicalNode) -> bool:
        return n.changelog_mode == "I"

    def exclude_upsert_key(self, n: PhysicalNode, need: Need) -> Need:
        """An upsert key of `n` is deterministic: a need within one is met, else the least
        need left after taking an upsert key's columns away (Flink's rule)."""
        if not need:
            return need
        keys = self.upsert_keys(n)
        if not keys:
            return need
        if any(need <= k for k in keys):
            return _NONE
        return min((need - k for k in keys), key=len)

    def transmit(self, n: PhysicalNode, needs: Iterable[Need]) -> None:
        for child, need in zip(n.inputs, needs, strict=True):
            self.visit(child, self.exclude_upsert_key(child, need))

    def visit(self, n: PhysicalNode, need: Need) -> None:
        op = n.operator
        if not n.inputs:
            if op == TABLE_SOURCE_SCAN.name and need:
                self.source(n, need)
            return
        if op == SINK.name:
            self.sink(n)
        elif op == CALC.name:
            self.calc(n, need)
        elif op in _JOINS:
            self.join(n, need)
        elif op == LOOKUP_JOIN.name:
            self.lookup_join(n, need)
        elif op == CORRELATE.name:
            self.correlate(n, need)
        elif op == CHANGELOG_NORMALIZE.name:  # normalized by key: the source's metadata is deterministic
            self.transmit(n, [_NONE])
        elif op == EXPAND.name:
            p = ExpandParams.of(n)
            self.transmit(n, [need - {p.expand_id_index}])
        elif op == WINDOW_TABLE_FUNCTION.name:
            width = len(n.inputs[0].fields)
            self.transmit(n, [frozenset(i for i in need if i < width) if not self.insert_only(n) else _NONE])
        elif self.forwarding(n) or op == DROP_UPDATE_BEFORE.name:  # Exchange, Union, ...: the need passes on
            self.transmit(n, [need] * len(n.inputs))
        elif self.insert_only(n):
            self.transmit(n, [_NONE] * len(n.inputs))
        else:  # aggregates, Top-N, OVER, PTFs, ...: retract by the whole input row
            self.transmit(n, [frozenset(range(len(i.fields))) for i in n.inputs])

    @staticmethod
    def forwarding(n: PhysicalNode) -> bool:
        spec = spec_for(n.operator)
        return spec is not None and (spec.forwards_changelog or spec.forwards_update_before)

    # ------------------------------------------------------------------ kinds
    def sink(self, n: PhysicalNode) -> None:
        child = n.inputs[0]
        if child.changelog_mode == "I":
            self.transmit(n, [_NONE])
            return
        p = SinkParams.of(n)
        pk = frozenset(i for i, f in enumerate(p.schema) if f.name in p.primary_key)  # the sink's columns
        # an upsert sink updates by its key; without one, or with a SinkUpsertMaterializer
        # (which matches the input's rows whole), every column is matched (Flink's rule)
        by_key = bool(pk) and not p.upsert_materialize
        self.transmit(n, [pk if by_key else frozenset(range(len(child.fields)))])

    def source(self, n: PhysicalNode, need: Need) -> None:
        """A CDC source's metadata columns (system columns, not the row's) differ between a
        change and its retraction unless a ChangelogNormalize (above) rebuilds the rows."""
        if n.changelog_mode == "I":
            return
        metadata = metadata_columns(TableSourceScanParams.of(n).options)
        wrong = [f.name for i, f in enumerate(n.fields) if i in need and f.name in metadata]
        if wrong:
            raise SqlValidationError(
                f"The metadata column(s): '{', '.join(wrong)}' in cdc source may cause wrong result or error on "
                "downstream operators, please consider removing these columns or use a non-cdc source that only "
                "has insert messages.\nsource node:\n" + self.related_plan(n).removeprefix("\nrelated rel plan:\n"),
                flink_class=TABLE_EXCEPTION,
                hint="leave the metadata column(s) out of the query, or read them where the changes are keyed",
            )

    def calc(self, n: PhysicalNode, need: Need) -> None:
        if self.insert_only(n) or not need:
            self.transmit(n, [_NONE])
            return
        p = CalcParams.of(n)
        names = [f.name for f in n.inputs[0].fields]
        call = non_deterministic_call(p.condition)
        if call is not None:
            assert p.condition is not None
            self.condition_error(call, format_expr(p.condition, names), n)
        generated = {i: c for i, e in enumerate(p.projections) if (c := non_deterministic_call(e)) is not None}
        unsatisfied = sorted(i for i in need if i in generated)
        if unsatisfied:
            self.columns_error(unsatisfied, n, {i: generated[i] for i in unsatisfied})
        read: set[int] = set()
        for i in need:
            read |= input_refs(p.projections[i])
        self.transmit(n, [frozenset(read)])

    def join(self, n: PhysicalNode, need: Need) -> None:
        p = n.params  # the join kinds' params: left_keys / right_keys, condition, join_type or kind
        left, right = n.inputs
        kind = str(getattr(p, "join_type", None) or getattr(p, "kind", "INNER")).upper()
        updates = [c.changelog_mode != "I" for c in (left, right)]
        condition: Expr | None = getattr(p, "condition", None)
        call = non_deterministic_call(condition)
        if call is not None and condition is not None and (any(updates) or kind not in ("INNER", "SEMI")):
            names = [f.name for f in left.fields] + [f.name for f in right.fields]
            self.condition_error(call, format_expr(condition, names), n)
        width = len(left.fields)
        sides: list[Need] = []
        for side, (child, has_updates) in enumerate(zip((left, right), updates, strict=True)):
            if not has_updates:
                sides.append(_NONE)
                continue
            unique = self.upsert_keys(child)
            if unique:  # a unique key (within the join key or not): the side's own part
                part = (i for i in need if i < width) if side == 0 else (i - width for i in need if i >= width)
                sides.append(frozenset(part))
            else:  # retracted by the whole input row
                sides.append(frozenset(range(len(child.fields))))
        self.transmit(n, sides)

    def lookup_join(self, n: PhysicalNode, need: Need) -> None:
        if self.insert_only(n) or not need:
            self.transmit(n, [_NONE])
            return
        p = LookupJoinParams.of(n)
        names = [f.name for f in n.fields]
        for cond in (p.condition, p.right_condition):
            call = non_deterministic_call(cond)
            if call is not None:
                assert cond is not None
                self.condition_error(call, format_expr(cond, names), n)
        right = {i for i in need if i >= p.left_width}
        # Flink omits the materialization when no looked-up column is needed, or when the
        # lookup is by the table's PRIMARY KEY and only key columns are needed
        by_key = n.info.get("lookup_by_primary_key") and right <= set(n.info.get("primary_key_outputs", ()))
        if right and not by_key:
            raise SqlValidationError(
                "The lookup join over an update stream can produce non-deterministic updates: the lookup table "
                "may change between an update and its retraction, and the looked-up column(s) "
                f"{', '.join(names[i] for i in sorted(right))} are needed downstream. Flink's TRY_RESOLVE "
                "materializes the join for this; streamsql cannot.\n" + self.related_plan(n),
                flink_class=TABLE_EXCEPTION,
                hint="declare the lookup table's PRIMARY KEY and look it up by it, or set "
                "'table.optimizer.non-deterministic-update.strategy' = 'IGNORE' when the lookup table is static",
            )
        self.transmit(n, [frozenset(i for i in need if i < p.left_width)])

    def correlate(self, n: PhysicalNode, need: Need) -> None:
        if self.insert_only(n) or not need:
            self.transmit(n, [_NONE])
            return
        p = CorrelateParams.of(n)
        width = len(n.inputs[0].fields)
        function = p.function
        name = getattr(function, "name", None)
        calls = [getattr(function, "expr", None), *getattr(function, "args", ())]
        call = next((c for c in map(non_deterministic_call, calls) if c is not None), None)
        if call is None and name and not registry.is_deterministic(str(name).lower()):
            call = str(name).upper()
        if call is not None:
            unsatisfied = sorted(i for i in need if i >= width)
            if unsatisfied:
                self.columns_error(unsatisfied, n, dict.fromkeys(unsatisfied, call))
        self.transmit(n, [frozenset(i for i in need if i < width)])

    # ------------------------------------------------------------------ errors
    def related_plan(self, n: PhysicalNode) -> str:
        def line(x: PhysicalNode) -> str:
            text = explain_line(x, True)
            keys = self.upsert_keys(x) or frozenset()
            shown = ", ".join("{" + ", ".join(map(str, sorted(k))) + "}" for k in sorted(keys, key=sorted))
            return text[:-1] + f", upsertKeys=[{shown}])" if text.endswith(")") else text

        return "\nrelated rel plan:\n" + render_tree(n, line, lambda x: x.inputs)

    def columns_error(self, columns: list[int], n: PhysicalNode, calls: dict[int, str]) -> None:
        described = "".join(
            f"{n.fields[i].name}(generated by non-deterministic function: {calls[i]} ) " for i in columns
        )
        raise SqlValidationError(
            f"The column(s): {described}can not satisfy the determinism requirement for correctly processing "
            "update message('UB'/'UA'/'D' in changelogMode, not 'I' only), this usually happens when input node "
            "has no upsertKey(upsertKeys=[{}]) or current node outputs non-deterministic update messages. Please "
            "consider removing these non-deterministic columns or making them deterministic by using "
            "deterministic functions.\n" + self.related_plan(n),
            flink_class=TABLE_EXCEPTION,
            hint="compute the column from the input's own columns (e.g. a time column of the table instead of NOW())",
        )

    def condition_error(self, call: str, condition: str, n: PhysicalNode) -> None:
        raise SqlValidationError(
            f"There exists non deterministic function: '{call}' in condition: '{condition}' which may cause wrong "
            "result in update pipeline.\n" + self.related_plan(n),
            flink_class=TABLE_EXCEPTION,
            hint="move the non-deterministic condition before the updating operator or make it deterministic",
        )
