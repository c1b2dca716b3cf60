"""Ten kinds of broken plugin, each a real distribution pip-installed (into a folder on PYTHONPATH),
all at once beside the real ones: every command still works and `kcard plugins --json` names each.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

MANIFEST = 'name = "{name}"\ndescription = "a card"\nversion = "1"\nlicense = "MIT"\n[artifacts.model]\nfile = "{file}"\n'
REGISTER = """
from pathlib import Path
from kcard_core.cards import Card
from kcard_core.hookspecs import hookimpl

@hookimpl
def register_cards(register):
    register(Card.from_manifest(Path(__file__).with_name("card.toml")))
"""
BROKEN = {  # distribution -> (module source, card.toml or None, what `kcard plugins` must say)
    "import-error": ("import kcard_dependency_that_is_not_installed\n", None, "import failed: ModuleNotFoundError"),
    "syntax-error": ("def register_cards(:\n", None, "import failed: SyntaxError"),
    "hook-raises": ("from kcard_core.hookspecs import hookimpl\n@hookimpl\ndef register_cards(register):\n"
                    "    raise RuntimeError('boom')\n", None, "register_cards failed: RuntimeError: boom"),
    "hook-garbage": ("from kcard_core.hookspecs import hookimpl\n@hookimpl\ndef register_cards(register):\n"
                     "    register({'name': 'not a card'})\n", None, "register_cards expects a Card, got dict"),
    "manifest-missing": (REGISTER, 'name = "half"\n', "card manifest is missing description, version, license"),
    "manifest-types": (REGISTER, 'name = "typed"\ndescription = 3\nversion = "1"\nlicense = "MIT"\n',
                       "card manifest field 'description' must be a string"),
    "artifact-missing": (REGISTER, MANIFEST.format(name="ghost", file="missing.gguf"), None),
    "duplicate-name": (REGISTER, MANIFEST.format(name="general", file="missing.gguf"), None),
    "misspelled-hook": ("from kcard_core.hookspecs import hookimpl\n@hookimpl\ndef register_crads(register):\n"
                        "    pass\n", None, "hookimpl 'register_crads' matches no kcard hook"),
    "slow-import": ("import time\ntime.sleep(1.5)\n", None, None),
}


def build(root, kind, source, manifest):
    dist = f"kcard-broken-{kind}"
    module = dist.replace("-", "_")
    package = root / dist
    (package / module).mkdir(parents=True)
    (package / module / "__init__.py").write_text(textwrap.dedent(source))
    if manifest:
        (package / module / "card.toml").write_text(manifest)
    (package / "pyproject.toml").write_text(textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{dist}"
        version = "0.1.0"
        [project.entry-points.kcard]
        {kind} = "{module}"
        [tool.setuptools]
        packages = ["{module}"]
        [tool.setuptools.package-data]
        {module} = ["*.toml"]
    """))
    return package


def test_ten_broken_plugins_installed_at_once(tmp_path):
    packages = [build(tmp_path / "src", kind, source, manifest) for kind, (source, manifest, _) in BROKEN.items()]
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target",
                    str(site), *map(str, packages)], check=True, timeout=600)
    env = {**os.environ, "PYTHONPATH": str(site)}

    def kcard(*args, check=True):
        done = subprocess.run([sys.executable, "-m", "kcard_core", *args], capture_output=True, text=True, env=env,
                              timeout=600)
        assert "Traceback" not in done.stderr + done.stdout
        assert not check or done.returncode == 0, done.stderr
        return done

    plugins = {row["name"]: row for row in json.loads(kcard("plugins", "--json").stdout)}
    for kind, (_, _, message) in BROKEN.items():
        assert kind in plugins, kind
        if message:
            assert any(message in error for error in plugins[kind]["errors"]), (kind, plugins[kind])
    assert plugins["slow-import"]["import_seconds"] >= 1.5 and "slow import" in plugins["slow-import"]["warnings"][0]
    assert plugins["general"]["errors"] == []  # the real plugins still load

    cards = {row["name"] for row in json.loads(kcard("cards", "list", "--json").stdout)}
    # two plugins claim "general": both are kept, each under its plugin's name
    assert {"general/general", "duplicate-name/general", "ghost", "countries"} <= cards
    for command in (["--help"], ["backends", "list"], ["selectors", "list"], ["cards", "show", "ghost"]):
        kcard(*command)

    asked = kcard("ask", "What is the capital of Australia?", "--card", "ghost", "--card", "countries", "--json")
    result = json.loads(asked.stdout)
    assert result["answer"] and result["trace"]["errors"][0]["card"] == "ghost"
    assert "missing.gguf is missing" in result["trace"]["errors"][0]["error"]
    assert "kcard: card ghost failed: " in asked.stderr and "missing.gguf is missing" in asked.stderr  # loud
