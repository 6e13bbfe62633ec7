"""Generated reference docs match the code (connector options, config keys, functions)."""

from streamsql.docgen import main


def test_generated_docs_are_current() -> None:
    assert main(["--check"]) == 0, "run `python -m streamsql.docgen` and commit docs/"
