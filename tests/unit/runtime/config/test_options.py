"""Typed options: the one parser per type, validation errors naming the key, fallback and
deprecated keys, defaults read from the declaration."""

from __future__ import annotations

import pytest

from runtime.checkpoint import options as ckpt
from runtime.checkpoint.config import CheckpointConfig
from runtime.config import key
from runtime.config.core import PARALLELISM, RUNTIME_MODE
from runtime.config.parsers import (
    format_duration_ms,
    format_memory_size,
    parse_bool,
    parse_duration_ms,
    parse_list,
    parse_memory_size,
)
from runtime.errors import ConfigError
from runtime.state.options import STATE_BACKEND, backend_kind


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("10 s", 10_000),
        ("10s", 10_000),
        ("1 min", 60_000),
        ("2m", 120_000),
        ("500 ms", 500),
        ("1h", 3_600_000),
        ("2 d", 172_800_000),
        ("3 days", 259_200_000),
        ("250", 250),
        ("  7 SECONDS ", 7000),
        ("1500 µs", 1),
        ("2000000 ns", 2),
        ("PT10S", 10_000),
        ("PT1M30S", 90_000),
        ("P1DT1H", 90_000_000),
    ],
)
def test_durations_parse_as_flink(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["", "soon", "-1 s", "1.5 s", "10 lightyears", "s"])
def test_bad_durations_say_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match="duration such as '10 s'"):
        parse_duration_ms(text)


def test_durations_and_sizes_format_back() -> None:
    assert format_duration_ms(600_000) == "10 min"
    assert format_duration_ms(0) == "0 ms"
    assert format_duration_ms(1500) == "1500 ms"
    assert format_memory_size(64 << 20) == "64 mb"
    for text in ("10 min", "1 h", "250 ms"):
        assert format_duration_ms(parse_duration_ms(text)) == text


@pytest.mark.parametrize(
    ("text", "size"), [("64 mb", 64 << 20), ("1gb", 1 << 30), ("512 KB", 512 << 10), ("100", 100), ("3 b", 3)]
)
def test_memory_sizes(text: str, size: int) -> None:
    assert parse_memory_size(text) == size


def test_bad_memory_size() -> None:
    with pytest.raises(ValueError, match="memory size"):
        parse_memory_size("lots")
    with pytest.raises(ValueError, match="unknown memory unit 'pb'"):
        parse_memory_size("1 pb")


def test_booleans_and_lists() -> None:
    assert parse_bool("TRUE") is True and parse_bool(" false") is False
    with pytest.raises(ValueError, match="'true' or 'false'"):
        parse_bool("yes")
    assert parse_list("a; b,c ;") == ("a", "b", "c")


def test_bad_value_fails_naming_the_key_and_what_is_accepted() -> None:
    with pytest.raises(ConfigError, match=r"Invalid value 'abc' for key 'parallelism.default': expected an integer"):
        PARALLELISM.get({"parallelism.default": "abc"})
    with pytest.raises(ConfigError, match=r"'0' for key 'parallelism.default': expected an integer >= 1"):
        PARALLELISM.get({"parallelism.default": "0"})
    with pytest.raises(ConfigError, match=r"'execution.runtime-mode': expected one of 'streaming', 'batch'"):
        RUNTIME_MODE.get({"execution.runtime-mode": "stream"})
    with pytest.raises(ConfigError, match=r"'execution.checkpointing.timeout': unknown time unit 'sek'"):
        ckpt.CHECKPOINTING_TIMEOUT.get({"execution.checkpointing.timeout": "10 sek"})


def test_defaults_come_from_the_declaration() -> None:
    assert PARALLELISM.get({}) == 1
    assert PARALLELISM.get(None) == 1
    assert PARALLELISM.get({"parallelism.default": " "}) == 1  # blank = unset
    assert ckpt.CHECKPOINTING_TIMEOUT.get({}) == 600_000
    assert ckpt.CHECKPOINTING_TIMEOUT.default == "10 min"
    assert ckpt.CHECKPOINTING_INTERVAL.get({}) is None


def test_enums_read_in_any_case_and_return_the_declared_spelling() -> None:
    assert RUNTIME_MODE.get({"execution.runtime-mode": "BATCH"}) == "batch"
    assert ckpt.CHECKPOINTING_MODE.get({"execution.checkpointing.mode": "at_least_once"}) == "AT_LEAST_ONCE"


def test_deprecated_and_fallback_keys() -> None:
    assert ckpt.CHECKPOINTING_DIR.get({"state.checkpoints.dir": "/old"}) == "/old"
    # The current key wins over its deprecated name.
    assert (
        ckpt.CHECKPOINTING_DIR.get({"state.checkpoints.dir": "/old", "execution.checkpointing.dir": "/new"}) == "/new"
    )
    assert ckpt.SAVEPOINT_DIR.get({"state.savepoints.dir": "/sp"}) == "/sp"
    assert ckpt.JOB_ID.get({"pipeline.name": "nightly"}) == "nightly"
    assert backend_kind({"state.backend": "rocksdb"}) == "rocksdb"
    assert backend_kind({"state.backend.type": "heap"}) == "hashmap"
    assert STATE_BACKEND.matches("state.backend")
    # The error names the key the user actually set.
    with pytest.raises(ConfigError, match="for key 'state.backend'"):
        STATE_BACKEND.get({"state.backend": "tape"})


def test_checkpoint_config_reads_through_the_declarations() -> None:
    cfg = CheckpointConfig.from_config(
        {
            "execution.checkpointing.interval": "10 s",
            "state.checkpoints.dir": "/tmp/chk",
            "restart-strategy": "fixeddelay",
            "restart-strategy.fixed-delay.delay": "2 s",
        }
    )
    assert (cfg.interval_ms, cfg.directory, cfg.restart_strategy, cfg.restart_delay_ms) == (
        10_000,
        "/tmp/chk",
        "fixed-delay",
        2000,
    )
    with pytest.raises(ConfigError, match="restart-strategy.type"):
        CheckpointConfig.from_config({"restart-strategy.type": "sometimes"})


def test_builder_types_and_checks() -> None:
    size = key("test.size").memory_type().default_value(64 << 20).with_description("d")
    assert size.default == "64 mb" and size.get({}) == 64 << 20 and size.doc_type == "MemorySize"
    ratio = key("test.ratio").float_type().default_value(0.5).with_check(lambda v: 0 <= v <= 1, "a number in [0, 1]")
    assert ratio.get({"test.ratio": "0.25"}) == 0.25
    with pytest.raises(ConfigError, match=r"expected a number in \[0, 1\]"):
        ratio.get({"test.ratio": "2"})
    wildcard = key("fields.#.kind").string_type().no_default_value()
    assert wildcard.matches("fields.a.kind") and not wildcard.matches("fields.kind")
