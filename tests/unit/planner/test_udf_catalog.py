"""CREATE/DROP FUNCTION parsing, the planner's function catalog and how a UDF reaches the
runtime (a JSON reference in the JobGraph: importable location and/or registry id)."""

from __future__ import annotations

import json

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlParseError, SqlValidationError
from planner.functions_catalog import FunctionCatalog, definition_of, functions_of
from planner.parse import parse_script
from planner.statements import Query
from planner.statements_functions import CreateFunction, DropFunction
from runtime.graph import JobGraph
from runtime.udf_registry import importable_location, resolve
from streamsql.udf import DataTypes, udf, udtf


@udf(result_type=DataTypes.INT())
def module_level_inc(x: int) -> int:
    return x + 1


def test_parse_create_and_drop_function() -> None:
    c, d, d2 = parse_script(
        "CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'pkg.mod.f' LANGUAGE PYTHON;"
        "DROP TEMPORARY FUNCTION IF EXISTS db.f; DROP FUNCTION g"
    )
    assert c == CreateFunction(
        name=("f",),
        identifier="pkg.mod.f",
        language="PYTHON",
        temporary=True,
        system=True,
        if_not_exists=True,
        sql=c.sql,
        line=c.line,
        column=c.column,
    )
    assert isinstance(d, DropFunction) and d.name == ("db", "f") and d.temporary and d.if_exists
    assert isinstance(d2, DropFunction) and not d2.temporary
    with pytest.raises(SqlParseError):
        parse_script("CREATE SYSTEM FUNCTION f AS 'x.y'")
    with pytest.raises(SqlParseError):
        parse_script("CREATE FUNCTION f AS 'x.y' LANGUAGE COBOL")


def test_definitions_and_precedence() -> None:
    fc = FunctionCatalog()
    fc.create("inc", module_level_inc)
    d = fc.lookup("INC")
    assert d is not None and d.kind == "scalar" and str(d.result_type) == "INT"
    ref = json.loads(d.reference)
    # Importable by name (module + qualname) and registered in this process.
    assert ref["module"] == __name__ and ref["qualname"] == "module_level_inc" and ref["registry_id"]
    lam = udf(lambda x: x, result_type="BIGINT")
    assert importable_location(lam) is None
    fc.create("lam", lam)
    lam_def = fc.lookup("lam")
    assert lam_def is not None and "module" not in json.loads(lam_def.reference)
    assert str(lam_def.result_type) == "BIGINT"
    # Built-ins win over catalog functions, not over temporary system functions.
    fc.create("upper", lam)
    assert fc.lookup("upper") is None
    fc.create("upper", lam, system=True)
    assert fc.lookup("upper") is not None
    assert fc.drop("upper", system=True) and fc.lookup("upper") is None
    with pytest.raises(SqlValidationError):
        definition_of("plain", lambda x: x, True, False)


def test_table_function_result_row_names() -> None:
    t = udtf(lambda s: [], result_types=DataTypes.ROW([DataTypes.FIELD("w", DataTypes.STRING())]))
    d = definition_of("words", t, True, False)
    assert d.result_names == ("w",) and d.kind == "table"


def test_jobgraph_carries_only_a_reference() -> None:
    catalog = Catalog()
    functions_of(catalog).create("inc", module_level_inc)
    planner = Planner(catalog, {"execution.runtime-mode": "batch"})
    (q,) = parse_script("SELECT inc(1) AS x")
    assert isinstance(q, Query)
    graph = planner.plan_query(q).graph
    text = graph.to_json()
    assert "python_udf" in text and "module_level_inc" in text
    again = JobGraph.from_json(text)
    calc = next(n for n in again.nodes if n.operator == "Calc")
    ref = calc.params.projections[0].args[0].value
    assert resolve(ref).call_target()(1) == 2
