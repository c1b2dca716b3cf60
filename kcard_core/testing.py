"""Conformance suites that any backend or card package can subclass in its own tests.

    from kcard_core.testing import BackendTests

    class TestMyBackend(BackendTests):
        @pytest.fixture
        def backend(self):
            return MyBackend()

The suites run real generation on the default small model (or the ``model`` fixture you override).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kcard_core.backends import Backend, Sampling
from kcard_core.cards import Card


class BackendTests:
    """What every backend must do; override the ``backend`` fixture (and ``model`` to change the file)."""

    @pytest.fixture
    def backend(self) -> Backend:
        raise NotImplementedError("override the `backend` fixture")

    @pytest.fixture
    def model(self) -> Path:
        from kcard_core.models import resolve_model

        return resolve_model("smollm2-135m-instruct")[1]

    def test_is_named_and_available(self, backend):
        status = backend.status()
        assert backend.name and status.available, status.detail
        assert isinstance(status.device, str) and status.device

    def test_generate_returns_n_texts(self, backend, model):
        texts = backend.generate(model, "The three primary colours are", n=3,
                                 sampling=Sampling(max_tokens=12, temperature=0.8, seed=1))
        assert len(texts) == 3 and all(isinstance(t, str) and t.strip() for t in texts)

    def test_seeded_generation_repeats(self, backend, model):
        sampling = Sampling(max_tokens=12, temperature=0.8, seed=5)
        first = backend.generate(model, "Once upon a time", n=2, sampling=sampling)
        assert backend.generate(model, "Once upon a time", n=2, sampling=sampling) == first

    def test_greedy_completion_obeys_stop_sequences(self, backend, model):
        sampling = Sampling(max_tokens=24, temperature=0.0, stop=("\n",))
        text = backend.generate(model, "Q: What is 2 + 2?\nA:", n=1, sampling=sampling)[0]
        assert text.strip() and "\n" not in text.strip()

    def test_chat_template(self, backend, model):
        text = backend.generate(model, "Name one planet.", n=1, sampling=Sampling(max_tokens=16, temperature=0.0),
                                chat=True)[0]
        assert text.strip() and "<|im_start|>" not in text

    def test_next_token_logprobs(self, backend, model):
        logprobs = backend.next_token_logprobs(model, "Is the sun hot? Answer Yes or No.\nAnswer:")
        assert logprobs and all(value <= 1e-6 for value in logprobs.values())
        assert sum(math.exp(value) for value in logprobs.values()) <= 1.0001
        assert any(token.strip().lower() in ("yes", "no") for token in logprobs)

    def test_a_copying_backend_answers_with_a_span_of_the_text(self, backend, model):
        if not backend.copies:
            pytest.skip("this backend does not honour Sampling.copy")
        text = "The ferry to Osk leaves from Pier 4 at 07:15 every weekday."
        sampling = Sampling(max_tokens=16, temperature=0.0, stop=("\n",), copy=text)
        answer = backend.generate(model, f"{text}\nQ: Where does the ferry to Osk leave from?\nA:", n=1,
                                  sampling=sampling)[0].strip()
        assert answer and answer in text
        other = backend.generate(model, f"{text}\nQ: Where does the ferry to Osk leave from?\nA:", n=1,
                                 sampling=replace(sampling, refused=(answer,)))[0].strip()
        assert other and other in text and other != answer  # a refused span never comes back
        assert "".join(backend.stream(model, "Q: Where?\nA:", sampling)).strip() in text
        short = backend.generate(model, f"{text}\nQ: Repeat the sentence.\nA:", n=1,
                                 sampling=replace(sampling, words=2))[0].strip()
        assert short and short in text and len(short.split()) <= 2
        asked = "Where does the ferry to Osk leave from?"  # weighed by what the question adds: still a span
        weighed = backend.generate(model, f"{text}\nQ: {asked}\nA:", n=1,
                                   sampling=replace(sampling, asked=asked, unasked=f"{text}\nQ: \nA:"))[0].strip()
        assert weighed and weighed in text
        answer = "Pier 4 at 07:15 every weekday"  # an answer to narrow: a run of its whole words comes back
        narrowed = backend.generate(model, f"{text}\nQ: Where does the ferry to Osk leave from?\nA:", n=1,
                                    sampling=replace(sampling, copy=answer, narrow=True))[0].strip()
        assert narrowed and f" {narrowed} " in f" {answer} "

    def test_language_model_invoke_stream_batch(self, backend, model):
        llm = backend.language_model(model, Sampling(max_tokens=12, temperature=0.0))
        prompt = "Q: What colour is the sky?\nA:"
        whole = llm.invoke(prompt, stop=["\n"])
        assert whole.strip() and "\n" not in whole
        assert "".join(llm.stream(prompt, stop=["\n"])) == whole
        assert len(llm.batch([prompt, "Q: What colour is grass?\nA:"], config={"max_concurrency": 2})) == 2

    def test_an_adapter_shapes_every_sample(self, backend):
        """A LoRA card's documents come from base model and adapter whether it writes one or several
        (llama.cpp applies an adapter per context: a batch context once lacked it). Runs on the
        midterm2022 card (SmolLM2 + LoRA) where it is installed."""
        from kcard_core.plugins import load_registry

        if not backend.adapter_role:
            pytest.skip("this backend applies no adapters")
        card = load_registry(only=["kcard-card-midterm2022"]).cards.get("midterm2022")
        if card is None:
            pytest.skip("kcard-card-midterm2022 is not installed")
        card = card.with_backend(backend)
        question = "Who won the senate race of Georgia in the 2022 U.S. midterm elections?"
        texts = [doc.page_content for n in (1, 3) for doc in card.generate(question, n)]
        assert len(texts) == 4 and all("Raphael Warnock" in text for text in texts), texts


class CardTests:
    """What every card must do; override ``card`` (a registered Card) and optionally ``backend``."""

    question = "What is the capital of France?"

    @pytest.fixture
    def card(self) -> Card:
        raise NotImplementedError("override the `card` fixture")

    @pytest.fixture
    def backend(self) -> Backend:
        from kcard_core.plugins import load_registry

        return load_registry().backend()

    def test_manifest_is_complete(self, card):
        manifest = card.manifest
        assert manifest.name and manifest.description and manifest.version and manifest.license
        assert "{query}" in manifest.prompt or "{cue}" in manifest.prompt

    def test_artifacts_resolve_and_match_their_sha256(self, card):
        for artifact in card.manifest.artifacts.values():
            assert artifact.sha256, f"{artifact.file}: give its sha256 in the manifest"
            assert artifact.resolve().is_file()

    def test_generates_documents(self, card, backend):
        if card.manifest.type == "retrieval":  # asked for one of its passages, it finds that passage
            passage = card.passages()[0]
            documents = card.with_backend(backend).generate(passage)
            assert passage in [doc.page_content for doc in documents]
            assert documents[0].metadata["card"] == card.name and documents[0].metadata["backend"] == "bm25"
            return
        documents = card.with_backend(backend).generate(self.question, n=2)
        assert len(documents) == 2 and all(doc.page_content for doc in documents)
        assert documents[0].metadata["card"] == card.name and documents[0].metadata["backend"] == backend.name


class ReaderTests:
    """What every reader must do, with stand-in base LLMs (no model loads); override ``factory`` (what
    ``register_readers`` registers: ``factory.from_spec(spec, llm)`` builds the reader)."""

    question = "Which river runs through Kelderwick?"
    knowledge = "The river that runs through Kelderwick is the Sabre, crossed by four bridges."
    replies = ["the Sabre"]

    @pytest.fixture
    def factory(self) -> Any:
        raise NotImplementedError("override the `factory` fixture")

    def trace(self) -> Any:
        from kcard_core.chains.prompts import bottom_up_prompt
        from kcard_core.trace import DocumentRecord, Trace

        trace = Trace(mode="bottom-up", question=self.question, prompt=bottom_up_prompt(self.question, [self.knowledge]))
        trace.documents["d1"] = DocumentRecord("kelderwick", self.knowledge, used=True, sources=["notes.md › Rivers"])
        return trace

    def llm(self, chat: bool = False) -> Any:
        from langchain_core.language_models.fake import FakeListLLM
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        return (FakeListChatModel if chat else FakeListLLM)(responses=self.replies)

    def answer(self, factory: Any, llm: Any, stream: bool = False) -> tuple[str, list[str], Any]:
        from kcard_core.readers import read

        trace = self.trace()
        chunks = list(read(factory.from_spec(None, llm), self.question, trace, None, stream=stream))
        return trace.answer, chunks, trace

    def test_builds_from_a_spec_or_the_defaults(self, factory):
        from kcard_core.readers import Reader
        from kcard_core.spec import ChainSpec

        llm = self.llm()
        assert isinstance(factory.from_spec(None, llm), Reader) and isinstance(factory.from_spec(ChainSpec(), llm), Reader)
        assert factory.from_spec(None, llm).llm is llm

    def test_says_whether_a_text_holds_an_answer_or_that_it_cannot_tell(self, factory):
        reader = factory.from_spec(None, self.llm())
        assert reader.holds_answer(self.question, self.knowledge) in (True, False, None)
        assert reader.holds_answer(self.question, "") in (False, None)

    def test_answers_in_one_line(self, factory):
        answer, chunks, trace = self.answer(factory, self.llm())
        assert answer and "\n" not in answer and answer == trace.answer and chunks == []

    def test_a_stream_says_what_invoke_answers(self, factory):
        answer = self.answer(factory, self.llm())[0]
        streamed, chunks, trace = self.answer(factory, self.llm(), stream=True)
        assert "".join(chunks).strip() == streamed == answer
        assert not [turn for turn in trace.turns if "replaced" in turn.question]  # a shown reply was kept

    def test_async_says_what_sync_answers(self, factory):
        import asyncio

        from kcard_core.readers import aread

        answer = self.answer(factory, self.llm())[0]
        for stream in (False, True):
            trace = self.trace()

            async def run() -> list[str]:
                return [text async for text in aread(factory.from_spec(None, self.llm()), self.question, trace, None,
                                                     stream=stream)]

            chunks = asyncio.run(run())
            assert trace.answer == answer and ("".join(chunks).strip() == answer if stream else chunks == [])

    def test_reads_a_chat_model(self, factory):
        answer, _, _ = self.answer(factory, self.llm(chat=True))
        assert answer and "\n" not in answer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """A real ``llama_cpp.server`` on 127.0.0.1 at a free port, started by ``with`` and stopped by PID.

        with LlamaServer(model_path) as server:
            backend.locate(artifact, {"base_url": server.url})
    """

    def __init__(self, model: Path, *extra_args: str, logits_all: bool = True, ready_timeout: float = 120):
        # logits_all: log-probabilities for yes/no judges, at the cost of slower decoding
        self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                        "--n_ctx", "2048", "--logits_all", str(logits_all).lower(), *extra_args]
        self.ready_timeout = ready_timeout
        self.process: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> "LlamaServer":
        port = free_port()
        self.process = subprocess.Popen([*self.command, "--port", str(port)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        self.url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + self.ready_timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}")
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError(f"llama_cpp.server not ready on port {port}") from None
                time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def __exit__(self, *exc_info) -> None:
        self.stop()
