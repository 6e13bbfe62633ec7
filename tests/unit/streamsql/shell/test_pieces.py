"""The shell's pure parts: completion candidates, the lexer, shell commands, the
materialized result model and the watermark text."""

from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.types import INT, STRING, Field
from streamsql.environment import TableEnvironment
from streamsql.shell.completion import CatalogSource, candidates
from streamsql.shell.highlight import tokenize
from streamsql.shell.statements import ShellCommandError, is_submittable, parse_shell_command
from streamsql.shell.table_view import ResultModel, format_watermark


@pytest.fixture(scope="module")
def source() -> CatalogSource:
    import planner.api  # noqa: F401 - planner import order (a CREATE VIEW first hit a circular import)

    env = TableEnvironment.create({})
    env.execute_sql(
        "CREATE TABLE orders (order_id BIGINT, amount DOUBLE, buyer STRING) WITH ('connector' = 'datagen');"
        "CREATE TABLE users (user_id BIGINT, name STRING) WITH ('connector' = 'datagen');"
        "CREATE VIEW big AS SELECT order_id FROM orders WHERE amount > 10;"
    )
    return CatalogSource(env)


def texts(before: str, source: CatalogSource, after: str = "") -> list[str]:
    return [c.text for c in candidates(before, source, after)]


def test_keywords_functions_and_case(source: CatalogSource) -> None:
    assert texts("SEL", source) == ["SELECT"]
    assert texts("sel", source) == ["select"]
    got = texts("SELECT UPP", source)
    assert "UPPER" in got
    assert "WHERE" in texts("SELECT * FROM orders WHE", source)
    assert "TIMESTAMP_LTZ" in texts("CREATE TABLE x (a TIMESTAMP_", source)


def test_tables_after_from_and_describe(source: CatalogSource) -> None:
    assert texts("SELECT * FROM ", source) == ["big", "orders", "users"]
    cands = candidates("DESCRIBE u", source)
    assert [(c.text, c.meta) for c in cands] == [("users", "table")]
    assert [c.meta for c in candidates("SELECT * FROM b", source)] == ["view"]
    assert texts("SHOW J", source) == ["JOBS"]


def test_columns_qualified_alias_and_unqualified(source: CatalogSource) -> None:
    assert texts("SELECT orders.", source) == ["order_id", "amount", "buyer"]
    assert texts("SELECT o.am", source, " FROM orders o") == ["amount"]
    assert texts("SELECT * FROM orders AS o JOIN users u ON o.buyer = u.", source) == ["user_id", "name"]
    assert texts("SELECT * FROM nope n WHERE n.", source) == []
    # After a space: the statement's columns only.
    assert texts("SELECT * FROM users WHERE ", source) == ["user_id", "name"]
    assert texts("SELECT na", source, " FROM users") == ["name", "natural"]  # columns first
    assert texts("SELECT big.", source) == ["order_id"]


def test_set_keys_values_and_job_ids(source: CatalogSource) -> None:
    got = candidates("SET 'sql-client.execution.r", source)
    assert [c.text for c in got] == ["sql-client.execution.result-mode' = '"]
    assert got[0].start == -len("sql-client.execution.r")
    assert texts("SET 'execution.runtime-mode' = '", source) == ["streaming'", "batch'"]
    assert texts("SET 'sql-client.execution.result-mode' = 'ta", source) == ["tableau'", "table'"]
    assert texts("RESET 'parallelism.", source) == ["parallelism.default'"]
    assert texts("SET parallelism.d", source) == ["'parallelism.default'"]
    assert texts("SELECT 'abc", source) == []  # inside an ordinary string: nothing
    assert texts("STOP JOB '", source) == []  # no jobs yet


def test_statement_boundary(source: CatalogSource) -> None:
    # Only the current statement counts: `orders` of the previous one gives no columns.
    assert texts("SELECT * FROM orders; SELECT * FROM users WHERE ", source) == ["user_id", "name"]


