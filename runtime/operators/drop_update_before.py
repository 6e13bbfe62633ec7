"""DropUpdateBefore: leaves a changelog's -U rows out, as Flink's StreamExecDropUpdateBefore.

The planner puts it right above a source whose changelog has -U rows (a CDC format such as
debezium-json, postgres-cdc) when no consumer needs them (planner/changelog.py
`require_update_before`): an upsert sink keyed by the table's key, a ChangelogNormalize
(`table.exec.source.cdc-events-duplicate`), the top of an EXPLAINed query. Stateless and
row-wise: the other rows pass unchanged, with their system columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import ROW_KIND, ROW_WATERMARK, UPDATE_BEFORE, data_width
from runtime.frozen import frozen_dataclass
from runtime.operators._common import make_batch, system_column
from runtime.operators.base import Operator, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, UpsertKeys, register_spec


@frozen_dataclass
class DropUpdateBeforeParams(OperatorParams):
    """No parameters."""


class DropUpdateBeforeOperator(Operator):
    """Filters the -U rows out of each batch (vectorized)."""

    checkpointing = "stateless"

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        kinds = system_column(batch, ROW_KIND)
        if kinds is not None:
            batch = batch.filter(pc.not_equal(kinds, pa.scalar(UPDATE_BEFORE, kinds.type)))
        n = data_width(batch)
        kept_kinds = system_column(batch, ROW_KIND)
        out.emit(make_batch(self.node, batch.columns[:n], kept_kinds, system_column(batch, ROW_WATERMARK)))


class DropUpdateBeforeSpec(OperatorSpec[DropUpdateBeforeParams]):
    """Its input's changelog without UB."""

    name = "DropUpdateBefore"
    params_type = DropUpdateBeforeParams
    operator_class = DropUpdateBeforeOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(
        False,
        True,
        "Planned in STREAMING only, above a CDC source whose -U rows no consumer wants: a filter on `__op`.",
    )

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return ",".join(k for k in inputs[0].changelog_mode.split(",") if k != "UB")

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        return inputs[0]


DROP_UPDATE_BEFORE = register_spec(DropUpdateBeforeSpec())
