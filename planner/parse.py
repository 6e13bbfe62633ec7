"""Flink SQL script → `planner.statements` dataclasses.

`parse_script(text)` splits the script (`parse_split`), then parses each statement on its
own tokens: statement-level grammar by hand (`parse_cursor.Cursor`, `ddl`), queries and
expressions by the sqlglot flink dialect. Every failure is a `SqlParseError` whose
line/column are relative to the failing statement (line 1 = the line of its first
keyword, as Flink reports) and whose `statement_line` is where it starts in the script.
"""

from __future__ import annotations

import difflib
from typing import NoReturn

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

import planner.dialect  # noqa: F401 - registers the "flink" dialect
from planner.binder.hints import parse_options_comments
from planner.ddl import parse_create_table, parse_create_view, parse_drop
from planner.errors import SqlParseError, UnsupportedSqlError
from planner.parse_cursor import Cursor
from planner.parse_split import is_complete, split_script
from planner.statements import (
    Describe,
    Explain,
    InsertInto,
    Query,
    ResetOption,
    SetOption,
    Show,
    Statement,
    StatementSet,
)

__all__ = ["parse_script", "parse_statement", "split_script", "is_complete"]

_EXPLAIN_DETAILS = ("ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")
_STATEMENT_KEYWORDS = (
    "SELECT",
    "WITH",
    "VALUES",
    "INSERT",
    "CREATE",
    "DROP",
    "SET",
    "RESET",
    "SHOW",
    "DESCRIBE",
    "DESC",
    "EXPLAIN",
    "EXECUTE",
    "BEGIN",
    "USE",
    "ALTER",
    "LOAD",
    "UNLOAD",
    "ADD",
    "REMOVE",
    "TRUNCATE",
    "ANALYZE",
    "CALL",
    "DELETE",
    "UPDATE",
    "STOP",
    "REPLACE",
    "COMPILE",
)
# SHOW <what> forms (the listing kinds; SHOW CREATE and SHOW CURRENT are parsed apart).
_SHOW_KINDS = (
    "CATALOGS",
    "DATABASES",
    "TABLES",
    "VIEWS",
    "FUNCTIONS",
    "USER FUNCTIONS",
    "COLUMNS",
    "JOBS",
    "MODULES",
    "FULL MODULES",
    "JARS",
    "PROCEDURES",
    "MATERIALIZED TABLES",
    "PARTITIONS",
    "MODELS",
)


def parse_script(text: str) -> list[Statement]:
    """Parse every statement of a script, in order."""
    out: list[Statement] = []
    for sql, line, column in split_script(text):
        try:
            out.append(parse_statement(sql, line=line, column=column))
        except SqlParseError as e:
            e.statement_line = line
            raise
    return out


def parse_statement(sql: str, line: int = 1, column: int = 1) -> Statement:
    """Parse one statement's text (no trailing ';'); `line`/`column` say where it starts in
    its script (recorded on the Statement)."""
    try:
        cur = Cursor(sql)
        return _statement(cur, {"sql": sql, "line": line, "column": column})
    except SqlParseError as e:
        if e.sql is None:
            e.sql = sql
        e.statement_line = line
        raise
    except UnsupportedSqlError as e:  # valid Flink SQL refused while parsing (ML_PREDICT)
        e.statement_line = line
        raise
    except Exception as e:  # noqa: BLE001 - never let a sqlglot/internal error escape
        raise SqlParseError(f"SQL parse failed: {e}", sql=sql, line=1, column=1, statement_line=line) from None


