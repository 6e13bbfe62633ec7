"""A token cursor over one statement, shared by the statement parsers (parse.py, ddl.py).

It drives the flink dialect's sqlglot parser directly on the statement's tokens, so the
statement-level grammar (DDL, SET, EXPLAIN, ...) is written here by hand while every
expression, type and query is parsed by sqlglot. All positions are relative to the
statement text; every failure becomes `SqlParseError`.
"""

from __future__ import annotations

import bisect
import re
from typing import NoReturn, cast

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from planner.dialect.flink import Flink, FlinkParser
from planner.errors import SqlParseError, UnsupportedSqlError

_DIALECT = Flink()
_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")

# Keywords after which Flink says "Incorrect syntax near the keyword ..." for a missing item.
_CLAUSE_KEYWORDS = {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "WINDOW", "JOIN", "ON"}


def token_text(tok: Token) -> str:
    """A token as written (strings and backquoted identifiers keep their quotes)."""
    if tok.token_type == TokenType.STRING:
        return "'" + tok.text.replace("'", "''") + "'"
    if tok.token_type == TokenType.IDENTIFIER:
        return "`" + tok.text + "`"
    return tok.text


class Cursor:
    """Tokens of one statement plus a flink parser positioned on them."""

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.line_starts = [0] + [i + 1 for i, ch in enumerate(sql) if ch == "\n"]
        try:
            self.tokens: list[Token] = _DIALECT.tokenize(sql)
        except TokenError as e:
            raise self._token_error(str(e)) from None
        self.parser = FlinkParser(error_level=ErrorLevel.IMMEDIATE, dialect=_DIALECT)
        self.start(self.tokens)

    # ------------------------------------------------------------------ positions
    def line_col(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.line_starts, offset) - 1
        return i + 1, offset - self.line_starts[i] + 1

    def error(self, message: str, token: Token | None = None, hint: str | None = None) -> NoReturn:
        token = token if token else self.parser._curr or self.parser._prev
        if token and token.token_type != TokenType.SENTINEL:
            line, col = self.line_col(token.start)
        else:
            line, col = self.line_col(len(self.sql.rstrip()))
        raise SqlParseError(message, sql=self.sql, line=line, column=col, hint=hint)

    def _token_error(self, detail: str) -> SqlParseError:
        # The tokenizer fails on an unterminated string/identifier/comment: point at it.
        for m in re.finditer(r"'(?:[^']|'')*'?|`[^`]*`?|/\*", self.sql):
            text = m.group(0)
            if (text.startswith("'") and (len(text) == 1 or not text.endswith("'"))) or (
                text.startswith("`") and (len(text) == 1 or not text.endswith("`"))
            ):
                line, col = self.line_col(m.start())
                return SqlParseError("Lexical error: unterminated literal", sql=self.sql, line=line, column=col)
        return SqlParseError(f"Lexical error: {detail.splitlines()[0]}", sql=self.sql, line=1, column=1)

    # ------------------------------------------------------------------ cursor
    def start(self, tokens: list[Token]) -> None:
        p = self.parser
        p.reset()
        p.sql = self.sql
        p._tokens = tokens
        p._tokens_size = len(tokens)
        p._index = -1
        p._advance()

    @property
    def curr(self) -> Token:
        return self.parser._curr

    @property
    def at_end(self) -> bool:
        return not self.parser._curr

    def peek_word(self, k: int = 0) -> str:
        """The k-th next token's text, upper-cased with single spaces ("" for strings and
        quoted identifiers). Multi-word keyword tokens (e.g. "PRIMARY KEY") keep all words."""
        i = self.parser._index + k
        toks = self.parser._tokens
        if 0 <= i < len(toks) and toks[i].token_type not in (TokenType.STRING, TokenType.IDENTIFIER):
            return " ".join(toks[i].text.upper().split())
        return ""

    def match(self, *words: str) -> bool:
        """Consume the words (case-insensitive) if they come next; a multi-word keyword
        token matches the same words given separately."""
        want = [w for word in words for w in word.split()]
        k = 0
        pos = 0
        while pos < len(want):
            got = self.peek_word(k).split()
            if not got or want[pos : pos + len(got)] != got:
                return False
            pos += len(got)
            k += 1
        self.parser._advance(k)
        return True

    def match_type(self, token_type: TokenType) -> Token | None:
        if self.curr and self.curr.token_type == token_type:
            tok = self.curr
            self.parser._advance()
            return tok
        return None

    def expect(self, *words: str) -> None:
        if not self.match(*words):
            self.unexpected('"' + " ".join(words) + '"')

    def expect_type(self, token_type: TokenType, what: str) -> Token:
        tok = self.match_type(token_type)
        if tok is None:
            self.unexpected(what)
        return tok

    def unexpected(self, expecting: str | None = None) -> NoReturn:
        tok = self.curr
        if not tok:
            line, col = self.line_col(len(self.sql.rstrip()))
            msg = f'Encountered "<EOF>" at line {line}, column {col}.'
        else:
            line, col = self.line_col(tok.start)
            msg = f'Encountered "{token_text(tok)}" at line {line}, column {col}.'
        if expecting:
            msg += f"\nWas expecting {expecting}"
        self.error(msg, tok if tok else None)

    def string(self, what: str = "a string literal") -> str:
        tok = self.expect_type(TokenType.STRING, what)
        return tok.text

    def name(self, what: str = "an identifier") -> str:
        """One identifier: backquoted, or a word (keywords are allowed as names here)."""
        tok = self.curr
        if tok and (
            tok.token_type == TokenType.IDENTIFIER or (tok.token_type != TokenType.STRING and _WORD.match(tok.text))
        ):
            self.parser._advance()
            return tok.text
        self.unexpected(what)

    def path(self) -> tuple[str, ...]:
        parts = [self.name()]
        while self.match_type(TokenType.DOT):
            parts.append(self.name())
        return tuple(parts)

    def name_list(self) -> tuple[str, ...]:
        """`(a, b, ...)`."""
        self.expect_type(TokenType.L_PAREN, '"("')
        names = [self.name()]
        while self.match_type(TokenType.COMMA):
            names.append(self.name())
        self.expect_type(TokenType.R_PAREN, '")"')
        return tuple(names)

    # ------------------------------------------------------------------ sqlglot calls
    def run(self, fn):  # noqa: ANN001, ANN201 - thin wrapper over parser methods
        """Call a parser method, turning sqlglot errors into SqlParseError."""
        try:
            return fn()
        except ParseError as e:
            self._raise_parse_error(e)
        except SqlParseError:
            raise
        except Exception as e:  # noqa: BLE001 - sqlglot may fail in odd ways on odd input
            tok = self.parser._curr or self.parser._prev
            self.error(f"Invalid SQL: {_user_hint(str(e)) or 'the statement cannot be parsed here'}", tok)

    def _raise_parse_error(self, e: ParseError) -> NoReturn:
        tok = self.parser.error_token
        detail = _user_hint(e.errors[0].get("description") if e.errors else str(e))
        prev = self._prev_of(tok)
        if tok and tok.token_type != TokenType.SENTINEL:
            line, col = self.line_col(tok.start)
            word = tok.text.upper()
            if prev is not None and prev.token_type == TokenType.COMMA and word in _CLAUSE_KEYWORDS:
                # Flink (Calcite) words a trailing comma before a clause keyword this way.
                raise SqlParseError(
                    f"Incorrect syntax near the keyword '{word}' at line {line}, column {col}.",
                    sql=self.sql,
                    line=line,
                    column=col,
                    hint=detail,
                )
            msg = f'Encountered "{token_text(tok)}" at line {line}, column {col}.'
        else:
            line, col = self.line_col(len(self.sql.rstrip()))
            msg = f'Encountered "<EOF>" at line {line}, column {col}.'
        raise SqlParseError(msg, sql=self.sql, line=line, column=col, hint=detail)

    def _prev_of(self, tok: Token | None) -> Token | None:
        if not tok:
            return None
        toks = self.parser._tokens
        for i, t in enumerate(toks):
            if t is tok:
                return toks[i - 1] if i > 0 else None
        return None

    def expression(self) -> exp.Expression:
        """One expression (a computed column, a watermark, an UPDATE value, ...). SQL
        comments around it are dropped: sqlglot keeps them on the node, and DESCRIBE / SHOW
        CREATE TABLE would print `-- note` after a column as part of its expression."""
        node = self.run(self.parser._parse_assignment)
        if node is None:
            self.unexpected("an expression")
        for n in node.walk():
            n.comments = None
        return fix_positions(node, self)

    def data_type(self) -> exp.DataType:
        return self.run(self.parser.parse_flink_type)

    def query(self) -> exp.Expression:
        """A query (SELECT / WITH / VALUES / parenthesized / set operations) up to the end
        of the current token list."""
        word = self.peek_word()
        if word not in ("SELECT", "WITH", "VALUES", "(") and not (
            self.curr and self.curr.token_type == TokenType.L_PAREN
        ):
            self.unexpected('"SELECT", "WITH", "VALUES" or "("')
        try:
            node = self.run(self.parser._parse_statement)
        except SqlParseError:
            self._refuse_model_functions()
            raise
        if node is None:
            self.unexpected("a query")
        if not self.at_end:
            self.unexpected()
        if not isinstance(node, exp.Query) and not isinstance(node, exp.Values):
            self.error("Non-query expression encountered in illegal context", self.tokens[0] if self.tokens else None)
        # exp.Query is only a mixin in sqlglot 30 and mypy deems its intersection with
        # exp.Expression impossible; every parsed query node is a concrete Expression.
        return fix_positions(cast(exp.Expression, node), self)

    def _refuse_model_functions(self) -> None:
        """ML_PREDICT / ML_EVALUATE (which sqlglot cannot parse: `MODEL m` arguments) get
        the clear answer instead of a parse error: models cannot predict here."""
        for i, tok in enumerate(self.tokens[:-1]):
            if tok.text.upper() in MODEL_FUNCTIONS and self.tokens[i + 1].token_type == TokenType.L_PAREN:
                line, col = self.line_col(tok.start)
                message, hint = model_function_refusal(tok.text.upper())
                raise UnsupportedSqlError(message, sql=self.sql, line=line, column=col, hint=hint)


