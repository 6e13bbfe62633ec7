"""Interval and window joins whose equality has an expression on one side
(`CAST(x.id AS BIGINT) = y.id`): the planner computes the expression in a Calc below that
side and keys the join on it (hash exchanges, as Flink's JoinPushExpressionsRule does for
every join), instead of a residual predicate over every pair on one subtask. The results
must not change: each query runs at parallelism 2 in STREAMING and is compared with the
same join on a pre-computed key column and with BATCH mode. Sources are in event-time
order (no late rows), so STREAMING's final table equals BATCH's."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamsql import EnvironmentSettings, TableEnvironment

# (id, second, value); x.id is INT, y.id BIGINT; x.k is x.id as BIGINT, the reference's key column
X = [(1, 1, 10), (2, 2, 20), (None, 3, 30), (3, 5, 40), (1, 14, 50), (4, 21, 60), (2, 33, 70), (5, 41, 80)]
Y = [(1, 2, 100), (3, 3, 200), (2, 4, 300), (1, 15, 400), (6, 16, 500), (None, 22, 600), (2, 34, 700), (4, 59, 800)]


def _t(s: int) -> str:
    return f"2024-01-01 00:00:{s:02d}"


def _n(i: int | None) -> str:
    return "N" if i is None else str(i)


def _env(mode: str, tmp_path: Path, parallelism: int = 2) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(f"SET 'parallelism.default' = '{parallelism}'")
    xs = tmp_path / "x.csv"
    xs.write_text("".join(f"{_n(i)},{_n(i)},{_t(s)},{v}\n" for i, s, v in X))
    ys = tmp_path / "y.csv"
    ys.write_text("".join(f"{_n(i)},{_t(s)},{v}\n" for i, s, v in Y))
    wm = "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
    env.execute_sql(
        f"CREATE TABLE x (id INT, k BIGINT, ts TIMESTAMP(3), v INT, {wm}) "
        f"WITH ('connector'='filesystem', 'path'='{xs}', 'format'='csv', 'csv.null-literal'='N')"
    )
    env.execute_sql(
        f"CREATE TABLE y (id BIGINT, ts TIMESTAMP(3), w INT, {wm}) "
        f"WITH ('connector'='filesystem', 'path'='{ys}', 'format'='csv', 'csv.null-literal'='N')"
    )
    return env


def _rows(env: TableEnvironment, sql: str) -> list[tuple[str, ...]]:
    with env.execute_sql(sql).collect() as it:
        return sorted(tuple(str(v) for v in r) for r in it)


INTERVAL = "x.ts BETWEEN y.ts - INTERVAL '2' SECOND AND y.ts + INTERVAL '1' SECOND"


def _interval(kind: str, key: str) -> str:
    return f"SELECT x.id, x.v, y.id, y.w FROM x {kind} JOIN y ON {key} = y.id AND {INTERVAL}"


def _window(key: str) -> str:
    tvf = "TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
    return (
        f"SELECT L.id, L.v, R.w, L.window_start FROM (SELECT * FROM {tvf.format(t='x')}) L "
        f"JOIN (SELECT * FROM {tvf.format(t='y')}) R ON {key} = R.id "
        "AND L.window_start = R.window_start AND L.window_end = R.window_end"
    )


@pytest.mark.parametrize("kind", ["INNER", "LEFT", "RIGHT", "FULL"])
def test_interval_join_on_an_expression_key_is_keyed_and_unchanged(kind: str, tmp_path: Path) -> None:
    env = _env("streaming", tmp_path)
    sql = _interval(kind, "CAST(x.id AS BIGINT)")
    plan = env.explain_sql(sql)
    assert "Exchange(distribution=[hash[$f" in plan and "distribution=[single]" not in plan
    got = _rows(env, sql)
    assert got == _rows(env, _interval(kind, "x.k"))
    assert got == _rows(_env("batch", tmp_path), sql)
    assert any(r[0] != "None" and r[2] != "None" for r in got)  # the data joins something
    if kind != "INNER":
        assert any("None" in r for r in got)


def test_interval_join_key_expression_on_the_right_side(tmp_path: Path) -> None:
    env = _env("streaming", tmp_path)
    sql = f"SELECT x.id, x.v, y.w FROM x JOIN y ON x.k = y.id + 0 AND {INTERVAL}"
    assert "hash[$f" in env.explain_sql(sql)
    assert _rows(env, sql) == _rows(env, f"SELECT x.id, x.v, y.w FROM x JOIN y ON x.k = y.id AND {INTERVAL}")


def test_window_join_on_an_expression_key_is_keyed_and_unchanged(tmp_path: Path) -> None:
    env = _env("streaming", tmp_path)
    sql = _window("CAST(L.id AS BIGINT)")
    plan = env.explain_sql(sql)
    assert "Exchange(distribution=[hash[$f" in plan and "distribution=[single]" not in plan
    got = _rows(env, sql)
    assert got and got == _rows(env, _window("L.k"))
    assert got == _rows(_env("batch", tmp_path), sql)


# versioned table: (id BIGINT primary key, second, rate); x.id joins it through CAST
R = [(1, 0, 1), (2, 0, 2), (3, 0, 3), (1, 10, 11), (2, 20, 12), (4, 30, 14), (1, 40, 21)]


def _temporal(env: TableEnvironment, tmp_path: Path) -> None:
    rs = tmp_path / "r.csv"
    rs.write_text("".join(f"{i},{_t(s)},{v}\n" for i, s, v in R))
    env.execute_sql(
        "CREATE TABLE r (id BIGINT, ts TIMESTAMP(3), rate INT, PRIMARY KEY (id) NOT ENFORCED, "
        f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='filesystem', 'path'='{rs}', 'format'='csv')"
    )


@pytest.mark.parametrize("kind", ["INNER", "LEFT"])
def test_event_time_temporal_join_on_an_expression_key(kind: str, tmp_path: Path) -> None:
    env = _env("streaming", tmp_path)
    _temporal(env, tmp_path)

    def sql(key: str) -> str:
        return f"SELECT x.id, x.v, r.rate FROM x {kind} JOIN r FOR SYSTEM_TIME AS OF x.ts ON {key} = r.id"

    plan = env.explain_sql(sql("CAST(x.id AS BIGINT)"))
    assert "Exchange(distribution=[hash[$f" in plan and "__TEMPORAL_JOIN_LEFT_KEY($f" in plan
    got = _rows(env, sql("CAST(x.id AS BIGINT)"))
    assert got == _rows(env, sql("x.k"))
    assert ("1", "50", "11") in got and ("2", "70", "12") in got


@pytest.mark.parametrize("negate", ["", "NOT"])
def test_window_semi_and_anti_join_on_an_expression_key(negate: str, tmp_path: Path) -> None:
    tvf = "TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' SECOND))"

    def sql(key: str) -> str:
        return (
            f"SELECT L.id, L.v FROM (SELECT * FROM {tvf.format(t='x')}) L WHERE {negate} EXISTS (SELECT * FROM "
            f"(SELECT * FROM {tvf.format(t='y')}) R WHERE {key} = R.id AND L.window_start = R.window_start "
            "AND L.window_end = R.window_end)"
        )

    env = _env("streaming", tmp_path)
    assert "Exchange(distribution=[hash[$f" in env.explain_sql(sql("CAST(L.id AS BIGINT)"))
    got = _rows(env, sql("CAST(L.id AS BIGINT)"))
    assert got and got == _rows(env, sql("L.k"))
    assert got == _rows(_env("batch", tmp_path), sql("CAST(L.id AS BIGINT)"))
