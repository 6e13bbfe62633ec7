"""Tab completion: keywords, functions, tables, views, columns, SET keys and values, job ids.

`candidates(text_before_cursor, source)` is the pure logic (tested without a terminal);
`SqlCompleter` adapts it to prompt-toolkit. What is offered depends on where the cursor is:

- inside `SET '` / `RESET '`: configuration keys (with their descriptions); inside
  `SET 'key' = '`: the key's documented values;  inside `STOP JOB '`: job ids;
- after `t.` (a table, view or an alias from the statement's FROM/JOIN): t's columns;
- after FROM / JOIN / INTO / TABLE / DESCRIBE: tables and views; after SHOW: what SHOW shows;
- elsewhere: columns of the statement's tables, functions, keywords, tables.

Words complete in the case the user types (upper case when nothing is typed yet).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from runtime.frozen import frozen_dataclass
from streamsql.shell.vocabulary import KEYWORDS, SHOW_TARGETS, TABLE_CONTEXT, TYPES

_WORD_BEFORE = re.compile(r"([A-Za-z_][A-Za-z0-9_$]*)?$")
_QUALIFIED = re.compile(r"([A-Za-z_][A-Za-z0-9_$]*|`[^`]+`)\.([A-Za-z_][A-Za-z0-9_$]*)?$")
_SET_KEY = re.compile(r"^\s*(SET|RESET)\s+'([^']*)$", re.IGNORECASE)
_SET_BARE = re.compile(r"^\s*(SET|RESET)\s+([A-Za-z0-9_.\-]*)$", re.IGNORECASE)
_SET_VALUE = re.compile(r"^\s*SET\s+'([^']*)'\s*=\s*'([^']*)$", re.IGNORECASE)
_STOP_JOB = re.compile(r"^\s*STOP\s+JOB\s+'([^']*)$", re.IGNORECASE)
_TABLE_REF = re.compile(
    r"\b(?:FROM|JOIN|TABLE)\s+(`[^`]+`|[A-Za-z_][A-Za-z0-9_$.]*)(?:\s+(?:AS\s+)?([A-Za-z_][A-Za-z0-9_$]*))?",
    re.IGNORECASE,
)
_NOT_ALIAS = frozenset(
    {
        "WHERE",
        "GROUP",
        "ORDER",
        "JOIN",
        "LEFT",
        "RIGHT",
        "INNER",
        "FULL",
        "CROSS",
        "ON",
        "UNION",
        "LIMIT",
        "HAVING",
        "WINDOW",
        "AS",
        "FOR",
        "OUTER",
    }
)


@frozen_dataclass
class Candidate:
    text: str
    start: int  # negative offset from the cursor where the replaced text starts
    meta: str


class CatalogSource:
    """Reads what completion needs from a live TableEnvironment (each time: tables come
    and go during a session). Function names are loaded once, on first use."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self._functions: list[str] | None = None

    def tables(self) -> list[str]:
        return list(self.env.list_tables())

    def views(self) -> list[str]:
        return list(self.env.list_views())

    def columns(self, name: str) -> list[str]:
        try:
            return [row[0] for row in self.env.catalog.describe(name)]
        except Exception:  # noqa: BLE001 - unknown name: nothing to offer
            return []

    def functions(self) -> list[str]:
        if self._functions is None:
            from runtime.functions.registry import function_names

            self._functions = sorted(set(function_names()))
        return self._functions

    def jobs(self) -> list[tuple[str, str]]:
        return [(jid, f"{h.name} {h.get_job_status()}") for jid, h in self.env.jobs.items()]


def _statement_before(text: str) -> str:
    """The current (last, unfinished) statement: text after the last `;` outside quotes."""
    start, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in ("'", "`"):
            quote = ch
        elif ch == ";":
            start = i + 1
    return text[start:]


def _in_string(stmt: str) -> bool:
    return stmt.count("'") % 2 == 1


def _cased(word: str, typed: str) -> str:
    return word.lower() if typed and typed[0].islower() else word.upper()


def _match(names: Iterable[str], typed: str) -> Iterator[str]:
    low = typed.lower()
    for n in names:
        if n.lower().startswith(low) and n.lower() != low:
            yield n


def _table_refs(stmt: str, tables: list[str]) -> dict[str, str]:
    """alias or table name (lower case) -> catalog table name, from FROM/JOIN clauses."""
    known = {t.lower(): t for t in tables}
    refs: dict[str, str] = {}
    for m in _TABLE_REF.finditer(stmt):
        name = m.group(1).strip("`").split(".")[-1]
        table = known.get(name.lower())
        if table is None:
            continue
        refs[name.lower()] = table
        alias = m.group(2)
        if alias and alias.upper() not in _NOT_ALIAS:
            refs[alias.lower()] = table
    return refs


