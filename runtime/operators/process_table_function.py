"""ProcessTableFunction: Flink 2.3's built-in changelog process table functions (FLIP-564),
`TO_CHANGELOG` and `FROM_CHANGELOG` (Flink's StreamExecProcessTableFunction running
`ToChangelogFunction` / `FromChangelogFunction`).

- `TO_CHANGELOG(input => TABLE t [, op => DESCRIPTOR(col)] [, op_mapping => MAP[...]])`
  turns any table (insert-only, retract) into an append-only one: each row, whatever its
  row kind, becomes an INSERT row with a STRING op column (default name `op`, default codes
  'INSERT', 'UPDATE_BEFORE', 'UPDATE_AFTER', 'DELETE') in front of the input columns. With
  an `op_mapping` (keys: row kind names, comma-separated to give several kinds one code)
  only the mapped row kinds are forwarded.
- `FROM_CHANGELOG(input => TABLE t [, op => DESCRIPTOR(col)] [, op_mapping => MAP[...]])`
  is the inverse: an append-only table with a STRING op column becomes a changelog; each
  row gets the row kind its code maps to (default: the four row kind names; keys may be
  comma-separated codes, values row kind names) and loses the op column. Rows whose code
  is NULL or unmapped are dropped, as Flink 2.3 drops them.

Both have row semantics in Flink 2.3 (no PARTITION BY): stateless and row-wise, so they run
per subtask wherever their input is. The function names are declared here once
(`CHANGELOG_FUNCTIONS`); the binder (planner/binder/changelog_ptf.py) validates the call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, ROW_WATERMARK, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import (
    OperatorParams,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    insert_only_input,
    producer_line,
    register_spec,
)
from runtime.plan_text import type_name

TO_CHANGELOG = "TO_CHANGELOG"
FROM_CHANGELOG = "FROM_CHANGELOG"
# The built-in changelog PTFs and their declared arguments, in order (after them the
# framework's `on_time` and `uid`, which EXPLAIN's invocation lists as DEFAULT()).
CHANGELOG_FUNCTIONS: dict[str, tuple[str, ...]] = {
    TO_CHANGELOG: ("input", "op", "op_mapping"),
    FROM_CHANGELOG: ("input", "op", "op_mapping"),
}
SYSTEM_ARGUMENTS = ("on_time", "uid")
DEFAULT_OP_COLUMN = "op"
# Flink's RowKind names, by the runtime's row kind code (runtime/batch.py).
ROW_KIND_BY_NAME: dict[str, int] = {
    "INSERT": INSERT,
    "UPDATE_BEFORE": UPDATE_BEFORE,
    "UPDATE_AFTER": UPDATE_AFTER,
    "DELETE": DELETE,
}
# The default op_mapping of both functions: each row kind is coded by its name.
DEFAULT_MAPPING: tuple[tuple[str, str], ...] = tuple((name, name) for name in ROW_KIND_BY_NAME)


@frozen_dataclass
class ProcessTableFunctionParams(OperatorParams):
    """A built-in changelog PTF call. `op_column`: TO_CHANGELOG: the output index of the op
    column; FROM_CHANGELOG: the input index of the op column (removed from the output).
    `mapping`: (row kind name, op code) pairs, comma-separated keys already split; the
    default mapping when the call had none. `arguments`: EXPLAIN's text of each argument
    after the table (`DEFAULT()` for one not given)."""

    function: str
    op_column: int
    mapping: tuple[tuple[str, str], ...]
    arguments: tuple[str, ...]


class ProcessTableFunctionOperator(Operator):
    """Vectorized: TO_CHANGELOG looks each row's kind up in a 4-entry code table (a `take`)
    and drops the kinds without a code; FROM_CHANGELOG finds each row's code in the mapped
    codes (`index_in`), drops rows without a match and takes their row kinds from the
    match. Stateless; `__wm` of kept rows is carried over."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = ProcessTableFunctionParams.of(node)
        self.to_changelog = p.function == TO_CHANGELOG
        self.op_column = p.op_column
        codes: list[str | None] = [None] * len(ROW_KIND_BY_NAME)
        for kind, code in p.mapping:
            codes[ROW_KIND_BY_NAME[kind]] = code
        # TO_CHANGELOG: op code by row kind; which row kinds are forwarded.
        self.code_of_kind = pa.array(codes, pa.string())
        self.kind_mapped = np.array([c is not None for c in codes])
        # FROM_CHANGELOG: the mapped codes and the row kind of each.
        self.codes = pa.array([code for _, code in p.mapping], pa.string())
        self.kind_of_code = np.array([ROW_KIND_BY_NAME[kind] for kind, _ in p.mapping], dtype=np.int8)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        if batch.num_rows == 0:
            return
        if self.to_changelog:
            self._to_changelog(batch, out)
        else:
            self._from_changelog(batch, out)

    def _to_changelog(self, batch: pa.RecordBatch, out: Output) -> None:
        kinds = row_kinds(batch)
        keep = self.kind_mapped[kinds]
        if not keep.all():
            batch = batch.filter(pa.array(keep))
            kinds = kinds[keep]
            if batch.num_rows == 0:
                return
        cols = list(data_columns(batch).columns)
        cols.insert(self.op_column, self.code_of_kind.take(pa.array(kinds)))
        out.emit(make_batch(self.node, cols, None, system_column(batch, ROW_WATERMARK)))

    def _from_changelog(self, batch: pa.RecordBatch, out: Output) -> None:
        data = data_columns(batch)
        op = data.column(self.op_column)
        found = pc.index_in(op, value_set=self.codes.cast(op.type))
        if found.null_count:
            mask = found.is_valid()
            batch, data, found = batch.filter(mask), data.filter(mask), found.filter(mask)
            if batch.num_rows == 0:
                return
        kinds = self.kind_of_code[found.to_numpy(zero_copy_only=False)]
        cols = [c for i, c in enumerate(data.columns) if i != self.op_column]
        out.emit(make_batch(self.node, cols, kinds, system_column(batch, ROW_WATERMARK)))


