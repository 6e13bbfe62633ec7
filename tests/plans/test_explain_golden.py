"""Golden EXPLAIN plans: tests/plans/cases/<name>.sql (DDL + one EXPLAIN) against
<name>.streaming.txt and <name>.batch.txt. Regenerate with UPDATE_GOLDEN=1. A plan the
planner refuses in a mode (e.g. an upsert source in BATCH) is golden as its error text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError
from planner.parse import parse_script
from planner.statements import CreateTable, CreateView, Explain, SetOption

CASES = Path(__file__).resolve().parent / "cases"


def explain(script: str, mode: str) -> str:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": mode})
    out = None
    for st in parse_script(script):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, CreateView):
            catalog.create_view(st, mode.upper())
        elif isinstance(st, SetOption) and st.key is not None:  # opt_* cases switch optimizer rules on
            planner.config[st.key] = str(st.value)
        elif isinstance(st, Explain):
            out = planner.explain(st)
    assert out is not None, "the case has no EXPLAIN statement"
    return out


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("name", sorted(p.stem for p in CASES.glob("*.sql")))
def test_explain_matches_golden(name: str, mode: str) -> None:
    try:
        text = explain((CASES / f"{name}.sql").read_text(), mode)
    except SqlError as e:
        text = f"refused: {type(e).__name__}: {e}\n"
    golden = CASES / f"{name}.{mode}.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(text)
    assert golden.exists(), f"missing {golden.name}: run with UPDATE_GOLDEN=1"
    assert text == golden.read_text()


def test_explain_is_deterministic() -> None:
    script = (CASES / "group_aggregate.sql").read_text()
    assert explain(script, "streaming") == explain(script, "streaming")
