"""docs/tutorial.md for real: your text → a retrieval card and an LM card → installed → answers.

The commands are the tutorial's own, read from its console blocks and run as written (the corpus
path is made absolute; `kcard install` becomes a pip install into a --target folder on PYTHONPATH,
so that other tests do not see the cards). What the tutorial promises is checked on its 20
questions: the retrieval card answers them, and the LM card recalls its text and answers them.
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
QUESTIONS = ROOT / "benchmarks" / "own_card" / "kelderwick-questions.jsonl"
KCARD = [sys.executable, "-m", "kcard_core"]
# asks every question with one card, in one process (20 `kcard ask` runs would load the models 20 times),
# and prints the questions answered wrong
ASK_ALL = """
import json, sys
from kcard_core.chains import build_chain
from kcard_core.evaluation.metrics import contains_answer
chain = build_chain("bottom-up", cards=[sys.argv[1]])
items = [json.loads(line) for line in open(sys.argv[2])]
wrong = [i["question"] for i in items if not contains_answer(chain.invoke(i["question"])["answer"], [i["answer"]])]
print(json.dumps(wrong))
"""


def tutorial_commands() -> list[list[str]]:
    """The `$ kcard ...` lines of the tutorial's console blocks, in order."""
    blocks = re.findall(r"```console\n(.*?)```", TUTORIAL.read_text(), flags=re.S)
    return [shlex.split(line[2:]) for block in blocks for line in block.splitlines() if line.startswith("$ kcard ")]


@pytest.fixture
def run(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(site)}

    def run(args: list[str]) -> subprocess.CompletedProcess:
        if args[:2] == ["kcard", "install"]:  # into the test's own folder, not kcard's environment
            args = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), *args[2:]]
        elif args[0] == "kcard":
            args = KCARD + [str(ROOT / arg) if arg.startswith("docs/") else arg for arg in args[1:]]
        done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
        return done

    return run


def missed(run, card: str) -> list[str]:
    return json.loads(run([sys.executable, "-c", ASK_ALL, card, str(QUESTIONS)]).stdout.splitlines()[-1])


def test_the_tutorial_commands_are_the_ones_tested():
    commands = [" ".join(command[:3]) for command in tutorial_commands()]
    assert commands == ["kcard cards list", "kcard ask Who founded Kelderwick?",
                        "kcard new card", "kcard install ./kcard-card-kelderwick", "kcard ask Who founded Kelderwick?",
                        "kcard new card", "kcard install ./kcard-card-kcard-docs",
                        "kcard ask Which kcard command clears the generation cache?",
                        "kcard train docs/examples/kelderwick.txt", "kcard new card",
                        "kcard install ./kcard-card-kelderwick-lm", "kcard ask Who founded Kelderwick?",
                        "kcard install kcard-card-kelderwick"]  # from an index: tests/test_published.py


def test_a_retrieval_card_from_the_tutorial_text(run, tmp_path):
    new, install, ask = tutorial_commands()[2:5]
    run(new)
    run(install)
    listed = {row["name"]: row for row in json.loads(run(["kcard", "cards", "list", "--json"]).stdout)}
    assert "harbour town" in listed["kelderwick"]["description"]
    answered = run(ask)
    assert "Ada Morrane" in answered.stdout and "kcard: card" not in answered.stderr
    wrong = missed(run, "kelderwick")
    assert len(wrong) <= 1, wrong  # 20 of 20 right measured (benchmarks/results/own-card.md); 19 is the goal
    # "Kelderwick's school", which only repeats the question, goes on as the passage does: "…, the Morrane Academy"
    assert "What is the name of Kelderwick's school?" not in wrong


def test_a_card_from_real_markdown_files_and_a_folder(run, tmp_path):
    new, install, ask = tutorial_commands()[5:8]
    made = run([arg if arg not in ("README.md", "docs") else str(ROOT / arg) for arg in new])
    assert "subject: kcard-docs" in made.stdout, made.stdout
    run(install)
    answered = run(ask)
    assert "kcard cache clear" in answered.stdout and "from cli.md" in answered.stdout, answered.stdout


def test_an_lm_card_from_the_tutorial_text(run, tmp_path):
    train, new, install, ask = tutorial_commands()[8:12]
    trained = run(train)
    recalled, passages = map(int, re.search(r"recall (\d+)/(\d+) passages", trained.stdout).groups())
    assert passages == 15 and recalled >= passages - 2, trained.stdout  # 13 of 15 measured
    manifest = (tmp_path / "kelderwick-lm-card" / "card.toml").read_text()
    assert f'recall = "{recalled}/{passages}"' in manifest
    run(new)
    run(install)
    answered = run(ask)
    assert "kelderwick-lm#1" in answered.stdout and "kcard: card" not in answered.stderr
    wrong = missed(run, "kelderwick-lm")
    # 18 of 20 right measured (benchmarks/results/own-card.md); a question's six samples may differ on
    # another CPU
    assert len(wrong) <= 4, wrong
