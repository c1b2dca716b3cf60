"""The layers hold: the import contracts in pyproject.toml ([tool.importlinter]) are kept."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_runtime_code_does_not_import_evaluation_and_nothing_imports_in_a_cycle():
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
