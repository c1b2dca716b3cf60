"""The llama.cpp backend on the real default models (SmolLM2-135M-Instruct; Gemma 3 270M base)."""

import math
import subprocess
import sys
from pathlib import Path

import pytest

from kcard_core.backends import Sampling
from kcard_core.models import resolve_model
from kcard_llama_cpp import backend as llama_backend
from kcard_llama_cpp.backend import LlamaCppBackend

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm() -> Path:
    return resolve_model("smollm2-135m-instruct")[1]


def test_status_is_available_on_cpu():
    status = LlamaCppBackend().status()
    assert status.available and status.device == "cpu"


def test_seeded_samples_repeat_and_the_model_is_loaded_once(smollm):
    backend = LlamaCppBackend()
    sampling = Sampling(max_tokens=12, temperature=0.8, seed=3)
    first = backend.generate(smollm, "The capital of France is", n=2, sampling=sampling)
    loads = len(llama_backend._models)
    again = backend.generate(smollm, "The capital of France is", n=2, sampling=sampling)
    assert first == again and len(first) == 2 and all(first)
    assert len(llama_backend._models) == loads  # reused, not reloaded


def test_chat_mode_uses_the_chat_template(smollm):
    text = LlamaCppBackend().generate(smollm, "Name a colour.", n=1,
                                      sampling=Sampling(max_tokens=10, temperature=0.0), chat=True)[0]
    assert text.strip() and "<|im_start|>" not in text


def test_next_token_logprobs_are_a_distribution(smollm):
    logprobs = LlamaCppBackend().next_token_logprobs(smollm, "Question: Is Paris in France? Answer Yes or No.\nAnswer:")
    assert len(logprobs) >= 10 and all(lp <= 0 for lp in logprobs.values())
    assert 0.5 < sum(math.exp(lp) for lp in logprobs.values()) <= 1.0001
    assert any(token.strip() in ("Yes", "No") for token in logprobs)


def test_language_model_is_a_langchain_runnable_that_streams(smollm):
    llm = LlamaCppBackend().language_model(smollm, Sampling(max_tokens=16, temperature=0.0))
    whole = llm.invoke("Q: What is 2 + 2?\nA:", stop=["\n"])
    pieces = list(llm.stream("Q: What is 2 + 2?\nA:", stop=["\n"]))
    assert whole.strip() and "".join(pieces) == whole and "\n" not in whole
    assert llm.batch(["The sky is", "Grass is"], config={"max_concurrency": 2}) != ["", ""]


def test_the_base_llm_keeps_prompts_of_two_starts_each_in_an_instance_of_its_own(smollm):
    """An answer's prompt and a narrowing's start with other demonstrations: each goes to the instance
    whose KV cache holds its start, so neither evaluates its demonstrations again."""
    llm = LlamaCppBackend().language_model(smollm, Sampling(max_tokens=8, temperature=0.0))
    answers, narrowing = "Q: Who wrote Persuasion?\nA: Jane Austen\n\nQ: {}\nA:", "Long answer: {}\nShort answer:"
    for question, long in [("Who wrote Emma?", "Jane Austen wrote it."), ("Who wrote Dracula?", "Stoker, in 1897.")]:
        llm.invoke(answers.format(question), stop=["\n"])
        narrowed = llm.invoke(narrowing.format(long), stop=["\n"], copy=long, narrow=True)
        assert f" {narrowed.strip()} " in f" {long} "
    first, second = (llama_backend.load(llama_backend.Own(smollm, slot)) for slot in (0, 1))
    assert first is not second
    held = {instance.llama.detokenize(instance.llama.input_ids[:instance.llama.n_tokens].tolist()).decode()[:12]
            for instance in (first, second)}
    assert held == {" Q: Who wrot", " Long answer"} or held == {"Q: Who wrote", "Long answer:"}
    assert LlamaCppBackend.instance(llm.model, answers.format("Who wrote Ivanhoe?")) is \
        LlamaCppBackend.instance(llm.model, answers.format("Who wrote Emma?"))


def test_gemma_base_model_completes_text():
    path = resolve_model("gemma-3-270m")[1]
    text = LlamaCppBackend().generate(path, "Pride and Prejudice is a novel by", n=1,
                                      sampling=Sampling(max_tokens=8))[0]
    assert "Austen" in text


def test_least_recently_used_model_is_freed_beyond_the_cap(smollm, monkeypatch):
    monkeypatch.setattr(llama_backend, "MAX_MODELS", 1)
    first = llama_backend.load(smollm)
    second = llama_backend.load(smollm, n_ctx=512)  # other settings: another model
    assert len(llama_backend._models) == 1 and list(llama_backend._models)[0][2] == 512  # n_ctx of the second
    assert first is not second and llama_backend.load(smollm, n_ctx=512) is second


def test_loading_gemma_prints_no_llama_cpp_warning():
    """llama.cpp's warnings stay off stderr (llama-cpp-python's callback printed Gemma 3's SWA cache
    note as an error under every answer); its errors still show."""
    script = ("from kcard_core.models import resolve_model\n"
              "from kcard_llama_cpp import backend\n"
              "backend.load(resolve_model('gemma-3-270m')[1])\n"
              "backend._log_callback(4, b'an error\\n', None)\n"
              "backend._log_callback(3, b'a warning\\n', None)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "an error\n", done.stderr