def _statement(cur: Cursor, pos: dict) -> Statement:  # noqa: C901 - a dispatch table
    word = cur.peek_word()
    if not cur.tokens:
        cur.error("Empty statement")
    if word in ("SELECT", "WITH", "VALUES") or cur.curr.token_type == TokenType.L_PAREN:
        return Query(query=cur.query(), **pos)
    if word == "INSERT":
        return _insert(cur, pos)
    if word == "SET":
        return _set(cur, pos)
    if word == "RESET":
        cur.match("RESET")
        key = None if cur.at_end else cur.string("a quoted option key")
        _end(cur)
        return ResetOption(key=key, **pos)
    # The grammars of the other statements (and their ~30 statement classes) load with the
    # first statement of their kind (start-up: a query, INSERT, SET, RESET, CREATE TABLE and
    # CREATE VIEW need none of them).
    if word == "REPLACE" and cur.peek_word(1) == "TABLE":  # RTAS: the table must exist
        cur.expect("REPLACE", "TABLE")
        return parse_create_table(cur, False, pos, or_replace=True, replace_only=True)
    if word == "CREATE":
        cur.match("CREATE")
        if cur.match("OR", "ALTER"):
            cur.expect("MATERIALIZED", "TABLE")
            from planner import statements_materialized as sm

            return sm.parse_create_materialized_table(cur, True, pos)
        if cur.match("MATERIALIZED", "TABLE"):
            from planner import statements_materialized as sm

            return sm.parse_create_materialized_table(cur, False, pos)
        if cur.match("OR", "REPLACE"):
            if cur.match("TEMPORARY"):
                cur.error("CREATE OR REPLACE TEMPORARY TABLE is not supported", cur.parser._prev)
            cur.expect("TABLE")
            return parse_create_table(cur, False, pos, or_replace=True)
        temporary = cur.match("TEMPORARY")
        if cur.match("MODEL"):
            from planner import statements_models as smod

            return smod.parse_create_model(cur, temporary, pos)
        if cur.peek_word() in ("SYSTEM", "FUNCTION"):
            from planner.statements_functions import parse_create_function

            return parse_create_function(cur, temporary, pos)
        if not temporary and cur.match("CATALOG"):
            from planner import statements_catalog as sc

            return sc.parse_create_catalog(cur, pos)
        if not temporary and cur.match("DATABASE"):
            from planner import statements_catalog as sc

            return sc.parse_create_database(cur, pos)
        if cur.match("TABLE"):
            return parse_create_table(cur, temporary, pos)
        if cur.match("VIEW"):
            return parse_create_view(cur, temporary, pos)
        what = cur.peek_word() or cur.curr.text
        cur.error(f"Unsupported statement: CREATE {what}", cur.curr)
    from planner import statements_catalog as sc
    from planner import statements_dml as dml
    from planner import statements_materialized as sm
    from planner import statements_models as smod
    from planner.statements_functions import is_function_statement, parse_describe_function, parse_drop_function

    if word == "DROP":
        cur.match("DROP")

        if is_function_statement(cur):
            return parse_drop_function(cur, pos)
        if cur.match("MATERIALIZED", "TABLE"):
            return sm.parse_drop_materialized_table(cur, pos)
        if cur.match("MODEL"):
            return smod.parse_drop_model(cur, False, pos)
        if cur.match("TEMPORARY", "MODEL"):
            return smod.parse_drop_model(cur, True, pos)
        if cur.match("CATALOG"):
            return sc.parse_drop_catalog(cur, pos)
        if cur.match("DATABASE"):
            return sc.parse_drop_database(cur, pos)
        return parse_drop(cur, pos)
    if word == "USE":
        cur.match("USE")
        return sc.parse_use(cur, pos)
    if word == "ALTER":
        cur.match("ALTER")
        if cur.match("CATALOG"):
            return sc.parse_alter_catalog(cur, pos)
        if cur.match("DATABASE"):
            return sc.parse_alter_database(cur, pos)
        if cur.match("TABLE"):
            return sc.parse_alter_table(cur, pos)
        if cur.match("VIEW"):
            return sc.parse_alter_view(cur, pos)
        if cur.match("MATERIALIZED", "TABLE"):
            return sm.parse_alter_materialized_table(cur, pos)
        if cur.match("MODEL"):
            return smod.parse_alter_model(cur, pos)
        if "FUNCTION" in (cur.peek_word(0), cur.peek_word(1), cur.peek_word(2)):
            return dml.parse_alter_function(cur, pos)
        cur.unexpected('"CATALOG", "DATABASE", "TABLE", "VIEW", "MATERIALIZED TABLE" or "FUNCTION"')
    if word in ("LOAD", "UNLOAD"):
        cur.parser._advance()
        cur.expect("MODULE")
        return sc.parse_module(cur, word, pos)
    if word in ("ADD", "REMOVE") or (word == "CREATE" and cur.peek_word(1) == "JAR"):
        return sc.parse_jvm(cur, pos)
    if word == "DELETE":
        cur.match("DELETE")
        return dml.parse_delete(cur, pos)
    if word == "UPDATE":
        cur.match("UPDATE")
        return dml.parse_update(cur, pos)
    if word == "STOP":
        cur.match("STOP")
        return dml.parse_stop_job(cur, pos)
    if word == "CALL":
        cur.match("CALL")
        return dml.parse_call(cur, pos)
    if word == "TRUNCATE":
        cur.match("TRUNCATE")
        cur.expect("TABLE")
        name = cur.path()
        _end(cur)
        return sc.TruncateTable(name=name, **pos)
    if word == "ANALYZE":
        cur.match("ANALYZE")
        cur.expect("TABLE")
        return sc.parse_analyze_table(cur, pos)
    if word == "SHOW":
        cur.match("SHOW")
        return _show(cur, pos)
    if word in ("DESCRIBE", "DESC"):
        cur.parser._advance()
        if cur.match("CATALOG"):
            return sc.parse_describe_catalog(cur, pos)
        if cur.match("MODEL"):
            return smod.parse_describe_model(cur, pos)
        if cur.peek_word() == "JOB":
            cur.match("JOB")
            return dml.parse_describe_job(cur, pos)
        if cur.peek_word() == "FUNCTION":
            cur.match("FUNCTION")
            return parse_describe_function(cur, pos)
        extended = cur.match("EXTENDED")
        name = cur.path()
        _end(cur)
        return Describe(name=name, extended=extended, **pos)
    if word == "EXPLAIN":
        return _explain(cur, pos)
    if word == "COMPILE":
        return _compile_plan(cur, pos, dml.CompilePlan)
    if word == "EXECUTE" and cur.peek_word(1) == "PLAN":
        cur.expect("EXECUTE", "PLAN")
        path = cur.string("a quoted plan file path")
        _end(cur)
        return dml.ExecutePlan(path=path, **pos)
    if word == "EXECUTE" or word == "BEGIN":
        if cur.match("EXECUTE"):
            if cur.peek_word() == "INSERT":
                return _insert(cur, pos)
            if cur.peek_word() in ("SELECT", "WITH", "VALUES"):
                return Query(query=cur.query(), **pos)
        return _statement_set(cur, pos)
    _unknown(cur)


