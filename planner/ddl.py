"""DDL statements: CREATE TABLE, CREATE VIEW, DROP TABLE/VIEW.

Hand-written over the statement's tokens (`parse_cursor.Cursor`); column types, computed
columns and watermark expressions are parsed by the flink dialect.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from planner.dialect.types import UnknownTypeError, to_data_type
from planner.parse_cursor import Cursor
from planner.statements import ColumnDef, CreateTable, CreateView, Distribution, Drop, LikeClause, WatermarkDef

__all__ = [
    "name_only",
    "parse_column",
    "parse_create_table",
    "parse_create_view",
    "parse_distribution",
    "parse_drop",
    "parse_primary_key",
]

_LIKE_OPTIONS = ("ALL", "CONSTRAINTS", "DISTRIBUTION", "PARTITIONS", "GENERATED", "METADATA", "OPTIONS", "WATERMARKS")


def parse_distribution(cur: Cursor) -> Distribution:
    """After `DISTRIBUTED` (or ALTER TABLE's `DISTRIBUTION`): `BY [HASH | RANGE] (keys)
    [INTO n BUCKETS]` or `INTO n BUCKETS`."""
    if cur.match("INTO"):
        return Distribution(buckets=_bucket_count(cur))
    cur.expect("BY")
    kind = cur.peek_word()
    if kind in ("HASH", "RANGE"):
        cur.parser._advance()
    else:
        kind = "UNKNOWN"
    keys = cur.name_list()
    buckets = _bucket_count(cur) if cur.match("INTO") else None
    return Distribution(kind, keys, buckets)


def _bucket_count(cur: Cursor) -> int:
    tok = cur.curr
    if tok is None or tok.token_type != TokenType.NUMBER or not tok.text.isdigit():
        cur.unexpected("an unsigned integer number of buckets")
    cur.parser._advance()
    cur.expect("BUCKETS")
    count = int(tok.text)
    if count <= 0:
        cur.error(f"Bucket count must be a positive integer, but was {count}.", tok)
    return count


def parse_primary_key(cur: Cursor) -> tuple[str | None, tuple[str, ...]]:
    """`[CONSTRAINT name] PRIMARY KEY (cols) NOT ENFORCED` → (name, cols)."""
    constraint = cur.name("a constraint name") if cur.match("CONSTRAINT") else None
    cur.expect("PRIMARY", "KEY")
    cols = cur.name_list()
    _not_enforced(cur)
    return constraint, cols


def parse_create_table(
    cur: Cursor, temporary: bool, pos: dict, or_replace: bool = False, replace_only: bool = False
) -> CreateTable:
    """After `CREATE [TEMPORARY] TABLE` (or `[CREATE OR] REPLACE TABLE`). A column list of
    names alone (`(c, a, b)`) is CTAS / RTAS's reordering of the query's columns."""
    if_not_exists = cur.match("IF", "NOT", "EXISTS")
    name = cur.path()
    columns: list[ColumnDef] = []
    watermark: WatermarkDef | None = None
    primary_key: tuple[str, ...] | None = None
    constraint_name: str | None = None
    as_query = None
    typeless_token = None
    if cur.match_type(TokenType.L_PAREN):
        while True:
            if cur.match("WATERMARK"):
                if watermark is not None:
                    cur.error("Multiple WATERMARK statements is not supported yet.")
                cur.expect("FOR")
                col = ".".join(cur.path())
                cur.expect("AS")
                watermark = WatermarkDef(col, cur.expression())
            elif cur.peek_word().split()[:1] in (["PRIMARY"], ["CONSTRAINT"]):
                if primary_key is not None:
                    cur.error("Duplicate primary key definition")
                constraint_name, primary_key = parse_primary_key(cur)
            elif name_only(cur):
                typeless_token = typeless_token or cur.curr
                columns.append(ColumnDef(cur.name("a column name"), "physical"))
            else:
                col_def, inline_pk = parse_column(cur)
                if inline_pk:
                    if primary_key is not None:
                        cur.error("Duplicate primary key definition")
                    primary_key = (col_def.name,)
                columns.append(col_def)
            if cur.match_type(TokenType.COMMA):
                continue
            cur.expect_type(TokenType.R_PAREN, '")" or ","')
            break
    comment = None
    partitioned_by: tuple[str, ...] = ()
    options: dict[str, str] = {}
    like: LikeClause | None = None
    distribution: Distribution | None = None
    while not cur.at_end:
        if cur.match("COMMENT"):
            comment = cur.string()
        elif cur.match("PARTITIONED", "BY"):
            partitioned_by = cur.name_list()
        elif cur.match("DISTRIBUTED"):
            distribution = parse_distribution(cur)
        elif cur.match("WITH"):
            options = parse_options(cur)
        elif cur.match("LIKE"):
            like = _like(cur)
        elif cur.match("AS"):
            as_query = cur.query()
        else:
            cur.unexpected('"COMMENT", "PARTITIONED BY", "DISTRIBUTED", "WITH" or "LIKE"')
    names = [c.name for c in columns]
    typeless = [c.name for c in columns if c.kind == "physical" and c.type is None]
    if typeless and (as_query is None or len(typeless) != len(columns)):
        # names alone reorder a CTAS's query columns; they cannot mix with typed columns
        cur.error(
            f"Column '{typeless[0]}' has no data type. A column list of names alone is only allowed "
            "in CREATE TABLE ... AS SELECT, and then every column is a name alone.",
            typeless_token,
            hint="write `name TYPE` for each column, or list only the query's column names",
        )
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        cur.error(f"A column named '{sorted(dupes)[0]}' already exists in the table.")
    return CreateTable(
        name=name,
        columns=tuple(columns),
        watermark=watermark,
        primary_key=primary_key,
        options=options,
        like=like,
        temporary=temporary,
        if_not_exists=if_not_exists,
        comment=comment,
        partitioned_by=partitioned_by,
        constraint_name=constraint_name,
        as_query=as_query,
        or_replace=or_replace,
        replace_only=replace_only,
        distribution=distribution,
        **pos,
    )


def name_only(cur: Cursor) -> bool:
    """Whether the next column item is a bare name (`a,` or `a)`)."""
    tokens, i = cur.parser._tokens, cur.parser._index
    return i + 1 < len(tokens) and tokens[i + 1].token_type in (TokenType.COMMA, TokenType.R_PAREN)


def _not_enforced(cur: Cursor) -> None:
    if not cur.match("NOT", "ENFORCED"):
        if cur.match("ENFORCED"):
            cur.error(
                "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint. "
                "ENFORCED/NOT ENFORCED controls if the constraint checks are performed on the "
                "incoming/outgoing data. Flink does not own the data therefore the only "
                "supported mode is the NOT ENFORCED mode",
                cur.parser._prev,
            )
        cur.unexpected('"NOT ENFORCED"')


def parse_column(cur: Cursor) -> tuple[ColumnDef, bool]:
    """One column: physical `c TYPE`, computed `c AS expr`, metadata `c TYPE METADATA ...`;
    returns it and whether it carried an inline PRIMARY KEY."""
    name = cur.name("a column name")
    if cur.match("AS"):
        expr = cur.expression()
        comment = cur.string() if cur.match("COMMENT") else None
        return ColumnDef(name, "computed", expr=expr, comment=comment), False
    type_token = cur.curr
    dt = cur.data_type()
    try:
        dtype = to_data_type(dt)
    except UnknownTypeError as e:
        cur.error(str(e), type_token)
    kind = "physical"
    metadata_key = None
    virtual = False
    comment = None
    inline_pk = False
    while True:
        if cur.match("METADATA"):
            kind = "metadata"
            if cur.match("FROM"):
                metadata_key = cur.string()
            if cur.match("VIRTUAL"):
                virtual = True
        elif cur.match("NOT", "NULL"):
            dtype = dtype.not_null()
        elif cur.match("NULL"):
            dtype = dtype.with_nullable(True)
        elif cur.peek_word().split()[:1] in (["PRIMARY"], ["CONSTRAINT"]):
            if cur.match("CONSTRAINT"):
                cur.name()
            cur.expect("PRIMARY", "KEY")
            _not_enforced(cur)
            inline_pk = True
        elif cur.match("COMMENT"):
            comment = cur.string()
        else:
            break
    if inline_pk:
        dtype = dtype.not_null()
    col = ColumnDef(name, kind, type=dtype, metadata_key=metadata_key, virtual=virtual, comment=comment)
    return col, inline_pk


def parse_options(cur: Cursor) -> dict[str, str]:
    """`('k' = 'v', ...)`: keys and values are string literals."""
    cur.expect_type(TokenType.L_PAREN, '"("')
    options: dict[str, str] = {}
    if cur.match_type(TokenType.R_PAREN):
        return options
    while True:
        key = cur.string("an option key string")
        cur.expect_type(TokenType.EQ, '"="')
        options[key] = cur.string("an option value string")
        if cur.match_type(TokenType.COMMA):
            continue
        cur.expect_type(TokenType.R_PAREN, '")" or ","')
        return options


def _like(cur: Cursor) -> LikeClause:
    source = cur.path()
    opts: list[tuple[str, str]] = []
    if cur.match_type(TokenType.L_PAREN):
        while not cur.match_type(TokenType.R_PAREN):
            word = cur.peek_word()
            if word not in ("INCLUDING", "EXCLUDING", "OVERWRITING"):
                cur.unexpected('"INCLUDING", "EXCLUDING" or "OVERWRITING"')
            cur.parser._advance()
            what = cur.peek_word()
            if what not in _LIKE_OPTIONS:
                cur.unexpected(" or ".join(f'"{o}"' for o in _LIKE_OPTIONS))
            cur.parser._advance()
            opts.append((word, what))
            cur.match_type(TokenType.COMMA)
    return LikeClause(source, tuple(opts))


def parse_create_view(cur: Cursor, temporary: bool, pos: dict) -> CreateView:
    """After `CREATE [TEMPORARY] VIEW`."""
    if_not_exists = cur.match("IF", "NOT", "EXISTS")
    name = cur.path()
    column_names = None
    if cur.curr and cur.curr.token_type == TokenType.L_PAREN:
        column_names = cur.name_list()
    comment = cur.string() if cur.match("COMMENT") else None
    cur.expect("AS")
    query = cur.query()
    return CreateView(
        name=name,
        query=query,
        column_names=column_names,
        temporary=temporary,
        if_not_exists=if_not_exists,
        comment=comment,
        **pos,
    )


def parse_drop(cur: Cursor, pos: dict) -> Drop:
    """After `DROP`."""
    temporary = cur.match("TEMPORARY")
    kind = cur.peek_word()
    if kind not in ("TABLE", "VIEW"):
        cur.unexpected('"TABLE" or "VIEW"')
    cur.parser._advance()
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    if not cur.at_end:
        cur.unexpected("<EOF>")
    return Drop(kind=kind, name=name, if_exists=if_exists, temporary=temporary, **pos)
