"""The declarations of Flink 2.x's "Data Types" page (docs/dev/table/types.md), run through
the SQL client (`CREATE TABLE` / `DESCRIBE`, in process): every SQL declaration form the page
lists, with the type name DESCRIBE prints for it, the limits, literals of each type, and
PyFlink's `DataTypes` equivalents. (CAST between types is tests/.../cast's business.)

Where the page and Flink 2.3's SQL disagree, the test follows Flink and says so:

- `VARCHAR` / `VARBINARY` without a length: the page says length 1 (the Table API's type
  parser); Flink's SQL takes its type system's default precision, the maximum
  (`FlinkTypeSystem.getDefaultPrecision`), so they are STRING / BYTES.
- Precisions above a type's maximum: the page says "must be between"; Flink's SQL lowers them
  to the maximum (Calcite's `SqlTypeFactoryImpl.createSqlType` with `FlinkTypeSystem`):
  TIMESTAMP(10) is TIMESTAMP(9), DECIMAL(39) is DECIMAL(38, 0), TIME(9) is TIME(3) (Calcite's
  datetime maximum, which Flink keeps for TIME). DECIMAL(0) and a scale above the precision
  fail with `DecimalType`'s messages.
- INTERVAL: Flink's DDL refuses it as a column type (FLINK-13335: "INTERVAL is not supported
  as DDL type"); interval values have the planner's two types, `INTERVAL SECOND(3)` and
  `INTERVAL MONTH` (FLINK-31336: `typeof(interval '1' day)` is `INTERVAL SECOND(3) NOT
  NULL`), and print as `+4-02` / `+0 00:01:10.000` (the Flink-produced conformance corpus),
  where the page shows the Table API's default-precision text `+04-02` / `+00 00:01:10.000000`.
- TIMESTAMP WITH TIME ZONE and RAW('class', 'snapshot') are refused with a clear message: the
  planner has no zoned timestamp, and a RAW type needs Java's serializer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from streamsql.types import DataTypes
from tests.e2e.flink_docs_client import cells, sql_client

# (declaration as the page writes it, the type DESCRIBE prints, nullable)
DECLARATIONS: list[tuple[str, str]] = [
    # Character strings
    ("CHAR", "CHAR(1)"),
    ("CHAR(5)", "CHAR(5)"),
    ("VARCHAR", "STRING"),  # the page: VARCHAR(1); Flink's SQL: the maximum length
    ("VARCHAR(7)", "VARCHAR(7)"),
    ("STRING", "STRING"),
    ("VARCHAR(2147483647)", "STRING"),
    # Binary strings
    ("BINARY", "BINARY(1)"),
    ("BINARY(3)", "BINARY(3)"),
    ("VARBINARY", "BYTES"),  # as VARCHAR
    ("VARBINARY(9)", "VARBINARY(9)"),
    ("BYTES", "BYTES"),
    # Exact numerics
    ("DECIMAL", "DECIMAL(10, 0)"),
    ("DECIMAL(5)", "DECIMAL(5, 0)"),
    ("DECIMAL(7, 2)", "DECIMAL(7, 2)"),
    ("DEC", "DECIMAL(10, 0)"),
    ("DEC(6)", "DECIMAL(6, 0)"),
    ("DEC(6, 1)", "DECIMAL(6, 1)"),
    ("NUMERIC", "DECIMAL(10, 0)"),
    ("NUMERIC(4)", "DECIMAL(4, 0)"),
    ("NUMERIC(4, 3)", "DECIMAL(4, 3)"),
    ("TINYINT", "TINYINT"),
    ("SMALLINT", "SMALLINT"),
    ("INT", "INT"),
    ("INTEGER", "INT"),
    ("BIGINT", "BIGINT"),
    # Approximate numerics
    ("FLOAT", "FLOAT"),
    ("DOUBLE", "DOUBLE"),
    ("DOUBLE PRECISION", "DOUBLE"),
    # Date and time
    ("DATE", "DATE"),
    ("TIME", "TIME(0)"),
    ("TIME(3)", "TIME(3)"),
    ("TIMESTAMP", "TIMESTAMP(6)"),
    ("TIMESTAMP(3)", "TIMESTAMP(3)"),
    ("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP(6)"),
    ("TIMESTAMP(9) WITHOUT TIME ZONE", "TIMESTAMP(9)"),
    ("TIMESTAMP_LTZ", "TIMESTAMP_LTZ(6)"),
    ("TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)"),
    ("TIMESTAMP WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(6)"),
    ("TIMESTAMP(2) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(2)"),
    # Constructed data types
    ("ARRAY<INT>", "ARRAY<INT>"),
    ("INT ARRAY", "ARRAY<INT>"),
    ("ARRAY<INT NOT NULL>", "ARRAY<INT NOT NULL>"),
    ("MAP<STRING, INT>", "MAP<STRING, INT>"),
    ("MAP<STRING, INT ARRAY>", "MAP<STRING, ARRAY<INT>>"),
    ("MULTISET<INT>", "MULTISET<INT>"),
    ("INT MULTISET", "MULTISET<INT>"),
    (
        "ROW<myField ARRAY<BOOLEAN>, myOtherField TIMESTAMP(3)>",
        "ROW<`myField` ARRAY<BOOLEAN>, `myOtherField` TIMESTAMP(3)>",
    ),
    ("ROW<n0 INT 'd0', n1 STRING 'd1'>", "ROW<`n0` INT 'd0', `n1` STRING 'd1'>"),
    ("ROW(n0 INT, n1 BOOLEAN)", "ROW<`n0` INT, `n1` BOOLEAN>"),
    ("ROW(n0 INT 'd0', n1 BOOLEAN 'it''s')", "ROW<`n0` INT 'd0', `n1` BOOLEAN 'it''s'>"),
    # User-defined data types: inline structured types (FLIP-520)
    (
        "STRUCTURED<'com.myorg.User', name STRING, age INT NOT NULL 'years'>",
        "STRUCTURED<'com.myorg.User', `name` STRING, `age` INT NOT NULL 'years'>",
    ),
    # Other data types
    ("BOOLEAN", "BOOLEAN"),
    # The page's opening examples
    ("INT NOT NULL", "INT"),
]


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    monkeypatch.chdir(tmp_path)
    return sql_client()


def test_declarations_and_their_names(client: Callable[..., str]) -> None:
    columns = ", ".join(f"c{i} {decl}" for i, (decl, _) in enumerate(DECLARATIONS))
    client(f"CREATE TABLE T ({columns}) WITH ('connector' = 'datagen')")
    got = cells(client("DESC T"))
    assert got[0][:3] == ["name", "type", "null"]
    expected = [
        [f"c{i}", name, "FALSE" if decl.endswith("NOT NULL") else "TRUE"] for i, (decl, name) in enumerate(DECLARATIONS)
    ]
    assert [r[:3] for r in got[1:]] == expected


def test_time_attributes_print_their_kind(client: Callable[..., str]) -> None:
    client(
        "CREATE TABLE E (ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts) "
        "WITH ('connector' = 'datagen')"
    )
    assert [r[:3] for r in cells(client("DESC E"))[1:]] == [
        ["ts", "TIMESTAMP(3) *ROWTIME*", "TRUE"],
        ["ltz", "TIMESTAMP_LTZ(3)", "TRUE"],
        ["pt", "TIMESTAMP_LTZ(3) *PROCTIME*", "FALSE"],
    ]


@pytest.mark.parametrize(
    ("declaration", "name"),
    [
        ("TIMESTAMP(10)", "TIMESTAMP(9)"),
        ("TIMESTAMP(12) WITHOUT TIME ZONE", "TIMESTAMP(9)"),
        ("TIMESTAMP_LTZ(10)", "TIMESTAMP_LTZ(9)"),
        ("TIMESTAMP(10) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(9)"),
        ("TIME(9)", "TIME(3)"),
        ("DECIMAL(39)", "DECIMAL(38, 0)"),
        ("DECIMAL(40, 2)", "DECIMAL(38, 2)"),
    ],
)
def test_precision_above_the_maximum_is_lowered(client: Callable[..., str], declaration: str, name: str) -> None:
    client(f"CREATE TABLE P (c {declaration}) WITH ('connector' = 'datagen')")
    assert cells(client("DESC P"))[1][1] == name


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ("DECIMAL(0)", "Decimal precision must be between 1 and 38 (both inclusive)."),
        ("DECIMAL(5, 6)", "Decimal scale must be between 0 and the precision 5 (both inclusive)."),
        ("NUMERIC(40, 39)", "Decimal scale must be between 0 and the precision 38 (both inclusive)."),
        ("TIMESTAMP WITH TIME ZONE", "Unsupported type 'TIMESTAMP WITH TIME ZONE': use TIMESTAMP_LTZ"),
        ("TIMESTAMP(3) WITH TIME ZONE", "Unsupported type 'TIMESTAMP WITH TIME ZONE': use TIMESTAMP_LTZ"),
        ("RAW('java.lang.String', 'AEdvcmcu')", "Unsupported type 'RAW'"),
        ("INTERVAL DAY", "Unsupported type 'INTERVAL DAY': an INTERVAL type cannot be declared here"),
        ("INTERVAL YEAR(3) TO MONTH", "an INTERVAL type cannot be declared"),
    ],
)
def test_refused_declarations(client: Callable[..., str], declaration: str, message: str) -> None:
    out = client(f"CREATE TABLE R (c {declaration}) WITH ('connector' = 'datagen')", errors=True)
    assert "[ERROR]" in out and message in out
    assert "line 1, column 19" in out  # at the type


def test_literal_types(client: Callable[..., str]) -> None:
    client(
        "CREATE VIEW L AS SELECT 'abc', X'0102', 1.5, 1, 10000000000, 1e0, TRUE, DATE '2020-01-01', "
        "TIME '12:00:00', TIMESTAMP '2020-01-01 00:00:00.123', ARRAY[1, 2], MAP['a', 1], ROW(1, 'a'), "
        "CAST(NULL AS INT), INTERVAL '1' DAY, INTERVAL '50' MONTH, INTERVAL '1-2' YEAR TO MONTH, "
        "INTERVAL '10 00:00:00.004' DAY TO SECOND, 0.011"
    )
    assert [r[1:3] for r in cells(client("DESC L"))[1:]] == [
        ["CHAR(3)", "FALSE"],
        ["BINARY(2)", "FALSE"],
        ["DECIMAL(2, 1)", "FALSE"],
        ["INT", "FALSE"],
        ["BIGINT", "FALSE"],
        ["DOUBLE", "FALSE"],
        ["BOOLEAN", "FALSE"],
        ["DATE", "FALSE"],
        ["TIME(0)", "FALSE"],
        ["TIMESTAMP(3)", "FALSE"],
        ["ARRAY<INT NOT NULL>", "FALSE"],
        ["MAP<CHAR(1) NOT NULL, INT NOT NULL>", "FALSE"],
        ["ROW<`EXPR$0` INT NOT NULL, `EXPR$1` CHAR(1) NOT NULL>", "FALSE"],
        ["INT", "TRUE"],
        ["INTERVAL SECOND(3)", "FALSE"],
        ["INTERVAL MONTH", "FALSE"],
        ["INTERVAL MONTH", "FALSE"],
        ["INTERVAL SECOND(3)", "FALSE"],
        ["DECIMAL(4, 3)", "FALSE"],  # the page's note: 0.011 is DECIMAL(4, 3) in SQL (the leading 0 counts)
    ]


def test_interval_values_print_as_flink_sql_does(client: Callable[..., str]) -> None:
    """The page's examples: 50 months, 70 seconds (page: `+04-02`, `+00 00:01:10.000000`)."""
    client("SET 'execution.runtime-mode' = 'batch'")
    got = cells(client("SELECT INTERVAL '50' MONTH, INTERVAL '70' SECOND, TYPEOF(INTERVAL '1' DAY)"))
    assert got[1] == ["+4-02", "+0 00:01:10.000", "INTERVAL SECOND(3) NOT NULL"]


