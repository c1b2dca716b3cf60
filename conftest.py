"""Every test session (tests/ and plugins/*/tests) reads evaluation data from ../shared/data beside the
repository unless KCARD_DATA names another folder; kcard itself never looks there."""

import os
from pathlib import Path

os.environ.setdefault("KCARD_DATA", str(Path(__file__).resolve().parent.parent / "shared" / "data"))
