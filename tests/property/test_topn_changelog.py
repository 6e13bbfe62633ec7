"""Property: Top-N over an updating input (a GROUP BY aggregate of random rows) and over
insert-only rows ends, once its streaming changelog is applied, at exactly the batch
result, and never retracts a row it did not emit (`fold_changelog` is strict).

The ORDER BY of ROW_NUMBER is a total order over the candidate rows (the aggregate's
value, then its unique key), since which of two tied rows wins is arrival-dependent in
Flink too; RANK / DENSE_RANK are deterministic with ties, so they order by the value only.
Streaming reads one or two rows per source batch so updates interleave."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROWS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", None]),
        st.sampled_from(["x", "y"]),
        st.one_of(st.none(), st.integers(-4, 4)),
    ),
    min_size=0,
    max_size=10,
)
SLOW = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
TABLES = "k STRING, g STRING, v INT"


@SLOW
@given(
    rows=ROWS,
    n=st.integers(1, 3),
    offset=st.integers(0, 1),
    show_rank=st.booleans(),
    desc=st.booleans(),
    batch_rows=st.integers(1, 2),
)
def test_row_number_topn_over_aggregate_equals_batch(
    run_both_modes,  # noqa: ANN001
    rows: list,
    n: int,
    offset: int,
    show_rank: bool,
    desc: bool,
    batch_rows: int,
) -> None:
    direction = "DESC" if desc else "ASC"
    cols = "g, k, s, rn" if show_rank else "g, k, s"
    sql = (
        f"SELECT {cols} FROM (SELECT g, k, s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s {direction}, k) AS rn "
        "FROM (SELECT g, k, SUM(v) AS s FROM t GROUP BY g, k)) "
        f"WHERE rn > {offset} AND rn <= {offset + n}"
    )
    r = run_both_modes(sql, {"t": (TABLES, rows)}, batch_rows)
    assert r.streaming == r.batch


@SLOW
@given(rows=ROWS, rank=st.sampled_from(["RANK", "DENSE_RANK"]), n=st.integers(1, 3))
def test_rank_and_dense_rank_over_aggregate_equal_batch(run_both_modes, rows: list, rank: str, n: int) -> None:  # noqa: ANN001
    sql = (
        f"SELECT k, c, r FROM (SELECT k, c, {rank}() OVER (ORDER BY c DESC) AS r "
        f"FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k)) WHERE r <= {n}"
    )
    r = run_both_modes(sql, {"t": (TABLES, rows)})
    assert r.streaming == r.batch


@SLOW
@given(rows=ROWS, n=st.integers(1, 4), batch_rows=st.integers(1, 3))
def test_order_by_limit_over_rows_equals_batch(run_both_modes, rows: list, n: int, batch_rows: int) -> None:  # noqa: ANN001
    # duplicates of a whole row are indistinguishable, so (v, k, g) is a total order here
    sql = f"SELECT k, g, v FROM t ORDER BY v DESC, k, g LIMIT {n}"
    r = run_both_modes(sql, {"t": (TABLES, rows)}, batch_rows)
    assert r.streaming == r.batch
