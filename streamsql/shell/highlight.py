"""SQL syntax highlighting for the prompt.

A small tokenizer of our own rather than pygments: pygments is not a dependency of
prompt-toolkit (which needs only wcwidth), and Flink SQL's words (WATERMARK, TUMBLE,
STATEMENT SET, ...) are not in a generic SQL lexer anyway. The whole document is
tokenized at once, so a string or `/* */` comment spanning lines is coloured on every line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.lexers import Lexer

from streamsql.shell.vocabulary import KEYWORDS, TYPES

_TOKEN = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*(?:'|\Z))
  | (?P<ident>`(?:[^`]|``)*(?:`|\Z))
  | (?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS = frozenset(KEYWORDS)
_TYPES = frozenset(TYPES)

STYLE: dict[str, str] = {
    "sql.keyword": "bold ansiblue",
    "sql.type": "ansicyan",
    "sql.function": "ansimagenta",
    "sql.string": "ansigreen",
    "sql.number": "ansiyellow",
    "sql.comment": "italic ansibrightblack",
    "sql.identifier": "",
    "sql.quoted": "ansibrightcyan",
    "sql.operator": "",
}


def tokenize(text: str) -> list[tuple[str, str]]:
    """(style class, text) pairs covering `text` exactly."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        tok = m.group()
        if kind == "word":
            up = tok.upper()
            if up in _KEYWORDS:
                style = "class:sql.keyword"
            elif up in _TYPES:
                style = "class:sql.type"
            elif text[m.end() : m.end() + 1] == "(":
                style = "class:sql.function"
            else:
                style = "class:sql.identifier"
        elif kind == "ident":
            style = "class:sql.quoted"
        elif kind in ("space", "other"):
            style = "class:sql.operator" if kind == "other" else ""
        else:
            style = f"class:sql.{kind}"
        out.append((style, tok))
    return out


class SqlLexer(Lexer):
    """prompt-toolkit lexer: colours keywords, types, functions, strings, numbers, comments."""

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        lines: list[StyleAndTextTuples] = [[]]
        for style, tok in tokenize(document.text):
            parts = tok.split("\n")
            for i, part in enumerate(parts):
                if i:
                    lines.append([])
                if part:
                    lines[-1].append((style, part))

        def get_line(lineno: int) -> StyleAndTextTuples:
            return lines[lineno] if 0 <= lineno < len(lines) else []

        return get_line
