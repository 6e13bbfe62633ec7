"""Aggregation breadth: GROUPING SETS / ROLLUP / CUBE (Expand), STDDEV/VAR, COLLECT,
retractable LISTAGG / FIRST_VALUE / LAST_VALUE / DISTINCT, cascaded aggregation (an
aggregate over another aggregate's retract changelog) and batch over a CDC source.
Streaming runs use tiny source batches so every change travels as a retraction."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from harness import load_module_at

from runtime.aggregates.extra import (
    CollectAcc,
    RetractFirstLastAcc,
    RetractListAggAcc,
    VarianceAcc,
    flink_string_hash,
    java_hashmap_order,
)
from runtime.types import DOUBLE, INT, STRING, DataType

H = load_module_at("streamsql_aggsql_helper", Path(__file__).with_name("aggsql.py"))


def both_modes(script: str, batch_rows: int = 1) -> Counter:
    """The final table, checked equal in streaming (changelog applied) and batch."""
    streaming = H.final_table(H.run_sql(script, "streaming", batch_rows))
    batch = H.final_table(H.run_sql(script, "batch"))
    assert streaming == batch
    return streaming


# ---------------------------------------------------------------------- accumulators
def test_variance_matches_two_pass_and_retracts() -> None:
    acc = VarianceAcc([pa.float64()], DOUBLE(), "var_pop")
    acc.grow(2)
    acc.update(np.array([0, 0, 0, 1]), np.ones(4, dtype=np.int64), [pa.array([1.0, 2.0, 4.0, 5.0])])
    assert acc.results(np.array([0, 1])).to_pylist() == [1.5555555555555554, 0.0]
    # retract 4.0 from slot 0: the variance of (1, 2) is 0.25
    acc.update(np.array([0]), np.array([-1]), [pa.array([4.0])])
    assert acc.results(np.array([0])).to_pylist() == pytest.approx([0.25])
    samp = VarianceAcc([pa.int32()], INT(), "stddev_samp")
    samp.grow(1)
    samp.update(np.array([0, 0]), np.ones(2, dtype=np.int64), [pa.array([1, 2], pa.int32())])
    assert samp.results(np.array([0])).to_pylist() == [0]  # 0.707 truncated to INT
    samp.update(np.array([0]), np.array([-1]), [pa.array([1], pa.int32())])
    assert samp.results(np.array([0])).to_pylist() == [None]  # one row left: sample is NULL


def test_variance_of_a_spread_beyond_sqrt_double_max_is_infinity_without_warnings() -> None:
    """Flink prints Infinity for VAR_SAMP(1.0E308, 1.0E-10) (conformance aggregate_agg_06a):
    the squares overflow, which is the expected answer, not a RuntimeWarning to print; also
    when the huge values arrive in separate batches (the merge of stored statistics)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for batches in ([[1e308, 1e-10]], [[1e308], [1e-10]]):
            acc = VarianceAcc([pa.float64()], DOUBLE(), "var_samp")
            acc.grow(1)
            for values in batches:
                acc.update(
                    np.zeros(len(values), dtype=np.int64), np.ones(len(values), dtype=np.int64), [pa.array(values)]
                )
            assert acc.results(np.array([0])).to_pylist() == [float("inf")]


def test_collect_java_hashmap_order_and_retraction() -> None:
    assert java_hashmap_order(["y", "z"]) == ["z", "y"]  # Flink prints {z=1, y=2}
    assert java_hashmap_order([-3, -2]) == [-2, -3]
    assert flink_string_hash("y") == 1475214315
    acc = CollectAcc([pa.string()], DataType("MULTISET", False, children=(STRING(False),)))
    acc.grow(1)
    acc.update(np.array([0, 0, 0]), np.ones(3, dtype=np.int64), [pa.array(["y", "z", "y"])])
    assert acc.results(np.array([0])).to_pylist() == [["z", "y", "y"]]
    acc.update(np.array([0]), np.array([-1]), [pa.array(["z"])])
    assert acc.results(np.array([0])).to_pylist() == [["y", "y"]]


def test_retract_listagg_and_first_last() -> None:
    la = RetractListAggAcc([pa.string()], STRING(), ";")
    la.grow(2)
    la.update(np.array([0, 0, 0, 1]), np.ones(4, dtype=np.int64), [pa.array(["a", "b", "a", None])])
    la.update(np.array([0]), np.array([-1]), [pa.array(["a"])])  # removes the first "a"
    assert la.results(np.array([0, 1])).to_pylist() == ["b;a", None]
    fv = RetractFirstLastAcc([pa.int32()], INT(), "first_value")
    lv = RetractFirstLastAcc([pa.int32()], INT(), "last_value")
    for acc in (fv, lv):
        acc.grow(1)
        acc.update(np.array([0, 0, 0]), np.ones(3, dtype=np.int64), [pa.array([1, 2, 3], pa.int32())])
    fv.update(np.array([0]), np.array([-1]), [pa.array([1], pa.int32())])
    lv.update(np.array([0]), np.array([-1]), [pa.array([3], pa.int32())])
    assert fv.results(np.array([0])).to_pylist() == [2]
    assert lv.results(np.array([0])).to_pylist() == [2]


