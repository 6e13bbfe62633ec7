"""UNNEST (Correlate) in both modes: arrays with ordinality, maps, arrays of rows, LEFT
JOIN ... ON TRUE, FROM UNNEST, and row kinds passing through."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND, row_kinds
from runtime.expr.ir import InputRef
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output
from runtime.operators.correlate import CorrelateFunction, CorrelateOperator, CorrelateParams
from runtime.types import ARRAY, INT, Field
from streamsql import EnvironmentSettings, TableEnvironment

DATA = [
    {"id": 1, "a": [1, 2, 3], "m": {"x": 1}, "r": [{"p": 1, "q": "a"}, {"p": 2, "q": "b"}]},
    {"id": 2, "a": [], "m": {}, "r": []},
    {"id": 3, "a": [None, 7], "m": {"z": 3, "w": None}, "r": [{"p": 3, "q": None}]},
    {"id": 4},
]


def run(tmp_path: Path, query: str, mode: str) -> Counter:
    path = tmp_path / "t.json"
    path.write_text("".join(json.dumps(d) + "\n" for d in DATA))
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(
        "CREATE TABLE t (id INT, a ARRAY<INT>, m MAP<STRING, INT>, r ARRAY<ROW<p INT, q STRING>>) "
        f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')"
    )
    out: Counter = Counter()
    for row in env.execute_sql(query).collect():
        out[tuple(row)] += 1
    return out


MODES = ["streaming", "batch"]


@pytest.mark.parametrize("mode", MODES)
def test_unnest_array_with_ordinality(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, "SELECT id, v, pos FROM t CROSS JOIN UNNEST(a) WITH ORDINALITY AS x(v, pos)", mode)
    assert got == Counter({(1, 1, 1): 1, (1, 2, 2): 1, (1, 3, 3): 1, (3, None, 1): 1, (3, 7, 2): 1})


@pytest.mark.parametrize("mode", MODES)
def test_left_join_unnest_keeps_empty_and_null(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, "SELECT id, v FROM t LEFT JOIN UNNEST(a) AS x(v) ON TRUE", mode)
    assert got == Counter({(1, 1): 1, (1, 2): 1, (1, 3): 1, (2, None): 1, (3, None): 1, (3, 7): 1, (4, None): 1})


@pytest.mark.parametrize("mode", MODES)
def test_unnest_map(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, "SELECT id, k, v FROM t, UNNEST(m) AS u(k, v)", mode)
    assert got == Counter({(1, "x", 1): 1, (3, "z", 3): 1, (3, "w", None): 1})


@pytest.mark.parametrize("mode", MODES)
def test_unnest_array_of_rows(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, "SELECT id, u.p, u.q FROM t CROSS JOIN UNNEST(r) AS u", mode)
    assert got == Counter({(1, 1, "a"): 1, (1, 2, "b"): 1, (3, 3, None): 1})


@pytest.mark.parametrize("mode", MODES)
def test_from_unnest_literal_array(tmp_path: Path, mode: str) -> None:
    got = run(tmp_path, "SELECT x * 10 FROM UNNEST(ARRAY[1, 2, 3]) AS u(x)", mode)
    assert got == Counter({(10,): 1, (20,): 1, (30,): 1})


def test_unnest_of_a_non_collection_is_rejected(tmp_path: Path) -> None:
    from planner.errors import SqlValidationError

    with pytest.raises(SqlValidationError, match="UNNEST requires an ARRAY"):
        run(tmp_path, "SELECT * FROM t CROSS JOIN UNNEST(id) AS u(x)", "batch")


def test_row_kinds_and_watermarks_pass_through() -> None:
    schema = (Field("id", INT()), Field("a", ARRAY(INT())), Field("v", INT()))
    fn = CorrelateFunction("unnest", expr=InputRef(1, ARRAY(INT())))
    node = Node(0, "Correlate", (), schema, CorrelateParams(fn, "INNER"), "I,UB,UA,D", 1, "")
    op = CorrelateOperator(node, OperatorContext(mode=STREAMING, config={}))
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([1, 2], pa.int32()),
            pa.array([[5, 6], [7]], pa.list_(pa.int32())),
            pa.array([0, 3], pa.int8()),
            pa.array([10, 20], pa.int64()),
        ],
        names=["id", "a", ROW_KIND, "__wm"],
    )
    out = Output()
    op.process_batch(batch, 0, out)
    (res,) = out.batches
    assert res.column(0).to_pylist() == [1, 1, 2]
    assert res.column(2).to_pylist() == [5, 6, 7]
    assert list(row_kinds(res)) == [0, 0, 3]
    assert np.asarray(res.column("__wm")).tolist() == [10, 10, 20]
    assert res.schema.field(0).name == "id"
