"""postgres-cdc's vectorized decoding of pgoutput Insert / Update / Delete messages
(protocol 1, text values) against hand-built messages: NULLs, multi-byte text, an
unchanged TOASTed value taken from the old tuple, two relations with different column
orders interleaved, and an Update without old values refused (REPLICA IDENTITY FULL)."""

from __future__ import annotations

import struct

import pytest

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.postgres_cdc import _Relation, decode_changes
from runtime.errors import ConnectorError
from runtime.types import INT, STRING, Field


def _tuple(values: list[str | None]) -> bytes:
    out = struct.pack(">h", len(values))
    for v in values:
        if v is None:
            out += b"n"
        elif v == "<toast>":
            out += b"u"
        else:
            e = v.encode()
            out += b"t" + struct.pack(">i", len(e)) + e
    return out


def _msg(tag: bytes, oid: int, old: list[str | None] | None, new: list[str | None] | None) -> bytes:
    out = tag + struct.pack(">I", oid)
    if old is not None:
        out += b"O" + _tuple(old)
    if new is not None:
        out += b"N" + _tuple(new)
    return out


FIELDS = (Field("id", INT()), Field("v", STRING()), Field("big", STRING()))


def test_changes_of_two_relations_decode_in_order() -> None:
    t = _Relation("public", "t", ["id", "big", "v"])
    u = _Relation("public", "u", ["v", "id"])  # another table: columns by name, `big` missing
    messages = [
        _msg(b"I", 1, None, ["1", "xxx", None]),
        _msg(b"U", 1, ["1", "xxx", None], ["1", "<toast>", "é"]),
        _msg(b"I", 2, None, ["7", "2"]),
        _msg(b"D", 1, ["1", "xxx", "é"], None),
    ]
    cols, kinds, which = decode_changes(messages, [t, t, u, t], FIELDS)
    assert [c.to_pylist() for c in cols] == [
        ["1", "1", "1", "2", "1"],
        [None, None, "é", "7", "é"],
        ["xxx", "xxx", "xxx", None, "xxx"],
    ]
    assert kinds.tolist() == [INSERT, UPDATE_BEFORE, UPDATE_AFTER, INSERT, DELETE]
    assert which.tolist() == [0, 1, 1, 2, 3]


def test_update_without_old_values_is_refused() -> None:
    t = _Relation("public", "t", ["id", "big", "v"])
    with pytest.raises(ConnectorError, match="REPLICA IDENTITY FULL"):
        decode_changes([_msg(b"U", 1, None, ["1", "a", "b"])], [t], FIELDS)
