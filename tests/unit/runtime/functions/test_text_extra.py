"""The vectorized paths of PRINTF and PARSE_URL (the corpus calls them with literals,
which take the per-value path): they must agree with the general formatter / parser."""

from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.functions import text_extra
from runtime.functions._testing import call, lit, refs, run
from runtime.types import BOOLEAN, INT, STRING, DataType

URLS = [
    "https://user:pw@www.example.com:8080/path/p.html?q=1&lang=en#frag",
    "",
    None,
    "http://example.com/a%20b?x=%E6%97%A5&y",
    "ftp://ftp.example.org/file.txt",
    "https://example.com?a=1&a=2&b=",
    "http://a.com",
    "not a url",
    "foo://x.y/z",
    "mailto:someone@example.com",
    "http://[::1]:80/x#a#b",
]


@pytest.mark.parametrize("part", [*text_extra._URL_PARTS, "PORT", "host"])
def test_parse_url_columns_match_the_scalar_parser(part: str) -> None:
    got = text_extra._url_parts_vectorized(pa.array(URLS, pa.string()), part, None).to_pylist()
    want = [None if u is None else text_extra._url_part(u, part, None) for u in URLS]
    assert got == want


@pytest.mark.parametrize("key", ["q", "a", "x", "y", "nope", "lang"])
def test_parse_url_query_key_columns(key: str) -> None:
    got = text_extra._url_parts_vectorized(pa.array(URLS, pa.string()), "QUERY", key).to_pylist()
    want = [None if u is None else text_extra._url_part(u, "QUERY", key) for u in URLS]
    assert got == want


def test_printf_columns_vectorized_and_general() -> None:
    cols: list[tuple[list[object], DataType]] = [
        (["a", None, "日本"], STRING()),
        ([1, 2, None], INT()),
        ([True, None, False], BOOLEAN()),
    ]
    s, i, b = refs(cols)
    assert run(call("printf", lit("%s-%d|%s%%", STRING(False)), s, i, b), cols) == [
        "a-1|true%",
        "null-2|null%",
        "日本-null|false%",
    ]
    # width and flags take the general formatter, per distinct row
    assert run(call("printf", lit("[%4s|%-3d]", STRING(False)), s, i), cols) == [
        "[   a|1  ]",
        "[null|2  ]",
        "[  日本|null]",
    ]
