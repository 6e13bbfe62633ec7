"""OBJECT_OF / OBJECT_UPDATE and the STRUCTURED type: Flink 2.3's answers (types as TYPEOF
prints them, values as the SQL client does) and its validation messages."""

from __future__ import annotations

import json

import pytest

from planner.errors import SqlValidationError
from runtime.functions.structured import hash_map_order
from runtime.types import INT, STRUCTURED, DataType
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.printing import jsonl_lines


def _shown(expr: str) -> str:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    r = env.execute_sql(f"SELECT {expr}")
    (line,) = jsonl_lines(r.batches(), r.fields, r.time_zone)
    return str(json.loads(line)["row"][0])


def test_object_of_type_and_value() -> None:
    user = "OBJECT_OF('com.example.User', 'name', 'Bob', 'age', 42)"
    assert _shown(user) == "(name=Bob, age=42)"
    assert _shown(f"TYPEOF({user})") == "STRUCTURED<'com.example.User', `name` CHAR(3) NOT NULL, `age` INT NOT NULL>"
    assert _shown("OBJECT_OF('com.example.Empty')") == "()"
    nested = (
        "OBJECT_OF('com.example.User', 'name', 'Bob', 'address', OBJECT_OF('com.example.Address', 'city', 'Berlin'))"
    )
    assert _shown(nested) == "(name=Bob, address=(city=Berlin))"
    assert _shown(f"{user}.age") == "42"


def test_object_update() -> None:
    bob = "OBJECT_OF('com.example.User', 'name', 'Bob', 'age', 14)"
    assert _shown(f"OBJECT_UPDATE({bob}, 'name', 'Alice')") == "(name=Alice, age=14)"
    assert _shown(f"OBJECT_UPDATE({bob}, 'name', 'Alice', 'age', 30)") == "(name=Alice, age=30)"


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("OBJECT_OF('c', 'x', 1, 'x', 2)", "The field name 'x' at position 4 is repeated."),
        ("OBJECT_OF(1)", "The first argument must be a non-nullable character string"),
        ("OBJECT_OF('c', 'x')", "odd number of arguments"),
        ("OBJECT_UPDATE(OBJECT_OF('c', 'x', 1), 'y', 2)", "'y' at position 2 is not part of the structured type"),
        ("OBJECT_UPDATE(ROW(1), 'x', 2)", "The first argument must be a structured type"),
    ],
)
def test_validation(expr: str, message: str) -> None:
    with pytest.raises(SqlValidationError, match=message.replace("(", "\\(").replace(")", "\\)")):
        _shown(expr)


def test_java_hash_map_order() -> None:
    # Flink infers OBJECT_UPDATE's fields through a java.util.HashMap
    assert hash_map_order(["name", "age"]) == ["name", "age"]
    assert hash_map_order(["age", "city"]) == ["city", "age"]


def test_type_round_trips_through_json() -> None:
    t = STRUCTURED("com.example.P", [("x", INT(False))])
    assert DataType.from_json(t.to_json()) == t
    assert str(t) == "STRUCTURED<'com.example.P', `x` INT NOT NULL>"
