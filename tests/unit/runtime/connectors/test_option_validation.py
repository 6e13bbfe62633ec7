"""WITH options are validated by the connector's and format's declarations only, with
Flink's messages (FactoryUtil)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runtime.connectors.base import ConfigOption, ConnectorFactory, register_connector
from runtime.connectors.validation import ConnectorOptionError, validate_table_options


def _fails(options: dict[str, str]) -> ConnectorOptionError:
    with pytest.raises(ConnectorOptionError) as info:
        validate_table_options(options)
    return info.value


def test_unsupported_options_are_listed_with_the_supported_ones() -> None:
    e = _fails({"connector": "filesystem", "path": "/x", "format": "csv", "csv.ignore-parse-errorz": "true"})
    assert e.message.startswith(
        "Unsupported options found for 'filesystem'.\n\nUnsupported options:\n\ncsv.ignore-parse-errorz\n\n"
        "Supported options:\n\nauto-compaction\ncompaction.file-size\ncompaction.parallelism\nconnector\n"
        "csv.allow-comments\n"
    )
    assert "csv.ignore-parse-errors\n" in e.message
    assert "json." not in e.message  # only the chosen format's options apply
    assert e.option == "csv.ignore-parse-errorz" and not e.on_value
    assert e.hint == "Did you mean 'csv.ignore-parse-errors'?"


def test_another_formats_option_is_unsupported() -> None:
    e = _fails({"connector": "filesystem", "path": "/x", "format": "csv", "json.ignore-parse-errors": "true"})
    assert "Unsupported options:\n\njson.ignore-parse-errors\n" in e.message


def test_unknown_connector_and_format() -> None:
    e = _fails({"connector": "fiesystem"})
    assert e.message.startswith("Could not find any factory for identifier 'fiesystem'")
    assert "Available factory identifiers are:\n\nblackhole\n" in e.message
    assert (e.option, e.on_value, e.hint) == ("connector", True, "Did you mean 'filesystem'?")
    e = _fails({"connector": "filesystem", "path": "/x", "format": "cvs"})
    assert e.message.startswith("Could not find any format factory for identifier 'cvs'")
    assert (e.option, e.hint) == ("format", "Did you mean 'csv'?")
    e = _fails({"path": "/x"})
    assert "'connector'" in e.message


def test_missing_required_options() -> None:
    e = _fails({"connector": "duckdb"})
    assert e.message == (
        "One or more required options are missing.\n\nMissing required options are:\n\npath\ntable-name"
    )


def test_values_are_checked_by_type() -> None:
    e = _fails({"connector": "datagen", "number-of-rows": "ten"})
    assert e.message == "Invalid value for option 'number-of-rows': expected an integer."
    assert (e.option, e.on_value) == ("number-of-rows", True)
    e = _fails({"connector": "filesystem", "path": "/x", "format": "csv", "csv.ignore-parse-errors": "yes"})
    assert "expected 'true' or 'false'" in e.message
    e = _fails({"connector": "filesystem", "path": "/x", "format": "csv", "source.monitor-interval": "1 sek"})
    assert "unknown time unit 'sek'" in e.message


def test_valid_options_wildcards_and_internal_keys_pass() -> None:
    validate_table_options({"connector": "datagen", "fields.a.kind": "sequence", "fields.a.start": "1"})
    validate_table_options(
        {
            "connector": "filesystem",
            "path": "/x",
            "format": "csv",
            "$internal.partition-keys": "dt",
            "lookup.cache": "partial",
        }
    )
    validate_table_options({"connector": "datagen", "scan.watermark.idle-timeout": "5 s"})


def test_prefix_options_pass_through() -> None:
    register_connector(
        ConnectorFactory(
            "test-prefixed",
            "test only",
            (ConfigOption("topic", required=True),),
            prefixes=("properties.",),
        )
    )
    validate_table_options({"connector": "test-prefixed", "topic": "t", "properties.bootstrap.servers": "h:9092"})
    e = _fails({"connector": "test-prefixed", "topic": "t", "propertie.x": "1"})
    assert e.message.endswith(
        "connector\nscan.watermark.alignment.group\nscan.watermark.alignment.max-drift\n"
        "scan.watermark.alignment.update-interval\nscan.watermark.idle-timeout\ntopic\nproperties.*"
    )


@pytest.mark.parametrize(
    "option",
    [
        "scan.watermark.alignment.group",
        "scan.watermark.alignment.max-drift",
        "scan.watermark.alignment.update-interval",
    ],
)
def test_watermark_alignment_is_declared_and_refused_naming_the_option(option: str) -> None:
    value = "g" if option.endswith("group") else "1 s"
    e = _fails({"connector": "datagen", option: value})
    assert e.message.startswith(f"Watermark alignment ('{option}') is not supported")
    assert e.option == option
    # declared (a wrong value is reported as one, not as an unknown option)
    if value != "g":
        assert _fails({"connector": "datagen", option: "soon"}).message.startswith(
            f"Invalid value for option '{option}'"
        )


def test_looking_up_a_connector_does_not_import_spark_modules() -> None:
    """The first look-up imports every connector module but not a connector's Spark
    module (`*_spark`, imported by the Spark runner): it would load pyspark (~0.3 s) into
    every query's start."""
    code = (
        "import sys; from runtime.connectors.base import connector_names; "
        "assert 'jdbc' in connector_names(); "
        "print(sorted(m for m in sys.modules if m == 'pyspark' or m.endswith('_spark')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "[]"
