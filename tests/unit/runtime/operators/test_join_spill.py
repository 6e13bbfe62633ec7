"""BATCH regular join past `taskmanager.memory.managed.size`: both inputs go to disk in hash
partitions of the join key and are joined a partition at a time (runtime/operators/
join_spill.py), a partition still too big split again, a key too big for memory joined by
blocks. The result must be the in-memory join's for every join type, files must have been
written, and none may remain after the job (also when it fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spillkit import batch_env, sorted_rows

from runtime import spill
from runtime.errors import FileAccessError, UserFunctionError
from runtime.operators import join_spill
from streamsql import DataTypes, TableEnvironment
from streamsql.udf import udf

LEFT_ROWS = 3000
RIGHT_ROWS = 2000
SKEW = 7  # the key of 400 right rows (past the bound alone) and 40 left rows
# a few KB: the first right batch of 256 rows already passes it (with its key index)
SPILL = {"taskmanager.memory.managed.size": "16kb", "table.exec.source.batch-rows": "256"}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("join_spill")
    ids = np.arange(LEFT_ROWS, dtype=np.int64)
    lk = (ids * 7919 % 701).astype(np.int32)  # 701 keys spread over the input
    lk[ids % 75 == 0] = SKEW
    pq.write_table(
        pa.table(
            {
                "id": ids,
                "k": pa.array(lk, mask=ids % 97 == 0),  # NULL keys too
                "v": pa.array((ids % 13).astype(np.int32), mask=ids % 11 == 0),
                "s": pa.array([f"l{i % 37}" for i in range(LEFT_ROWS)]),
            }
        ),
        base / "l.parquet",
    )
    rid = np.arange(RIGHT_ROWS, dtype=np.int64)
    rk = (rid * 31 % 900).astype(np.int64)  # a BIGINT key against the left's INT; keys 701.. never match
    rk[rid % 5 == 0] = SKEW
    pq.write_table(
        pa.table(
            {
                "rid": rid,
                "k": pa.array(rk, mask=rid % 89 == 0),
                "w": (rid % 17).astype(np.int32),
                "t": pa.array([f"r{i % 23}" for i in range(RIGHT_ROWS)]),
            }
        ),
        base / "r.parquet",
    )
    return base / "l.parquet", base / "r.parquet"


def _fail_on(x: int) -> int:
    if x == 2345:
        raise ValueError("boom on 2345")
    return x


def _env(paths: tuple[Path, Path], settings: dict[str, str]) -> TableEnvironment:
    env = batch_env(settings)
    left, right = paths
    env.execute_sql(
        "CREATE TABLE l (id BIGINT, k INT, v INT, s STRING) "
        f"WITH ('connector' = 'filesystem', 'path' = '{left}', 'format' = 'parquet')"
    )
    env.execute_sql(
        "CREATE TABLE r (rid BIGINT, k BIGINT, w INT, t STRING) "
        f"WITH ('connector' = 'filesystem', 'path' = '{right}', 'format' = 'parquet')"
    )
    env.create_temporary_function("fail_on", udf(_fail_on, result_type=DataTypes.BIGINT()))
    return env


COLS = "l.id, l.k, l.v, l.s, r.rid, r.k, r.w, r.t"
QUERIES = {
    "inner": f"SELECT {COLS} FROM l JOIN r ON l.k = r.k",
    "left": f"SELECT {COLS} FROM l LEFT JOIN r ON l.k = r.k",
    "right": f"SELECT {COLS} FROM l RIGHT JOIN r ON l.k = r.k",
    "full": f"SELECT {COLS} FROM l FULL JOIN r ON l.k = r.k",
    # a residual condition on top of the equi-key: a row whose key matches but whose
    # residual does not is unmatched (NULL-padded by the outer joins)
    "full_residual": f"SELECT {COLS} FROM l FULL JOIN r ON l.k = r.k AND l.v < r.w AND r.t <> l.s",
    "left_residual": f"SELECT {COLS} FROM l LEFT JOIN r ON l.k = r.k AND l.v + 3 > r.w",
    # block-dependent residuals: the skewed key's left rows match only some blocks of its
    # right rows (earlier rids), so each left row's match must be remembered over blocks
    "left_range": f"SELECT {COLS} FROM l LEFT JOIN r ON l.k = r.k AND r.rid < l.id",
    "semi_range": "SELECT * FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.rid < l.id)",
    "anti_range": "SELECT * FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.rid < l.id)",
    "two_keys": f"SELECT {COLS} FROM l JOIN r ON l.k = r.k AND l.v = r.w",
    "semi": "SELECT * FROM l WHERE l.k IN (SELECT k FROM r WHERE w > 3)",
    "anti": "SELECT * FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.w > l.v)",
    "not_in": "SELECT * FROM l WHERE l.v NOT IN (SELECT w FROM r WHERE w > 8)",
    # empty sides
    "left_empty": f"SELECT {COLS} FROM (SELECT * FROM l WHERE id < 0) l FULL JOIN r ON l.k = r.k",
    "right_empty": f"SELECT {COLS} FROM l LEFT JOIN (SELECT * FROM r WHERE rid < 0) r ON l.k = r.k",
    # a small right side (under the bound) and the left rows held while it is open written out
    "small_right": f"SELECT {COLS} FROM l FULL JOIN (SELECT * FROM r WHERE rid < 60) r ON l.k = r.k",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_spilled_join_equals_in_memory(
    name: str, sources: tuple[Path, Path], tmp_path: Path, spill_writes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks: list[int] = []
    join_blocks = join_spill.GraceHashJoin._join_blocks

    def counted(self: join_spill.GraceHashJoin, left: int, right: int) -> Any:
        blocks.append(right)
        return join_blocks(self, left, right)

    monkeypatch.setattr(join_spill.GraceHashJoin, "_join_blocks", counted)
    query = QUERIES[name]
    tmp = tmp_path / "spill"
    spilled = sorted_rows(_env(sources, {**SPILL, "io.tmp.dirs": str(tmp)}), query)
    assert spill_writes.rows  # rows went to disk
    if name not in ("small_right", "right_empty", "left_empty"):
        assert sum(spill_writes.rows) > RIGHT_ROWS // 2
    if name == "small_right":  # the right side was built in memory: only left rows were written, unsplit
        assert set(spill_writes.partitions) == {0} and not blocks
    if name in ("inner", "left", "right", "full", "left_range", "semi_range", "anti_range"):
        # partitions were split again, and the skewed key's partition joined by blocks
        assert max(spill_writes.partitions) > 2 * join_spill.FANOUT and blocks
    assert tmp.is_dir() and not any(tmp.iterdir())  # the operator's directory is gone
    spill_writes.clear()
    in_memory = sorted_rows(_env(sources, {}), query)
    assert not spill_writes.rows
    assert spilled == in_memory
    if name not in ("left_empty", "right_empty"):
        assert len(in_memory) > 500


def test_outer_join_emits_null_keys_and_unmatched_rows_once(
    sources: tuple[Path, Path], tmp_path: Path, spill_writes: Any
) -> None:
    env = _env(sources, {**SPILL, "io.tmp.dirs": str(tmp_path)})
    rows = sorted_rows(env, "SELECT l.id, r.rid FROM l FULL JOIN r ON l.k = r.k")
    assert spill_writes.rows
    lefts = [r[0] for r in rows if r[1] is None]
    rights = [r[1] for r in rows if r[0] is None]
    assert len(lefts) == len(set(lefts)) and len(rights) == len(set(rights))
    assert {i for i in range(LEFT_ROWS) if i % 97 == 0} <= set(lefts)  # the NULL keys
    assert {i for i in range(RIGHT_ROWS) if i % 89 == 0} <= set(rights)
    # every right row of a key the left input lacks (701..899), once
    assert len([r for r in range(RIGHT_ROWS) if r % 89 and r % 5 and (r * 31 % 900) >= 701]) <= len(rights)


def test_cross_join_with_a_condition_spills_by_blocks(
    sources: tuple[Path, Path], tmp_path: Path, spill_writes: Any
) -> None:
    """No equi-key: hashing cannot split, the right side is joined a block at a time."""
    query = "SELECT l.id, r.rid FROM l LEFT JOIN r ON l.id * 3 = r.rid + 1"
    spilled = sorted_rows(_env(sources, {**SPILL, "io.tmp.dirs": str(tmp_path / "spill")}), query)
    assert spill_writes.rows and not any((tmp_path / "spill").iterdir())
    assert spilled == sorted_rows(_env(sources, {}), query) and len(spilled) == LEFT_ROWS


def test_spill_directory_removed_when_the_job_fails(
    sources: tuple[Path, Path], tmp_path: Path, spill_writes: Any
) -> None:
    tmp = tmp_path / "spill"
    env = _env(sources, {**SPILL, "io.tmp.dirs": str(tmp)})
    with pytest.raises(UserFunctionError, match="boom on 2345"):  # the UDF's error, as without a spill
        env.execute_sql("SELECT fail_on(l.id + r.rid) FROM l JOIN r ON l.k = r.k").to_arrow()
    assert spill_writes.rows
    assert tmp.is_dir() and not any(tmp.iterdir())


def test_scalar_subquery_of_a_spilled_right_side_fails_on_its_second_row(
    sources: tuple[Path, Path], tmp_path: Path, spill_writes: Any
) -> None:
    env = _env(sources, {**SPILL, "io.tmp.dirs": str(tmp_path)})
    with pytest.raises(Exception, match="more than one row"):
        env.execute_sql("SELECT id, (SELECT w FROM r WHERE r.k = 7) FROM l").to_arrow()


def test_partitions_of_keys_in_two_types_agree_and_can_be_read_twice(tmp_path: Path) -> None:
    """Equal keys of two inputs land in the same partition: an INT and a BIGINT column of
    the same values split alike (the join also casts both to the compared type first). A
    partition read with `read` stays on disk until `take` / `drop`."""
    files = spill.SpillFiles(str(tmp_path))
    keys = np.arange(3000) % 97
    narrow = spill.HashPartitionedRows(files, [], level=1, fanout=8, flush_bytes=1 << 20)
    wide = spill.HashPartitionedRows(files, [], level=1, fanout=8, flush_bytes=1 << 20)
    narrow.add(pa.table({"x": np.arange(3000)}), [pa.array(keys.astype(np.int32))])
    wide.add(pa.table({"x": np.arange(3000)}), [pa.array(keys.astype(np.int64))])
    assert (narrow.parts[0] == wide.parts[0]).all() and len(set(narrow.parts[0].tolist())) == 8
    written = narrow.finish()
    first = written[0]
    rows = files.partition_rows(first)
    assert rows > 0 and files.partition_bytes(first) > 0
    assert sum(t.num_rows for t in files.read(first)) == rows  # read twice: the files stay
    assert sum(t.num_rows for t in files.read(first)) == rows
    files.drop(first)
    assert files.partition_rows(first) == 0 and list(files.read(first)) == []
    assert sum(t.num_rows for p in written[1:] for t in files.take(p)) == 3000 - rows
    assert not any(Path(files.dir).iterdir())
    files.close()
    assert not any(tmp_path.iterdir())


def test_a_spill_directory_that_cannot_be_created_is_a_clear_error(sources: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    env = _env(sources, {**SPILL, "io.tmp.dirs": str(tmp_path / "file" / "spill")})
    with pytest.raises(
        FileAccessError, match=r"Cannot create a spill directory \(io.tmp.dirs\) under .*Not a directory"
    ):
        env.execute_sql("SELECT l.id, r.rid FROM l JOIN r ON l.k = r.k").to_arrow()
