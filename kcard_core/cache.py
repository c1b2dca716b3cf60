"""On-disk cache of card generations: the same card, prompt, sampling and seed give the same texts.

Only seeded calls are cached (an unseeded call asks for fresh samples). Entries are small JSON
files named by the hash of their key, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from kcard_core.config import cache_dir, write_atomically


# Part of every key: raised when what a backend writes for the same key changes, so that older
# entries are not read (2: llama.cpp's batches had written LoRA cards' samples without the adapter).
VERSION = 2


class GenerationCache:
    def __init__(self, root: Path | None = None):
        self.root = root or cache_dir() / "generations"
        self.hits = self.misses = 0  # benchmarks report them: a hit costs no generation

    @staticmethod
    def key(**parts: Any) -> str:
        return hashlib.sha256(json.dumps({**parts, "cache_version": VERSION}, sort_keys=True,
                                         default=str).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[str] | None:
        try:
            texts = json.loads(self._path(key).read_text())["texts"]
        except (OSError, ValueError, KeyError):
            self.misses += 1
            return None  # missing or unreadable: generate again
        self.hits += 1
        return texts

    def put(self, key: str, texts: list[str]) -> None:
        write_atomically(self._path(key), json.dumps({"texts": texts}))

    def clear(self) -> int:
        """Remove every entry; returns how many there were."""
        count = sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0
        shutil.rmtree(self.root, ignore_errors=True)
        return count
