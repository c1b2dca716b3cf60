"""One card, three backends, no change to the card or the chain."""

import pytest

from kcard_core.chains import build_chain
from kcard_core.models import resolve_model
from kcard_core.plugins import load_registry
from kcard_core.testing import llama_server

pytestmark = pytest.mark.slow
QUESTION = "What is photosynthesis?"


@pytest.fixture(scope="module")
def server_url():
    with llama_server(resolve_model("smollm2-135m-instruct")[1]) as url:
        yield url


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
    assert result["answer"] and {d["backend"] for d in result["trace"].documents.values()} == {"openai"}
