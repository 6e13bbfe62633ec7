"""A seeded mutation fuzzer over the conformance and Nexmark statements: every mutant (a
token deleted, duplicated, swapped or misspelled; a literal of the wrong type, sign or
size; an interval unit changed; an argument added or dropped) is planned (EXPLAIN) and
must either plan or fail with a clean SqlError: never another exception (an internal
error, a traceback) and never a message leaking the parser's internals.

The statements and mutations are deterministic (seeded), so a failure names the exact
mutant. The CI test plans `CI_MUTANTS_PER_STATEMENT` mutants of each statement (about 230);
`python tests/unit/planner/test_mutation_fuzz.py [--mutants N]` plans N of each (default
10: over 1,000) and prints the summary. Generated *jobs* (options and files mutated, run
in BATCH mode): tests/unit/streamsql/test_job_fuzz.py.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.errors import SqlError
from planner.statements import Query
from runtime.errors import JobError
from streamsql import EnvironmentSettings, TableEnvironment

ROOT = Path(__file__).resolve().parents[3]
SEED = 20
MUTANTS_PER_STATEMENT = 10
CI_MUTANTS_PER_STATEMENT = 2
# Messages that show parser/binder internals instead of a user-facing explanation.
LEAKS = ("sqlglot", "<class '", "Required keyword", "Traceback", "NoneType", "object has no attribute")

_TOKEN = re.compile(
    r"'(?:[^']|'')*'|`[^`]*`|\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_$]*|<>|<=|>=|!=|\|\||::|\S",
)
_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR", "MILLISECOND", "WEEK", "FOO")
_LITERALS = ("-1", "0", "99999999999999999999", "1.5", "'abc'", "TRUE", "NULL", "INTERVAL '1' SECOND", "ARRAY[1, 2]")


def _sources() -> Iterator[tuple[str, Path, str, str]]:
    """(name, working directory, setup script, statement) of every conformance case and
    Nexmark query."""
    for case in sorted((ROOT / "tests" / "conformance" / "cases").iterdir()):
        sql = case / "case.sql"
        if sql.is_file():
            yield case.name, case, sql.read_text(encoding="utf-8"), ""
    nexmark = ROOT / "benchmarks" / "nexmark"
    prefix = (nexmark / "prefix.sql").read_text(encoding="utf-8")
    for q in sorted(nexmark.glob("q*.sql")):
        yield f"nexmark/{q.stem}", nexmark, prefix, q.read_text(encoding="utf-8")


def _mutate(sql: str, rng: random.Random) -> str:
    tokens = _TOKEN.findall(sql)
    if len(tokens) < 3:
        return sql
    i = rng.randrange(len(tokens))
    kind = rng.randrange(9)
    t = tokens[i]
    if kind == 0:  # delete
        del tokens[i]
    elif kind == 1:  # duplicate
        tokens.insert(i, t)
    elif kind == 2 and i + 1 < len(tokens):  # swap
        tokens[i], tokens[i + 1] = tokens[i + 1], t
    elif kind == 3 and t[:1].isalpha() and len(t) > 2:  # misspell
        j = rng.randrange(len(t))
        tokens[i] = t[:j] + rng.choice("aeiouxz_") + t[j + 1 :]
    elif kind == 4:  # a literal of another type/sign/size where a literal or name was
        cands = [k for k, x in enumerate(tokens) if x[:1].isdigit() or x.startswith("'") or x[:1].isalpha()]
        tokens[rng.choice(cands)] = rng.choice(_LITERALS)
    elif kind == 5:  # another interval unit
        cands = [k for k, x in enumerate(tokens) if x.upper() in _UNITS]
        if cands:
            tokens[rng.choice(cands)] = rng.choice(_UNITS)
        else:
            del tokens[i]
    elif kind == 6:  # one argument more
        cands = [k for k, x in enumerate(tokens) if x == ")"]
        if cands:
            tokens.insert(rng.choice(cands), ", " + rng.choice(_LITERALS))
    elif kind == 7:  # one argument fewer
        cands = [k for k, x in enumerate(tokens) if x == ","]
        if cands:
            k = rng.choice(cands)
            del tokens[k : k + 2]
    else:  # a number negated or zeroed (window sizes, offsets, fetch counts)
        cands = [k for k, x in enumerate(tokens) if x[:1].isdigit() or x.startswith("'")]
        if cands:
            k = rng.choice(cands)
            tokens[k] = (
                rng.choice(["'-1'", "'0'", "-5", "0", "'0.0001'"]) if tokens[k].startswith("'") else "-" + tokens[k]
            )
    return " ".join(tokens)


def _env(mode: str) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    return TableEnvironment.create(settings)


def run_fuzzer(mutants: int = MUTANTS_PER_STATEMENT) -> tuple[Counter[str], list[str]]:
    """Plan `mutants` mutants of every statement; (outcome counts, internal errors found)."""
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    old = os.getcwd()
    try:
        for name, cwd, setup, statement in _sources():
            os.chdir(cwd)
            env = _env("batch" if "batch" in name else "streaming")
            try:
                stmts = env.parse(setup)
            except SqlError:
                continue
            if not statement:  # a conformance case: its last statement is the query
                if not stmts or not isinstance(stmts[-1], Query):
                    continue
                statement, stmts = stmts[-1].sql, stmts[:-1]
            try:
                for s in stmts:
                    if isinstance(s, Query):
                        continue
                    env.execute_statement(s).wait()
            except (SqlError, JobError):
                continue
            for _ in range(mutants):
                mutant = _mutate(statement, rng)
                try:
                    env.explain_sql(mutant)
                    outcomes["planned"] += 1
                except SqlError as e:
                    text = e.render()
                    leak = next((w for w in LEAKS if w in text), None)
                    if leak:
                        failures.append(f"{name}: message leaks '{leak}': {mutant!r}\n  {text[:300]}")
                    outcomes["clean error"] += 1
                except Exception as e:  # noqa: BLE001 - what the fuzzer hunts
                    failures.append(f"{name}: {type(e).__name__}: {str(e)[:200]}\n  {mutant!r}")
                    outcomes["internal error"] += 1
    finally:
        os.chdir(old)
    return outcomes, failures


@pytest.mark.timeout(600)
def test_mutants_plan_or_fail_cleanly() -> None:
    outcomes, failures = run_fuzzer(CI_MUTANTS_PER_STATEMENT)
    total = sum(outcomes.values())
    assert total >= 200, f"only {total} statements generated: {outcomes}"
    assert not failures, f"{len(failures)} of {total} mutants failed badly:\n" + "\n".join(failures[:40])


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mutants", type=int, default=MUTANTS_PER_STATEMENT, help="mutants per statement")
    counts, bad = run_fuzzer(p.parse_args().mutants)
    print(dict(counts), "statements:", sum(counts.values()))
    print("\n".join(bad))