# The table functions that predict with (or evaluate) a model: they need a model provider.
MODEL_FUNCTIONS = ("ML_PREDICT", "ML_EVALUATE")


def model_function_refusal(name: str) -> tuple[str, str]:
    """(message, hint) answering a query that calls ML_PREDICT / ML_EVALUATE."""
    return (
        f"{name} is not supported: a model predicts through its model provider, and Flink's model providers "
        "(OpenAI, Triton, ...) are Java classes, while streamsql runs without a JVM",
        "Call the model from a Python function instead (CREATE FUNCTION ... LANGUAGE PYTHON, docs/udf.md). "
        "Models can still be created, described, altered, listed and dropped.",
    )


def fix_positions(tree: exp.Expression, cur: Cursor) -> exp.Expression:
    """Give Column/Table/Identifier/function nodes `meta["line"]`/`meta["col"]`: 1-based,
    relative to the statement, column of the node's first character (sqlglot records the
    token's last column; we recompute from the start offset)."""
    nodes = list(tree.walk(bfs=False))
    for node in nodes:
        meta = node._meta
        if meta and "start" in meta and meta["start"] is not None:
            meta["line"], meta["col"] = cur.line_col(meta["start"])
    for node in reversed(nodes):  # children before parents
        if isinstance(node, (exp.Column, exp.Table, exp.Func, exp.Anonymous, exp.Dot)):
            meta = node._meta
            if meta and "start" in meta and meta["start"] is not None:
                continue
            starts = [c._meta["start"] for c in node.iter_expressions() if c._meta and c._meta.get("start") is not None]
            if starts:
                s = min(starts)
                m = node.meta
                m["start"] = s
                m["line"], m["col"] = cur.line_col(s)
    return tree


def _user_hint(detail: str | None) -> str | None:
    """sqlglot's description of a parse error, unless it only describes sqlglot's own
    expression classes ("Required keyword: 'this' missing for <class 'sqlglot...'>"): then
    what it means for the SQL text."""
    if not detail:
        return None
    if detail.startswith("Required keyword") or "<class '" in detail or "sqlglot" in detail:
        return "an expression or operand is missing here"
    return detail
