"""`kcard new card` renders a package that installs into a fresh environment and passes its own tests."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from kcard_core.artifacts import sha256_of
from kcard_core.cli import cli
from kcard_core.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
WHEELS = Path(os.environ.get("KCARD_WHEELS", Path.home() / ".cache" / "kcard" / "wheels"))


def render(tmp_path, *args):
    result = CliRunner().invoke(cli, ["new", "card", *args, "--output-dir", str(tmp_path), "--no-input"])
    assert result.exit_code == 0, result.output
    return tmp_path / f"kcard-card-{args[0]}"


def test_rendered_tree_and_manifest(tmp_path):
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF not really")
    package = render(tmp_path, "space-facts", "--description", "planets and moons", "--model", str(model))
    module = package / "kcard_card_space_facts"
    assert {p.name for p in package.iterdir()} >= {"pyproject.toml", "README.md", "tests", module.name}
    manifest = tomllib.loads((module / "card.toml").read_text())
    assert manifest["description"] == "planets and moons" and manifest["chat"] is False
    assert manifest["artifacts"]["model"] == {"file": "tiny.gguf", "sha256": sha256_of(model)}
    assert (module / "tiny.gguf").read_bytes() == model.read_bytes()
    project = tomllib.loads((package / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["kcard"] == {"space-facts": "kcard_card_space_facts"}


def test_bad_card_name_is_refused(tmp_path):
    result = CliRunner().invoke(cli, ["new", "card", "Bad Name", "--output-dir", str(tmp_path), "--no-input"])
    assert result.exit_code == 1 and "use lower-case letters" in result.output


def test_prompts_that_input_does_not_answer_end_in_one_error_line(tmp_path):
    result = CliRunner().invoke(cli, ["new", "card", "unanswered", "--output-dir", str(tmp_path / "out")], input="")
    assert result.exit_code == 1 and "\nError: input ended" in result.output and "--no-input" in result.output
    assert not list((tmp_path / "out").iterdir())  # nothing left behind


AWKWARD = 'the "best" café \\ Ünïcødé facts,\nover two lines'


def test_any_description_is_escaped_for_toml_and_python(tmp_path):
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF not really")
    package = render(tmp_path, "odd", "--description", AWKWARD, "--model", str(model))
    one_line = " ".join(AWKWARD.split())
    module = package / "kcard_card_odd"
    assert tomllib.loads((module / "card.toml").read_text())["description"] == one_line
    assert tomllib.loads((package / "pyproject.toml").read_text())["project"]["description"] == f"kcard card: {one_line}"
    docstring = compile((module / "__init__.py").read_text(), "x", "exec").co_consts[0]
    assert docstring == f"kcard card plugin: {one_line}"


def test_a_trained_card_keeps_any_description(tmp_path):
    trained = tmp_path / "trained"
    trained.mkdir()
    (trained / "card.toml").write_text('name = "t"\ndescription = "old"\nversion = "1"\nlicense = "x"\n')
    package = render(tmp_path, "adopted", "--from", str(trained), "--description", AWKWARD)
    manifest = tomllib.loads((package / "kcard_card_adopted" / "card.toml").read_text())
    assert manifest["name"] == "adopted" and manifest["description"] == " ".join(AWKWARD.split())


def test_a_failed_render_leaves_nothing_and_a_second_run_says_why(tmp_path):
    trained = tmp_path / "broken"
    trained.mkdir()
    (trained / "card.toml").write_text('name = "t"\n')  # no description, version, licence
    failed = CliRunner().invoke(cli, ["new", "card", "x", "--from", str(trained), "--output-dir", str(tmp_path / "out"),
                                      "--no-input"])
    assert failed.exit_code == 1 and "missing description" in failed.output
    assert list((tmp_path / "out").iterdir()) == []
    render(tmp_path, "twice")
    again = CliRunner().invoke(cli, ["new", "card", "twice", "--output-dir", str(tmp_path), "--no-input"])
    assert again.exit_code == 1 and "already exists" in again.output


@pytest.mark.parametrize("format, text, count", [
    ("auto", "Fact one.\nFact two.\nFact three.\n", 3),
    ("auto", "Para one,\nstill one.\n\nPara two.\n", 2),
    ("lines", "Para one,\nstill one.\n\nPara two.\n", 3),
    ("auto", "The Brill Mill is old.\nIt grinds corn.\n", 2),  # a text about the Brill Mill
])
def test_a_retrieval_card_from_your_text(tmp_path, format, text, count):
    corpus = tmp_path / "notes.txt"
    corpus.write_text(text)
    package = render(tmp_path, "notes", "--corpus", str(corpus), "--format", format)
    module = package / "kcard_card_notes"
    manifest = tomllib.loads((module / "card.toml").read_text())
    about = "Brill Mill" if "Brill" in text else "notes"  # the name it opens with, else the card's
    assert manifest["type"] == "retrieval" and manifest["description"] == f"{about} (notes.txt)"
    assert manifest["artifacts"]["corpus"] == {"file": "passages.jsonl", "sha256": sha256_of(module / "passages.jsonl")}
    assert manifest["artifacts"]["index"] == {"file": "passages.index.npz",
                                              "sha256": sha256_of(module / "passages.index.npz")}
    passages = [json.loads(line)["text"] for line in (module / "passages.jsonl").read_text().splitlines()]
    assert len(passages) == count and "\n" not in "".join(passages)
    assert manifest["retrieval"]["subject"] == ("Brill Mill" if "Brill" in text else "")  # the name it opens with
    project = tomllib.loads((package / "pyproject.toml").read_text())
    assert project["project"]["dependencies"] == ["kcard"]  # BM25 needs no model backend
    assert {"*.jsonl", "*.npz"} <= set(project["tool"]["setuptools"]["package-data"]["kcard_card_notes"])


def test_new_card_proposes_a_subject_reports_none_and_takes_one(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("# frobtool\n\nIt frobs.\n\n## Install\n\nRun make.\n")
    (tmp_path / "docs" / "NEWS").write_text("* Release 2.0\n\nFaster frobbing.\n")
    made = CliRunner().invoke(cli, ["new", "card", "mine", "--corpus", str(tmp_path / "docs"), "--output-dir",
                                    str(tmp_path / "a"), "--no-input"])
    assert made.exit_code == 0, made.output
    assert "description: frobtool (NEWS, README.md): Install" in made.output  # the heading most passages are under
    assert "subject: frobtool" in made.output
    passages = [json.loads(line) for line in next((tmp_path / "a").glob("*/kcard_card_mine/passages.jsonl"))
                .read_text().splitlines()]
    assert {"text": "Run make.", "source": "README.md", "headings": ["frobtool", "Install"]} in passages
    (tmp_path / "docs" / "NEWS").write_text("* Release 2.0\n\nFaster frobbing.\n\n* Release 1.0\n\nFirst.\n")
    untitled = CliRunner().invoke(cli, ["new", "card", "mine", "--corpus", str(tmp_path / "docs" / "NEWS"),
                                        "--output-dir", str(tmp_path / "c"), "--no-input"])
    assert untitled.exit_code == 0 and "subject: none found" in untitled.output  # "mine" is not in the text
    given = CliRunner().invoke(cli, ["new", "card", "mine", "--corpus", str(tmp_path / "docs" / "NEWS"),
                                     "--corpus", str(tmp_path / "docs" / "README.md"), "--subject", "Frob Tool",
                                     "--output-dir", str(tmp_path / "b"), "--no-input"])
    assert given.exit_code == 0 and "subject: Frob Tool" in given.output


@pytest.mark.slow
def test_rendered_card_installs_in_a_fresh_venv_and_passes_its_tests(tmp_path):
    package = render(tmp_path, "tiny-facts", "--description", "tiny facts for a test",
                     "--model", str(resolve_model("smollm2-135m-instruct")[1]), "--chat")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-compile", "--find-links", str(WHEELS), "pytest",
                    str(ROOT), str(ROOT / "plugins" / "kcard-llama-cpp"), str(package)], check=True, timeout=900)
    listed = subprocess.run([venv / "bin" / "kcard", "cards", "list", "--json"], capture_output=True, text=True,
                            check=True)
    assert [row["name"] for row in json.loads(listed.stdout)] == ["tiny-facts"]
    tests = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(package / "tests")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout


@pytest.mark.slow
def test_kcard_install_and_uninstall_a_card_package(tmp_path):
    model = tmp_path / "facts.gguf"
    model.write_bytes(b"not loaded: listing a card never reads its weights")
    package = render(tmp_path, "install-demo", "--description", "a card for the install test", "--model", str(model))
    kcard = [sys.executable, "-m", "kcard_core"]
    try:
        installed = subprocess.run(kcard + ["install", str(package)], capture_output=True, text=True, timeout=600)
        assert installed.returncode == 0, installed.stderr
        assert "new cards: install-demo" in installed.stdout
    finally:
        removed = subprocess.run(kcard + ["uninstall", "-y", "kcard-card-install-demo"], capture_output=True,
                                 text=True, timeout=600)
    assert removed.returncode == 0, removed.stderr
    listed = subprocess.run(kcard + ["cards", "list", "--json"], capture_output=True, text=True, check=True)
    assert "install-demo" not in {row["name"] for row in json.loads(listed.stdout)}


@pytest.mark.slow
def test_the_wheel_carries_the_card_template(tmp_path):
    import zipfile

    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(ROOT),
                    "-w", str(tmp_path)], check=True, timeout=600, cwd=tmp_path)
    wheel = zipfile.ZipFile(next(tmp_path.glob("kcard-*.whl")))
    template = ROOT / "cookiecutter-card"
    expected = {f"kcard_core/card_template/{p.relative_to(template)}" for p in template.rglob("*") if p.is_file()
                and "__pycache__" not in p.parts}
    assert expected and expected <= set(wheel.namelist())
