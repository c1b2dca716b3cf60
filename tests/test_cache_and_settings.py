"""The generation cache, and how settings choose each card's backend."""

from click.testing import CliRunner

from conftest import FakeBackend, make_card
from kcard_core.cache import GenerationCache
from kcard_core.chains import build_chain
from kcard_core.cli import cli
from kcard_core.plugins import Registry
from kcard_core.selectors import Selector


def test_seeded_generations_are_cached_unseeded_are_not(tmp_path):
    backend = FakeBackend()
    card = make_card(tmp_path, "c", "d").with_backend(backend, cache=GenerationCache())
    first = card.generate("q", n=2, seed=1)
    assert [d.page_content for d in card.generate("q", n=2, seed=1)] == [d.page_content for d in first]
    assert len(backend.calls) == 1
    card.generate("q", n=2, seed=2)
    card.generate("q", n=2, seed=None)
    card.generate("q", n=2, seed=None)
    assert len(backend.calls) == 4


def test_entries_of_an_older_cache_version_are_not_read(monkeypatch):
    from kcard_core import cache

    monkeypatch.setattr(cache, "VERSION", cache.VERSION - 1)
    GenerationCache().put(GenerationCache.key(a=1), ["written before a fix"])
    monkeypatch.undo()
    assert GenerationCache().get(GenerationCache.key(a=1)) is None


def test_cache_clear_command(tmp_path):
    GenerationCache().put(GenerationCache.key(a=1), ["x"])
    result = CliRunner().invoke(cli, ["cache", "clear"])
    assert result.exit_code == 0 and result.output == "removed 1 cached generations\n"
    assert GenerationCache().get(GenerationCache.key(a=1)) is None


class KeepAll(Selector):
    name: str = "keep"

    def score_documents(self, documents, query):
        return [self.record(doc, 1.0) for doc in documents]


def fake_registry(tmp_path):
    registry = Registry()
    local, remote = FakeBackend(), FakeBackend()
    remote.name = "remote"
    registry.backends = {"fake": local, "remote": remote}
    registry.cards = {name: make_card(tmp_path, name, name) for name in ("a", "b")}
    registry.selectors = {name: (lambda **options: KeepAll(name=name)) for name in ("relevance", "pruning", "factuality")}
    return registry


def test_backend_per_call_beats_per_card_beats_default(tmp_path):
    model = tmp_path / "base.gguf"
    model.write_bytes(b"x")
    settings = {"backend": "fake", "model": str(model),
                "backends": {"remote": {"base_url": "http://127.0.0.1:9/v1"}},
                "cards": {"b": {"backend": "remote", "model": "b-at-server"}}}
    registry = fake_registry(tmp_path)
    chain = build_chain(settings=settings, registry=registry, cache=False)
    bound = {card.name: (card.backend.name, card.settings) for card in chain.cards}
    assert bound == {"a": ("fake", {}),
                     "b": ("remote", {"base_url": "http://127.0.0.1:9/v1", "backend": "remote", "model": "b-at-server"})}
    chain = build_chain(settings=settings, registry=registry, backend="fake", cache=False)
    assert {card.backend.name for card in chain.cards} == {"fake"}
    assert chain.invoke("q?")["answer"] == "Paris"


def test_a_crash_mid_write_leaves_the_previous_version(tmp_path, monkeypatch):
    import os

    import pytest

    from kcard_core.config import write_atomically

    target = tmp_path / "files" / "state.json"
    write_atomically(target, '{"good": true}')

    def crash(*args):
        raise KeyboardInterrupt  # the process dies between writing and renaming

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, '{"half": ')
    assert target.read_text() == '{"good": true}' and [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_one_hundred_concurrent_queries_answered_with_flat_memory(tmp_path):
    import tracemalloc

    from langchain_core.language_models.fake import FakeListLLM

    from conftest import FakeBackend, make_card
    from kcard_core.chains import BottomUp

    backend = FakeBackend()
    cards = [make_card(tmp_path, f"card{i}", f"topic {i}", backend) for i in range(3)]
    chain = BottomUp(FakeListLLM(responses=["ok"]), cards, [], n1=2, examples=[])
    chain.batch([f"warm-up {i}?" for i in range(20)], config={"max_concurrency": 8})
    tracemalloc.start()
    first = chain.batch([f"question {i}?" for i in range(100)], config={"max_concurrency": 8})
    after_first = tracemalloc.get_traced_memory()[0]
    second = chain.batch([f"question {i}?" for i in range(100, 200)], config={"max_concurrency": 8})
    after_second = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(first) == len(second) == 100 and all(r["answer"] == "ok" for r in first + second)
    assert after_second - after_first < 2_000_000  # bytes still held: nothing accumulates per query
