"""Text helpers every layer shares: sentences and whitespace.

Sentences come from sentencex (Wikimedia's rule-based segmenter, MIT): it knows abbreviations
("U.S.", "Dr.", "Sen."), initials ("Mike D. Rogers"), decimals and quotes. A split after every
". " cut 531 of the 1,041 sentences of the midterm news corpus at "2022 U.S." and dropped the
winner's name that followed; `benchmarks/segmenters.py` compares it with pysbd and blingfire.
"""

from __future__ import annotations

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
