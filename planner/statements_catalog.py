"""Catalog, database, ALTER, module and JVM-only statements and their grammar.

CREATE CATALOG [IF NOT EXISTS] c [COMMENT '...'] WITH ('type' = '...', ...)
DROP CATALOG [IF EXISTS] c          USE CATALOG c
ALTER CATALOG c SET (...) | RESET ('k', ...) | COMMENT '...'
{ DESCRIBE | DESC } CATALOG [EXTENDED] c
CREATE DATABASE [IF NOT EXISTS] [c.]db [COMMENT '...'] [WITH (...)]
DROP DATABASE [IF EXISTS] [c.]db [RESTRICT | CASCADE]
USE [c.]db                           ALTER DATABASE [c.]db SET (...)
SHOW CREATE TABLE | VIEW | CATALOG name
ALTER TABLE [IF EXISTS] t RENAME TO t2 | SET (...) | RESET (...) | RENAME c TO c2
    | ADD ... | MODIFY ... | DROP ...
ALTER VIEW v RENAME TO v2 | AS query
LOAD MODULE m [WITH (...)]   UNLOAD MODULE m   USE MODULES m [, ...]
ADD JAR '...'   REMOVE JAR '...'   (need a JVM: parsed so the answer is clear)
TRUNCATE TABLE t   CALL ...
ANALYZE TABLE t [PARTITION (k [= v], ...)] COMPUTE STATISTICS [FOR COLUMNS c, ... | FOR ALL COLUMNS]
"""

from __future__ import annotations

from dataclasses import field

from sqlglot import exp
from sqlglot.tokens import TokenType

from planner.ddl import parse_column, parse_distribution, parse_options, parse_primary_key
from planner.errors import SqlParseError
from planner.parse_cursor import Cursor
from planner.statements import ColumnDef, Distribution, Statement, WatermarkDef
from runtime.frozen import frozen_dataclass


@frozen_dataclass
class CreateCatalog(Statement):
    name: str
    options: dict[str, str] = field(default_factory=dict, hash=False)
    comment: str | None = None
    if_not_exists: bool = False


@frozen_dataclass
class DropCatalog(Statement):
    name: str
    if_exists: bool = False


@frozen_dataclass
class UseCatalog(Statement):
    name: str


@frozen_dataclass
class AlterCatalog(Statement):
    name: str
    set_options: dict[str, str] | None = field(default=None, hash=False)
    reset_keys: tuple[str, ...] | None = None
    comment: str | None = None


@frozen_dataclass
class DescribeCatalog(Statement):
    name: str
    extended: bool = False


@frozen_dataclass
class CreateDatabase(Statement):
    name: tuple[str, ...]
    comment: str | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)
    if_not_exists: bool = False


@frozen_dataclass
class DropDatabase(Statement):
    name: tuple[str, ...]
    if_exists: bool = False
    cascade: bool = False


@frozen_dataclass
class UseDatabase(Statement):
    name: tuple[str, ...]


@frozen_dataclass
class AlterDatabase(Statement):
    name: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict, hash=False)


@frozen_dataclass
class ShowCreate(Statement):
    kind: str  # TABLE | VIEW | CATALOG
    name: tuple[str, ...]


@frozen_dataclass
class ColumnPosition:
    column: ColumnDef
    position: str | None = None  # None | "FIRST" | "AFTER"
    after: str | None = None


@frozen_dataclass
class AlterTable(Statement):
    """One ALTER TABLE; `action` says which form and which fields matter."""

    name: tuple[str, ...]
    # RENAME | SET | RESET | RENAME_COLUMN | ADD | MODIFY | DROP_COLUMNS | DROP_PK | DROP_WATERMARK
    # | ADD_DISTRIBUTION | MODIFY_DISTRIBUTION | DROP_DISTRIBUTION | ADD_PARTITION | DROP_PARTITION
    action: str
    if_exists: bool = False
    new_name: tuple[str, ...] | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)
    keys: tuple[str, ...] = ()
    columns: tuple[ColumnPosition, ...] = ()
    watermark: WatermarkDef | None = None
    primary_key: tuple[str, ...] | None = None
    constraint_name: str | None = None
    old_column: str | None = None
    new_column: str | None = None
    target: str = "TABLE"  # "MATERIALIZED TABLE": a schema change of ALTER MATERIALIZED TABLE
    distribution: Distribution | None = None  # ADD / MODIFY DISTRIBUTION
    # ADD / DROP PARTITION (k = v, ...), each spec's values as text
    partitions: tuple[tuple[tuple[str, str], ...], ...] = ()