def candidates(before: str, source: Any, after: str = "") -> list[Candidate]:  # noqa: C901 - one dispatch
    """Completions for the text before the cursor; `after` (the text after it) lets
    `SELECT c.<Tab> FROM clicks c` resolve the alias defined later in the statement."""
    from streamsql.config import lookup, public_options

    options = public_options()

    stmt = _statement_before(before)
    whole = stmt + after.split(";", 1)[0]
    if _in_string(stmt):
        m = _SET_VALUE.match(stmt)
        if m:
            key, typed = m.group(1), m.group(2)
            option = lookup(key)
            values = option.choices if option is not None else ()
            return [Candidate(v + "'", -len(typed), "value") for v in _match(values, typed)]
        m = _SET_KEY.match(stmt)
        if m:
            typed = m.group(2)
            suffix = "' = '" if m.group(1).upper() == "SET" else "'"
            return [
                Candidate(k.key + suffix, -len(typed), k.description[:60])
                for k in options
                if k.key.startswith(typed) and k.key != typed
            ]
        m = _STOP_JOB.match(stmt)
        if m:
            typed = m.group(1)
            return [Candidate(jid + "'", -len(typed), meta) for jid, meta in source.jobs() if jid.startswith(typed)]
        return []

    m = _SET_BARE.match(stmt)
    if m and m.group(2) and "." in m.group(2):
        typed = m.group(2)
        return [Candidate(f"'{k.key}'", -len(typed), k.description[:60]) for k in options if k.key.startswith(typed)]

    tables = source.tables()
    q = _QUALIFIED.search(stmt)
    if q:
        qualifier, typed = q.group(1).strip("`"), q.group(2) or ""
        refs = _table_refs(whole, tables)
        table = refs.get(qualifier.lower()) or next((t for t in tables if t.lower() == qualifier.lower()), None)
        if table is None:
            return []
        return [Candidate(c, -len(typed), f"column of {table}") for c in _match(source.columns(table), typed)]

    typed = (_WORD_BEFORE.search(stmt) or _WORD_BEFORE.search("")).group(1) or ""  # type: ignore[union-attr]
    head = stmt[: len(stmt) - len(typed)]
    prev_words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)
    prev = prev_words[-1].upper() if prev_words else ""
    start = -len(typed)

    if not prev_words:  # the statement's first word
        firsts = (
            "SELECT",
            "INSERT",
            "CREATE",
            "DROP",
            "SET",
            "RESET",
            "SHOW",
            "DESCRIBE",
            "EXPLAIN",
            "EXECUTE",
            "WITH",
            "VALUES",
            "STOP",
            "HELP",
            "QUIT",
            "EXIT",
            "BEGIN",
        )
        return [Candidate(_cased(w, typed), start, "statement") for w in _match(firsts, typed)]
    if prev == "SHOW":
        return [Candidate(_cased(w, typed), start, "show") for w in _match(SHOW_TARGETS, typed)]
    if prev == "STOP":
        return [Candidate(_cased("JOB", typed), start, "keyword")] if "job".startswith(typed.lower()) else []
    if prev in TABLE_CONTEXT:
        views = set(source.views())
        return [Candidate(t, start, "view" if t in views else "table") for t in _match(tables, typed)]

    out: list[Candidate] = []
    seen: set[str] = set()
    refs = _table_refs(whole, tables)
    for table in dict.fromkeys(refs.values()):
        for c in _match(source.columns(table), typed):
            if c not in seen:
                seen.add(c)
                out.append(Candidate(c, start, f"column of {table}"))
    if not typed:
        return out  # after a space: only the statement's columns, not the whole dictionary
    for f in _match(source.functions(), typed):
        out.append(Candidate(_cased(f, typed), start, "function"))
    for k in _match(KEYWORDS + TYPES, typed):
        out.append(Candidate(_cased(k, typed), start, "type" if k in TYPES else "keyword"))
    views = set(source.views())
    for t in _match(tables, typed):
        if t not in seen:
            out.append(Candidate(t, start, "view" if t in views else "table"))
    return out


def make_completer(source: Any) -> Any:
    """A prompt-toolkit Completer over `candidates` (imported here: prompt-toolkit loads
    only when the shell opens)."""
    from prompt_toolkit.completion import Completer, Completion

    class SqlCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
            for c in candidates(document.text_before_cursor, source, document.text_after_cursor):
                yield Completion(c.text, start_position=c.start, display_meta=c.meta)

    return SqlCompleter()
