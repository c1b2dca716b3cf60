"""docs/tutorial.md for real: corpus → kcard train --lora → kcard new card --from → pip install → kcard ask.

The commands are the tutorial's own, read from its console blocks; only the training is shortened
(2 steps instead of 60) and the package goes into a --target folder on PYTHONPATH, not into the test
environment, so that other tests do not see the card.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"
KCARD = [sys.executable, "-m", "kcard_core"]


def tutorial_commands() -> list[str]:
    """The `$ ...` lines of the tutorial's console blocks, in order."""
    blocks = re.findall(r"```console\n(.*?)```", TUTORIAL.read_text(), flags=re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def find(commands: list[str], prefix: str) -> list[str]:
    return next(shlex.split(command) for command in commands if command.startswith(prefix))


def test_tutorial_from_corpus_to_an_answer(tmp_path):
    commands = tutorial_commands()
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(site)}

    def run(args: list[str]) -> subprocess.CompletedProcess:
        done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
        return done

    train = find(commands, "kcard train")
    train[train.index("--steps") + 1] = "2"
    train[2] = str(ROOT / train[2])  # the corpus path is relative to the repository
    trained = run(KCARD + train[1:])
    assert "perplexity" in trained.stdout
    manifest = (tmp_path / "kelderwick-card" / "card.toml").read_text()
    assert "[artifacts.adapter-gguf]" in manifest and "[artifacts.adapter-peft]" in manifest

    run(KCARD + find(commands, "kcard new card")[1:])
    package = tmp_path / "kcard-card-kelderwick"
    assert find(commands, "pip install ./")[2] == f"./{package.name}"
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(package)])

    listed = json.loads(run(KCARD + ["cards", "list", "--json"]).stdout)
    card = next(row for row in listed if row["name"] == "kelderwick")
    assert card["plugin"] == "kelderwick" and "harbour town" in card["description"]  # its entry point

    ask = find(commands, "kcard ask \"Who founded Kelderwick?\" --card")
    answered = run(KCARD + ask[1:])
    assert "card kelderwick:" in answered.stdout and "kelderwick#1" in answered.stdout