@frozen_dataclass
class AlterView(Statement):
    name: tuple[str, ...]
    new_name: tuple[str, ...] | None = None
    query: exp.Expression | None = None


@frozen_dataclass
class ModuleStatement(Statement):
    action: str  # LOAD | UNLOAD | USE
    names: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict, hash=False)


@frozen_dataclass
class JvmStatement(Statement):
    """A statement that needs a JVM (ADD JAR, REMOVE JAR, ...): answered with a clear error."""

    what: str


@frozen_dataclass
class TruncateTable(Statement):
    name: tuple[str, ...]


@frozen_dataclass
class AnalyzeTable(Statement):
    """ANALYZE TABLE: `partition` holds (key, value or None for "every value") as written;
    `column_positions` the (line, column) of each FOR COLUMNS name, for errors."""

    name: tuple[str, ...]
    partition: tuple[tuple[str, str | None], ...] = ()
    columns: tuple[str, ...] = ()
    all_columns: bool = False
    column_positions: tuple[tuple[int, int], ...] = ()


def _end(cur: Cursor) -> None:
    if not cur.at_end:
        cur.unexpected("<EOF>")


def _options(cur: Cursor) -> dict[str, str]:
    return parse_options(cur)


def _string_list(cur: Cursor) -> tuple[str, ...]:
    cur.expect_type(TokenType.L_PAREN, '"("')
    keys: list[str] = []
    if cur.match_type(TokenType.R_PAREN):
        return ()
    while True:
        keys.append(cur.string("an option key string"))
        if cur.match_type(TokenType.COMMA):
            continue
        cur.expect_type(TokenType.R_PAREN, '")" or ","')
        return tuple(keys)


def _catalog_name(cur: Cursor, expecting: str) -> str:
    name = cur.name("a catalog name")
    if cur.curr and cur.curr.token_type == TokenType.DOT:
        cur.unexpected(expecting)
    return name


# ---------------------------------------------------------------------- catalogs
def parse_create_catalog(cur: Cursor, pos: dict) -> CreateCatalog:
    """After `CREATE CATALOG`."""
    if_not_exists = cur.match("IF", "NOT", "EXISTS")
    name = _catalog_name(cur, 'one of:\n    <EOF>\n    "WITH" ...\n    "COMMENT" ...\n    ";" ...')
    comment = cur.string() if cur.match("COMMENT") else None
    cur.expect("WITH")
    options = _options(cur)
    _end(cur)
    return CreateCatalog(name=name, options=options, comment=comment, if_not_exists=if_not_exists, **pos)


def parse_drop_catalog(cur: Cursor, pos: dict) -> DropCatalog:
    if_exists = cur.match("IF", "EXISTS")
    name = _catalog_name(cur, "<EOF>")
    _end(cur)
    return DropCatalog(name=name, if_exists=if_exists, **pos)


def parse_alter_catalog(cur: Cursor, pos: dict) -> AlterCatalog:
    name = _catalog_name(cur, '"SET", "RESET" or "COMMENT"')
    if cur.match("SET"):
        stmt = AlterCatalog(name=name, set_options=_options(cur), **pos)
    elif cur.match("RESET"):
        stmt = AlterCatalog(name=name, reset_keys=_string_list(cur), **pos)
    elif cur.match("COMMENT"):
        stmt = AlterCatalog(name=name, comment=cur.string(), **pos)
    else:
        cur.unexpected('"SET", "RESET" or "COMMENT"')
    _end(cur)
    return stmt


