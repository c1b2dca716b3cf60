"""MiniLM in numpy: the vectors sentence-transformers gives, and no torch on the way."""

import json
import subprocess
import sys

import numpy as np
import pytest

TEXTS = ["Who won the 2022 Georgia senate race?", "Raphael Warnock won the runoff against Herschel Walker.",
         "Bananas are yellow, sweet and soft.", "a", "Canberra was chosen as the capital of Australia in 1908.",
         "The Kelderwick lighthouse stands on Tollan Head; its light can be seen twenty-two miles out to sea. " * 8,
         "Ünïcödé façade — naïve café, 東京."]


def test_the_ask_path_embeds_without_torch():
    code = """
import json, sys
from kcard_core.plugins import get_registry
relevance = get_registry().selector("relevance")
scores = relevance.similarities("What is the capital of France?", ["Paris is the capital of France.", "Bananas."])
print(json.dumps({"scores": scores, "heavy": sorted(m for m in ("torch", "sentence_transformers", "transformers")
                                                     if m in sys.modules)}))
"""
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert out["heavy"] == [] and out["scores"][0] > 0.6 > out["scores"][1]


@pytest.mark.slow
def test_numpy_minilm_gives_the_vectors_of_sentence_transformers(monkeypatch):
    from kcard_selectors import encoder

    vectors = {}
    for kind in ("numpy", "sentence-transformers"):
        monkeypatch.setenv("KCARD_EMBEDDER", kind)
        encoder.encoder.cache_clear()
        vectors[kind] = encoder.embed(TEXTS)
        tokens = [encoder.count_tokens(text) for text in TEXTS]
        vectors[kind + " tokens"] = tokens
    encoder.encoder.cache_clear()
    cosines = {kind: vectors[kind] @ vectors[kind].T for kind in ("numpy", "sentence-transformers")}
    assert np.abs(cosines["numpy"] - cosines["sentence-transformers"]).max() < 1e-3
    assert np.abs(vectors["numpy"] - vectors["sentence-transformers"]).max() < 1e-3
    assert vectors["numpy tokens"] == vectors["sentence-transformers tokens"]


def test_an_unknown_embedder_is_refused(monkeypatch):
    from kcard_core.errors import KcardError
    from kcard_selectors import encoder

    monkeypatch.setenv("KCARD_EMBEDDER", "word2vec")
    encoder.encoder.cache_clear()
    with pytest.raises(KcardError, match="KCARD_EMBEDDER must be one of numpy, sentence-transformers"):
        encoder.embed(["x"])
    encoder.encoder.cache_clear()