def _show(cur: Cursor, pos: dict) -> Statement:
    """After `SHOW`."""
    if cur.match("CREATE"):
        from planner import statements_catalog as sc  # start-up
        from planner import statements_models as smod  # start-up

        if cur.match("MODEL"):
            return smod.parse_show_create_model(cur, pos)
        return sc.parse_show_create(cur, pos)
    if cur.match("CURRENT"):
        what = cur.peek_word()
        if what not in ("CATALOG", "DATABASE"):
            cur.unexpected('"CATALOG" or "DATABASE"')
        cur.parser._advance()
        _end(cur)
        return Show(what=f"CURRENT {what}", **pos)
    what = ""
    for kind in sorted(_SHOW_KINDS, key=lambda k: -len(k.split())):
        if cur.match(kind):
            what = kind
            break
    if not what:
        cur.unexpected('"TABLES", "VIEWS", "FUNCTIONS", "CATALOGS", "DATABASES", "COLUMNS", "CREATE", ...')
    scope: tuple[str, ...] | None = None
    if what in (
        "DATABASES",
        "TABLES",
        "VIEWS",
        "MATERIALIZED TABLES",
        "FUNCTIONS",
        "USER FUNCTIONS",
        "COLUMNS",
        "PROCEDURES",
        "PARTITIONS",
        "MODELS",
    ):
        if cur.match("FROM") or cur.match("IN"):
            start = cur.curr
            scope = cur.path()
            if what == "DATABASES" and len(scope) != 1:
                cur.error(
                    f"Show databases from/in identifier [ {'.'.join(scope)} ] format error, catalog must be "
                    "a single part identifier.",
                    start,
                )
            if (
                what in ("TABLES", "VIEWS", "MATERIALIZED TABLES", "FUNCTIONS", "USER FUNCTIONS", "PROCEDURES")
                and len(scope) > 2
            ):
                cur.error(
                    f"Show {what.lower()} from/in identifier [ {'.'.join(scope)} ] format error, it should be "
                    "[catalog_name.]database_name.",
                    start,
                )
        elif what in ("COLUMNS", "PARTITIONS"):
            scope = cur.path()
    partition: list[tuple[str, str]] = []
    if what == "PARTITIONS" and cur.match("PARTITION"):
        cur.expect_type(TokenType.L_PAREN, '"("')
        while True:
            key = cur.name("a partition column")
            cur.expect_type(TokenType.EQ, '"="')
            partition.append((key, cur.string("a partition value string")))
            if cur.match_type(TokenType.COMMA):
                continue
            cur.expect_type(TokenType.R_PAREN, '")" or ","')
            break
    if what in ("MODULES", "FULL MODULES", "JOBS", "JARS", "PARTITIONS") and not cur.at_end:
        cur.unexpected("<EOF>")  # Flink's grammar has no LIKE for these listings
    not_like = cur.match("NOT")
    like = None
    ilike = False
    if cur.match("LIKE") or (ilike := cur.match("ILIKE")):
        like = cur.string("a LIKE pattern string")
    elif not_like:
        cur.unexpected('"LIKE" or "ILIKE"')
    _end(cur)
    return Show(what=what, scope=scope, like=like, not_like=not_like, ilike=ilike, partition=tuple(partition), **pos)


