"""The docs stay true: every hook documented with its signature, the CLI reference current, the site builds."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

from kcard_core import hookspecs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))


def test_every_hook_is_documented_with_its_signature():
    documented = dict(re.findall(r"^### `(\w+)\((.*?)\)`", (ROOT / "docs" / "plugins.md").read_text(), flags=re.M))
    specs = {name: ", ".join(inspect.signature(function).parameters)
             for name, function in vars(hookspecs).items() if hasattr(function, "kcard_spec")}
    assert documented == specs


def test_every_environment_variable_is_documented():
    code = [path for folder in ("kcard_core", "plugins") for path in (ROOT / folder).rglob("*.py")
            if "tests" not in path.parts]
    used = {name for path in code for name in re.findall(r"KCARD_[A-Z_]+", path.read_text())}
    documented = set(re.findall(r"^\| `(KCARD_[A-Z_]+)` \|", (ROOT / "docs" / "concepts.md").read_text(), flags=re.M))
    assert used == documented


def test_cli_reference_matches_the_help_output():
    from cli_reference import OUT, reference

    assert OUT.read_text() == reference(), "docs/cli.md is stale: run python docs/tools/cli_reference.py"


def test_the_docs_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "tutorial" / "index.html").is_file()
