"""all-MiniLM-L6-v2 in numpy: the same sentence embeddings as sentence-transformers, without torch.

Importing sentence-transformers (and with it torch) cost `kcard ask` about 11 s before its first
embedding; this reads the package's own weights (safetensors) and tokenizer (tokenizers, Rust) and
runs the six BERT layers with numpy: a fraction of a second to load. Cosines agree with
sentence-transformers within 1e-5 (tests/test_minilm.py checks 1e-3 on a fixed set).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np

BATCH = 32  # texts encoded together, after sorting by length (as sentence-transformers does)
# Scalars below are Python floats: a NumPy float64 scalar would turn every float32 array it touches
# into float64 (three times slower here).


def erf(x: np.ndarray) -> np.ndarray:
    """The error function to within 1.5e-7 (Abramowitz & Stegun 7.1.26): BERT's GELU needs it."""
    sign, x = np.sign(x), np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


class MiniLM:
    """``MiniLM(folder)(texts)``: unit-length mean-pooled embeddings, one row per text."""

    def __init__(self, folder: str | Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text())
        self.heads, self.eps = config["num_attention_heads"], config["layer_norm_eps"]
        self.layers = config["num_hidden_layers"]
        # the layers' weight matrices transposed once, contiguous: numpy's matmul then stays on BLAS
        self.weights = {name: np.ascontiguousarray(w.T) if w.ndim == 2 and name.startswith("encoder.") else w
                        for name, w in load_file(str(folder / "model.safetensors")).items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        longest = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer.enable_truncation(longest)
        self.tokenizer.no_padding()

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chosen = order[start:start + BATCH]
            out[chosen] = self.encode([texts[i] for i in chosen])
        return out

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), length), dtype=np.int64)
        mask = np.zeros((len(texts), length), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)], mask[row, :len(encoding.ids)] = encoding.ids, 1.0
        w = self.weights
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        hidden_mask = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min  # padding gets no attention
        for layer in range(self.layers):
            x = self.block(x, hidden_mask, f"encoder.layer.{layer}.")
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def block(self, x: np.ndarray, hidden_mask: np.ndarray, name: str) -> np.ndarray:
        w, (batch, length, width) = self.weights, x.shape
        size = width // self.heads

        def dense(h: np.ndarray, part: str) -> np.ndarray:  # as one 2-D product
            weight = w[f"{name}{part}.weight"]
            return (h.reshape(-1, weight.shape[0]) @ weight + w[f"{name}{part}.bias"]).reshape(batch, length, -1)

        def split(h: np.ndarray) -> np.ndarray:  # (batch, heads, length, size)
            return np.ascontiguousarray(h.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3))

        query, key, value = (split(dense(x, f"attention.self.{p}")) for p in ("query", "key", "value"))
        scores = query @ np.ascontiguousarray(key.transpose(0, 1, 3, 2)) / math.sqrt(size) + hidden_mask
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ value
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = layer_norm(x + dense(context, "attention.output.dense"), w[f"{name}attention.output.LayerNorm.weight"],
                       w[f"{name}attention.output.LayerNorm.bias"], self.eps)
        inner = dense(x, "intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / math.sqrt(2.0)))  # GELU, exactly as BERT has it
        return layer_norm(x + dense(inner, "output.dense"), w[f"{name}output.LayerNorm.weight"],
                          w[f"{name}output.LayerNorm.bias"], self.eps)
