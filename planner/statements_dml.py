"""Row-level DML, procedures, ALTER FUNCTION and job statements, and their grammar.

DELETE FROM [c.][db.]t [WHERE condition]
UPDATE [c.][db.]t SET col = expr [, ...] [WHERE condition]
CALL [c.][db.]procedure(arg, ...)
ALTER [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] [c.][db.]f AS 'identifier' [LANGUAGE ...]
DESCRIBE JOB '<job id>'
STOP JOB '<job id>' [WITH SAVEPOINT] [WITH DRAIN]
COMPILE PLAN 'file' [IF NOT EXISTS] FOR <INSERT | STATEMENT SET>, EXECUTE PLAN 'file',
COMPILE AND EXECUTE PLAN 'file' FOR <INSERT | STATEMENT SET>
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from planner.parse_cursor import Cursor
from planner.statements import InsertInto, Statement, StatementSet
from runtime.frozen import frozen_dataclass


@frozen_dataclass
class CompilePlan(Statement):
    """COMPILE [AND EXECUTE] PLAN 'file' [IF NOT EXISTS] FOR an INSERT or a STATEMENT SET:
    its plan (streamsql's JobGraph JSON, see streamsql/pipeline.py) written to the file."""

    path: str
    statement: InsertInto | StatementSet
    if_not_exists: bool = False
    execute: bool = False  # COMPILE AND EXECUTE PLAN

    @property
    def inserts(self) -> tuple[InsertInto, ...]:
        s = self.statement
        return s.inserts if isinstance(s, StatementSet) else (s,)


@frozen_dataclass
class ExecutePlan(Statement):
    """EXECUTE PLAN 'file': run a plan COMPILE PLAN wrote."""

    path: str


@frozen_dataclass
class Delete(Statement):
    table: tuple[str, ...]
    where: exp.Expression | None = None


@frozen_dataclass
class Update(Statement):
    table: tuple[str, ...]
    assignments: tuple[tuple[str, exp.Expression], ...]
    where: exp.Expression | None = None


@frozen_dataclass
class Call(Statement):
    procedure: tuple[str, ...]
    arguments: tuple[exp.Expression, ...] = ()
    # (line, column) of the procedure's name, where an unknown procedure is reported
    name_position: tuple[int, int] = (1, 1)


@frozen_dataclass
class AlterFunction(Statement):
    name: tuple[str, ...]
    identifier: str
    language: str = "JAVA"
    temporary: bool = False
    system: bool = False
    if_exists: bool = False


@frozen_dataclass
class DescribeJob(Statement):
    job_id: str


@frozen_dataclass
class StopJob(Statement):
    job_id: str
    with_savepoint: bool = False
    with_drain: bool = False


def _end(cur: Cursor) -> None:
    if not cur.at_end:
        cur.unexpected("<EOF>")


def _where(cur: Cursor) -> exp.Expression | None:
    if cur.at_end:
        return None
    cur.expect("WHERE")
    return cur.expression()


def parse_delete(cur: Cursor, pos: dict) -> Delete:
    """After `DELETE`."""
    cur.expect("FROM")
    table = cur.path()
    where = _where(cur)
    _end(cur)
    return Delete(table=table, where=where, **pos)


def parse_update(cur: Cursor, pos: dict) -> Update:
    """After `UPDATE`."""
    table = cur.path()
    cur.expect("SET")
    assignments: list[tuple[str, exp.Expression]] = []
    while True:
        column = cur.name("a column name")
        cur.expect_type(TokenType.EQ, '"="')
        assignments.append((column, cur.expression()))
        if not cur.match_type(TokenType.COMMA):
            break
    where = _where(cur)
    _end(cur)
    return Update(table=table, assignments=tuple(assignments), where=where, **pos)


def parse_call(cur: Cursor, pos: dict) -> Call:
    """After `CALL`."""
    name_position = cur.line_col(cur.curr.start) if cur.curr else (1, 1)
    procedure = cur.path()
    cur.expect_type(TokenType.L_PAREN, '"("')
    arguments: list[exp.Expression] = []
    if not cur.match_type(TokenType.R_PAREN):
        while True:
            arguments.append(cur.expression())
            if cur.match_type(TokenType.COMMA):
                continue
            cur.expect_type(TokenType.R_PAREN, '")" or ","')
            break
    _end(cur)
    return Call(procedure=procedure, arguments=tuple(arguments), name_position=name_position, **pos)


def parse_alter_function(cur: Cursor, pos: dict) -> AlterFunction:
    """After `ALTER`: `[TEMPORARY [SYSTEM]] FUNCTION ...`."""
    temporary = cur.match("TEMPORARY")
    system = cur.match("SYSTEM")
    cur.expect("FUNCTION")
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    cur.expect("AS")
    identifier = cur.string("a quoted function identifier")
    language = "JAVA"
    if cur.match("LANGUAGE"):
        language = cur.name("JAVA, SCALA or PYTHON").upper()
        if language not in ("JAVA", "SCALA", "PYTHON"):
            cur.error(f"Unrecognized function language '{language}'")
    _end(cur)
    return AlterFunction(
        name=name,
        identifier=identifier,
        language=language,
        temporary=temporary,
        system=system,
        if_exists=if_exists,
        **pos,
    )


def parse_describe_job(cur: Cursor, pos: dict) -> DescribeJob:
    """After `DESCRIBE JOB`."""
    job_id = cur.string("a quoted job id")
    _end(cur)
    return DescribeJob(job_id=job_id, **pos)


def parse_stop_job(cur: Cursor, pos: dict) -> StopJob:
    """After `STOP`."""
    cur.expect("JOB")
    job_id = cur.string("a quoted job id")
    savepoint = drain = False
    while cur.match("WITH"):
        if cur.match("SAVEPOINT"):
            savepoint = True
        elif cur.match("DRAIN"):
            drain = True
        else:
            cur.unexpected('"SAVEPOINT" or "DRAIN"')
    _end(cur)
    return StopJob(job_id=job_id, with_savepoint=savepoint, with_drain=drain, **pos)
