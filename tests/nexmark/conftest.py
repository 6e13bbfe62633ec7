"""The Nexmark tests run queries and fold changelogs as the conformance harness does:
make tests/conformance/harness.py importable (`from harness import ...`)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
