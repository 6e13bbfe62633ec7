"""AVG in local-global aggregation (planner/optimizer/two_phase_agg.py): split into a sum
(BIGINT over integers, DOUBLE over floats) and a count, divided by the global phase as the
one-phase AVG divides (integers truncate toward zero like Java). The results equal the
one-phase plan's, over insert-only and over updating input."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from streamsql import TableEnvironment

TWO_PHASE = {
    "table.exec.mini-batch.enabled": "true",
    "table.exec.mini-batch.allow-latency": "5 s",
    "table.exec.mini-batch.size": "5000",
    "table.optimizer.agg-phase-strategy": "TWO_PHASE",
}
ROWS = "1,red,1.5\n2,red,2.25\n-4,red,\n3,blue,-7\n,blue,3\n5,green,\n-5,green,\n"


def _final(tmp_path: Path, sql: str, options: dict[str, str]) -> tuple[list[tuple[object, ...]], str]:
    (tmp_path / "t.csv").write_text(ROWS)
    t = TableEnvironment.create()
    for k, v in options.items():
        t.get_config().set(k, v)
    t.get_config().set("table.exec.source.batch-rows", "2")  # several local batches per key
    t.execute_sql(
        "CREATE TABLE T (id INT, color STRING, x DOUBLE) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 't.csv'}', 'format' = 'csv', 'csv.null-literal' = '')"
    )
    table: Counter[tuple[object, ...]] = Counter()
    for row in t.execute_sql(sql).collect():
        table[tuple(row)] += 1 if row.get_row_kind().name in ("INSERT", "UPDATE_AFTER") else -1
    assert +table == table, "a retraction of a row never emitted"
    return sorted(table.elements(), key=repr), t.explain_sql(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT color, AVG(id), AVG(x), AVG(CAST(id AS TINYINT)), COUNT(*) FROM T GROUP BY color",
        # over an updating input: the local phase's partials are signed
        "SELECT c, AVG(s), AVG(CAST(s AS DOUBLE)) FROM (SELECT color, COUNT(*) c, SUM(id) s FROM T GROUP BY color) "
        "GROUP BY c",
    ],
)
def test_two_phase_avg_equals_one_phase(tmp_path: Path, sql: str) -> None:
    one, _ = _final(tmp_path, sql, {})
    two, plan = _final(tmp_path, sql, TWO_PHASE)
    assert two == one
    assert "LocalGroupAggregate(" in plan and "AVG(" in plan.split("LocalGroupAggregate(")[1]


def test_integer_avg_truncates_toward_zero(tmp_path: Path) -> None:
    rows, _ = _final(tmp_path, "SELECT color, AVG(id) FROM T GROUP BY color", TWO_PHASE)
    # red: (1 + 2 - 4) / 3 = -1 / 3 -> 0; green: (5 - 5) / 2 -> 0; blue: the NULL id is not counted
    assert rows == [("blue", 3), ("green", 0), ("red", 0)]
