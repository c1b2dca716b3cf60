"""One card, three backends, no change to the card or the chain."""

import signal
import threading
import time

import pytest

from kcard_core.chains import build_chain
from kcard_core.models import resolve_model
from kcard_core.plugins import load_registry
from kcard_core.testing import LlamaServer, free_port

pytestmark = pytest.mark.slow
QUESTION = "What is photosynthesis?"


@pytest.fixture(scope="module")
def server_url():
    with LlamaServer(resolve_model("smollm2-135m-instruct")[1]) as server:
        yield server.url


def test_the_same_card_writes_on_llama_cpp_transformers_and_openai(server_url):
    registry = load_registry()
    card = registry.card("textbook")
    for backend, settings in [("llama-cpp", {}), ("transformers", {}), ("openai", {"base_url": server_url})]:
        documents = card.with_backend(registry.backend(backend), settings).generate(QUESTION, n=2)
        assert len(documents) == 2 and all(doc.page_content for doc in documents), backend
        assert documents[0].metadata["backend"] == backend


def test_a_chain_runs_unchanged_on_a_remote_server(server_url):
    settings = {"backends": {"openai": {"base_url": server_url, "eos_token_id": 2}}}
    chain = build_chain("bottom-up", cards=["textbook"], backend="openai", n1=2, settings=settings, cache=False)
    result = chain.invoke(QUESTION)
    assert result["answer"] and {d.backend for d in result["trace"].documents.values()} == {"openai"}


def remote_card_settings(url: str) -> dict:
    return {"cards": {"general": {"backend": "openai", "base_url": url, "timeout": 2, "max_retries": 1}}}


def test_bottom_up_survives_a_server_that_is_down():
    settings = remote_card_settings(f"http://127.0.0.1:{free_port()}/v1")
    started = time.monotonic()
    result = build_chain("bottom-up", settings=settings, n1=1, cache=False).invoke(QUESTION)
    assert result["answer"] and time.monotonic() - started < 60
    assert [e.card for e in result["trace"].errors] == ["general"]
    assert "APIConnectionError" in result["trace"].errors[0].error
    written = {d.card for d in result["trace"].documents.values()}
    assert "general" not in written and {"textbook", "midterm2022"} <= written  # the local LM cards still wrote


def test_bottom_up_survives_a_server_killed_mid_query():
    with LlamaServer(resolve_model("smollm2-135m-instruct")[1]) as server:
        settings = remote_card_settings(server.url)
        settings["cards"]["general"]["timeout"] = 30
        chain = build_chain("bottom-up", settings=settings, n1=3, cache=False)
        threading.Timer(1.5, server.stop, args=(signal.SIGKILL,)).start()  # while the card is writing
        started = time.monotonic()
        result = chain.invoke(QUESTION)
    assert result["answer"] and time.monotonic() - started < 90
    assert [e.card for e in result["trace"].errors] == ["general"]