def test_lexer_classes() -> None:
    toks = tokenize("SELECT upper(name), 'it''s' -- note\nFROM t /* multi\nline */ WHERE x > 1.5")
    styles = {text: style for style, text in toks}
    assert styles["SELECT"] == styles["FROM"] == styles["WHERE"] == "class:sql.keyword"
    assert styles["upper"] == "class:sql.function"
    assert styles["name"] == "class:sql.identifier"
    assert styles["'it''s'"] == "class:sql.string"
    assert styles["-- note"] == "class:sql.comment"
    assert styles["/* multi\nline */"] == "class:sql.comment"
    assert styles["1.5"] == "class:sql.number"
    assert "".join(t for _, t in toks).startswith("SELECT upper(name)")
    assert tokenize("'open")[0] == ("class:sql.string", "'open")


def test_lexer_document_lines() -> None:
    from prompt_toolkit.document import Document

    from streamsql.shell.highlight import SqlLexer

    get = SqlLexer().lex_document(Document("SELECT '\nstill string'"))
    assert get(1) == [("class:sql.string", "still string'")]
    assert get(5) == []


def test_shell_commands_and_submit() -> None:
    assert parse_shell_command("quit") == parse_shell_command(" EXIT ;") != None  # noqa: E711
    assert parse_shell_command("HELP").kind == "help"  # type: ignore[union-attr]
    cmd = parse_shell_command("stop job 'ab''c' with savepoint")
    assert cmd is not None and cmd.job_id == "ab'c" and cmd.with_savepoint and not cmd.with_drain
    assert parse_shell_command("SELECT 1") is None
    with pytest.raises(ShellCommandError):
        parse_shell_command("STOP JOB abc")
    assert is_submittable("quit") and is_submittable("SELECT 1;") and not is_submittable("SELECT 1")
    assert not is_submittable("SELECT ';'")
    block = "EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1;\n"
    assert not is_submittable(block) and is_submittable(block + "END;")


def _batch(rows: list[tuple[str, int]], ops: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([r[0] for r in rows]), pa.array([r[1] for r in rows], pa.int32()), pa.array(ops, pa.int8())],
        names=["k", "v", "__op"],
    )


FIELDS = (Field("k", STRING()), Field("v", INT()))


def test_materialized_model_folds_the_changelog() -> None:
    m = ResultModel(FIELDS, "UTC", changelog=False)
    m.apply(_batch([("a", 1), ("b", 2)], [0, 0]))
    m.apply(_batch([("a", 1), ("a", 11), ("c", 3)], [1, 2, 0]))
    assert m.rows() == [("a", "11"), ("b", "2"), ("c", "3")]  # the update stays in place
    m.apply(_batch([("b", 2)], [3]))
    m.apply(_batch([("a", 11)], [1]))  # a -U with no +U after it: the row goes
    assert m.rows() == [("c", "3")] and len(m) == 1 and m.changes == 7
    m.apply(_batch([("zzzzzzzzzzzz", 5)], [0]))
    assert m.widths == [12, 2]  # widths only grow (11 was there)
    assert m.format_line(("c", "3")) == " c            |  3"


def test_changelog_model_keeps_every_change() -> None:
    m = ResultModel(FIELDS, "UTC", changelog=True)
    m.apply(_batch([("a", 1), ("a", 1), ("a", 2)], [0, 1, 2]))
    assert m.rows() == [("+I", "a", "1"), ("-U", "a", "1"), ("+U", "a", "2")]


def test_format_watermark() -> None:
    assert format_watermark(None, "UTC") == "none"
    assert format_watermark(2**63 - 1, "UTC") == "end of input"
    assert format_watermark(1_704_067_200_123, "UTC") == "2024-01-01 00:00:00.123"
    assert format_watermark(1_704_067_200_123, "Asia/Shanghai") == "2024-01-01 08:00:00.123"
