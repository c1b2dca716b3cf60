"""Shared fixtures: an isolated kcard home, fake plugins on sys.path, and a scripted fake backend."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from kcard_core.backends import Backend, BackendStatus, Sampling
from kcard_core.selectors import Selector
from kcard_core.testing import free_port


# Rebuildable, content-keyed files that take a minute to make (dequantized models, assembled
# weights) are shared with the machine's kcard cache; nothing else is.
SHARED_CACHE = Path(os.environ.get("KCARD_TEST_SHARED_CACHE", Path.home() / ".cache" / "kcard"))
SHARED_FOLDERS = ("transformers", "artifacts")


@pytest.fixture(autouse=True)
def kcard_home(tmp_path, monkeypatch):
    """No test reads or writes the user's settings or generation cache."""
    monkeypatch.setenv("KCARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KCARD_CACHE", str(tmp_path / "cache"))
    for folder in SHARED_FOLDERS:
        (SHARED_CACHE / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / "cache").mkdir(exist_ok=True)
        (tmp_path / "cache" / folder).symlink_to(SHARED_CACHE / folder)
    monkeypatch.delenv("KCARD_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("KCARD_STRICT_PLUGINS", raising=False)
    import kcard_core.plugins

    monkeypatch.setattr(kcard_core.plugins, "_registry", None)
    return tmp_path


@pytest.fixture
def install_fake_plugin(tmp_path, monkeypatch):
    """Put a one-module distribution with a ``kcard`` entry point on sys.path (found by importlib.metadata)."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def install(dist: str, module_source: str, entry_name: str | None = None) -> str:
        module = dist.replace("-", "_")
        (site / f"{module}.py").write_text(textwrap.dedent(module_source))
        info = site / f"{module}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(f"[kcard]\n{entry_name or dist} = {module}\n")
        install.names.append(dist)
        return module

    install.names = []  # pass as load_registry(only=...) to leave out the plugins really installed
    return install


class Tie(Selector):
    """Scores every document alike and keeps the first: a factuality check none of them fails."""

    name: str = "factuality"

    def score_documents(self, documents, query):
        return [self.record(doc, 0.5) for doc in documents]

    def choose(self, scored):
        return scored[:1]


class FakeBackend(Backend):
    """Writes "<prompt-word> fact i" documents; counts calls so tests can check reuse."""

    name = "fake"
    description = "deterministic texts for unit tests"

    def __init__(self, fail_for: str | None = None, delay: float = 0.0):
        self.calls = []
        self.fail_for = fail_for
        self.delay = delay  # seconds every generation takes

    def status(self) -> BackendStatus:
        return BackendStatus(True, "cpu")

    def generate(self, model: Path, prompt: str, *, n: int, sampling: Sampling, chat: bool = False) -> list[str]:
        self.calls.append((model, prompt, n))
        time.sleep(self.delay)
        if self.fail_for and self.fail_for in str(model):
            raise RuntimeError("the model crashed")
        return [f"{Path(model).stem} knows fact {i} about {prompt.split(':')[-1].strip()}." for i in range(n)]

    def next_token_logprobs(self, model: Path, prompt: str, top: int = 20) -> dict[str, float]:
        return {"Yes": -0.1, "No": -2.3}

    def language_model(self, model: Path, sampling: Sampling):
        from langchain_core.language_models.fake import FakeListLLM

        return FakeListLLM(responses=["Paris"])


@pytest.fixture
def fake_backend():
    return FakeBackend()


def make_card(tmp_path: Path, name: str, description: str, backend=None, evidence: Path | None = None):
    """A real Card from a real manifest whose model file is a small local file (and its evidence text)."""
    from kcard_core.cards import Card, CardManifest

    model = tmp_path / f"{name}.gguf"
    model.write_bytes(name.encode())
    artifacts = {"model": {"file": str(model)}, **({"evidence": {"file": str(evidence)}} if evidence else {})}
    manifest = CardManifest.from_dict({"name": name, "description": description, "version": "1", "license": "MIT",
                                       "prompt": "About: {query}", "artifacts": artifacts})
    return Card(manifest, backend=backend)


def wait_until_up(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    """Until ``url`` answers; fails with the process's output if it exits first."""
    for _ in range(int(seconds * 10)):
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            assert process.poll() is None, process.stdout.read() if process.stdout else "the server exited"
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer within {seconds} s")


@contextmanager
def serving(*args: str, **env: str) -> Iterator[str]:
    """A real `kcard serve` process on a free loopback port (``args``: its options; ``env``: variables
    it gets besides this process's), stopped by PID; yields its URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "kcard_core", "serve", "--port", str(port), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **env})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(f"{url}/v1/models", process)
        yield url
    finally:
        os.kill(process.pid, 15)
        process.wait(timeout=30)


@pytest.fixture(scope="session")
def kcard_server():
    """`kcard serve` at its defaults, for the whole session."""
    with serving() as url:
        yield url
