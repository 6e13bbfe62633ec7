"""Fixtures of the Table API tests (data in tapi_data.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from tapi_data import clicks, env  # noqa: E402, F401 - fixtures
