"""Materialized table statements (Flink 2.3's FLIP-435 / FLIP-551 syntax) and their grammar.

CREATE [OR ALTER] MATERIALIZED TABLE [c.][db.]t
    [( col [type] | col AS expr | col type METADATA ... [, ...] [, WATERMARK FOR c AS expr]
       [, [CONSTRAINT n] PRIMARY KEY (cols) NOT ENFORCED] )]
    [COMMENT '...'] [PARTITIONED BY (cols)] [WITH (...)]
    [FRESHNESS = INTERVAL '<n>' { SECOND | MINUTE | HOUR | DAY }[S]]
    [REFRESH_MODE = { CONTINUOUS | FULL }]
    AS query
ALTER MATERIALIZED TABLE [c.][db.]t
    SUSPEND | RESUME [WITH (...)] | REFRESH [PARTITION (k = 'v', ...)] | AS query
    | SET (...) | RESET ('k', ...)
    | ADD / MODIFY / DROP of columns, the watermark and the primary key (ALTER TABLE's forms)
DROP MATERIALIZED TABLE [IF EXISTS] [c.][db.]t

The freshness is kept as written and validated when the statement runs, where Flink
validates it (its messages are ValidationExceptions, not parse errors).
"""

from __future__ import annotations

from dataclasses import field

from sqlglot import exp
from sqlglot.tokens import TokenType

from planner.ddl import name_only, parse_column, parse_options, parse_primary_key
from planner.parse_cursor import Cursor
from planner.statements import ColumnDef, Statement, WatermarkDef
from planner.statements_catalog import AlterTable, _string_list, parse_schema_change
from runtime.frozen import frozen_dataclass

_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY")
_UNIT_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


@frozen_dataclass
class Freshness:
    """`INTERVAL '<text>' <unit>` as written (`negative`: `INTERVAL -'30' SECOND`)."""

    text: str
    unit: str  # as written, upper-case: SECOND, MINUTES, DAY TO HOUR, YEAR, ...
    negative: bool = False

    @property
    def base_unit(self) -> str | None:
        """SECOND / MINUTE / HOUR / DAY, or None for any other unit."""
        unit = self.unit[:-1] if self.unit.endswith("S") else self.unit
        return unit if unit in _UNITS else None

    @property
    def interval(self) -> int:
        return int(self.text.strip())

    @property
    def millis(self) -> int:
        unit = self.base_unit
        assert unit is not None
        return self.interval * _UNIT_MS[unit]

    def sql(self) -> str:
        """As SHOW CREATE MATERIALIZED TABLE prints it."""
        return f"INTERVAL '{self.interval}' {self.base_unit}"


@frozen_dataclass
class CreateMaterializedTable(Statement):
    name: tuple[str, ...]
    query: exp.Expression
    or_alter: bool = False
    # An explicit column list: names (type None: the query's) or names with types.
    columns: tuple[ColumnDef, ...] = ()
    primary_key: tuple[str, ...] | None = None
    constraint_name: str | None = None
    watermark: WatermarkDef | None = None
    comment: str | None = None
    partitioned_by: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict, hash=False)
    freshness: Freshness | None = None
    refresh_mode: str | None = None  # CONTINUOUS | FULL | None (derived from the freshness)


@frozen_dataclass
class AlterMaterializedTable(Statement):
    name: tuple[str, ...]
    action: str  # SUSPEND | RESUME | REFRESH | AS | SET | RESET | SCHEMA | DISTRIBUTION
    options: dict[str, str] = field(default_factory=dict, hash=False)  # RESUME WITH / SET
    keys: tuple[str, ...] = ()  # RESET
    partition: tuple[tuple[str, str], ...] = ()  # REFRESH PARTITION (k = 'v', ...)
    query: exp.Expression | None = None  # AS query
    # ADD / MODIFY / DROP of schema parts: the change as ALTER TABLE states it
    change: AlterTable | None = None


@frozen_dataclass
class DropMaterializedTable(Statement):
    name: tuple[str, ...]
    if_exists: bool = False


def _end(cur: Cursor) -> None:
    if not cur.at_end:
        cur.unexpected("<EOF>")


def _freshness(cur: Cursor) -> Freshness:
    cur.expect_type(TokenType.EQ, '"="')
    cur.expect("INTERVAL")
    negative = bool(cur.match_type(TokenType.DASH))
    text = cur.string("an interval string such as '10'")
    words = [cur.peek_word()]
    if not words[0]:
        cur.unexpected('"SECOND", "MINUTE", "HOUR" or "DAY"')
    cur.parser._advance()
    if cur.match("TO"):  # DAY TO HOUR: a unit Flink refuses when it validates
        words += ["TO", cur.peek_word()]
        cur.parser._advance()
    return Freshness(text, " ".join(words), negative)


