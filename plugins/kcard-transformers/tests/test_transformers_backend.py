"""The transformers backend: cheap registration, the dequantized cache, batched and seeded sampling."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kcard_core.backends import Sampling
from kcard_core.models import resolve_model
from kcard_transformers import backend as tx_backend
from kcard_transformers.backend import TransformersBackend, until_stop

slow = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm() -> Path:
    return resolve_model("smollm2-135m-instruct")[1]


def _in_fresh_python(code: str, **env: str) -> dict:
    environment = {key: value for key, value in os.environ.items() if key != "KCARD_DEVICE"} | env
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True)
    return json.loads(result.stdout)


def test_registering_and_status_do_not_import_torch():
    seen = _in_fresh_python(
        "import json, sys\n"
        "from kcard_core.plugins import load_registry\n"
        "status = load_registry(only=['kcard-transformers']).backend('transformers').status()\n"
        "print(json.dumps({'status': [status.available, status.device],\n"
        "                  'heavy': sorted({'torch', 'transformers'} & set(sys.modules))}))")
    assert seen == {"status": [True, "auto"], "heavy": []}


def test_kcard_device_names_the_device():
    seen = _in_fresh_python("import json; from kcard_transformers.backend import TransformersBackend\n"
                            "print(json.dumps(TransformersBackend().status().device))", KCARD_DEVICE="cpu")
    assert seen == "cpu"


def test_streamed_text_stops_at_a_stop_string_split_across_pieces():
    assert "".join(until_stop(["Paris", " is\n", "\nnext"], ("\n\n",))) == "Paris is"
    assert list(until_stop(["a<", "b", "<end>"], ("<end>",))) == ["a", "<b"]  # "<" held back, then released
    assert "".join(until_stop(["no ", "stop"], ())) == "no stop"


@slow
def test_a_gguf_is_dequantized_once_then_loaded_from_the_cache(smollm, monkeypatch):
    loaded = tx_backend.load(smollm)
    folder = tx_backend.converted_folder(smollm)
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    assert loaded.device in ("cpu", "cuda")

    monkeypatch.setattr(tx_backend, "_models", {})  # as in a new process
    monkeypatch.setattr(tx_backend, "dequantize", lambda *args: pytest.fail("dequantized again"))
    reloaded = tx_backend.load(smollm)
    assert reloaded is not loaded and tx_backend.load(smollm) is reloaded
    assert len(tx_backend._models) == 1


@slow
def test_seeded_samples_repeat(smollm):
    backend = TransformersBackend()
    sampling = Sampling(max_tokens=12, temperature=0.8, seed=7)
    first = backend.generate(smollm, "My favourite food is", n=3, sampling=sampling)
    assert backend.generate(smollm, "My favourite food is", n=3, sampling=sampling) == first
    assert len(set(first)) > 1  # three samples, not one sample three times


@slow
def test_n_samples_take_one_batched_generate_call(smollm, monkeypatch):
    model = tx_backend.load(smollm).model
    calls = []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("num_return_sequences"))
        return original(*args, **kwargs)

    original = model.generate
    monkeypatch.setattr(model, "generate", counted)
    backend = TransformersBackend()
    assert len(backend.generate(smollm, "Cats are", n=3, sampling=Sampling(max_tokens=8, temperature=0.8))) == 3
    greedy = backend.generate(smollm, "Cats are", n=3, sampling=Sampling(max_tokens=8, temperature=0.0))
    assert len(greedy) == 3 and len(set(greedy)) == 1
    assert calls == [3, 1]  # greedy samples are identical, so one sequence is generated and repeated


@slow
def test_gemma_base_model_completes_text():
    """The general card's model: another architecture and tokenizer (its first run dequantizes for 1.5 min)."""
    path = resolve_model("gemma-3-270m")[1]
    text = TransformersBackend().generate(path, "Pride and Prejudice is a novel by", n=1,
                                          sampling=Sampling(max_tokens=8))[0]
    assert "Austen" in text