def _unknown(cur: Cursor) -> NoReturn:
    first = cur.tokens[0]
    guess = difflib.get_close_matches(first.text.upper(), _STATEMENT_KEYWORDS, n=1, cutoff=0.6)
    hint = f"Unknown statement starting with '{first.text}'."
    if guess:
        hint += f" Did you mean '{guess[0]}'?"
    # Calcite parses an unknown leading word as an expression, then rejects it as a query.
    cur.error("Non-query expression encountered in illegal context", first, hint=hint)


def _end(cur: Cursor) -> None:
    if not cur.at_end:
        cur.unexpected("<EOF>")


def _set(cur: Cursor, pos: dict) -> SetOption:
    cur.match("SET")
    if cur.at_end:
        return SetOption(**pos)
    tok = cur.curr
    if tok.token_type == TokenType.STRING:
        key = cur.string()
    else:  # SET a.b.c = 'v' (unquoted key, as the SQL client accepts)
        parts = [cur.name("a quoted option key")]
        while cur.match_type(TokenType.DOT) or cur.match_type(TokenType.DASH):
            parts.append(cur.name())
        key = ".".join(parts)
    cur.expect_type(TokenType.EQ, '"="')
    vtok = cur.curr
    if vtok and vtok.token_type == TokenType.STRING:
        value = cur.string()
    elif vtok:
        value = vtok.text
        cur.parser._advance()
    else:
        cur.unexpected("a quoted option value")
    _end(cur)
    return SetOption(key=key, value=value, **pos)


def _insert(cur: Cursor, pos: dict, tokens: list[Token] | None = None) -> InsertInto:
    """`INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...)] [(cols)] query`."""
    cur.expect("INSERT")
    if cur.match("OVERWRITE"):
        overwrite = True
    else:
        cur.expect("INTO")
        overwrite = False
    cur.match("TABLE")
    table = cur.path()
    sink_options = _options_hint(cur)
    partition: list[tuple[str, exp.Expression]] = []
    if cur.match("PARTITION"):
        cur.expect_type(TokenType.L_PAREN, '"("')
        while True:
            key = cur.name("a partition column")
            cur.expect_type(TokenType.EQ, '"="')
            partition.append((key, cur.run(cur.parser._parse_primary)))
            if cur.match_type(TokenType.COMMA):
                continue
            cur.expect_type(TokenType.R_PAREN, '")" or ","')
            break
    columns = None
    if cur.curr and cur.curr.token_type == TokenType.L_PAREN and cur.peek_word(1) not in ("SELECT", "WITH", "VALUES"):
        columns = cur.name_list()
    query = cur.query()
    return InsertInto(
        table=table,
        query=query,
        columns=columns,
        overwrite=overwrite,
        partition=tuple(partition),
        sink_options=sink_options,
        **pos,  # type: ignore[arg-type]
    )