def _string_literals(values: Sequence[str]) -> list[str]:
    """Calcite's text of string literals in one MAP constructor: annotated with the common
    VARCHAR type when their lengths differ (Calcite widens CHAR(n) literals to it)."""
    lengths = {len(v) for v in values}
    cast = f':VARCHAR({max(lengths)}) CHARACTER SET "UTF-16LE"' if len(lengths) > 1 else ""
    return [f"_UTF-16LE'{v}'" + cast for v in values]


def map_argument_text(entries: Sequence[tuple[str, str]]) -> str:
    """EXPLAIN's text of a MAP['k', 'v', ...] argument."""
    keys = _string_literals([k for k, _ in entries])
    values = _string_literals([v for _, v in entries])
    return "MAP(" + ", ".join(f"{k}, {v}" for k, v in zip(keys, values, strict=True)) + ")"


def descriptor_argument_text(column: str) -> str:
    """EXPLAIN's text of a DESCRIPTOR(col) argument."""
    return f"DESCRIPTOR(_UTF-16LE'{column}')"


def invocation_text(function: str, arguments: Sequence[str]) -> str:
    """`TO_CHANGELOG(TABLE(#0), DEFAULT(), ...)` as Flink's plans print the call."""
    return f"{function}({', '.join(['TABLE(#0)', *arguments, *(['DEFAULT()'] * len(SYSTEM_ARGUMENTS))])})"


class ProcessTableFunctionSpec(OperatorSpec[ProcessTableFunctionParams]):
    """Row semantics: stateless, row-wise, parallel. TO_CHANGELOG emits insert-only rows
    from any input that carries UPDATE_BEFORE rows and full deletes (an upsert source is
    normalized by a ChangelogNormalize in front, planned with the source); FROM_CHANGELOG takes an insert-only input and
    emits a retract changelog (Flink 2.3: ChangelogMode.all())."""

    name = "ProcessTableFunction"
    params_type = ProcessTableFunctionParams
    operator_class = ProcessTableFunctionOperator
    parallel = True
    rescalable = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        p = self.params(node)
        if p.function == TO_CHANGELOG:
            mode = inputs[0].changelog_mode
            if "UA" in mode.split(",") and "UB" not in mode.split(","):
                raise PlanRefusedError(
                    f"{TO_CHANGELOG} needs UPDATE_BEFORE rows, but its input is an upsert changelog "
                    f"[{mode}] produced by node {producer_line(inputs[0])}. Flink normalizes such an input "
                    "with a ChangelogNormalize operator, which streamsql plans only right after an upsert source."
                )
            return "I"
        insert_only_input(node, inputs, f"the table argument of {FROM_CHANGELOG} must be append-only")
        return "I,UB,UA,D"

    def batch_changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str | None:
        p = self.params(node)
        if p.function == TO_CHANGELOG:
            return "I"
        if inputs[0].changelog_mode != "I":
            return None
        return "I,UB,UA,D"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        row_type = ", ".join(f"{type_name(f.type)} {f.name}" for f in node.fields)
        return [
            f"invocation=[{invocation_text(p.function, p.arguments)}]",
            "uid=[null]",
            f"select=[{','.join(f.name for f in node.fields)}]",
            f"rowType=[RecordType({row_type})]",
        ]


PROCESS_TABLE_FUNCTION = register_spec(ProcessTableFunctionSpec())