def _column_list(
    cur: Cursor,
) -> tuple[tuple[ColumnDef, ...], str | None, tuple[str, ...] | None, WatermarkDef | None]:
    """`(a, b)`, `(a INT, b BIGINT)`, `(PRIMARY KEY (a) NOT ENFORCED)`, computed and
    metadata columns, `WATERMARK FOR c AS expr`, and mixes."""

    columns: list[ColumnDef] = []
    constraint: str | None = None
    pk: tuple[str, ...] | None = None
    watermark: WatermarkDef | None = None
    while True:
        if cur.match("WATERMARK"):
            cur.expect("FOR")
            rowtime = ".".join(cur.path())
            cur.expect("AS")
            watermark = WatermarkDef(rowtime, cur.expression())
        elif cur.peek_word().split()[:1] in (["PRIMARY"], ["CONSTRAINT"]):
            constraint, pk = parse_primary_key(cur)
        elif name_only(cur):
            columns.append(ColumnDef(cur.name("a column name"), "physical"))
        else:
            col, inline_pk = parse_column(cur)
            if inline_pk:
                pk = (col.name,)
            columns.append(col)
        if cur.match_type(TokenType.COMMA):
            continue
        cur.expect_type(TokenType.R_PAREN, '")" or ","')
        return tuple(columns), constraint, pk, watermark


def parse_create_materialized_table(cur: Cursor, or_alter: bool, pos: dict) -> CreateMaterializedTable:
    """After `CREATE [OR ALTER] MATERIALIZED TABLE`."""
    name = cur.path()
    columns: tuple[ColumnDef, ...] = ()
    constraint: str | None = None
    pk: tuple[str, ...] | None = None
    watermark: WatermarkDef | None = None
    if cur.match_type(TokenType.L_PAREN):
        columns, constraint, pk, watermark = _column_list(cur)
    comment = None
    partitioned_by: tuple[str, ...] = ()
    options: dict[str, str] = {}
    freshness: Freshness | None = None
    refresh_mode: str | None = None
    while True:
        if cur.match("COMMENT"):
            comment = cur.string()
        elif cur.match("PARTITIONED", "BY"):
            partitioned_by = cur.name_list()
        elif cur.match("WITH"):
            options = parse_options(cur)
        elif cur.match("FRESHNESS"):
            freshness = _freshness(cur)
        elif cur.match("REFRESH_MODE"):
            cur.expect_type(TokenType.EQ, '"="')
            refresh_mode = cur.peek_word()
            if refresh_mode not in ("CONTINUOUS", "FULL"):
                cur.unexpected('"CONTINUOUS" or "FULL"')
            cur.parser._advance()
        elif cur.match("AS"):
            break
        else:
            cur.unexpected('"COMMENT", "PARTITIONED BY", "WITH", "FRESHNESS", "REFRESH_MODE" or "AS"')
    query = cur.query()
    return CreateMaterializedTable(
        name=name,
        query=query,
        or_alter=or_alter,
        columns=columns,
        primary_key=pk,
        constraint_name=constraint,
        watermark=watermark,
        comment=comment,
        partitioned_by=partitioned_by,
        options=options,
        freshness=freshness,
        refresh_mode=refresh_mode,
        **pos,
    )


def parse_alter_materialized_table(cur: Cursor, pos: dict) -> AlterMaterializedTable:
    """After `ALTER MATERIALIZED TABLE`."""

    name = cur.path()
    base = {"name": name, **pos}
    if cur.match("SUSPEND"):
        _end(cur)
        return AlterMaterializedTable(action="SUSPEND", **base)
    if cur.match("RESUME"):
        options = parse_options(cur) if cur.match("WITH") else {}
        _end(cur)
        return AlterMaterializedTable(action="RESUME", options=options, **base)
    if cur.match("REFRESH"):
        partition: list[tuple[str, str]] = []
        if cur.match("PARTITION"):
            cur.expect_type(TokenType.L_PAREN, '"("')
            while True:
                key = cur.name("a partition column")
                cur.expect_type(TokenType.EQ, '"="')
                partition.append((key, cur.string("a partition value string")))
                if cur.match_type(TokenType.COMMA):
                    continue
                cur.expect_type(TokenType.R_PAREN, '")" or ","')
                break
        _end(cur)
        return AlterMaterializedTable(action="REFRESH", partition=tuple(partition), **base)
    if cur.match("AS"):
        return AlterMaterializedTable(action="AS", query=cur.query(), **base)
    if cur.match("SET"):
        options = parse_options(cur)
        _end(cur)
        return AlterMaterializedTable(action="SET", options=options, **base)
    if cur.match("RESET"):
        keys = _string_list(cur)
        _end(cur)
        return AlterMaterializedTable(action="RESET", keys=keys, **base)
    if cur.peek_word() in ("ADD", "MODIFY", "DROP") and cur.peek_word(1) == "DISTRIBUTION":
        while not cur.at_end:  # refused when it runs: streamsql tables have no buckets
            cur.parser._advance()
        return AlterMaterializedTable(action="DISTRIBUTION", **base)
    change = parse_schema_change(cur, {"name": name, "target": "MATERIALIZED TABLE", **pos})
    if change is not None:
        return AlterMaterializedTable(action="SCHEMA", change=change, **base)
    cur.unexpected('"ADD", "MODIFY", "DROP", "SUSPEND", "RESUME", "REFRESH", "AS", "SET" or "RESET"')


def parse_drop_materialized_table(cur: Cursor, pos: dict) -> DropMaterializedTable:
    """After `DROP MATERIALIZED TABLE`."""
    if_exists = cur.match("IF", "EXISTS")
    name = cur.path()
    _end(cur)
    return DropMaterializedTable(name=name, if_exists=if_exists, **pos)
