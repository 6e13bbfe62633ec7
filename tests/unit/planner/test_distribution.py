"""Data distribution comes from the operator specs: the planner puts the Exchange a kind's
spec requires (`input_distribution`, `input_keys`) in front of each of its inputs
(`PhysicalNode.distributed`), and the physical phase (`to_physical`) refuses a plan where a node lacks it."""

from __future__ import annotations

import pytest

from planner.physical import PhysicalNode, check_distribution, required_exchange
from runtime.operators.group_agg import GroupAggregateParams
from runtime.operators.spec import ANY, KEYED, OperatorSpec, all_specs, spec_for
from runtime.operators.union import EXCHANGE, HASH, SINGLE_DISTRIBUTION, ExchangeParams, UnionParams
from runtime.operators.values import ValuesParams
from runtime.types import BIGINT, Field
from tests.unit.planner.test_optimizer import plan

FIELDS = (Field("k", BIGINT()), Field("v", BIGINT()))


def _values() -> PhysicalNode:
    return PhysicalNode.of(ValuesParams(((1, 2),)), (), FIELDS)


def test_every_keyed_kind_says_which_columns_it_is_keyed_on() -> None:
    keyed = [s for s in all_specs() if s.input_distribution == KEYED]
    assert keyed
    missing = [s.name for s in keyed if type(s).input_keys is OperatorSpec.input_keys]
    assert not missing, f"KEYED specs without input_keys: {missing}"


def test_distributed_puts_the_specs_exchange_in_front_of_each_input() -> None:
    agg = PhysicalNode.distributed(GroupAggregateParams((1,), ()), (_values(),), FIELDS[1:])
    (ex,) = agg.inputs
    assert ex.is_kind(EXCHANGE) and ex.params == ExchangeParams(HASH, (1,))
    glob = PhysicalNode.distributed(GroupAggregateParams((), ()), (_values(),), ())
    assert glob.inputs[0].params == ExchangeParams(SINGLE_DISTRIBUTION, ())
    # An input already distributed as required is not distributed twice.
    again = PhysicalNode.distributed(GroupAggregateParams((1,), ()), agg.inputs, FIELDS[1:])
    assert again.inputs[0] is ex
    # A kind without a requirement gets its inputs as they are.
    union = PhysicalNode.distributed(UnionParams(), (_values(), _values()), FIELDS)
    assert spec_for(union.operator).input_distribution == ANY  # type: ignore[union-attr]
    assert not any(i.is_kind(EXCHANGE) for i in union.inputs)
    assert required_exchange(spec_for(union.operator), union.params, 0) is None  # type: ignore[arg-type]


def test_a_keyed_node_built_without_its_exchange_is_a_planner_bug() -> None:
    bare = PhysicalNode.of(GroupAggregateParams((1,), ()), (_values(),), FIELDS[1:])
    with pytest.raises(AssertionError, match="GroupAggregate"):
        check_distribution(bare)
    wrong_keys = PhysicalNode.of(
        GroupAggregateParams((1,), ()), (PhysicalNode.of(ExchangeParams.on((0,)), (_values(),), FIELDS),), FIELDS[1:]
    )
    with pytest.raises(AssertionError, match="GroupAggregate"):
        check_distribution(wrong_keys)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT k, SUM(v) FROM t GROUP BY k",
        "SELECT k, COUNT(DISTINCT s) FROM t GROUP BY k",
        "SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM t) WHERE rn = 1",
        "SELECT a.k, b.v FROM t a JOIN t b ON a.k = b.k",
        "SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t",
    ],
)
def test_every_planned_keyed_node_is_fed_by_its_specs_exchange(sql: str) -> None:
    graph = plan(sql).graph
    by_id = {n.id: n for n in graph.nodes}
    checked = 0
    for n in graph.nodes:
        spec = spec_for(n.operator)
        assert spec is not None
        for i, src in enumerate(n.inputs):
            required = required_exchange(spec, n.params, i)
            if required is not None:
                assert by_id[src].is_kind(EXCHANGE) and by_id[src].params == required
                checked += 1
    assert checked
