"""Text helpers every layer shares: sentences and whitespace.

Sentences come from sentencex (Wikimedia's rule-based segmenter, MIT): it knows abbreviations
("U.S.", "Dr.", "Sen."), initials ("Mike D. Rogers"), decimals and quotes. A split after every
". " cut 531 of the 1,041 sentences of the midterm news corpus at "2022 U.S." and dropped the
winner's name that followed; `benchmarks/segmenters.py` compares it with pysbd and blingfire.
"""

from __future__ import annotations

import re
from pathlib import Path

from kcard_core.errors import KcardError

ENDS = (".", "!", "?", '."', '?"', '!"', ".”", "?”", "!”", ".'", ".)")


def one_line(text: str) -> str:
    """Collapse whitespace: a document can never start a line of its own in a prompt."""
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    from sentencex import segment  # a compiled extension: a few milliseconds, paid by the first caller

    return [part.strip() for part in segment("en", text.strip()) if part.strip()]


def complete_sentences(text: str) -> str:
    """A card's text on one line, without the unfinished sentence that generation cut off.

    Only the last sentence is dropped, and only when it is unfinished and a finished one comes
    before it: a text that is one unfinished sentence ("In the Idaho senate race in the 2022 U.S.
    midterm elections, Mike Crapo defeated") is kept whole, since the name at its end is what it
    knows.
    """
    text = one_line(text)
    parts = sentences(text)
    if len(parts) < 2 or parts[-1].endswith(ENDS):
        return text
    cut = text.rfind(parts[-1])
    return text[:cut].rstrip() if cut > 0 else text


CORPUS_FORMATS = ("auto", "lines", "paragraphs", "jsonl")


def read_corpus(path: str | Path, format: str = "auto") -> list[str]:
    """The documents of a corpus file, each on one line: ``lines`` (a document per line),
    ``paragraphs`` (documents separated by blank lines), ``jsonl`` ({"text": ...} per line), or
    ``auto``: jsonl for a .jsonl file, else paragraphs when the file has a blank line, else lines
    (a file of one fact per line is 20 documents, not one)."""
    import json

    path = Path(path)
    if format not in CORPUS_FORMATS:
        raise KcardError(f"corpus format {format!r}: use one of {', '.join(CORPUS_FORMATS)}")
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise KcardError(f"cannot read the corpus {path}: {error}") from None
    if format == "auto":
        format = ("jsonl" if path.suffix == ".jsonl" else
                  "paragraphs" if any(not line.strip() for line in content.strip().splitlines()) else "lines")
    if format == "jsonl":
        documents = []
        for number, line in enumerate(content.splitlines(), start=1):
            try:
                documents += [json.loads(line)["text"]] if line.strip() else []
            except (ValueError, KeyError, TypeError):
                raise KcardError(f'{path}, line {number}: expected a JSON object with a "text" field') from None
    else:
        documents = content.splitlines() if format == "lines" else re.split(r"\n\s*\n", content)
    documents = [one_line(text) for text in documents if text.strip()]
    if not documents:
        raise KcardError(f"the corpus {path} holds no text")
    return documents


def corpus_jsonl(documents: list[str]) -> str:
    """``documents`` as a JSONL corpus ({"text": ...} a line), the format read_corpus reads back."""
    import json

    return "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in documents)
