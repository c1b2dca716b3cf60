"""llama.cpp decodes many sequences together: a prompt's samples, and requests that arrive together."""

import threading

import pytest

from kcard_core.models import resolve_model
from kcard_core.sampling import Sampling
from kcard_llama_cpp import batched
from kcard_llama_cpp.backend import LlamaCppBackend, load

pytestmark = pytest.mark.slow
PROMPTS = ["Photosynthesis is", "The capital of France is", "A volcano is", "The moon orbits"]


@pytest.fixture(scope="module")
def model():
    return resolve_model("smollm2-135m-instruct")[1]


@pytest.fixture
def runs(monkeypatch):
    """The groups of requests each batched decode was given."""
    groups = []
    run = batched.BatchDecoder.run
    monkeypatch.setattr(batched.BatchDecoder, "run", lambda self, requests, **more: (groups.append(len(requests)),
                                                                                    run(self, requests, **more))[1])
    return groups


def test_a_prompts_samples_decode_together_and_a_seed_draws_the_same_again(model, runs):
    sampling = Sampling(max_tokens=24, temperature=0.8, seed=7)
    together = LlamaCppBackend().generate(model, PROMPTS[0], n=3, sampling=sampling)
    assert runs == [1] and len(together) == 3 and len(set(together)) == 3  # three seeds, three texts
    assert LlamaCppBackend().generate(model, PROMPTS[0], n=3, sampling=sampling) == together
    assert all(len(load(model).llama.tokenize(text.encode(), add_bos=False)) <= 24 for text in together)


def test_requests_made_together_are_decoded_together(model, runs):
    sampling = Sampling(max_tokens=16, temperature=0.0, stop=("\n",))
    backend, results, start = LlamaCppBackend(), {}, threading.Barrier(len(PROMPTS))
    load(model)

    def ask(prompt):
        start.wait()
        results[prompt] = backend.generate(model, prompt, n=1, sampling=sampling)

    threads = [threading.Thread(target=ask, args=(prompt,)) for prompt in PROMPTS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert max(runs) >= 2, runs  # at least two of the four shared a decode
    for prompt in PROMPTS:
        (text,) = results[prompt]
        assert text and "\n" not in text and len(load(model).llama.tokenize(text.encode(), add_bos=False)) <= 16


def test_a_batch_that_fails_fails_each_of_its_callers_with_the_reason(model, monkeypatch):
    decoder = load(model).decoder
    monkeypatch.setattr(decoder, "n_ctx", 8)  # no room for even one prompt: one at a time, which works
    assert len(LlamaCppBackend().generate(model, PROMPTS[1], n=2, sampling=Sampling(max_tokens=4))) == 2
    monkeypatch.undo()
    monkeypatch.setattr(batched.BatchDecoder, "_decode", lambda self: (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        LlamaCppBackend().generate(model, PROMPTS[1], n=2, sampling=Sampling(max_tokens=4))
    assert load(model).gather.pending == []


def test_transformers_generates_requests_made_together_in_one_call(model, monkeypatch):
    from kcard_transformers.backend import TransformersBackend
    from kcard_transformers.backend import load as load_weights

    loaded, sizes = load_weights(model), []
    generate = loaded.model.generate
    monkeypatch.setattr(loaded.model, "generate", lambda **kwargs: (sizes.append(kwargs["input_ids"].shape[0]),
                                                                    generate(**kwargs))[1])
    sampling, results, start = Sampling(max_tokens=8, temperature=0.7, seed=1), {}, threading.Barrier(len(PROMPTS))

    def ask(prompt):
        start.wait()
        results[prompt] = TransformersBackend().generate(model, prompt, n=2, sampling=sampling)

    threads = [threading.Thread(target=ask, args=(prompt,)) for prompt in PROMPTS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(sizes) == len(PROMPTS) and len(sizes) < len(PROMPTS), sizes  # prompts shared generate calls
    assert all(len(texts) == 2 and all(texts) for texts in results.values()), results
