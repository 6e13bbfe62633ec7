"""Property: a GroupAggregate over a changelog (a debezium-json source with random
inserts / updates / deletes, or another aggregate's retract output) ends, once its
streaming changelog is applied, at exactly the batch result, and never retracts a row
it did not emit. Streaming runs with 1-3 rows per source batch so retractions interleave."""

from __future__ import annotations

from pathlib import Path

from harness import load_module_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

H = load_module_at(
    "streamsql_aggsql_helper", Path(__file__).resolve().parent.parent / "unit" / "runtime" / "operators" / "aggsql.py"
)

# An action: (kind, id, group, value, tag); kind 0 upsert (insert or update), 1 delete.
ACTION = st.tuples(
    st.integers(0, 4),  # 0..3 upsert, 4 delete (upserts more likely)
    st.integers(0, 5),
    st.sampled_from(["a", "b", "c"]),
    st.one_of(st.none(), st.integers(-5, 5)),
    st.sampled_from(["x", "y", "z"]),
)


def _events(actions: list[tuple[int, int, str, int | None, str]]) -> list[tuple[str, dict | None, dict | None]]:
    rows: dict[int, dict] = {}
    events: list[tuple[str, dict | None, dict | None]] = []
    for kind, i, g, v, s in actions:
        new = {"id": i, "g": g, "v": v, "s": s}
        if kind == 4:
            if i in rows:
                events.append(("d", rows.pop(i), None))
        elif i in rows:
            events.append(("u", rows[i], new))
            rows[i] = new
        else:
            events.append(("c", None, new))
            rows[i] = new
    return events


SLOW = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@SLOW
@given(actions=st.lists(ACTION, min_size=1, max_size=14), batch_rows=st.integers(1, 3))
def test_aggregate_over_debezium_changelog_equals_batch(tmp_path_factory, actions: list, batch_rows: int) -> None:  # noqa: ANN001
    events = _events(actions)
    if not events:
        return
    path = tmp_path_factory.mktemp("cdc") / "cdc.json"
    H.write_debezium(path, events)
    q = (
        f"CREATE TABLE c (id INT, g STRING, v INT, s STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'debezium-json');\n"
        "SELECT g, COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS sv, MIN(v) AS mn, MAX(v) AS mx, "
        "COUNT(DISTINCT v) AS dv, SUM(DISTINCT v) AS sdv, LISTAGG(s) AS ls, MAX(s) AS ms, "
        "COUNT(*) FILTER (WHERE v > 0) AS pos FROM c GROUP BY g;"
    )
    streaming = H.final_table(H.run_sql(q, "streaming", batch_rows))
    batch = H.final_table(H.run_sql(q, "batch"))
    assert streaming == batch
    # and batch is right: recompute from the surviving rows
    alive: dict[int, dict] = {}
    for op, before, after in events:
        if op == "d":
            assert before is not None
            alive.pop(before["id"])
        else:
            assert after is not None
            alive[after["id"]] = after
    groups = {r["g"] for r in alive.values()}
    assert {row[0] for row in batch} == groups
    for row in batch:
        members = [r for r in alive.values() if r["g"] == row[0]]
        vals = [r["v"] for r in members if r["v"] is not None]
        assert row[1] == str(len(members))
        assert row[3] == (str(sum(vals)) if vals else None)
        assert row[5] == (str(max(vals)) if vals else None)
        assert row[6] == str(len(set(vals)))
        assert sorted((row[8] or "").split(",")) == sorted(r["s"] for r in members)


@SLOW
@given(
    bids=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), st.integers(0, 30)), min_size=1, max_size=16),
    batch_rows=st.integers(1, 3),
)
def test_cascaded_aggregation_equals_batch(tmp_path_factory, bids: list, batch_rows: int) -> None:  # noqa: ANN001
    path = tmp_path_factory.mktemp("bids") / "bids.csv"
    path.write_text("".join(f"{i},{c},{p}\n" for i, c, p in bids))
    q = (
        f"CREATE TABLE bids (id INT, category INT, price INT) WITH ('connector' = 'filesystem', "
        f"'path' = '{path}', 'format' = 'csv');\n"
        "SELECT category, AVG(winning) AS a, MIN(winning) AS lo, MAX(winning) AS hi, COUNT(*) AS n, "
        "SUM(winning) AS s, COUNT(DISTINCT winning) AS d, MIN(first_p) AS mf "
        "FROM (SELECT id, category, MAX(price) AS winning, FIRST_VALUE(price) AS first_p "
        "FROM bids GROUP BY id, category) GROUP BY category;"
    )
    streaming = H.final_table(H.run_sql(q, "streaming", batch_rows))
    batch = H.final_table(H.run_sql(q, "batch"))
    assert streaming == batch
    winners: dict[tuple[int, int], int] = {}
    for i, c, p in bids:
        winners[(i, c)] = max(winners.get((i, c), p), p)
    for row in batch:
        ws = [w for (_, c), w in winners.items() if str(c) == row[0]]
        assert (row[2], row[3], row[4]) == (str(min(ws)), str(max(ws)), str(len(ws)))
