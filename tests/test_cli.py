"""The command line: listings, one-line errors, and no heavy imports on the start-up path."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kcard_core.cli import cli

HEAVY = ("torch", "transformers", "sentence_transformers", "llama_cpp")


@pytest.mark.parametrize("args", [["--help"], ["cards", "list"], ["cards", "list", "--json"],
                                  ["selectors", "list", "--json"], ["backends", "list", "--json"],
                                  ["plugins", "--json"], ["cards", "show", "general"]])
def test_fast_commands_import_no_heavy_library(args):
    code = (f"import sys\nfrom kcard_core.cli import main\nsys.argv = ['kcard', *{args!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY []" in done.stderr, done.stderr


def run(*args, **env):
    return CliRunner().invoke(cli, list(args), env=env or None)


def test_plugins_json_lists_hooks_and_versions():
    result = run("plugins", "--json")
    assert result.exit_code == 0
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert "register_selectors" in rows["selectors"]["hooks"]
    assert rows["selectors"]["distribution"] == "kcard-selectors" and rows["selectors"]["version"]


def test_cards_list_json_describes_each_card():
    rows = json.loads(run("cards", "list", "--json").output)
    general = next(row for row in rows if row["name"] == "general")
    assert general["plugin"] == "general" and "gemma" in general["artifacts"]["model"]


@pytest.mark.parametrize("args, message", [
    (["ask", "   "], "Error: the question is empty"),
    (["ask", "Who?", "--card", "nope"], "Error: unknown card 'nope'; installed cards: "),
    (["ask", "Who?", "--model", "/nowhere/model.gguf"], "Error: model file /nowhere/model.gguf is missing"),
    (["cards", "show", "nope"], "Error: unknown card 'nope'"),
    (["eval", "squad"], "Error: unknown data set 'squad'"),
    (["eval", "popqa", "--data", "/"], "Error: popqa is not at /popqa/dev.jsonl"),
    (["eval", "midterm-2way", "--mode", "retrieval", "--card", "general"], "Error: the retrieval method needs"),
    (["new", "card", "x", "--model", __file__, "--from", "/"], "Error: give one of --model, --from and --corpus"),
])
def test_bad_input_gets_one_line_and_a_nonzero_exit(args, message):
    result = run(*args)
    assert result.exit_code != 0
    assert result.output.startswith(message), result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1


def test_no_cards_installed_says_how_to_get_one():
    result = run("ask", "Who?", KCARD_LOAD_PLUGINS="")
    assert result.exit_code == 1 and "no knowledge cards are installed: install one" in result.output
