"""The command line: listings, one-line errors, and no heavy imports on the start-up path."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kcard_core.cli import cli

HEAVY = ("torch", "transformers", "sentence_transformers", "llama_cpp", "langchain_core")  # LangChain: ~1 s


@pytest.mark.parametrize("args", [["--help"], ["cards", "list"], ["cards", "list", "--json"],
                                  ["selectors", "list", "--json"], ["readers", "list", "--json"],
                                  ["backends", "list", "--json"],
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


@pytest.mark.parametrize("args", [["ask", "Who?", "--n1", "0"], ["ask", "Who?", "--n3", "101"],
                                  ["eval", "popqa", "--n2", "0"], ["ask", "Who?", "--judge", "oracle"],
                                  ["ask", "Who?", "--copy-bias", "-1"]])
def test_settings_out_of_range_are_refused_before_anything_loads(args):
    result = run(*args)
    assert result.exit_code == 2 and "Invalid value for" in result.output


def test_a_chain_spec_checks_every_setting():
    from kcard_core.errors import KcardError
    from kcard_core.spec import ChainSpec

    assert ChainSpec(cards=[], selectors="relevance, factuality") == ChainSpec()
    for bad in ({"n1": 0}, {"max_iterations": 21}, {"decide": "maybe"}, {"mode": "sideways"}, {"copy_bias": 11},
                {"type_bias": -1}):
        with pytest.raises(KcardError, match=next(iter(bad))):
            ChainSpec(**bad)


def test_no_cards_installed_says_how_to_get_one():
    result = run("ask", "Who?", KCARD_LOAD_PLUGINS="")
    assert result.exit_code == 1 and "no knowledge cards are installed: install one" in result.output


def test_install_passes_index_and_editable_options_to_pip(monkeypatch):
    import subprocess

    calls = []

    def run(command, **kwargs):
        calls.append(command)
        return subprocess.CompletedProcess(command, 0, stdout="[]", stderr="")

    monkeypatch.setattr(subprocess, "run", run)
    result = CliRunner().invoke(cli, ["install", "-U", "-e", "./a", "./b", "--index-url", "http://127.0.0.1:1/simple",
                                      "--extra-index-url", "http://x/simple"])
    assert result.exit_code == 0, result.output
    pip = next(command for command in calls if "install" in command)
    assert pip[pip.index("install") + 1:] == ["--upgrade", "--index-url", "http://127.0.0.1:1/simple",
                                              "--extra-index-url", "http://x/simple", "-e", "./a", "-e", "./b"]


def test_install_falls_back_to_uv_where_there_is_no_pip(monkeypatch):
    import importlib.util
    import shutil
    import subprocess

    calls = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: calls.append(command) or
                        subprocess.CompletedProcess(command, 0, stdout="[]", stderr=""))
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real_find_spec(name, *a))
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/uv" if name == "uv" else None)
    assert CliRunner().invoke(cli, ["uninstall", "-y", "kcard-card-x"]).exit_code == 0
    assert calls[-1][:4] == ["uv", "pip", "uninstall", "kcard-card-x"] and "-y" not in calls[-1]
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = CliRunner().invoke(cli, ["uninstall", "-y", "kcard-card-x"])
    assert result.exit_code == 1 and "neither pip nor uv" in result.output


def test_an_argument_holding_a_nul_character_is_a_usage_error():
    # found by test_properties: `eval --out` with one raised ValueError from os.stat
    result = CliRunner().invoke(cli, ["eval", "--out", "runs\x00", "popqa"])
    assert result.exit_code == 2 and "Error: an argument holds a NUL character" in result.output
