"""Parsing of the `*.specific-offsets` options ('partition:0,offset:42;partition:1,offset:300')."""

from __future__ import annotations

import re

from runtime.errors import ConnectorError

_ITEM = re.compile(r"^\s*partition\s*:\s*(\d+)\s*,\s*offset\s*:\s*(\d+)\s*$")


def parse_specific_offsets(text: str, key: str) -> dict[int, int]:
    """{partition: offset}; Flink's message for a value that does not follow the format."""
    out: dict[int, int] = {}
    for item in text.split(";"):
        if not item.strip():
            continue
        m = _ITEM.match(item)
        if m is None:
            raise ConnectorError(
                f"Invalid properties '{key}' should follow the format "
                f"'partition:0,offset:42;partition:1,offset:300', but is '{text}'."
            )
        out[int(m.group(1))] = int(m.group(2))
    return out
