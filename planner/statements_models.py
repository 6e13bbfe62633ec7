"""Model statements (Flink 2.x, FLIP-437) and their grammar.

CREATE [TEMPORARY] MODEL [IF NOT EXISTS] [c.][db.]m
    [INPUT (col TYPE [COMMENT '...'], ...)] [OUTPUT (col TYPE [COMMENT '...'], ...)]
    [COMMENT '...'] WITH ('provider' = '...', ...)
DROP [TEMPORARY] MODEL [IF EXISTS] m
ALTER MODEL [IF EXISTS] m SET (...) | RESET ('k', ...) | RENAME TO m2
{ DESCRIBE | DESC } MODEL m      SHOW CREATE MODEL m      SHOW MODELS [FROM | IN [c.]db] [[NOT] LIKE p]

A model is catalog metadata (input and output columns, options, comment); predicting
with it (ML_PREDICT) needs Flink's model providers on the JVM and is refused.
"""

from __future__ import annotations

from dataclasses import field

from sqlglot.tokens import TokenType

from planner.ddl import parse_column, parse_options
from planner.parse_cursor import Cursor
from planner.statements import ColumnDef, Statement
from runtime.frozen import frozen_dataclass


@frozen_dataclass
class CreateModel(Statement):
    name: tuple[str, ...]
    input_columns: tuple[ColumnDef, ...] = ()
    output_columns: tuple[ColumnDef, ...] = ()
    comment: str | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)
    if_not_exists: bool = False
    temporary: bool = False


@frozen_dataclass
class DropModel(Statement):
    name: tuple[str, ...]
    if_exists: bool = False
    temporary: bool = False


@frozen_dataclass
class AlterModel(Statement):
    name: tuple[str, ...]
    action: str  # SET | RESET | RENAME
    if_exists: bool = False
    options: dict[str, str] = field(default_factory=dict, hash=False)
    keys: tuple[str, ...] = ()
    new_name: tuple[str, ...] | None = None


@frozen_dataclass
class DescribeModel(Statement):
    name: tuple[str, ...]


@frozen_dataclass
class ShowCreateModel(Statement):
    name: tuple[str, ...]


def _end(cur: Cursor) -> None:
    if not cur.at_end:
        cur.unexpected("<EOF>")


def _columns(cur: Cursor) -> tuple[ColumnDef, ...]:
    cur.expect_type(TokenType.L_PAREN, '"("')
    columns = []
    while True:
        start = cur.curr
        col, inline_pk = parse_column(cur)
        if col.kind != "physical" or inline_pk:
            cur.error(f"Column {col.name} can only be a physical column.", start)
        columns.append(col)
        if cur.match_type(TokenType.COMMA):
            continue
        cur.expect_type(TokenType.R_PAREN, '")" or ","')
        return tuple(columns)


def parse_create_model(cur: Cursor, temporary: bool, pos: dict) -> CreateModel:
    """After `CREATE [TEMPORARY] MODEL`."""
    if_not_exists = cur.match("IF", "NOT", "EXISTS")
    name = cur.path()
    inputs = _columns(cur) if cur.match("INPUT") else ()
    outputs = _columns(cur) if cur.match("OUTPUT") else ()
    comment = cur.string() if cur.match("COMMENT") else None
    if cur.peek_word() == "AS":
        cur.error(
            "CREATE MODEL ... AS query is not supported: streamsql cannot train models",
            cur.curr,
            hint="Register a model with INPUT / OUTPUT columns and WITH options.",
        )
    cur.expect("WITH")
    options = parse_options(cur)
    _end(cur)
    return CreateModel(
        name=name,
        input_columns=inputs,
        output_columns=outputs,
        comment=comment,
        options=options,
        if_not_exists=if_not_exists,
        temporary=temporary,
        **pos,
    )


def parse_drop_model(cur: Cursor, temporary: bool, pos: dict) -> DropModel:
    """After `DROP [TEMPORARY] MODEL`."""
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    _end(cur)
    return DropModel(name=name, if_exists=if_exists, temporary=temporary, **pos)


def _string_list(cur: Cursor) -> tuple[str, ...]:
    cur.expect_type(TokenType.L_PAREN, '"("')
    if cur.match_type(TokenType.R_PAREN):
        return ()
    keys = [cur.string("an option key string")]
    while cur.match_type(TokenType.COMMA):
        keys.append(cur.string("an option key string"))
    cur.expect_type(TokenType.R_PAREN, '")" or ","')
    return tuple(keys)


def parse_alter_model(cur: Cursor, pos: dict) -> AlterModel:
    """After `ALTER MODEL`."""
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    base = {"name": name, "if_exists": if_exists, **pos}
    if cur.match("SET"):
        stmt = AlterModel(action="SET", options=parse_options(cur), **base)
    elif cur.match("RESET"):
        stmt = AlterModel(action="RESET", keys=_string_list(cur), **base)
    elif cur.match("RENAME", "TO"):
        stmt = AlterModel(action="RENAME", new_name=cur.path(), **base)
    else:
        cur.unexpected('"SET", "RESET" or "RENAME TO"')
    _end(cur)
    return stmt


def parse_describe_model(cur: Cursor, pos: dict) -> DescribeModel:
    """After `DESCRIBE MODEL`."""
    name = cur.path()
    _end(cur)
    return DescribeModel(name=name, **pos)


def parse_show_create_model(cur: Cursor, pos: dict) -> ShowCreateModel:
    """After `SHOW CREATE MODEL`."""
    name = cur.path()
    _end(cur)
    return ShowCreateModel(name=name, **pos)
