"""CREATE / DROP FUNCTION statements and their grammar.

    CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] [cat.db.]name
        AS 'identifier' [LANGUAGE JAVA|SCALA|PYTHON] [USING JAR '...' [, JAR '...']*]
        [WITH ('key' = 'value', ...)]
    DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] [cat.db.]name

Only LANGUAGE PYTHON functions can run here (there is no JVM): the identifier names an
importable Python object, `pkg.module.name` (a function decorated with
`streamsql.udf.udf/udtf/udaf`, or such an object).
"""

from __future__ import annotations

from dataclasses import field

from sqlglot.tokens import TokenType

from planner.ddl import parse_options
from planner.parse_cursor import Cursor
from planner.statements import Statement
from runtime.frozen import frozen_dataclass


@frozen_dataclass
class CreateFunction(Statement):
    name: tuple[str, ...]
    identifier: str  # 'pkg.module.name'
    language: str = "JAVA"  # Flink's default; only PYTHON is executable
    temporary: bool = False
    system: bool = False
    if_not_exists: bool = False
    # WITH (...): the function's options (Flink 2.x keeps them in the catalog function);
    # a Python function takes no options, so they are accepted and not used.
    options: dict[str, str] = field(default_factory=dict, hash=False)


@frozen_dataclass
class DropFunction(Statement):
    name: tuple[str, ...]
    temporary: bool = False
    system: bool = False
    if_exists: bool = False


def is_function_statement(cur: Cursor) -> bool:
    """Whether `[TEMPORARY] [SYSTEM] FUNCTION` comes next (after CREATE or DROP)."""
    return "FUNCTION" in (cur.peek_word(0), cur.peek_word(1), cur.peek_word(2))


def parse_create_function(cur: Cursor, temporary: bool, pos: dict) -> CreateFunction:
    """After `CREATE [TEMPORARY]`."""
    temporary = cur.match("TEMPORARY") or temporary
    system = cur.match("SYSTEM")
    if system and not temporary:
        cur.error("CREATE SYSTEM FUNCTION is not supported, system functions can only be registered as temporary")
    cur.expect("FUNCTION")
    if_not_exists = cur.match("IF", "NOT", "EXISTS")
    name = cur.path()
    cur.expect("AS")
    identifier = cur.string("a quoted function identifier")
    language = "JAVA"
    if cur.match("LANGUAGE"):
        language = cur.name("JAVA, SCALA or PYTHON").upper()
        if language not in ("JAVA", "SCALA", "PYTHON"):
            cur.error(f"Unrecognized function language '{language}'")
    if cur.match("USING"):  # JARs (refused with the Java function when it runs)
        while True:
            cur.expect("JAR")
            cur.string("a quoted JAR path")
            if not cur.match_type(TokenType.COMMA):
                break
    options = parse_options(cur) if cur.match("WITH") else {}
    if not cur.at_end:
        cur.unexpected('"WITH" or <EOF>')
    return CreateFunction(
        name=name,
        identifier=identifier,
        language=language,
        temporary=temporary,
        system=system,
        if_not_exists=if_not_exists,
        options=options,
        **pos,
    )


def parse_drop_function(cur: Cursor, pos: dict) -> DropFunction:
    """After `DROP`."""
    temporary = cur.match("TEMPORARY")
    system = cur.match("SYSTEM")
    cur.expect("FUNCTION")
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    if not cur.at_end:
        cur.unexpected("<EOF>")
    return DropFunction(name=name, temporary=temporary, system=system, if_exists=if_exists, **pos)


@frozen_dataclass
class DescribeFunction(Statement):
    name: tuple[str, ...]
    extended: bool = False


def parse_describe_function(cur: Cursor, pos: dict) -> DescribeFunction:
    """After `DESCRIBE FUNCTION`."""
    extended = cur.match("EXTENDED")
    name = cur.path()
    if not cur.at_end:
        cur.unexpected("<EOF>")
    return DescribeFunction(name=name, extended=extended, **pos)
