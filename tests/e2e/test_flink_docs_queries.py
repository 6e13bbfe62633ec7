"""The examples of Flink 2.x's SQL documentation, section Queries (docs/dev/table/sql/queries/),
run unchanged through streamsql: one table of cases, each the page's SQL with the rows the page
prints (or, where the page prints none, the rows Flink's semantics give for the small data set
noted with the case).

Tables are created as the pages describe them; where a page reads from a connector we cannot
reach (Kafka, a `values` test source), a CSV `filesystem` table with the same schema and the
page's rows stands in. Timestamps are compared as the pages print them (`2020-04-15 08:05`,
seconds and milliseconds only when not zero), DECIMALs as their text. Each case runs in the
modes its page allows (batch where the page carries the Batch label, streaming where its
result is insert-only or where only streaming is documented).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from planner.errors import SqlError
from runtime.errors import JobError
from streamsql import EnvironmentSettings, TableEnvironment

# ---------------------------------------------------------------------- tables of the pages

_WM = "WATERMARK FOR {t} AS {t} - INTERVAL '1' SECOND"


@dataclass(frozen=True)
class Fixture:
    """A table of a page: its name, its columns (DDL), its CSV rows."""

    name: str
    columns: str
    rows: tuple[str, ...]


FIXTURES: dict[str, Fixture] = {
    # window-tvf.md / window-agg.md: the Bid table
    "bid": Fixture(
        "Bid",
        f"bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING, {_WM.format(t='bidtime')}",
        (
            "2020-04-15 08:05:00,4.00,C,supplier1",
            "2020-04-15 08:07:00,2.00,A,supplier1",
            "2020-04-15 08:09:00,5.00,D,supplier2",
            "2020-04-15 08:11:00,3.00,B,supplier2",
            "2020-04-15 08:13:00,1.00,E,supplier1",
            "2020-04-15 08:17:00,6.00,F,supplier2",
        ),
    ),
    # window-tvf.md, SESSION: its own Bid rows
    "bid_session": Fixture(
        "Bid",
        f"bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, {_WM.format(t='bidtime')}",
        (
            "2020-04-15 08:07:00,4.00,A",
            "2020-04-15 08:06:00,2.00,A",
            "2020-04-15 08:09:00,5.00,B",
            "2020-04-15 08:08:00,3.00,A",
            "2020-04-15 08:17:00,1.00,B",
        ),
    ),
    # window-tvf.md, Window Offset: one row
    "offset_row": Fixture("T", "ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts", ("2021-06-30 00:00:04,1",)),
    # window-topn.md / window-deduplication.md: their Bid rows
    "bid_topn": Fixture(
        "Bid",
        f"bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING, {_WM.format(t='bidtime')}",
        (
            "2020-04-15 08:05:00,4.00,A,supplier1",
            "2020-04-15 08:06:00,4.00,C,supplier2",
            "2020-04-15 08:07:00,2.00,G,supplier1",
            "2020-04-15 08:08:00,2.00,B,supplier3",
            "2020-04-15 08:09:00,5.00,D,supplier4",
            "2020-04-15 08:11:00,2.00,B,supplier3",
            "2020-04-15 08:13:00,1.00,E,supplier1",
            "2020-04-15 08:15:00,3.00,H,supplier2",
            "2020-04-15 08:17:00,6.00,F,supplier5",
        ),
    ),
    # window-join.md
    "left": Fixture(
        "LeftTable",
        f"row_time TIMESTAMP(3), num INT, id STRING, {_WM.format(t='row_time')}",
        ("2020-04-15 12:02:00,1,L1", "2020-04-15 12:06:00,2,L2", "2020-04-15 12:03:00,3,L3"),
    ),
    "right": Fixture(
        "RightTable",
        f"row_time TIMESTAMP(3), num INT, id STRING, {_WM.format(t='row_time')}",
        ("2020-04-15 12:01:00,2,R2", "2020-04-15 12:04:00,3,R3", "2020-04-15 12:05:00,4,R4"),
    ),
    # match_recognize.md: the three Ticker data sets
    "ticker": Fixture(
        "Ticker",
        f"symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, {_WM.format(t='rowtime')}",
        tuple(
            f"ACME,2011-04-01 10:00:{i:02d},{p},{t}"
            for i, (p, t) in enumerate(
                [(12, 1), (17, 2), (19, 1), (21, 3), (25, 2), (18, 1), (15, 1), (14, 2), (24, 2), (25, 2), (19, 1)]
            )
        ),
    ),
    "ticker_avg": Fixture(
        "Ticker",
        f"symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, {_WM.format(t='rowtime')}",
        tuple(
            f"ACME,2011-04-01 10:00:{i:02d},{p},{t}"
            for i, (p, t) in enumerate(
                [
                    (12, 1),
                    (17, 2),
                    (13, 1),
                    (16, 3),
                    (25, 2),
                    (2, 1),
                    (4, 1),
                    (10, 2),
                    (15, 2),
                    (25, 2),
                    (25, 1),
                    (30, 1),
                ]
            )
        ),
    ),
    "ticker_xyz": Fixture(
        "Ticker",
        f"symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, {_WM.format(t='rowtime')}",
        tuple(
            f"XYZ,2018-09-17 10:00:{i + 2:02d},{p},{t}"
            for i, (p, t) in enumerate([(10, 1), (11, 2), (12, 1), (13, 2), (14, 1), (16, 2)])
        ),
    ),
    "ticker_within": Fixture(
        "Ticker",
        f"symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, {_WM.format(t='rowtime')}",
        tuple(
            f"ACME,2011-04-01 {t}:00,{p},{x}"
            for t, p, x in [
                ("10:00", 20, 1),
                ("10:20", 17, 2),
                ("10:40", 18, 1),
                ("11:00", 11, 3),
                ("11:20", 14, 2),
                ("11:40", 9, 1),
                ("12:00", 15, 1),
                ("12:20", 14, 2),
                ("12:40", 24, 2),
                ("13:00", 1, 2),
                ("13:20", 19, 1),
            ]
        ),
    ),
    "ticker_output": Fixture(
        "Ticker",
        f"symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, {_WM.format(t='rowtime')}",
        tuple(
            f"XYZ,2018-09-17 10:00:0{i + 2},{p},{x}" for i, (p, x) in enumerate([(10, 1), (12, 2), (13, 1), (11, 2)])
        ),
    ),
    "ticker_after": Fixture(
        "Ticker",
        f"symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, {_WM.format(t='rowtime')}",
        tuple(
            f"XYZ,2018-09-17 10:00:0{i + 1},{p},{x}"
            for i, (p, x) in enumerate([(7, 1), (9, 2), (10, 1), (5, 2), (10, 2), (7, 2), (14, 2)])
        ),
    ),
    # joins.md, event-time temporal join (the page's two orders; rates: 1.14 from 11:59, 1.10 from 12:05)
    "orders_fx": Fixture(
        "orders",
        "order_id STRING, price DECIMAL(32,2), currency STRING, order_time TIMESTAMP(3), "
        "WATERMARK FOR order_time AS order_time",
        ("o_001,11.11,EUR,2020-01-01 12:00:00", "o_002,12.51,EUR,2020-01-01 12:06:00"),
    ),
    "rates": Fixture(
        "currency_rates",
        "currency STRING, conversion_rate DECIMAL(32, 2), update_time TIMESTAMP(3), "
        "WATERMARK FOR update_time AS update_time, PRIMARY KEY (currency) NOT ENFORCED",
        ("EUR,1.14,2020-01-01 11:59:00", "EUR,1.10,2020-01-01 12:05:00", "EUR,1.20,2020-01-01 12:30:00"),
    ),
    # joins.md interval join / over-agg.md: Orders and Shipments (small data of our own)
    "orders_time": Fixture(
        "Orders",
        "order_id INT, product STRING, order_time TIMESTAMP(3), amount INT, WATERMARK FOR order_time AS order_time",
        (
            "1,p1,2020-01-01 10:00:00,10",
            "2,p1,2020-01-01 10:30:00,20",
            "3,p2,2020-01-01 10:40:00,5",
            "4,p1,2020-01-01 11:15:00,7",
            "5,p1,2020-01-01 11:31:00,1",
        ),
    ),
    "shipments": Fixture(
        "Shipments",
        "order_id INT, ship_time TIMESTAMP(3), WATERMARK FOR ship_time AS ship_time",
        ("1,2020-01-01 12:00:00", "2,2020-01-01 16:00:00", "4,2020-01-01 11:16:00"),
    ),
    # group-agg.md / set-ops.md / topn.md: Orders without time (small data of our own)
    "orders": Fixture(
        "Orders",
        "order_id INT, users STRING, product STRING, amount INT, tags ARRAY<STRING>",
        (),
    ),
    "shop_sales": Fixture(
        "ShopSales",
        "product_id STRING, category STRING, product_name STRING, sales BIGINT",
        ("p1,c1,n1,10", "p2,c1,n2,30", "p3,c1,n3,20", "p4,c2,n4,5", "p5,c2,n5,7"),
    ),
    "orders_proc": Fixture(
        "Orders",
        "order_id STRING, customer_id INT, total DOUBLE, proc_time AS PROCTIME()",
        ("o1,1,10.5", "o2,2,3.0", "o3,9,1.0"),
    ),
    "customers": Fixture(
        "Customers", "id INT, name STRING, country STRING, zip STRING", ("1,ann,DE,10115", "2,bo,FR,75001")
    ),
    "orders_dup": Fixture(
        "Orders",
        "order_id STRING, order_time STRING, `user` STRING, product STRING, num BIGINT, proctime AS PROCTIME()",
        ("o1,2020-01-01,u1,p1,1", "o1,2020-01-01,u1,p1,2", "o2,2020-01-01,u2,p2,3"),
    ),
    "products": Fixture("Products", "product STRING, pname STRING", ("p1,Rubber duck", "p3,Rubber band")),
    "paimon_tb": Fixture("paimon_tb", "id INT, name STRING", ("1,a",)),
    # hints.md: t1, t2 (and a CSV row the OPTIONS example's parse-error option skips)
    "t1": Fixture("t1", "id BIGINT, name STRING, age INT", ("1,a,10", "2,b,20", "oops,c,30")),
    "t2": Fixture("t2", "id BIGINT, name STRING, age INT", ("1,x,11", "2,y,21")),
}

# Orders with an ARRAY column cannot come from CSV: a view over VALUES.
_ORDERS_VIEW = (
    "CREATE VIEW Orders(order_id, users, product, amount, tags) AS VALUES "
    "(1, 'u1', 'p1', 30, ARRAY['a', 'b']), (2, 'u1', 'p2', 40, ARRAY['c']), "
    "(3, 'u2', 'p1', 10, ARRAY['a']), (1, 'u2', 'p3', 5, CAST(NULL AS ARRAY<STRING>))"
)
_SET_VIEWS = (
    "create view t1(s) as values ('c'), ('a'), ('b'), ('b'), ('c')",
    "create view t2(s) as values ('d'), ('e'), ('a'), ('b'), ('b')",
)
_PRODUCTS = (
    "FROM (VALUES ('supplier1', 'product1', 4), ('supplier1', 'product2', 3), "
    "('supplier2', 'product3', 3), ('supplier2', 'product4', 4)) AS Products(supplier_id, product_id, rating)"
)
_TUMBLE_L = "SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))"
_TUMBLE_R = "SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))"

BOTH = ("streaming", "batch")
BATCH = ("batch",)
STREAMING = ("streaming",)


@dataclass(frozen=True)
class Case:
    """One documented example: the page, its tables, its SQL and the rows it shows."""

    id: str
    page: str
    fixtures: tuple[str, ...]
    sql: str
    expected: tuple[tuple[Any, ...], ...] = ()
    modes: tuple[str, ...] = BOTH
    setup: tuple[str, ...] = ()
    ordered: bool = False
    error: str | None = None  # a refusal: the message must contain this
    xfail: str | None = None  # not supported yet: why
    note: str = ""


_W00, _W10, _W20 = "2020-04-15 08:00", "2020-04-15 08:10", "2020-04-15 08:20"

CASES: list[Case] = [
    # ------------------------------------------------------------------ window-tvf.md
    Case(
        "tvf-tumble",
        "window-tvf",
        ("bid",),
        "SELECT bidtime, price, item, window_start, window_end, window_time FROM TABLE("
        "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))",
        (
            ("2020-04-15 08:05", "4.00", "C", _W00, _W10, "2020-04-15 08:09:59.999"),
            ("2020-04-15 08:07", "2.00", "A", _W00, _W10, "2020-04-15 08:09:59.999"),
            ("2020-04-15 08:09", "5.00", "D", _W00, _W10, "2020-04-15 08:09:59.999"),
            ("2020-04-15 08:11", "3.00", "B", _W10, _W20, "2020-04-15 08:19:59.999"),
            ("2020-04-15 08:13", "1.00", "E", _W10, _W20, "2020-04-15 08:19:59.999"),
            ("2020-04-15 08:17", "6.00", "F", _W10, _W20, "2020-04-15 08:19:59.999"),
        ),
    ),
    Case(
        "tvf-tumble-named-params",
        "window-tvf",
        ("bid",),
        "SELECT item, window_start, window_end FROM TABLE(TUMBLE(DATA => TABLE Bid, "
        "TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES)) WHERE item IN ('C', 'F')",
        (("C", _W00, _W10), ("F", _W10, _W20)),
    ),
    Case(
        "tvf-tumble-agg",
        "window-tvf",
        ("bid",),
        "SELECT window_start, window_end, SUM(price) FROM TABLE("
        "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
        ((_W00, _W10, "11.00"), (_W10, _W20, "10.00")),
    ),
    Case(
        "tvf-hop-named-params",
        "window-tvf",
        ("bid",),
        "SELECT item, window_start, window_end FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), "
        "SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES)) WHERE item IN ('C', 'F')",
        (
            ("C", _W00, _W10),
            ("C", "2020-04-15 08:05", "2020-04-15 08:15"),
            ("F", _W10, _W20),
            ("F", "2020-04-15 08:15", "2020-04-15 08:25"),
        ),
    ),
    Case(
        "tvf-hop-agg",
        "window-tvf",
        ("bid",),
        "SELECT window_start, window_end, SUM(price) FROM TABLE("
        "HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) "
        "GROUP BY window_start, window_end",
        (
            (_W00, _W10, "11.00"),
            ("2020-04-15 08:05", "2020-04-15 08:15", "15.00"),
            (_W10, _W20, "10.00"),
            ("2020-04-15 08:15", "2020-04-15 08:25", "6.00"),
        ),
    ),
    Case(
        "tvf-cumulate-named-params",
        "window-tvf",
        ("bid",),
        "SELECT item, window_start, window_end, window_time FROM TABLE(CUMULATE(DATA => TABLE Bid, "
        "TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '2' MINUTES, SIZE => INTERVAL '10' MINUTES)) "
        "WHERE item IN ('C', 'F')",
        (
            ("C", _W00, "2020-04-15 08:06", "2020-04-15 08:05:59.999"),
            ("C", _W00, "2020-04-15 08:08", "2020-04-15 08:07:59.999"),
            ("C", _W00, _W10, "2020-04-15 08:09:59.999"),
            ("F", _W10, "2020-04-15 08:18", "2020-04-15 08:17:59.999"),
            ("F", _W10, _W20, "2020-04-15 08:19:59.999"),
        ),
    ),
    Case(
        "tvf-cumulate-agg",
        "window-tvf",
        ("bid",),
        "SELECT window_start, window_end, SUM(price) FROM TABLE("
        "CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)) "
        "GROUP BY window_start, window_end",
        (
            (_W00, "2020-04-15 08:06", "4.00"),
            (_W00, "2020-04-15 08:08", "6.00"),
            (_W00, _W10, "11.00"),
            (_W10, "2020-04-15 08:12", "3.00"),
            (_W10, "2020-04-15 08:14", "4.00"),
            (_W10, "2020-04-15 08:16", "4.00"),
            (_W10, "2020-04-15 08:18", "10.00"),
            (_W10, _W20, "10.00"),
        ),
    ),
    Case(
        "tvf-offset-named-params",
        "window-tvf",
        ("bid",),
        "SELECT item, window_start, window_end FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), "
        "SIZE => INTERVAL '10' MINUTES, `OFFSET` => INTERVAL '1' MINUTES)) WHERE item IN ('C', 'B')",
        (("C", "2020-04-15 08:01", "2020-04-15 08:11"), ("B", "2020-04-15 08:11", "2020-04-15 08:21")),
    ),
    Case(
        "tvf-offset-agg",
        "window-tvf",
        ("bid",),
        "SELECT window_start, window_end, SUM(price) FROM TABLE("
        "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES)) "
        "GROUP BY window_start, window_end",
        (("2020-04-15 08:01", "2020-04-15 08:11", "11.00"), ("2020-04-15 08:11", "2020-04-15 08:21", "10.00")),
    ),
    *[
        Case(
            f"tvf-offset{off}",
            "window-tvf",
            ("offset_row",),
            "SELECT window_start, window_end FROM TABLE(TUMBLE(TABLE T, DESCRIPTOR(ts), INTERVAL '10' MINUTES, "
            f"INTERVAL '{off}' MINUTES))",
            ((start, end),),
            modes=BATCH,
            note="the page's Window Offset list for a row at 2021-06-30 00:00:04",
        )
        for off, start, end in [
            ("-16", "2021-06-29 23:54", "2021-06-30 00:04"),
            ("-6", "2021-06-29 23:54", "2021-06-30 00:04"),
            ("-4", "2021-06-29 23:56", "2021-06-30 00:06"),
            ("0", "2021-06-30 00:00", "2021-06-30 00:10"),
            ("4", "2021-06-29 23:54", "2021-06-30 00:04"),
            ("6", "2021-06-29 23:56", "2021-06-30 00:06"),
            ("16", "2021-06-29 23:56", "2021-06-30 00:06"),
        ]
    ],
    Case(
        "tvf-session-partitioned-agg",
        "window-tvf",
        ("bid_session",),
        "SELECT window_start, window_end, item, SUM(price) AS total_price FROM TABLE("
        "SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) "
        "GROUP BY item, window_start, window_end",
        (
            ("2020-04-15 08:06", "2020-04-15 08:13", "A", "9.00"),
            ("2020-04-15 08:09", "2020-04-15 08:14", "B", "5.00"),
            ("2020-04-15 08:17", "2020-04-15 08:22", "B", "1.00"),
        ),
    ),
    Case(
        "tvf-session-agg",
        "window-tvf",
        ("bid_session",),
        "SELECT window_start, window_end, SUM(price) AS total_price FROM TABLE("
        "SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) GROUP BY window_start, window_end",
        (("2020-04-15 08:06", "2020-04-15 08:14", "14.00"), ("2020-04-15 08:17", "2020-04-15 08:22", "1.00")),
    ),
    Case(
        "tvf-session-rows",
        "window-tvf",
        ("bid_session",),
        "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))",
        (
            ("2020-04-15 08:07", "4.00", "A", "2020-04-15 08:06", "2020-04-15 08:13", "2020-04-15 08:12:59.999"),
            ("2020-04-15 08:06", "2.00", "A", "2020-04-15 08:06", "2020-04-15 08:13", "2020-04-15 08:12:59.999"),
            ("2020-04-15 08:08", "3.00", "A", "2020-04-15 08:06", "2020-04-15 08:13", "2020-04-15 08:12:59.999"),
            ("2020-04-15 08:09", "5.00", "B", "2020-04-15 08:09", "2020-04-15 08:14", "2020-04-15 08:13:59.999"),
            ("2020-04-15 08:17", "1.00", "B", "2020-04-15 08:17", "2020-04-15 08:22", "2020-04-15 08:21:59.999"),
        ),
        note="Flink runs it in streaming mode only; streamsql also in batch mode",
    ),
    Case(
        "tvf-session-rows-no-partition",
        "window-tvf",
        ("bid_session",),
        "SELECT item, window_start, window_end FROM TABLE(SESSION(DATA => TABLE Bid, "
        "TIMECOL => DESCRIPTOR(bidtime), GAP => INTERVAL '5' MINUTES))",
        (
            ("A", "2020-04-15 08:06", "2020-04-15 08:14"),
            ("A", "2020-04-15 08:06", "2020-04-15 08:14"),
            ("A", "2020-04-15 08:06", "2020-04-15 08:14"),
            ("B", "2020-04-15 08:06", "2020-04-15 08:14"),
            ("B", "2020-04-15 08:17", "2020-04-15 08:22"),
        ),
    ),
    Case(
        "tvf-session-window-dedup",
        "window-tvf",
        ("bid_session",),
        "SELECT * FROM (SELECT bidtime, price, item, window_start, window_end, ROW_NUMBER() OVER "
        "(PARTITION BY window_start, window_end, item ORDER BY bidtime DESC) AS rownum FROM TABLE("
        "SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))) WHERE rownum <= 1",
        (
            ("2020-04-15 08:08", "3.00", "A", "2020-04-15 08:06", "2020-04-15 08:13", 1),
            ("2020-04-15 08:09", "5.00", "B", "2020-04-15 08:09", "2020-04-15 08:14", 1),
            ("2020-04-15 08:17", "1.00", "B", "2020-04-15 08:17", "2020-04-15 08:22", 1),
        ),
        note="window-deduplication.md: after a SESSION TVF, Flink 1.19+ (experimental)",
    ),
    # ------------------------------------------------------------------ window-agg.md
    Case(
        "agg-grouping-sets",
        "window-agg",
        ("bid",),
        "SELECT window_start, window_end, supplier_id, SUM(price) AS total_price FROM TABLE("
        "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) "
        "GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ())",
        (
            (_W00, _W10, None, "11.00"),
            (_W00, _W10, "supplier2", "5.00"),
            (_W00, _W10, "supplier1", "6.00"),
            (_W10, _W20, None, "10.00"),
            (_W10, _W20, "supplier2", "9.00"),
            (_W10, _W20, "supplier1", "1.00"),
        ),
    ),
    Case(
        "agg-rollup",
        "window-agg",
        ("bid",),
        "SELECT window_start, window_end, supplier_id, SUM(price) AS price FROM TABLE("
        "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) "
        "GROUP BY window_start, window_end, ROLLUP (supplier_id)",
        (
            (_W00, _W10, None, "11.00"),
            (_W00, _W10, "supplier2", "5.00"),
            (_W00, _W10, "supplier1", "6.00"),
            (_W10, _W20, None, "10.00"),
            (_W10, _W20, "supplier2", "9.00"),
            (_W10, _W20, "supplier1", "1.00"),
        ),
        note="the page: equivalent to the GROUPING SETS query",
    ),
    Case(
        "agg-cube-first-window",
        "window-agg",
        ("bid",),
        "SELECT window_start, window_end, item, supplier_id, SUM(price) AS price FROM TABLE("
        "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) "
        "GROUP BY window_start, window_end, CUBE (supplier_id, item) HAVING window_start = TIMESTAMP '2020-04-15 08:00:00'",
        tuple(
            (_W00, _W10, item, sup, total)
            for item, sup, total in [
                ("C", "supplier1", "4.00"),
                ("A", "supplier1", "2.00"),
                ("D", "supplier2", "5.00"),
                (None, "supplier1", "6.00"),
                (None, "supplier2", "5.00"),
                ("C", None, "4.00"),
                ("A", None, "2.00"),
                ("D", None, "5.00"),
                (None, None, "11.00"),
            ]
        ),
        note="the page shows no rows: the four grouping sets of CUBE over the first window",
    ),
    Case(
        "agg-cascading",
        "window-agg",
        ("bid",),
        "SELECT window_start, window_end, SUM(partial_price) AS total_price FROM TABLE("
        "TUMBLE(TABLE window1, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
        ((_W00, _W10, "11.00"), (_W10, _W20, "10.00")),
        setup=(
            "CREATE VIEW window1 AS SELECT window_start AS window_5mintumble_start, "
            "window_end AS window_5mintumble_end, window_time AS rowtime, SUM(price) AS partial_price "
            "FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) "
            "GROUP BY supplier_id, window_start, window_end, window_time",
        ),
    ),
    Case(
        "agg-cascading-ambiguous",
        "window-agg",
        ("bid",),
        "SELECT window_start, window_end, SUM(partial_price) AS total_price FROM TABLE("
        "TUMBLE(TABLE window1, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end",
        setup=(
            "CREATE VIEW window1 AS SELECT window_start, window_end, window_time AS rowtime, "
            "SUM(price) AS partial_price FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) "
            "GROUP BY supplier_id, window_start, window_end, window_time",
        ),
        error="Column 'window_start' is ambiguous",
        note="the page's note: this form fails with exactly this error",
    ),
    Case(
        "agg-group-window-legacy",
        "window-agg",
        ("bid",),
        "SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE), TUMBLE_END(bidtime, INTERVAL '10' MINUTE), "
        "TUMBLE_ROWTIME(bidtime, INTERVAL '10' MINUTE), SUM(price) FROM Bid GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE)",
        ((_W00, _W10, "2020-04-15 08:09:59.999", "11.00"), (_W10, _W20, "2020-04-15 08:19:59.999", "10.00")),
    ),
    Case(
        "agg-group-window-hop-session",
        "window-agg",
        ("bid",),
        "SELECT HOP_START(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE), "
        "HOP_ROWTIME(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE), SUM(price) FROM Bid "
        "GROUP BY HOP(bidtime, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE)",
        (
            (_W00, "2020-04-15 08:09:59.999", "11.00"),
            ("2020-04-15 08:05", "2020-04-15 08:14:59.999", "15.00"),
            (_W10, "2020-04-15 08:19:59.999", "10.00"),
            ("2020-04-15 08:15", "2020-04-15 08:24:59.999", "6.00"),
        ),
    ),
    # ------------------------------------------------------------------ window-topn.md / window-deduplication.md
    Case(
        "topn-after-window-agg",
        "window-topn",
        ("bid_topn",),
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) "
        "as rownum FROM (SELECT window_start, window_end, supplier_id, SUM(price) as price, COUNT(*) as cnt "
        "FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) "
        "GROUP BY window_start, window_end, supplier_id)) WHERE rownum <= 3",
        (
            (_W00, _W10, "supplier1", "6.00", 2, 1),
            (_W00, _W10, "supplier4", "5.00", 1, 2),
            (_W00, _W10, "supplier2", "4.00", 1, 3),
            (_W10, _W20, "supplier5", "6.00", 1, 1),
            (_W10, _W20, "supplier2", "3.00", 1, 2),
            (_W10, _W20, "supplier3", "2.00", 1, 3),
        ),
    ),
    Case(
        "topn-after-tvf",
        "window-topn",
        ("bid_topn",),
        "SELECT * FROM (SELECT bidtime, price, item, supplier_id, window_start, window_end, "
        "ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) as rownum "
        "FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))) WHERE rownum <= 3",
        (
            ("2020-04-15 08:05", "4.00", "A", "supplier1", _W00, _W10, 2),
            ("2020-04-15 08:06", "4.00", "C", "supplier2", _W00, _W10, 3),
            ("2020-04-15 08:09", "5.00", "D", "supplier4", _W00, _W10, 1),
            ("2020-04-15 08:11", "2.00", "B", "supplier3", _W10, _W20, 3),
            ("2020-04-15 08:15", "3.00", "H", "supplier2", _W10, _W20, 2),
            ("2020-04-15 08:17", "6.00", "F", "supplier5", _W10, _W20, 1),
        ),
    ),
    Case(
        "window-dedup-last",
        "window-deduplication",
        ("bid_topn",),
        "SELECT * FROM (SELECT bidtime, price, item, supplier_id, window_start, window_end, "
        "ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bidtime DESC) as rownum "
        "FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))) WHERE rownum <= 1",
        (
            ("2020-04-15 08:09", "5.00", "D", "supplier4", _W00, _W10, 1),
            ("2020-04-15 08:17", "6.00", "F", "supplier5", _W10, _W20, 1),
        ),
    ),
    # ------------------------------------------------------------------ window-join.md
    Case(
        "window-join-full",
        "window-join",
        ("left", "right"),
        "SELECT L.num as L_Num, L.id as L_Id, R.num as R_Num, R.id as R_Id, L.window_start, L.window_end "
        f"FROM ({_TUMBLE_L}) L FULL JOIN ({_TUMBLE_R}) R "
        "ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end",
        (
            (1, "L1", None, None, "2020-04-15 12:00", "2020-04-15 12:05"),
            (None, None, 2, "R2", None, None),
            (3, "L3", 3, "R3", "2020-04-15 12:00", "2020-04-15 12:05"),
            (2, "L2", None, None, "2020-04-15 12:05", "2020-04-15 12:10"),
            (None, None, 4, "R4", None, None),
        ),
        note="the page prints L.window_start/L.window_end for the right-only rows R2 and R4; "
        "Flink itself gives NULL there (WindowJoinITCase.testOuterJoin: right-only rows have NULL left "
        "window columns), so this table follows Flink's test, not the page's illustration",
    ),
    *[
        Case(
            f"window-join-{kind}",
            "window-join",
            ("left", "right"),
            f"SELECT * FROM ({_TUMBLE_L}) L WHERE {cond}",
            tuple((f"2020-04-15 12:0{m}", n, i, start, end, wt) for m, n, i, start, end, wt in rows),
        )
        for kind, cond, rows in [
            (
                "semi-in",
                f"L.num IN (SELECT num FROM ({_TUMBLE_R}) R "
                "WHERE L.window_start = R.window_start AND L.window_end = R.window_end)",
                [(3, 3, "L3", "2020-04-15 12:00", "2020-04-15 12:05", "2020-04-15 12:04:59.999")],
            ),
            (
                "semi-exists",
                f"EXISTS (SELECT * FROM ({_TUMBLE_R}) R WHERE L.num = R.num "
                "AND L.window_start = R.window_start AND L.window_end = R.window_end)",
                [(3, 3, "L3", "2020-04-15 12:00", "2020-04-15 12:05", "2020-04-15 12:04:59.999")],
            ),
            (
                "anti-not-in",
                f"L.num NOT IN (SELECT num FROM ({_TUMBLE_R}) R "
                "WHERE L.window_start = R.window_start AND L.window_end = R.window_end)",
                [
                    (2, 1, "L1", "2020-04-15 12:00", "2020-04-15 12:05", "2020-04-15 12:04:59.999"),
                    (6, 2, "L2", "2020-04-15 12:05", "2020-04-15 12:10", "2020-04-15 12:09:59.999"),
                ],
            ),
            (
                "anti-not-exists",
                f"NOT EXISTS (SELECT * FROM ({_TUMBLE_R}) R WHERE L.num = R.num "
                "AND L.window_start = R.window_start AND L.window_end = R.window_end)",
                [
                    (2, 1, "L1", "2020-04-15 12:00", "2020-04-15 12:05", "2020-04-15 12:04:59.999"),
                    (6, 2, "L2", "2020-04-15 12:05", "2020-04-15 12:10", "2020-04-15 12:09:59.999"),
                ],
            ),
        ]
    ],
    # ------------------------------------------------------------------ group-agg.md
    Case(
        "group-grouping-sets",
        "group-agg",
        (),
        f"SELECT supplier_id, rating, COUNT(*) AS total {_PRODUCTS} "
        "GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ())",
        (
            ("supplier1", 4, 1),
            ("supplier1", None, 2),
            (None, None, 4),
            ("supplier1", 3, 1),
            ("supplier2", 3, 1),
            ("supplier2", None, 2),
            ("supplier2", 4, 1),
        ),
        modes=BATCH,
    ),
    Case(
        "group-rollup",
        "group-agg",
        (),
        f"SELECT supplier_id, rating, COUNT(*) {_PRODUCTS} GROUP BY ROLLUP (supplier_id, rating)",
        (
            ("supplier1", 4, 1),
            ("supplier1", None, 2),
            (None, None, 4),
            ("supplier1", 3, 1),
            ("supplier2", 3, 1),
            ("supplier2", None, 2),
            ("supplier2", 4, 1),
        ),
        modes=BATCH,
        note="the page: equivalent to the GROUPING SETS query",
    ),
    Case(
        "group-having",
        "group-agg",
        (),
        "SELECT SUM(amount) FROM Orders GROUP BY users HAVING SUM(amount) > 50",
        ((70,),),
        modes=BATCH,
        setup=(_ORDERS_VIEW,),
    ),
    Case(
        "group-having-no-group-by",
        "group-agg",
        (),
        "SELECT SUM(amount) FROM Orders HAVING SUM(amount) > 500",
        (),
        modes=BATCH,
        setup=(_ORDERS_VIEW,),
        note="the page: HAVING without GROUP BY emits zero rows when the condition is false",
    ),
    Case(
        "group-count-distinct",
        "group-agg",
        (),
        "SELECT COUNT(DISTINCT order_id) FROM Orders",
        ((3,),),
        modes=BATCH,
        setup=(_ORDERS_VIEW,),
    ),
    # ------------------------------------------------------------------ over-agg.md
    Case(
        "over-range",
        "over-agg",
        ("orders_time",),
        "SELECT order_id, order_time, amount, SUM(amount) OVER (PARTITION BY product ORDER BY order_time "
        "RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS one_hour_prod_amount_sum FROM Orders",
        (
            (1, "2020-01-01 10:00", 10, 10),
            (2, "2020-01-01 10:30", 20, 30),
            (3, "2020-01-01 10:40", 5, 5),
            (4, "2020-01-01 11:15", 7, 27),
            (5, "2020-01-01 11:31", 1, 8),
        ),
    ),
    Case(
        "over-window-clause",
        "over-agg",
        ("orders_time",),
        "SELECT order_id, order_time, amount, SUM(amount) OVER w AS sum_amount, AVG(amount) OVER w AS avg_amount "
        "FROM Orders WINDOW w AS (PARTITION BY product ORDER BY order_time "
        "RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)",
        (
            (1, "2020-01-01 10:00", 10, 10, 10),
            (2, "2020-01-01 10:30", 20, 30, 15),
            (3, "2020-01-01 10:40", 5, 5, 5),
            (4, "2020-01-01 11:15", 7, 27, 13),
            (5, "2020-01-01 11:31", 1, 8, 4),
        ),
    ),
    Case(
        "over-rows",
        "over-agg",
        ("orders_time",),
        "SELECT order_id, SUM(amount) OVER (PARTITION BY product ORDER BY order_time "
        "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM Orders",
        ((1, 10), (2, 30), (3, 5), (4, 27), (5, 8)),
    ),
    # ------------------------------------------------------------------ joins.md
    Case(
        "join-interval",
        "joins",
        ("orders_time", "shipments"),
        "SELECT o.order_id, s.ship_time FROM Orders o, Shipments s WHERE o.order_id = s.order_id "
        "AND o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND s.ship_time",
        ((1, "2020-01-01 12:00"), (4, "2020-01-01 11:16")),
    ),
    Case(
        "join-temporal-event-time",
        "joins",
        ("orders_fx", "rates"),
        "SELECT order_id, price, orders.currency, conversion_rate, order_time FROM orders "
        "LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time "
        "ON orders.currency = currency_rates.currency",
        (
            ("o_001", "11.11", "EUR", "1.14", "2020-01-01 12:00"),
            ("o_002", "12.51", "EUR", "1.10", "2020-01-01 12:06"),
        ),
        modes=STREAMING,
    ),
    Case(
        "join-lookup",
        "joins",
        ("orders_proc", "customers"),
        "SELECT o.order_id, o.total, c.country, c.zip FROM Orders AS o "
        "JOIN Customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id",
        (("o1", 10.5, "DE", "10115"), ("o2", 3.0, "FR", "75001")),
        modes=STREAMING,
        note="the page's Customers is a JDBC table; a filesystem table is a lookup source here too",
    ),
    Case(
        "join-array-expansion",
        "joins",
        (),
        "SELECT order_id, tag FROM Orders CROSS JOIN UNNEST(tags) AS t (tag)",
        ((1, "a"), (1, "b"), (2, "c"), (3, "a")),
        setup=(_ORDERS_VIEW,),
    ),
    Case(
        "join-array-expansion-ordinality",
        "joins",
        (),
        "SELECT order_id, tag, pos FROM Orders CROSS JOIN UNNEST(tags) WITH ORDINALITY AS t (tag, pos)",
        ((1, "a", 1), (1, "b", 2), (2, "c", 1), (3, "a", 1)),
        setup=(_ORDERS_VIEW,),
        note="the page says WITH ORDINALITY is not yet supported; Flink 2.x supports it",
    ),
    # ------------------------------------------------------------------ set-ops.md
    *[
        Case(
            f"setop-{op.lower().replace(' ', '-')}",
            "set-ops",
            (),
            f"(SELECT s FROM t1) {op} (SELECT s FROM t2)",
            tuple((s,) for s in rows),
            modes=BATCH,
            setup=_SET_VIEWS,
        )
        for op, rows in [
            ("UNION", "cabde"),
            ("UNION ALL", "cabbcdeabb"),
            ("INTERSECT", "ab"),
            ("INTERSECT ALL", "abb"),
            ("EXCEPT", "c"),
            ("EXCEPT ALL", "cc"),
        ]
    ],
    Case(
        "setop-in",
        "set-ops",
        (),
        "SELECT users, amount FROM Orders WHERE product IN (SELECT product FROM NewProducts)",
        (("u1", 30), ("u2", 10), ("u2", 5)),
        modes=BATCH,
        setup=(_ORDERS_VIEW, "CREATE VIEW NewProducts(product) AS VALUES ('p1'), ('p3')"),
    ),
    # ------------------------------------------------------------------ topn.md / deduplication.md
    Case(
        "topn",
        "topn",
        ("shop_sales",),
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num "
        "FROM ShopSales) WHERE row_num <= 2",
        (("p2", "c1", "n2", 30, 1), ("p3", "c1", "n3", 20, 2), ("p5", "c2", "n5", 7, 1), ("p4", "c2", "n4", 5, 2)),
        modes=BATCH,
    ),
    Case(
        "topn-no-ranking-output",
        "topn",
        ("shop_sales",),
        "SELECT product_id, category, product_name, sales FROM (SELECT *, "
        "ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num FROM ShopSales) WHERE row_num <= 2",
        (("p2", "c1", "n2", 30), ("p3", "c1", "n3", 20), ("p5", "c2", "n5", 7), ("p4", "c2", "n4", 5)),
        modes=BATCH,
    ),
    Case(
        "topn-qualify",
        "topn",
        ("shop_sales",),
        "SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rownum "
        "FROM ShopSales QUALIFY rownum <= 2",
        (("p2", "c1", "n2", 30, 1), ("p3", "c1", "n3", 20, 2), ("p5", "c2", "n5", 7, 1), ("p4", "c2", "n4", 5, 2)),
        modes=BATCH,
        note="the page's syntax block writes Top-N with QUALIFY",
    ),
    Case(
        "topn-qualify-streaming",
        "topn",
        ("shop_sales",),
        "SELECT product_id, category, ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS rownum "
        "FROM ShopSales QUALIFY rownum <= 1",
        (("p2", "c1", 1), ("p5", "c2", 1)),
        modes=STREAMING,
    ),
    Case(
        "dedup-proctime-first",
        "deduplication",
        ("orders_dup",),
        "SELECT order_id, `user`, product, num FROM (SELECT *, "
        "ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY proctime ASC) AS row_num FROM Orders) WHERE row_num = 1",
        (("o1", "u1", "p1", 1), ("o2", "u2", "p2", 3)),
        modes=STREAMING,
        note="the page's Orders has no order_id column; it is added here",
    ),
    Case(
        "dedup-qualify-window-only",
        "deduplication",
        ("shop_sales",),
        "SELECT product_id, category FROM ShopSales "
        "QUALIFY ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales ASC) = 1",
        (("p1", "c1"), ("p4", "c2")),
        modes=BATCH,
    ),
    # ------------------------------------------------------------------ match_recognize.md
    Case(
        "match-price-down",
        "match_recognize",
        ("ticker",),
        "SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime "
        "MEASURES START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS bottom_tstamp, "
        "LAST(PRICE_UP.rowtime) AS end_tstamp ONE ROW PER MATCH AFTER MATCH SKIP TO LAST PRICE_UP "
        "PATTERN (START_ROW PRICE_DOWN+ PRICE_UP) DEFINE PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL "
        "AND PRICE_DOWN.price < START_ROW.price) OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1), "
        "PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)) MR",
        (("ACME", "2011-04-01 10:00:04", "2011-04-01 10:00:07", "2011-04-01 10:00:08"),),
    ),
    Case(
        "match-avg",
        "match_recognize",
        ("ticker_avg",),
        "SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime "
        "MEASURES FIRST(A.rowtime) AS start_tstamp, LAST(A.rowtime) AS end_tstamp, AVG(A.price) AS avgPrice "
        "ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A+ B) DEFINE A AS AVG(A.price) < 15) MR",
        (
            ("ACME", "2011-04-01 10:00", "2011-04-01 10:00:03", 14),
            ("ACME", "2011-04-01 10:00:05", "2011-04-01 10:00:10", 13),
        ),
        note="the page prints 14.5 and 13.5; price is BIGINT there, and AVG of BIGINT is a BIGINT in Flink",
    ),
    *[
        Case(
            f"match-{name}",
            "match_recognize",
            ("ticker_xyz",),
            "SELECT * FROM Ticker MATCH_RECOGNIZE(PARTITION BY symbol ORDER BY rowtime MEASURES C.price AS lastPrice "
            f"ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A {quant} C) "
            "DEFINE A AS A.price > 10, B AS B.price < 15, C AS C.price > 12)",
            tuple(("XYZ", p) for p in prices),
        )
        for name, quant, prices in [("greedy", "B*", (16,)), ("reluctant", "B*?", (13, 16))]
    ],
    # ------------------------------------------------------------------ overview.md (grammar)
    Case(
        "grammar-join-using",
        "overview",
        ("orders_time", "products"),
        "SELECT * FROM Orders JOIN Products USING (product)",
        (
            ("p1", 1, "2020-01-01 10:00", 10, "Rubber duck"),
            ("p1", 2, "2020-01-01 10:30", 20, "Rubber duck"),
            ("p1", 4, "2020-01-01 11:15", 7, "Rubber duck"),
            ("p1", 5, "2020-01-01 11:31", 1, "Rubber duck"),
        ),
        note="the USING column once and first, as Calcite expands `*`",
    ),
    Case(
        "grammar-natural-full-join",
        "overview",
        ("orders_time", "products"),
        "SELECT product, order_id, pname FROM Orders NATURAL FULL JOIN Products",
        (
            ("p1", 1, "Rubber duck"),
            ("p1", 2, "Rubber duck"),
            ("p2", 3, None),
            ("p1", 4, "Rubber duck"),
            ("p1", 5, "Rubber duck"),
            ("p3", None, "Rubber band"),
        ),
        modes=BATCH,
    ),
    Case(
        "lexical-literals",
        "overview",
        (),
        "SELECT 'It''s me.', U&'\\263A', U&'#263A' UESCAPE '#'",
        (("It's me.", "\u263a", "\u263a"),),
    ),
    Case(
        "grammar-from-table",
        "overview",
        ("orders_time",),
        "SELECT order_id FROM TABLE Orders WHERE amount > 9",
        ((1,), (2,)),
    ),
    Case(
        "grammar-offset-fetch",
        "overview",
        ("orders_time",),
        "SELECT order_id FROM Orders ORDER BY order_id OFFSET 1 ROWS FETCH FIRST 2 ROWS ONLY",
        ((2,), (3,)),
        modes=BATCH,
        ordered=True,
    ),
    Case(
        "grammar-limit-all",
        "overview",
        ("orders_time",),
        "SELECT order_id FROM Orders ORDER BY order_id DESC LIMIT ALL",
        ((5,), (4,), (3,), (2,), (1,)),
        modes=BATCH,
        ordered=True,
    ),
    Case(
        "orderby-time-first",
        "orderby",
        ("orders_time",),
        "SELECT order_id FROM Orders ORDER BY order_time, order_id",
        ((1,), (2,), (3,), (4,), (5,)),
        ordered=True,
    ),
    Case(
        "grammar-skip-to-variable",
        "overview",
        ("orders_time",),
        "SELECT * FROM Orders MATCH_RECOGNIZE (ORDER BY order_time MEASURES A.order_id AS a, B.order_id AS b "
        "ONE ROW PER MATCH AFTER MATCH SKIP TO B PATTERN (A B) DEFINE B AS B.amount > A.amount) MR",
        ((1, 2), (3, 4)),
    ),
    Case(
        "match-within",
        "match_recognize",
        ("ticker_within",),
        "SELECT * FROM Ticker MATCH_RECOGNIZE(PARTITION BY symbol ORDER BY rowtime "
        "MEASURES C.rowtime AS dropTime, A.price - C.price AS dropDiff ONE ROW PER MATCH "
        "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B* C) WITHIN INTERVAL '1' HOUR "
        "DEFINE B AS B.price > A.price - 10, C AS C.price < A.price - 10)",
        (("ACME", "2011-04-01 13:00", 13),),
        note="the page's DEFINE lacks the comma between B and C, and the page prints 14 (the drop from 15 at "
        "12:00): that match spans exactly the WITHIN interval, which Flink's NFA times out (`timestamp - "
        "start >= windowTime`), so the match from 14 at 12:20 is the one found",
    ),
    Case(
        "match-output-mode",
        "match_recognize",
        ("ticker_output",),
        "SELECT * FROM Ticker MATCH_RECOGNIZE(PARTITION BY symbol ORDER BY rowtime "
        "MEASURES FIRST(A.price) AS startPrice, LAST(A.price) AS topPrice, B.price AS lastPrice "
        "ONE ROW PER MATCH PATTERN (A+ B) "
        "DEFINE A AS LAST(A.price, 1) IS NULL OR A.price > LAST(A.price, 1), B AS B.price < LAST(A.price))",
        (("XYZ", 10, 13, 11), ("XYZ", 12, 13, 11), ("XYZ", 13, 13, 11)),
        note="the page prints only the first row; without AFTER MATCH the strategy is SKIP TO NEXT ROW "
        "(Calcite's SqlToRelConverter default, which Flink uses), so the matches starting at 12 and 13 "
        "are found too",
    ),
    *[
        Case(
            f"match-after-{name}",
            "match_recognize",
            ("ticker_after",),
            "SELECT * FROM Ticker MATCH_RECOGNIZE(PARTITION BY symbol ORDER BY rowtime "
            "MEASURES SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime "
            f"ONE ROW PER MATCH AFTER MATCH {strategy} PATTERN (A+ C) DEFINE A AS SUM(A.price) < 30)",
            tuple(("XYZ", s, f"2018-09-17 10:00:0{a}", f"2018-09-17 10:00:0{b}") for s, a, b in rows),
            error=error,
        )
        for name, strategy, rows, error in [
            ("past-last-row", "SKIP PAST LAST ROW", [(26, 1, 4), (17, 5, 7)], None),
            ("to-next-row", "SKIP TO NEXT ROW", [(26, 1, 4), (24, 2, 5), (25, 3, 6), (22, 4, 7), (17, 5, 7)], None),
            ("to-last-a", "SKIP TO LAST A", [(26, 1, 4), (25, 3, 6), (17, 5, 7)], None),
            ("to-first-a", "SKIP TO FIRST A", [], "Could not skip to first element of a match"),
        ]
    ],
    # ------------------------------------------------------------------ hints.md
    Case(
        "hint-options",
        "hints",
        ("t1",),
        "select id, name from t1 /*+ OPTIONS('csv.ignore-parse-errors'='true') */ where id is not null",
        ((1, "a"), (2, "b")),
        note="the page's example sets 'scan.startup.mode' on a Kafka table; this is its CSV counterpart",
    ),
    Case(
        "hint-options-in-join",
        "hints",
        ("t1", "t2"),
        "select t1.id, t2.name from t1 /*+ OPTIONS('csv.ignore-parse-errors'='true') */ t1 "
        "join t2 /*+ OPTIONS('csv.ignore-parse-errors'='true') */ t2 on t1.id = t2.id",
        ((1, "x"), (2, "y")),
    ),
    *[
        Case(
            f"hint-{name}",
            "hints",
            ("t1", "t2"),
            f"SELECT /*+ {hint} */ t1.id, t2.age FROM t1 /*+ OPTIONS('csv.ignore-parse-errors'='true') */ "
            "JOIN t2 ON t1.id = t2.id",
            ((1, 11), (2, 21)),
            modes=BATCH,
        )
        for name, hint in [
            ("broadcast", "BROADCAST(t1)"),
            ("shuffle-hash", "SHUFFLE_HASH(t1)"),
            ("shuffle-merge", "SHUFFLE_MERGE(t1)"),
            ("nest-loop", "NEST_LOOP(t1)"),
            ("conflict", "BROADCAST(t2), BROADCAST(t1)"),
        ]
    ],
    Case(
        "hint-unknown-table",
        "hints",
        ("t1", "t2"),
        "SELECT /*+ BROADCAST(t3) */ * FROM t1 JOIN t2 ON t1.id = t2.id",
        modes=BATCH,
        error="cannot match the name of input tables or views: \n`t3` in `broadcast`",
        note="the page: the table specified in Join Hints must exist",
    ),
    # ------------------------------------------------------------------ time-travel.md
    Case(
        "time-travel",
        "time-travel",
        ("paimon_tb",),
        "SELECT * FROM paimon_tb FOR SYSTEM_TIME AS OF TIMESTAMP '2023-07-31 00:00:00'",
        modes=BATCH,
        error="Time travel is not supported",
        note="no streamsql catalog keeps table versions (Flink's built-in catalogs neither)",
    ),
]


# ---------------------------------------------------------------------- running a case
def _norm(v: Any) -> Any:
    """A value as the pages print it."""
    if isinstance(v, dt.datetime):
        if v.microsecond:
            return f"{v:%Y-%m-%d %H:%M:%S}.{v.microsecond // 1000:03d}"
        return f"{v:%Y-%m-%d %H:%M:%S}" if v.second else f"{v:%Y-%m-%d %H:%M}"
    if isinstance(v, Decimal):
        return str(v)
    return v


def _env(mode: str, case: Case, tmp_path: Path) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    for key in case.fixtures:
        fx = FIXTURES[key]
        path = tmp_path / f"{key}.csv"
        path.write_text("".join(r + "\n" for r in fx.rows))
        env.execute_sql(
            f"CREATE TABLE {fx.name} ({fx.columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
        )
    for stmt in case.setup:
        env.execute_sql(stmt)
    return env


def _params() -> list[Any]:
    out = []
    for case in CASES:
        for mode in case.modes:
            marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
            out.append(pytest.param(case, mode, id=f"{case.page}/{case.id}-{mode}", marks=marks))
    return out


@pytest.mark.parametrize(("case", "mode"), _params())
def test_flink_docs_query(case: Case, mode: str, tmp_path: Path) -> None:
    env = _env(mode, case, tmp_path)
    if case.error is not None:
        with pytest.raises((SqlError, JobError), match=case.error):
            list(env.execute_sql(case.sql).collect())
        return
    rows = [tuple(_norm(v) for v in r) for r in env.execute_sql(case.sql).collect()]
    if case.ordered:
        assert rows == list(case.expected)
    else:
        assert sorted(rows, key=repr) == sorted(case.expected, key=repr)


def test_every_case_id_is_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