def _options_hint(cur: Cursor) -> dict[str, str]:
    """`INSERT INTO t /*+ OPTIONS('k'='v') */ ...`: the sink table's dynamic options for this
    INSERT (Flink's dynamic table options; the tokenizer keeps the hint as a comment of the
    table name's last token)."""
    prev = cur.parser._prev
    try:
        return parse_options_comments(prev.comments if prev is not None else []) or {}
    except ValueError as e:
        raise SqlParseError(str(e), sql=cur.sql, line=prev.line if prev else None, column=None) from None


def _sub_pos(cur: Cursor, tokens: list[Token], pos: dict) -> dict:
    """Position dict for a sub-statement of a statement set (its own text)."""
    start, end = tokens[0].start, tokens[-1].end + 1
    line, col = cur.line_col(start)
    script_line = pos["line"] + line - 1
    script_col = (pos["column"] + col - 1) if line == 1 else col
    return {"sql": cur.sql[start:end], "line": script_line, "column": script_col}


def _statement_set(cur: Cursor, pos: dict) -> StatementSet:
    """`[EXECUTE] STATEMENT SET BEGIN ins; ...; END` or `BEGIN STATEMENT SET; ins; ...; END`."""
    if cur.match("BEGIN"):
        cur.expect("STATEMENT", "SET")
        cur.match_type(TokenType.SEMICOLON)
    else:
        cur.expect("STATEMENT", "SET", "BEGIN")
    # Split the remaining tokens at top-level ';' and parse each INSERT on its own.
    rest = cur.parser._tokens[cur.parser._index :]
    groups: list[list[Token]] = [[]]
    for tok in rest:
        if tok.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(tok)
    groups = [g for g in groups if g]
    if not groups or groups[-1][0].text.upper() != "END" or len(groups[-1]) != 1:
        last = groups[-1][-1] if groups and groups[-1] else None
        cur.error('Encountered "<EOF>": a statement set must end with END', last)
    inserts: list[InsertInto] = []
    for group in groups[:-1]:
        cur.start(group)
        if cur.peek_word() != "INSERT":
            cur.error(
                f"Only INSERT statements are allowed in a statement set, got '{group[0].text}'",
                group[0],
            )
        inserts.append(_insert(cur, _sub_pos(cur, group, pos)))
    return StatementSet(inserts=tuple(inserts), **pos)


def _compile_plan(cur: Cursor, pos: dict, compile_plan: type) -> Statement:
    """`COMPILE PLAN 'file' [IF NOT EXISTS] FOR <INSERT | STATEMENT SET>` and
    `COMPILE AND EXECUTE PLAN 'file' FOR ...` (`compile_plan`: the statement class, from the
    statement module `_statement` loaded)."""
    cur.expect("COMPILE")
    execute = cur.match("AND", "EXECUTE")
    cur.expect("PLAN")
    path = cur.string("a quoted plan file path")
    if_not_exists = not execute and cur.match("IF", "NOT", "EXISTS")
    cur.expect("FOR")
    inner: InsertInto | StatementSet
    if cur.peek_word() == "INSERT":
        inner = _insert(cur, pos)
    elif cur.peek_word() == "STATEMENT":
        inner = _statement_set(cur, pos)
    else:
        cur.unexpected('"INSERT" or "STATEMENT SET"')
    return compile_plan(path=path, statement=inner, if_not_exists=if_not_exists, execute=execute, **pos)  # type: ignore[no-any-return]


def _explain(cur: Cursor, pos: dict) -> Explain:
    cur.expect("EXPLAIN")
    details: list[str] = []
    if cur.match("PLAN", "FOR"):
        pass
    else:
        while cur.peek_word() in _EXPLAIN_DETAILS:
            details.append(cur.peek_word())
            cur.parser._advance()
            if not cur.match_type(TokenType.COMMA):
                break
    word = cur.peek_word()
    inner: Query | InsertInto | StatementSet
    if word in ("SELECT", "WITH", "VALUES") or (cur.curr and cur.curr.token_type == TokenType.L_PAREN):
        inner = Query(query=cur.query(), **pos)
    elif word == "INSERT":
        inner = _insert(cur, pos)
    elif word in ("EXECUTE", "STATEMENT", "BEGIN"):
        cur.match("EXECUTE")
        if cur.peek_word() == "INSERT":
            inner = _insert(cur, pos)
        else:
            inner = _statement_set(cur, pos)
    else:
        cur.unexpected("a query, INSERT or STATEMENT SET")
    return Explain(statement=inner, details=tuple(details), **pos)
