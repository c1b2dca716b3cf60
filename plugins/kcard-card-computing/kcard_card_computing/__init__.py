"""kcard plugin: the Free On-line Dictionary of Computing as a retrieval card.

The dictionary comes from Debian (`apt-get install dict-foldoc`), read in dictd format: an index
of (headword, offset, length) in dictd's base64, and the gzip-compressed text.
"""

from __future__ import annotations

import gzip
import re
from functools import lru_cache
from pathlib import Path

from kcard_core.cards import Card
from kcard_core.errors import KcardError
from kcard_core.hookspecs import hookimpl

DICTD = Path("/usr/share/dictd")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
MAX_WORDS = 80


def dictd_number(text: str) -> int:
    value = 0
    for char in text:
        value = value * 64 + B64.index(char)
    return value


def clean(body: str) -> str:
    """Entry text without domain tags, cross-reference braces, dates and line breaks."""
    body = re.sub(r"<[^>]*>", "", body)
    body = re.sub(r"\{([^{}]*?)(?: \([^)]*\))?\}", r"\1", body)
    body = re.sub(r"\(\d{4}-\d{2}-\d{2}\)", "", body)
    words = body.split()
    return " ".join(words[:MAX_WORDS]) + (" ..." if len(words) > MAX_WORDS else "")


@lru_cache(maxsize=1)
def foldoc_passages(folder: Path = DICTD) -> list[str]:
    index, data = folder / "foldoc.index", folder / "foldoc.dict.dz"
    if not index.exists():
        raise KcardError("FOLDOC is not installed: apt-get install dict-foldoc")
    text = gzip.decompress(data.read_bytes())
    passages = []
    for line in index.read_text(encoding="utf-8", errors="replace").splitlines():
        headword, offset, length = line.split("\t")
        if headword.startswith("00"):  # the dictionary's own metadata entries
            continue
        start = dictd_number(offset)
        entry = text[start:start + dictd_number(length)].decode("utf-8", "replace")
        body = clean(entry.split("\n", 1)[1] if "\n" in entry else "")
        if body:
            passages.append(f"{headword}: {body}")
    return passages


@hookimpl
def register_cards(register):
    register(Card.from_manifest(Path(__file__).with_name("card.toml")))
