"""The OpenAI-compatible backend against a real llama_cpp.server started on 127.0.0.1."""

import socket
import threading
import time

import pytest

from kcard_core.artifacts import Artifact
from kcard_core.backends import Sampling
from kcard_core.errors import KcardError
from kcard_core.models import BASE_MODELS, resolve_model
from kcard_core.testing import BackendTests, LlamaServer, free_port
from kcard_openai.backend import OpenAIBackend

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server_url():
    with LlamaServer(resolve_model("smollm2-135m-instruct")[1]) as server:
        yield server.url


class TestOpenAIBackend(BackendTests):
    @pytest.fixture
    def backend(self):
        return OpenAIBackend()

    @pytest.fixture
    def model(self, backend, server_url):
        return backend.locate(BASE_MODELS["smollm2-135m-instruct"], {"base_url": server_url, "eos_token_id": 2})


def test_locate_needs_a_server(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(KcardError, match="needs a server: set base_url"):
        OpenAIBackend().locate(Artifact(file="m.gguf"), {})


def silent_server():
    """A socket that accepts connections and never answers: a hung server."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


@pytest.mark.parametrize("kind", ["down", "hung"])
def test_unreachable_server_fails_within_its_timeout(kind):
    listener, url = silent_server() if kind == "hung" else (None, f"http://127.0.0.1:{free_port()}/v1")
    endpoint = OpenAIBackend().locate(Artifact(file="m.gguf"), {"base_url": url, "timeout": 1, "max_retries": 1})
    started = time.monotonic()
    with pytest.raises(Exception) as error:
        OpenAIBackend().generate(endpoint, "Hello", n=1, sampling=Sampling(max_tokens=4))
    assert time.monotonic() - started < 8
    assert type(error.value).__name__ in ("APIConnectionError", "APITimeoutError")
    if listener:
        listener.close()
