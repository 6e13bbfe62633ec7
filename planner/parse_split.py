"""Split a Flink SQL script into statements.

Statements end at a `;` outside single-quoted strings ('' escapes), backquoted
identifiers, `--` and `/* */` comments. A statement set block
(`EXECUTE STATEMENT SET BEGIN ... END;`, `BEGIN STATEMENT SET; ... END;`, also after
EXPLAIN) is one statement: its inner `;` do not split it. A block ends at a word END that
starts a sub-statement (so `CASE ... END` inside an INSERT does not end it).

A character scanner, not the SQL tokenizer, so that an unterminated string in one statement
still lets us report where that statement starts, and so the interactive shell can ask
`is_complete` on half-typed input.
"""

from __future__ import annotations

from runtime.frozen import mutable_dataclass

__all__ = ["split_script", "is_complete", "Chunk"]


@mutable_dataclass
class Chunk:
    """One statement's text and where it starts (1-based line/column in the script)."""

    sql: str
    line: int
    column: int


@mutable_dataclass
class _ScanResult:
    """What one scan of a script found: its statements' text, and the state at the end
    (the shell uses it to tell a finished statement from one that goes on)."""

    chunks: list[Chunk]
    # The unterminated tail: significant text after the last ';' (None when there is none).
    tail: Chunk | None
    # Lexical state at the end of the input: "" | "string" | "ident" | "block_comment".
    open_state: str
    in_block: bool


def _line_col_of(text: str, offset: int, line_starts: list[int]) -> tuple[int, int]:
    import bisect

    i = bisect.bisect_right(line_starts, offset) - 1
    return i + 1, offset - line_starts[i] + 1


def _scan(text: str) -> _ScanResult:  # noqa: C901 - one state machine reads best inline
    n = len(text)
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    chunks: list[Chunk] = []

    start: int | None = None  # offset of the first significant char of the current chunk
    head_words: list[str] = []  # leading words of the chunk (block detection)
    in_block = False
    block_sub_start = False  # inside a block, at the start of a sub-statement
    block_ended = False  # saw the END that closes the block
    swallow_semicolon = False  # `BEGIN STATEMENT SET;`: this ';' does not end the chunk
    state = ""
    end_sig = 0  # offset just past the last significant character seen
    i = 0

    def finish(end: int) -> None:
        nonlocal start, head_words, in_block, block_sub_start, block_ended, swallow_semicolon
        if start is not None:
            sql = text[start : min(end, end_sig)].rstrip()
            line, col = _line_col_of(text, start, line_starts)
            chunks.append(Chunk(sql, line, col))
        start = None
        head_words = []
        in_block = block_sub_start = block_ended = swallow_semicolon = False

    while i < n:
        ch = text[i]
        if ch == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if ch == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                state = "block_comment"
                i = n
                break
            if text.startswith("/*+", i) and start is not None:
                end_sig = j + 2  # a hint (`t /*+ OPTIONS(...) */`) belongs to the statement
            i = j + 2
            continue
        if ch.isspace():
            i += 1
            continue
        if ch == ";":
            if swallow_semicolon:
                swallow_semicolon = False
                block_sub_start = True
                i = end_sig = i + 1
                continue
            if in_block and not block_ended:
                block_sub_start = True
                i = end_sig = i + 1
                continue
            finish(i)
            i += 1
            continue
        if start is None:
            start = i
        if ch == "'":
            j = i + 1
            while True:
                j = text.find("'", j)
                if j < 0:
                    break
                if text.startswith("''", j):
                    j += 2
                    continue
                break
            if j < 0:
                state = "string"
                i = n
                break
            i = end_sig = j + 1
            block_sub_start = False
            continue
        if ch == "`":
            j = text.find("`", i + 1)
            while j >= 0 and text.startswith("``", j):
                j = text.find("`", j + 2)
            if j < 0:
                state = "ident"
                i = n
                break
            i = end_sig = j + 1
            block_sub_start = False
            continue
        if ch.isalpha() or ch == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            word = text[i:j].upper()
            if in_block:
                if block_sub_start and word == "END":
                    block_ended = True
                block_sub_start = False
            elif len(head_words) < 12:
                head_words.append(word)
                if head_words[-3:] == ["STATEMENT", "SET", "BEGIN"]:
                    in_block = True
                    block_sub_start = True
                elif head_words == ["BEGIN", "STATEMENT", "SET"] or head_words[-4:] == [
                    "EXPLAIN",
                    "BEGIN",
                    "STATEMENT",
                    "SET",
                ]:
                    in_block = True
                    swallow_semicolon = True
            i = end_sig = j
            continue
        # Any other character (operator, digit, parenthesis, ...).
        if not in_block and len(head_words) < 12:
            head_words.append(ch)
        block_sub_start = False if in_block else block_sub_start
        i = end_sig = i + 1

    tail: Chunk | None = None
    if start is not None:
        sql = text[start:] if state else text[start:end_sig].rstrip()
        line, col = _line_col_of(text, start, line_starts)
        tail = Chunk(sql, line, col)
    return _ScanResult(chunks, tail, state, in_block)


def split_script(text: str) -> list[tuple[str, int, int]]:
    """Split a script into `(statement_sql, line, column)`, 1-based positions of the
    statement's first significant character. Leading whitespace/comments are stripped;
    a final statement may lack `;`; empty and comment-only statements are skipped."""
    result = _scan(text)
    out = [(c.sql, c.line, c.column) for c in result.chunks]
    if result.tail is not None:
        out.append((result.tail.sql, result.tail.line, result.tail.column))
    return out


def is_complete(text: str) -> bool:
    """True when `text` holds at least one statement and every statement is terminated by
    `;` (outside strings, comments and statement-set blocks): the shell can run it."""
    result = _scan(text)
    return bool(result.chunks) and result.tail is None and result.open_state == ""
