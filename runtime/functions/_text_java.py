"""Java behaviours the text functions must reproduce: `Double.toString` (JSON numbers),
Java regular expressions (run by RE2 through Arrow, or by Python `re` as a fallback), and
Java's full-case-mapping UPPER/LOWER.

Why: Flink's functions are Java methods; their output text is whatever Java prints. Arrow's
kernels differ in a few visible places (`'ß'.upper()` is `'SS'` in Java, RE2 lacks
look-around), so each such difference is handled here once.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from functools import lru_cache

import numpy as np

# ---------------------------------------------------------------------- numbers


def java_double_str(x: float) -> str:
    """Java's `Double.toString(x)`: `1.5`, `100.0`, `1.0E10`, `1.0E-5`, `NaN`."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return _java_fp_str(repr(float(x)), abs(x))


def java_float_str(x: float) -> str:
    """Java's `Float.toString(x)` (shortest digits that identify the float32)."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return java_double_str(x)
    digits = np.format_float_scientific(np.float32(x), unique=True)
    return _java_fp_str(digits, abs(x))


def _java_fp_str(shortest: str, mag: float) -> str:
    d = Decimal(shortest)
    sign, digits, exp = d.as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    sci = len(digits) + int(exp) - 1
    neg = "-" if sign else ""
    if 1e-3 <= mag < 1e7:
        if sci >= 0:
            ip = ds[: sci + 1].ljust(sci + 1, "0")
            fp = ds[sci + 1 :] or "0"
        else:
            ip = "0"
            fp = "0" * (-sci - 1) + ds
        return f"{neg}{ip}.{fp}"
    mant = ds[0] + "." + (ds[1:] or "0")
    return f"{neg}{mant}E{sci}"


# ---------------------------------------------------------------------- case mapping


def _special_chars(mapper: str) -> str:
    """Characters whose Java full case mapping differs from Arrow's simple per-codepoint
    mapping (the result has another length, e.g. 'ß' -> 'SS'), plus final-sigma handling."""
    out = []
    # Scan blocks of code points; only a block whose mapping changes length has such a
    # character (full mappings never shrink), which keeps this one-off scan ~50x cheaper.
    step = 4096
    cps = np.concatenate([np.arange(0xD800), np.arange(0xE000, sys.maxunicode + 1)]).astype("<u4")
    every = cps.tobytes().decode("utf-32-le")
    for lo in range(0, len(every), step):
        block = every[lo : lo + step]
        if len(getattr(block, mapper)()) == len(block):
            continue
        for c in block:
            if len(getattr(c, mapper)()) != 1:
                out.append(c)
    if mapper == "lower":
        out.append("\u03a3")  # Σ: Java (and Python) pick ς at the end of a word
    return "".join(out)


@lru_cache(maxsize=2)
def special_case_regex(mapper: str) -> str:
    """An RE2 character class of the characters needing Python's full case mapping."""
    chars = _special_chars(mapper)
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]"


# ---------------------------------------------------------------------- regex

_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
    "javaLowerCase": "a-z",
    "javaUpperCase": "A-Z",
    "javaWhitespace": " \\t\\n\\x0B\\f\\r",
}


def java_regex_to_re2(pattern: str) -> str:
    """Rewrite the Java-only parts of a regex into the common syntax understood by RE2 and
    Python `re`: POSIX classes `\\p{Alpha}` & co. become bracket ranges. Everything else
    in the common Java syntax (classes, quantifiers, groups, `\\w`, `\\d`, `\\b`, anchors,
    `(?i)`) means the same in RE2 and Python with ASCII semantics."""

    def repl(m: re.Match[str]) -> str:
        neg = m.group(1) == "P"
        body = _POSIX_CLASSES.get(m.group(2))
        if body is None:
            return m.group(0)
        inside = m.string[: m.start()].count("[") > m.string[: m.start()].count("]")
        if inside:
            return body  # negation inside a class is rare; keep positive form
        return f"[{'^' if neg else ''}{body}]"

    return re.sub(r"\\([pP])\{(?:Is)?(\w+)\}", repl, pattern)


@lru_cache(maxsize=256)
def python_regex(pattern: str) -> re.Pattern[str] | None:
    """The Java regex compiled by Python's `re` (ASCII classes like Java), or None when
    it does not compile (Flink then returns NULL / FALSE)."""
    try:
        return re.compile(java_regex_to_re2(pattern), re.ASCII)
    except (re.error, RecursionError, OverflowError):
        return None


def name_capture_groups(pattern: str) -> tuple[str, int]:
    """Give every plain capturing group `( ... )` a name `g<i>` (Arrow's `extract_regex`
    only returns named groups) and wrap the whole pattern as group `g0`. Returns the new
    pattern and the number of user groups."""
    out = ["(?P<g0>"]
    i = 0
    count = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            if pattern[i + 1] == "Q":  # \Q...\E quoting
                end = pattern.find("\\E", i + 2)
                end = len(pattern) if end < 0 else end + 2
                out.append(pattern[i:end])
                i = end
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if i + 1 < len(pattern) and pattern[i + 1] == "^":
                out.append("^")
                i += 1
            if i + 1 < len(pattern) and pattern[i + 1] == "]":
                out.append("]")
                i += 1
        elif c == "(":
            if i + 1 < len(pattern) and pattern[i + 1] == "?":
                if (
                    pattern.startswith("(?<", i)
                    and not pattern.startswith("(?<=", i)
                    and not pattern.startswith("(?<!", i)
                ):
                    # Java named group (?<name>...) counts as a numbered group too
                    count += 1
                    close = pattern.index(">", i)
                    out.append(f"(?P<g{count}>")
                    i = close + 1
                    continue
                out.append(c)
            else:
                count += 1
                out.append(f"(?P<g{count}>")
        else:
            out.append(c)
        i += 1
    out.append(")")
    return "".join(out), count
