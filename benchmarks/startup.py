"""Start-up time of `kcard --help` and `kcard cards list` with 10 card plugins installed.

Ten real card distributions are pip-installed into a temporary folder put on PYTHONPATH, beside the
first-party plugins.   Run: .venv/bin/python benchmarks/startup.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import run_seconds, write_result

GOALS = {"--help": 0.3, "cards list": 0.5}


def make_card_package(root: Path, index: int) -> Path:
    name = f"bench{index}"
    package = root / f"kcard-card-{name}"
    module = package / f"kcard_card_{name}"
    module.mkdir(parents=True)
    (package / "pyproject.toml").write_text(f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"
[project]
name = "kcard-card-{name}"
version = "0.1.0"
[project.entry-points.kcard]
{name} = "kcard_card_{name}"
[tool.setuptools.package-data]
kcard_card_{name} = ["card.toml"]
""")
    (module / "card.toml").write_text(f'name = "{name}"\ndescription = "benchmark card {index}"\n'
                                      'version = "0.1.0"\nlicense = "MIT"\n'
                                      '[artifacts.model]\nfile = "model.gguf"\n')
    (module / "__init__.py").write_text("from pathlib import Path\nfrom kcard_core.cards import Card\n"
                                        "from kcard_core.hookspecs import hookimpl\n\n@hookimpl\n"
                                        "def register_cards(register):\n"
                                        "    register(Card.from_manifest(Path(__file__).with_name('card.toml')))\n")
    return package


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, site = Path(tmp), Path(tmp) / "site"
        packages = [str(make_card_package(root, i)) for i in range(10)]
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--target", str(site), *packages], check=True)
        env = {**os.environ, "PYTHONPATH": str(site)}
        kcard = [str(Path(sys.executable).with_name("kcard"))]
        listed = subprocess.run([*kcard, "cards", "list"], env=env, capture_output=True, text=True, check=True)
        cards = len(listed.stdout.splitlines())
        seconds = {"--help": run_seconds([*kcard, "--help"], env), "cards list": run_seconds([*kcard, "cards", "list"], env)}
        bare = run_seconds([sys.executable, "-c", "pass"], env)
    rows = "\n".join(f"| `kcard {cmd}` | {s:.3f} | {GOALS[cmd]} | {'met' if s <= GOALS[cmd] else 'missed'} |"
                     for cmd, s in seconds.items())
    report = f"""# Start-up time

`kcard` with {cards} cards installed (10 benchmark card distributions + the first-party plugins),
median of 5 runs. A bare `python -c pass` takes {bare:.3f} s on this machine.

| command | seconds | goal | |
|---|---|---|---|
{rows}

Reproduce: `.venv/bin/python benchmarks/startup.py`
"""
    write_result("startup", {"cards_installed": cards, "seconds": seconds, "python_bare_seconds": bare,
                             "goals": GOALS}, report)


if __name__ == "__main__":
    main()
