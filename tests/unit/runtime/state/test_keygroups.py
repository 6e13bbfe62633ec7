"""Key groups: one stable function for the hash exchange and the state backends."""

from __future__ import annotations

import subprocess
import sys
from datetime import date, datetime
from decimal import Decimal

import numpy as np
import pyarrow as pa

from runtime.state import create_backend
from runtime.state.keygroups import hash_rows, key_group_range, key_groups_of_rows, subtask_of_key_groups


def test_equal_keys_of_different_arrow_types_share_a_group() -> None:
    ints = [1, -5, 2**40, None]
    for t in (pa.int8(), pa.int16(), pa.int32()):
        small = [v for v in ints if v is None or abs(v) < 100]
        assert (
            hash_rows([pa.array(small, t)], len(small)).tolist()
            == hash_rows([pa.array(small, pa.int64())], len(small)).tolist()
        )
    words = ["", "a", "héllo", None, "a" * 300]
    assert (
        hash_rows([pa.array(words, pa.string())], 5).tolist()
        == hash_rows([pa.array(words, pa.large_string())], 5).tolist()
    )


def test_hash_depends_on_every_column_and_on_the_bytes() -> None:
    a = hash_rows([pa.array(["ab", "ba", "ab"]), pa.array([1, 1, 2])], 3)
    assert len(set(a.tolist())) == 3
    assert hash_rows([pa.array(["ab"])], 1)[0] != hash_rows([pa.array(["ab\x00"])], 1)[0]
    # slices hash like the values they hold
    arr = pa.array(["x", "yy", "zzz", "yy"])
    assert hash_rows([arr.slice(1, 2)], 2).tolist() == hash_rows([pa.array(["yy", "zzz"])], 2).tolist()


def test_many_types_hash_without_python_hash() -> None:
    cols = [
        pa.array([1.5, -0.0, float("nan"), None]),
        pa.array([date(2020, 1, 1)] * 4),
        pa.array([datetime(2020, 1, 1, 10)] * 4, pa.timestamp("ms")),
        pa.array([Decimal("1.25")] * 4, pa.decimal128(10, 2)),
        pa.array([True, False, None, True]),
        pa.array([[1], [2], None, []]),
    ]
    h = hash_rows(cols, 4)
    assert h.dtype == np.uint64 and len(set(h.tolist())) == 4
    assert hash_rows([pa.array([-0.0])], 1)[0] == hash_rows([pa.array([0.0])], 1)[0]


def test_stable_across_processes() -> None:
    code = (
        "import pyarrow as pa; from runtime.state.keygroups import key_groups_of_rows as k;"
        "print(k([pa.array(['a','b','c']), pa.array([1,2,3])], 3, 128).tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = key_groups_of_rows([pa.array(["a", "b", "c"]), pa.array([1, 2, 3])], 3, 128).tolist()
    assert out.strip() == str(here)


def test_groups_spread_and_ranges_partition_like_flink() -> None:
    g = key_groups_of_rows([pa.array(np.arange(100_000))], 100_000, 128)
    counts = np.bincount(g, minlength=128)
    assert counts.min() > 600 and counts.max() < 1000
    for p in (1, 2, 3, 7, 128):
        ranges = [key_group_range(i, p, 128) for i in range(p)]
        assert ranges[0][0] == 0 and ranges[-1][1] == 127
        assert all(ranges[i][1] + 1 == ranges[i + 1][0] for i in range(p - 1))
        owners = subtask_of_key_groups(np.arange(128), p, 128)
        for i, (lo, hi) in enumerate(ranges):
            assert (owners[lo : hi + 1] == i).all()
    assert key_group_range(0, 2, 128) == (0, 63) and key_group_range(1, 2, 128) == (64, 127)


def test_backends_record_the_exchange_key_group() -> None:
    keys = [pa.array(["k1", "k2", None]), pa.array([3, 4, 5], pa.int32())]
    expected = key_groups_of_rows(keys, 3, 128)
    for kind in ("hashmap", "rocksdb"):
        st = create_backend({"state.backend.type": kind})
        slots = st.lookup(keys, 3)
        assert st.key_groups(slots).tolist() == expected.tolist()
        dispose = getattr(st, "dispose", None)
        if dispose:
            dispose()
