"""Generated reference docs match the code (connector options, config keys, functions).

Run in a fresh interpreter: other tests register test-only connectors in this process."""

import subprocess
import sys


def test_generated_docs_are_current() -> None:
    p = subprocess.run([sys.executable, "-m", "streamsql.docgen", "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr + "\nrun `python -m streamsql.docgen` and commit docs/"