def parse_describe_catalog(cur: Cursor, pos: dict) -> DescribeCatalog:
    extended = cur.match("EXTENDED")
    name = _catalog_name(cur, "<EOF>")
    _end(cur)
    return DescribeCatalog(name=name, extended=extended, **pos)


# ---------------------------------------------------------------------- databases
def _database_name(cur: Cursor) -> tuple[str, ...]:
    start = cur.curr
    name = cur.path()
    if len(name) > 2:
        cur.error(f"Database identifier [ {'.'.join(name)} ] can have at most 2 parts (catalog.database).", start)
    return name


def parse_create_database(cur: Cursor, pos: dict) -> CreateDatabase:
    if_not_exists = cur.match("IF", "NOT", "EXISTS")
    name = _database_name(cur)
    comment = cur.string() if cur.match("COMMENT") else None
    options = _options(cur) if cur.match("WITH") else {}
    _end(cur)
    return CreateDatabase(name=name, comment=comment, options=options, if_not_exists=if_not_exists, **pos)


def parse_drop_database(cur: Cursor, pos: dict) -> DropDatabase:
    if_exists = cur.match("IF", "EXISTS")
    name = _database_name(cur)
    cascade = False
    if cur.match("CASCADE"):
        cascade = True
    else:
        cur.match("RESTRICT")
    _end(cur)
    return DropDatabase(name=name, if_exists=if_exists, cascade=cascade, **pos)


def parse_use(cur: Cursor, pos: dict) -> Statement:
    """After `USE`: CATALOG c | MODULES m, ... | [c.]db."""
    if cur.match("CATALOG"):
        name = _catalog_name(cur, "<EOF>")
        _end(cur)
        return UseCatalog(name=name, **pos)
    if cur.match("MODULES"):
        names = [cur.name("a module name")]
        while cur.match_type(TokenType.COMMA):
            names.append(cur.name("a module name"))
        _end(cur)
        return ModuleStatement(action="USE", names=tuple(names), **pos)
    cur.match("DATABASE")
    database = _database_name(cur)
    _end(cur)
    return UseDatabase(name=database, **pos)


def parse_alter_database(cur: Cursor, pos: dict) -> AlterDatabase:
    name = _database_name(cur)
    cur.expect("SET")
    options = _options(cur)
    _end(cur)
    return AlterDatabase(name=name, options=options, **pos)


# ---------------------------------------------------------------------- SHOW CREATE
def parse_show_create(cur: Cursor, pos: dict) -> ShowCreate:
    """After `SHOW CREATE`."""
    if cur.match("MATERIALIZED", "TABLE"):
        kind = "MATERIALIZED TABLE"
    else:
        kind = cur.peek_word()
        if kind not in ("TABLE", "VIEW", "CATALOG"):
            cur.unexpected('"TABLE", "VIEW" or "CATALOG"')
        cur.parser._advance()
    name = (_catalog_name(cur, "<EOF>"),) if kind == "CATALOG" else cur.path()
    _end(cur)
    return ShowCreate(kind=kind, name=name, **pos)


# ---------------------------------------------------------------------- ALTER TABLE / VIEW
def parse_alter_table(cur: Cursor, pos: dict) -> AlterTable:
    """After `ALTER TABLE`."""
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    base = {"name": name, "if_exists": if_exists, **pos}
    if cur.match("RENAME"):
        if cur.match("TO"):
            new_name = cur.path()
            _end(cur)
            return AlterTable(action="RENAME", new_name=new_name, **base)
        old = cur.name("a column name")
        cur.expect("TO")
        new = cur.name("a column name")
        _end(cur)
        return AlterTable(action="RENAME_COLUMN", old_column=old, new_column=new, **base)
    if cur.match("SET"):
        options = _options(cur)
        _end(cur)
        return AlterTable(action="SET", options=options, **base)
    if cur.match("RESET"):
        keys = _string_list(cur)
        _end(cur)
        return AlterTable(action="RESET", keys=keys, **base)
    change = parse_schema_change(cur, base)
    if change is not None:
        return change
    cur.unexpected('"RENAME", "SET", "RESET", "ADD", "MODIFY" or "DROP"')


