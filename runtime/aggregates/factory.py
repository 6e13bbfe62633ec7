"""The accumulator of one aggregate call: the core ones (runtime.aggregates.accumulators),
the statistical / collection ones (extra, more) and Python UDAFs (runtime.udaf), which all
build on the `Accumulator` base class of runtime.aggregates.accumulators."""

from __future__ import annotations

import pyarrow as pa

from runtime.aggregates.accumulators import (
    Accumulator,
    CountAcc,
    DistinctAcc,
    FirstLastAcc,
    ListAggAcc,
    MinMaxAcc,
    RetractMinMaxAcc,
    SumAcc,
)
from runtime.aggregates.extra import create_extra_accumulator
from runtime.errors import JobError
from runtime.plan_params import AggCallParams
from runtime.types import DataType
from runtime.udaf import create_udaf_accumulator


def create_accumulator(call: AggCallParams, arg_types: list[pa.DataType], retract: bool) -> Accumulator:
    """The accumulator for one aggregate call. `retract`: the input may carry
    retractions, so MIN/MAX keep value multisets."""
    name = call.name.lower()
    rtype: DataType = call.type
    params = call.params
    acc: Accumulator
    if params.get("udf"):  # a Python UDAF (runtime.udaf)
        return create_udaf_accumulator(call, arg_types, retract)
    extra = create_extra_accumulator(name, call, arg_types, retract)
    if extra is not None:
        acc = extra
    elif name == "count":
        acc = CountAcc(arg_types, rtype)
    elif name in ("sum", "sum0", "avg"):
        acc = SumAcc(arg_types, rtype, name)
    elif name in ("min", "max"):
        acc = RetractMinMaxAcc(arg_types, rtype, name) if retract else MinMaxAcc(arg_types, rtype, name)
    elif name == "listagg":
        sep = params.get("separator", ",")
        acc = ListAggAcc(arg_types, rtype, "," if sep is None else str(sep))
    elif name in ("first_value", "last_value"):
        acc = FirstLastAcc(arg_types, rtype, name)
    else:
        raise JobError(f"The runtime has no aggregate function named {name.upper()}")
    if call.distinct:
        acc = DistinctAcc(acc)
    return acc
