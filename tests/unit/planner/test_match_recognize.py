"""MATCH_RECOGNIZE binding: pattern grammar, Flink's restrictions, navigation slots."""

from __future__ import annotations

import pytest

from planner.api import Planner
from planner.binder.match_recognize import parse_pattern
from planner.catalog import Catalog
from planner.errors import SqlError, SqlValidationError, UnsupportedSqlError
from planner.parse import parse_script
from planner.rules.match import LogicalMatch, PatternElement
from planner.statements import CreateTable, Query

DDL = (
    "CREATE TABLE ticks (ts TIMESTAMP(3), sym STRING, price INT, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
    "WITH ('connector' = 'filesystem', 'path' = 'x.csv', 'format' = 'csv')"
)


def bind(query: str) -> LogicalMatch:
    catalog = Catalog()
    planner = Planner(catalog, {})
    for st in parse_script(DDL + ";\n" + query):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Query):
            plan = planner.bind(st)
            planner.optimize(plan, st.sql)
            node = plan
            while not isinstance(node, LogicalMatch):
                node = node.inputs[0]
            return node
    raise AssertionError


def mr(measures: str = "A.price AS p", pattern: str = "A B", define: str = "B AS price > A.price", extra="") -> str:
    return (
        f"SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts MEASURES {measures} "
        f"AFTER MATCH SKIP PAST LAST ROW PATTERN ({pattern}) {extra} DEFINE {define})"
    )


def test_pattern_quantifiers() -> None:
    got = parse_pattern("(A B* C+ E{2} D? F{2,} H{1,4}? I*? G{,3} J)", None, None)
    assert [(p.var, p.min, p.max, p.greedy) for p in got] == [
        ("A", 1, 1, True),
        ("B", 0, None, True),
        ("C", 1, None, True),
        ("E", 2, 2, True),
        ("D", 0, 1, True),
        ("F", 2, None, True),
        ("H", 1, 4, False),
        ("I", 0, None, False),
        ("G", 0, 3, True),
        ("J", 1, 1, True),
    ]
    assert [p.text() for p in got][-4:] == ["H{1,4}?", "I*?", "G{0,3}", "J"]
    assert PatternElement("X", 0, None, False).text() == "X*?"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("A B+", "Greedy quantifiers are not allowed as the last element"),
        ("A B{2,} C? D", "Optional pattern cannot be preceded by greedy pattern"),
        ("A | B", "Unsupported pattern syntax"),
        ("* A", "Misplaced quantifier"),
    ],
)
def test_pattern_restrictions(pattern: str, message: str) -> None:
    with pytest.raises(SqlError) as info:
        parse_pattern(pattern, None, None)
    assert message in info.value.message


def test_measures_and_define_become_navigation_slots() -> None:
    node = bind(
        mr(
            measures="A.price AS p, LAST(B.price, 1) AS lb, FIRST(B.price) AS fb, SUM(B.price) AS s, "
            "MATCH_ROWTIME() AS rt",
            pattern="A B+? C",
            define="B AS price < PREV(price) AND AVG(B.price) < A.price, C AS price > 0",
        )
    )
    kinds = {(s.kind, s.var, s.offset) for s in node.slots}
    assert {("last", "A", 0), ("last", "B", 1), ("first", "B", 0), ("agg", "B", 0), ("prev", None, 1)} <= kinds
    assert [f.name for f in node.fields] == ["sym", "p", "lb", "fb", "s", "rt"]
    assert node.fields[-1].type.time_attr == "ROWTIME"
    assert str(node.fields[4].type) == "INT"  # SUM of INT is INT
    assert node.after == ("PAST_LAST_ROW", None)


def test_within_and_after_match() -> None:
    node = bind(mr(pattern="A B", extra="WITHIN INTERVAL '3' SECOND").replace("SKIP PAST LAST ROW", "SKIP TO FIRST B"))
    assert node.within_ms == 3000
    assert node.after == ("TO_FIRST", "B")


@pytest.mark.parametrize(
    ("query", "cls", "message"),
    [
        (mr(define="B AS price > PREV(B.price)"), UnsupportedSqlError, "physical offsets"),
        (mr(define="Z AS price > 1"), SqlValidationError, "Unknown pattern variable"),
        (mr(measures="Q.price AS p"), SqlValidationError, "Unknown pattern variable"),
        (mr().replace("ORDER BY ts", "ORDER BY price"), SqlValidationError, "rowtime or proctime"),
        (mr(define="B AS price + 1"), SqlValidationError, "must be a condition"),
    ],
)
def test_errors(query: str, cls: type, message: str) -> None:
    with pytest.raises(cls) as info:
        bind(query)
    assert message in info.value.message


def test_skip_to_variable_is_skip_to_last() -> None:
    """`AFTER MATCH SKIP TO v` (overview.md's grammar) is the standard's `SKIP TO LAST v`."""
    node = bind(mr(pattern="A B", extra="WITHIN INTERVAL '3' SECOND").replace("SKIP PAST LAST ROW", "SKIP TO B"))
    assert node.after == ("TO_LAST", "B") and node.within_ms == 3000


def test_match_proctime_is_a_proctime_attribute() -> None:
    """match_recognize.md's time attributes: MATCH_PROCTIME() (the time the match is emitted)."""
    node = bind(mr(measures="A.price AS p, MATCH_PROCTIME() AS pt"))
    assert str(node.fields[-1].type) == "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*"


@pytest.mark.parametrize("pattern", ["A?? B", "A{0,1}? B"])
def test_reluctant_optional_variable_is_refused(pattern: str) -> None:
    """As Flink's pattern translator refuses it (the page's known limitations)."""
    with pytest.raises(UnsupportedSqlError, match="Reluctant optional variables are not supported yet."):
        bind(mr(pattern=pattern))