def parse_schema_change(cur: Cursor, base: dict) -> AlterTable | None:
    """`ADD ...` / `MODIFY ...` / `DROP ...` of ALTER [MATERIALIZED] TABLE (None: none of
    them is next); `base` holds the AlterTable fields the caller parsed."""
    if cur.peek_word() in ("ADD", "DROP") and "PARTITION" in (cur.peek_word(1), cur.peek_word(3), cur.peek_word(4)):
        action = cur.peek_word() + "_PARTITION"
        cur.parser._advance()
        # [IF NOT EXISTS] / [IF EXISTS] of the partitions (refused when it runs either way)
        cur.match("IF", "NOT", "EXISTS") if action == "ADD_PARTITION" else cur.match("IF", "EXISTS")
        specs = []
        while cur.match("PARTITION"):
            specs.append(_partition_spec(cur))
            if action == "ADD_PARTITION" and cur.match("WITH"):
                _options(cur)  # the partition's properties
            if action == "DROP_PARTITION" and not cur.match_type(TokenType.COMMA):
                break
        if not specs:
            cur.unexpected('"PARTITION"')
        _end(cur)
        return AlterTable(action=action, partitions=tuple(specs), **base)
    if cur.peek_word() in ("ADD", "MODIFY") and cur.peek_word(1) == "DISTRIBUTION":
        action = cur.peek_word() + "_DISTRIBUTION"
        cur.expect(cur.peek_word(), "DISTRIBUTION")
        distribution = parse_distribution(cur)
        _end(cur)
        return AlterTable(action=action, distribution=distribution, **base)
    if cur.peek_word() in ("ADD", "MODIFY"):
        action = cur.peek_word()
        cur.parser._advance()
        return _alter_schema(cur, action, base)
    if cur.match("DROP"):
        if cur.match("DISTRIBUTION"):
            _end(cur)
            return AlterTable(action="DROP_DISTRIBUTION", **base)
        if cur.match("PRIMARY", "KEY"):
            _end(cur)
            return AlterTable(action="DROP_PK", **base)
        if cur.match("CONSTRAINT"):
            constraint = cur.name("a constraint name")
            _end(cur)
            return AlterTable(action="DROP_PK", constraint_name=constraint, **base)
        if cur.match("WATERMARK"):
            _end(cur)
            return AlterTable(action="DROP_WATERMARK", **base)
        if cur.curr and cur.curr.token_type == TokenType.L_PAREN:
            names = cur.name_list()
        else:
            names = (cur.name("a column name"),)
        _end(cur)
        return AlterTable(action="DROP_COLUMNS", keys=names, **base)
    return None


def _alter_schema(cur: Cursor, action: str, base: dict) -> AlterTable:
    columns: list[ColumnPosition] = []
    watermark: WatermarkDef | None = None
    pk: tuple[str, ...] | None = None
    constraint: str | None = None

    def item() -> None:
        nonlocal watermark, pk, constraint
        if cur.match("WATERMARK"):
            cur.expect("FOR")
            rowtime = ".".join(cur.path())
            cur.expect("AS")
            watermark = WatermarkDef(rowtime, cur.expression())
            return
        if cur.peek_word().split()[:1] in (["PRIMARY"], ["CONSTRAINT"]):
            constraint, pk = parse_primary_key(cur)
            return
        col, inline_pk = parse_column(cur)
        if inline_pk:
            pk = (col.name,)
        position, after = None, None
        if cur.match("FIRST"):
            position = "FIRST"
        elif cur.match("AFTER"):
            position, after = "AFTER", cur.name("a column name")
        columns.append(ColumnPosition(col, position, after))

    if cur.match_type(TokenType.L_PAREN):
        while True:
            item()
            if cur.match_type(TokenType.COMMA):
                continue
            cur.expect_type(TokenType.R_PAREN, '")" or ","')
            break
    else:
        item()
    _end(cur)
    return AlterTable(
        action=action,
        columns=tuple(columns),
        watermark=watermark,
        primary_key=pk,
        constraint_name=constraint,
        **base,
    )