# ---------------------------------------------------------------------- SQL end to end
@pytest.fixture
def kv(tmp_path: Path) -> Path:
    p = tmp_path / "kv.csv"
    p.write_text("a,1,x\na,2,y\nb,3,x\nb,3,\na,5,x\nc,7,z\n")
    return p


def _table(path: Path) -> str:
    return (
        f"CREATE TABLE t (k STRING, v INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{path}', "
        "'format' = 'csv');\n"
    )


def test_rollup_with_grouping_and_key_as_argument(kv: Path) -> None:
    q = _table(kv) + (
        "SELECT k, s, GROUPING(s) AS gs, GROUPING_ID(k, s) AS gid, COUNT(s) AS cs, SUM(v) AS sv "
        "FROM t GROUP BY ROLLUP (k, s);"
    )
    got = both_modes(q)
    # COUNT(s) counts the real s even on the rows where Expand nulls the key s.
    assert got[("a", None, "1", "1", "3", "8")] == 1
    assert got[(None, None, "1", "3", "6", "21")] == 1
    assert got[("b", "", "0", "0", "1", "3")] == 1  # CSV reads an empty field as ''
    assert sum(got.values()) == 5 + 3 + 1  # (k, s) groups a/x a/y b/x b/'' c/z; (k); ()


def test_grouping_in_plain_group_by_is_zero(kv: Path) -> None:
    got = both_modes(_table(kv) + "SELECT k, GROUPING(k) AS g, COUNT(*) AS n FROM t GROUP BY k;")
    assert got == Counter({("a", "0", "3"): 1, ("b", "0", "2"): 1, ("c", "0", "1"): 1})


def test_cube_with_having_on_grouping_id(kv: Path) -> None:
    q = _table(kv) + "SELECT k, s, COUNT(*) AS n FROM t GROUP BY CUBE (k, s) HAVING GROUPING_ID(k, s) = 2;"
    got = both_modes(q)
    assert got == Counter({(None, "x", "3"): 1, (None, "y", "1"): 1, (None, "z", "1"): 1, (None, "", "1"): 1})


def test_cascaded_aggregation_nexmark_q4_style(tmp_path: Path) -> None:
    p = tmp_path / "bids.csv"
    p.write_text("1,10,5.00\n1,10,7.50\n2,10,3.00\n3,20,4.00\n2,10,9.25\n3,20,1.00\n4,20,8.00\n1,10,2.00\n")
    q = (
        f"CREATE TABLE bids (id INT, category INT, price DECIMAL(10, 2)) WITH ('connector' = 'filesystem', "
        f"'path' = '{p}', 'format' = 'csv');\n"
        "SELECT category, AVG(winning) AS avg_w, MIN(winning) AS lo, MAX(winning) AS hi, COUNT(*) AS n, "
        "LISTAGG(CAST(winning AS STRING)) AS l, COUNT(DISTINCT winning) AS nd "
        "FROM (SELECT id, category, MAX(price) AS winning FROM bids GROUP BY id, category) GROUP BY category;"
    )
    got = both_modes(q)
    assert got == Counter(
        {
            ("10", "8.375000", "7.50", "9.25", "2", "7.50,9.25", "2"): 1,
            ("20", "6.000000", "4.00", "8.00", "2", "4.00,8.00", "2"): 1,
        }
    )


def test_batch_applies_debezium_changelog(tmp_path: Path) -> None:
    p = tmp_path / "cdc.json"
    H.write_debezium(
        p,
        [
            ("c", None, {"id": 1, "g": "a", "v": 5}),
            ("c", None, {"id": 2, "g": "a", "v": 9}),
            ("u", {"id": 2, "g": "a", "v": 9}, {"id": 2, "g": "a", "v": 1}),
            ("c", None, {"id": 3, "g": "b", "v": 4}),
            ("d", {"id": 3, "g": "b", "v": 4}, None),
        ],
    )
    q = (
        f"CREATE TABLE c (id INT, g STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{p}', "
        "'format' = 'debezium-json');\n"
        "SELECT g, MAX(v) AS mx, FIRST_VALUE(v) AS fv, LAST_VALUE(v) AS lv, LISTAGG(CAST(v AS STRING), '|') AS l, "
        "STDDEV_POP(v) AS sd FROM c GROUP BY g;"
    )
    got = both_modes(q)
    assert got == Counter({("a", "5", "5", "1", "5|1", "2"): 1})


def test_batch_rejects_cdc_source_outside_aggregates(tmp_path: Path) -> None:
    from planner.errors import SqlError

    p = tmp_path / "cdc.json"
    H.write_debezium(p, [("c", None, {"id": 1})])
    q = (
        f"CREATE TABLE c (id INT) WITH ('connector' = 'filesystem', 'path' = '{p}', 'format' = 'debezium-json');\n"
        "SELECT id FROM c UNION ALL SELECT id FROM c;"
    )
    with pytest.raises(SqlError, match="INSERT-only table sources"):
        H.run_sql(q, "batch")