@pytest.mark.parametrize(
    ("data_type", "declaration"),
    [
        (DataTypes.CHAR(5), "CHAR(5)"),
        (DataTypes.VARCHAR(7), "VARCHAR(7)"),
        (DataTypes.STRING(), "STRING"),
        (DataTypes.BINARY(3), "BINARY(3)"),
        (DataTypes.VARBINARY(9), "VARBINARY(9)"),
        (DataTypes.BYTES(), "BYTES"),
        (DataTypes.DECIMAL(10, 2), "DECIMAL(10, 2)"),
        (DataTypes.TINYINT(), "TINYINT"),
        (DataTypes.SMALLINT(), "SMALLINT"),
        (DataTypes.INT(), "INT"),
        (DataTypes.BIGINT(), "BIGINT"),
        (DataTypes.FLOAT(), "FLOAT"),
        (DataTypes.DOUBLE(), "DOUBLE"),
        (DataTypes.DATE(), "DATE"),
        (DataTypes.TIME(), "TIME"),
        (DataTypes.TIMESTAMP(3), "TIMESTAMP(3)"),
        (DataTypes.TIMESTAMP(), "TIMESTAMP"),
        (DataTypes.TIMESTAMP_LTZ(3), "TIMESTAMP_LTZ(3)"),
        (DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3), "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
        (DataTypes.TIMESTAMP_LTZ(), "TIMESTAMP WITH LOCAL TIME ZONE"),
        (DataTypes.BOOLEAN(), "BOOLEAN"),
        (DataTypes.INT(nullable=False), "INT NOT NULL"),
        (DataTypes.ARRAY(DataTypes.INT()), "INT ARRAY"),
        (DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()), "MAP<STRING, INT>"),
        (DataTypes.MULTISET(DataTypes.STRING()), "STRING MULTISET"),
        (
            DataTypes.ROW([DataTypes.FIELD("n0", DataTypes.INT(), "d0"), DataTypes.FIELD("n1", DataTypes.BOOLEAN())]),
            "ROW<n0 INT 'd0', n1 BOOLEAN>",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_pyflink_datatypes_are_the_sql_types(client: Callable[..., str], data_type: object, declaration: str) -> None:
    client(f"CREATE TABLE D (c {declaration}) WITH ('connector' = 'datagen')")
    row = cells(client("DESC D"))[1]
    assert [str(data_type).removesuffix(" NOT NULL"), "FALSE" if "NOT NULL" in str(data_type) else "TRUE"] == row[1:3]


@pytest.mark.parametrize(
    ("data_type", "name"),
    [
        # the planner's interval types (see the module docstring), whatever the resolution
        (DataTypes.INTERVAL(DataTypes.YEAR()), "INTERVAL MONTH"),
        (DataTypes.INTERVAL(DataTypes.YEAR(4), DataTypes.MONTH()), "INTERVAL MONTH"),
        (DataTypes.INTERVAL(DataTypes.MONTH()), "INTERVAL MONTH"),
        (DataTypes.INTERVAL(DataTypes.DAY()), "INTERVAL SECOND(3)"),
        (DataTypes.INTERVAL(DataTypes.DAY(1), DataTypes.SECOND(3)), "INTERVAL SECOND(3)"),
        (DataTypes.INTERVAL(DataTypes.HOUR(), DataTypes.MINUTE()), "INTERVAL SECOND(3)"),
        (DataTypes.INTERVAL(DataTypes.SECOND(9)), "INTERVAL SECOND(3)"),
    ],
)
def test_pyflink_interval_datatypes(data_type: object, name: str) -> None:
    assert str(data_type) == name