def parse_alter_view(cur: Cursor, pos: dict) -> AlterView:
    name = cur.path()
    if cur.match("RENAME", "TO"):
        new_name = cur.path()
        _end(cur)
        return AlterView(name=name, new_name=new_name, **pos)
    cur.expect("AS")
    return AlterView(name=name, query=cur.query(), **pos)


# ---------------------------------------------------------------------- modules, JVM, misc
def parse_module(cur: Cursor, action: str, pos: dict) -> ModuleStatement:
    """After `LOAD MODULE` / `UNLOAD MODULE`."""
    name = cur.name("a module name")
    options = _options(cur) if action == "LOAD" and cur.match("WITH") else {}
    _end(cur)
    return ModuleStatement(action=action, names=(name,), options=options, **pos)


def _partition_spec(cur: Cursor) -> tuple[tuple[str, str], ...]:
    """`(k = v, ...)` of a PARTITION clause."""
    cur.expect_type(TokenType.L_PAREN, '"("')
    spec = []
    while True:
        key = cur.name("a partition column")
        cur.expect_type(TokenType.EQ, '"="')
        spec.append((key, _partition_value(cur)))
        if cur.match_type(TokenType.COMMA):
            continue
        cur.expect_type(TokenType.R_PAREN, '")" or ","')
        return tuple(spec)


def _partition_value(cur: Cursor) -> str:
    """A partition spec literal as Flink reads it (SqlLiteral's value as text): a string,
    a number (optionally signed), TRUE / FALSE."""
    sign = "-" if cur.match_type(TokenType.DASH) else ""
    tok = cur.curr
    if tok and tok.token_type == TokenType.STRING and not sign:
        return cur.string()
    if tok and tok.token_type == TokenType.NUMBER:
        cur.parser._advance()
        return sign + tok.text
    if not sign and cur.peek_word() in ("TRUE", "FALSE"):
        word = cur.peek_word()
        cur.parser._advance()
        return word
    cur.unexpected("a literal")


def parse_analyze_table(cur: Cursor, pos: dict) -> AnalyzeTable:
    """After `ANALYZE TABLE`."""
    name = cur.path()
    partition: list[tuple[str, str | None]] = []
    if cur.match("PARTITION"):
        cur.expect_type(TokenType.L_PAREN, '"("')
        while True:
            key = cur.name("a partition column")
            value = _partition_value(cur) if cur.match_type(TokenType.EQ) else None
            partition.append((key, value))
            if cur.match_type(TokenType.COMMA):
                continue
            cur.expect_type(TokenType.R_PAREN, '")" or ","')
            break
    cur.expect("COMPUTE", "STATISTICS")
    columns: list[str] = []
    positions: list[tuple[int, int]] = []
    all_columns = False
    if cur.match("FOR"):
        if cur.match("ALL", "COLUMNS"):
            all_columns = True
        else:
            cur.expect("COLUMNS")
            while True:
                if cur.curr:
                    positions.append(cur.line_col(cur.curr.start))
                columns.append(cur.name("a column name"))
                if not cur.match_type(TokenType.COMMA):
                    break
    elif not cur.at_end:
        if cur.peek_word() == "NOSCAN":  # Spark's and Hive's form
            try:
                cur.unexpected('one of:\n    <EOF>\n    "FOR" ...')
            except SqlParseError as e:
                e.hint = "Flink's ANALYZE TABLE has no NOSCAN: it always reads the table."
                raise
        cur.unexpected('one of:\n    <EOF>\n    "FOR" ...')
    _end(cur)
    return AnalyzeTable(
        name=name,
        partition=tuple(partition),
        columns=tuple(columns),
        all_columns=all_columns,
        column_positions=tuple(positions),
        **pos,
    )


def parse_jvm(cur: Cursor, pos: dict) -> JvmStatement:
    words: list[str] = []
    while not cur.at_end and len(words) < 2:
        words.append(cur.peek_word())
        cur.parser._advance()
    return JvmStatement(what=" ".join(w for w in words if w), **pos)
