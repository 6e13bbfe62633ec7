"""The filesystem sink with a changelog format (canal-json, debezium-json, maxwell-json,
ogg-json) takes every row kind and writes each row as the format's change event, one per
line, as Flink's file sink does with a format whose changelog mode is not insert-only:
-U and -D as deletions, +I and +U as insertions (Flink cannot merge -U/+U into one UPDATE
event: canal-json DELETE / INSERT, debezium-json op "d" / "c"). Reading the files back
through the filesystem source with the same format replays the changes, so applying them
gives the query's final table. Other formats keep refusing an updating query at planning.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from planner.errors import SqlError
from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.base import SourceContext
from runtime.connectors.filesystem import FilesystemSource, changelog_mode
from runtime.connectors.filesystem_partitions import PARTITION_KEYS
from runtime.connectors.filesystem_sink import FilesystemSink
from runtime.types import BIGINT, STRING, Field
from streamsql import EnvironmentSettings, TableEnvironment

SCHEMA = (Field("word", STRING()), Field("cnt", BIGINT()))
# +I a 1, +I b 1, -U a 1, +U a 2, -D b 1: the final table is {a: 2}
CHANGES = pa.RecordBatch.from_arrays(
    [
        pa.array(["a", "b", "a", "a", "b"]),
        pa.array([1, 1, 1, 2, 1], pa.int64()),
        pa.array([INSERT, INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE], pa.int8()),
    ],
    names=["word", "cnt", ROW_KIND],
)
EXPECTED_LINES = {
    "canal-json": [
        '{"data":[{"word":"a","cnt":1}],"type":"INSERT"}',
        '{"data":[{"word":"b","cnt":1}],"type":"INSERT"}',
        '{"data":[{"word":"a","cnt":1}],"type":"DELETE"}',
        '{"data":[{"word":"a","cnt":2}],"type":"INSERT"}',
        '{"data":[{"word":"b","cnt":1}],"type":"DELETE"}',
    ],
    "debezium-json": [
        '{"before":null,"after":{"word":"a","cnt":1},"op":"c"}',
        '{"before":null,"after":{"word":"b","cnt":1},"op":"c"}',
        '{"before":{"word":"a","cnt":1},"after":null,"op":"d"}',
        '{"before":null,"after":{"word":"a","cnt":2},"op":"c"}',
        '{"before":{"word":"b","cnt":1},"after":null,"op":"d"}',
    ],
    "maxwell-json": [
        '{"data":{"word":"a","cnt":1},"type":"insert"}',
        '{"data":{"word":"b","cnt":1},"type":"insert"}',
        '{"data":{"word":"a","cnt":1},"type":"delete"}',
        '{"data":{"word":"a","cnt":2},"type":"insert"}',
        '{"data":{"word":"b","cnt":1},"type":"delete"}',
    ],
    "ogg-json": [
        '{"before":null,"after":{"word":"a","cnt":1},"op_type":"I"}',
        '{"before":null,"after":{"word":"b","cnt":1},"op_type":"I"}',
        '{"before":{"word":"a","cnt":1},"after":null,"op_type":"D"}',
        '{"before":null,"after":{"word":"a","cnt":2},"op_type":"I"}',
        '{"before":{"word":"b","cnt":1},"after":null,"op_type":"D"}',
    ],
}


def _read_back(options: dict[str, str], schema: tuple[Field, ...] = SCHEMA) -> list[tuple[int, tuple[object, ...]]]:
    """(row kind, row) of every row the filesystem source reads, in file order."""
    source = FilesystemSource(options, schema, None, SourceContext(mode="STREAMING"))
    out: list[tuple[int, tuple[object, ...]]] = []
    for split in source.splits():
        reader = source.create_reader(split)
        while (b := reader.read(1024)) is not None:
            kinds = b.column(b.schema.get_field_index(ROW_KIND)).to_pylist()
            rows = zip(*(b.column(i).to_pylist() for i in range(len(schema))), strict=True)
            out.extend(zip(kinds, rows, strict=True))
        reader.close()
    return out


def _apply(changes: list[tuple[int, tuple[object, ...]]]) -> Counter[tuple[object, ...]]:
    table: Counter[tuple[object, ...]] = Counter()
    for kind, row in changes:
        table[row] += 1 if kind in (INSERT, UPDATE_AFTER) else -1
    return +table


@pytest.mark.parametrize("fmt", sorted(EXPECTED_LINES))
def test_sink_writes_each_row_kind_as_the_formats_event_and_the_source_replays_them(tmp_path: Path, fmt: str) -> None:
    options = {"connector": "filesystem", "path": str(tmp_path / "out"), "format": fmt}
    assert changelog_mode(options) == "I,UB,UA,D"
    sink = FilesystemSink(options, SCHEMA, SourceContext(mode="STREAMING"))
    sink.open()
    sink.write(CHANGES)
    sink.close()
    files = [p for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")]
    assert len(files) == 1 and files[0].suffix == ".json"
    assert files[0].read_text().splitlines() == EXPECTED_LINES[fmt]
    replayed = _read_back(options)
    removed = (UPDATE_BEFORE, DELETE)
    assert [(k in removed, row) for k, row in replayed] == [
        (k in removed, (w, c)) for w, c, k in zip(*(CHANGES.column(i).to_pylist() for i in range(3)), strict=True)
    ]
    assert _apply(replayed) == Counter({("a", 2): 1})


def test_partitioned_sink_keeps_the_row_kinds(tmp_path: Path) -> None:
    options = {"path": str(tmp_path / "out"), "format": "canal-json", PARTITION_KEYS: "word"}
    sink = FilesystemSink(options, SCHEMA, SourceContext(mode="STREAMING"))
    sink.open()
    sink.write(CHANGES)
    sink.close()
    (a,) = (tmp_path / "out" / "word=a").glob("part-*")
    assert a.read_text().splitlines() == [
        '{"data":[{"cnt":1}],"type":"INSERT"}',
        '{"data":[{"cnt":1}],"type":"DELETE"}',
        '{"data":[{"cnt":2}],"type":"INSERT"}',
    ]


def _word_count_env(tmp_path: Path) -> TableEnvironment:
    (tmp_path / "words.csv").write_text("a\nb\na\na\nb\nc\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.exec.source.batch-rows", "1")  # one row a batch: the count updates
    env.execute_sql(
        f"CREATE TABLE words (word STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'words.csv'}', "
        "'format' = 'csv')"
    )
    return env


@pytest.mark.parametrize("fmt", ["canal-json", "debezium-json"])
def test_an_updating_query_into_a_changelog_format_reads_back_as_its_final_table(tmp_path: Path, fmt: str) -> None:
    env = _word_count_env(tmp_path)
    for name in ("sink", "back"):
        env.execute_sql(
            f"CREATE TABLE {name} (word STRING, cnt BIGINT) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / 'out'}', 'format' = '{fmt}')"
        )
    env.execute_sql("INSERT INTO sink SELECT word, COUNT(*) FROM words GROUP BY word").wait()
    text = "".join(p.read_text() for p in (tmp_path / "out").iterdir() if not p.name.startswith("."))
    assert ('"DELETE"' if fmt == "canal-json" else '"op":"d"') in text  # the updates were written as changes
    with env.execute_sql("SELECT word, cnt FROM back").collect() as rows:
        table: Counter[tuple[object, ...]] = Counter()
        for r in rows:
            table[(r[0], r[1])] += 1 if r.get_row_kind().name in ("INSERT", "UPDATE_AFTER") else -1
    assert +table == Counter({("a", 3): 1, ("b", 2): 1, ("c", 1): 1})


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "orc"])
def test_other_formats_still_refuse_an_updating_query(tmp_path: Path, fmt: str) -> None:
    env = _word_count_env(tmp_path)
    env.execute_sql(
        f"CREATE TABLE sink (word STRING, cnt BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'out'}', 'format' = '{fmt}')"
    )
    with pytest.raises(SqlError) as info:
        env.execute_sql("INSERT INTO sink SELECT word, COUNT(*) FROM words GROUP BY word")
    assert info.value.message == (
        "Table sink 'default_catalog.default_database.sink' doesn't support consuming update changes which is "
        "produced by node GroupAggregate(groupBy=[word], select=[word, COUNT(*) AS EXPR$1])"
    )
    assert "canal-json" in (info.value.hint or "")
