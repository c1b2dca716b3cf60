"""How a backend samples: one small value shared by backends, cards and the base LLM's wrapper."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sampling:
    """How to sample: the paper's cards use temperature 0.1; a seed makes runs repeatable."""

    max_tokens: int = 64
    temperature: float = 0.1
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    repeat_penalty: float = 1.0  # > 1 keeps tiny models from looping on one sentence
    # words whose tokens get ``favour_bias`` added to their logits (the answer step's copy bias: a small
    # reader told "The river is the Sabre" still answers with a river it knows unless nudged to copy);
    # out of the repr, which keys the cards' generation cache (cards never favour words)
    favour: tuple[str, ...] = field(default=(), repr=False)
    favour_bias: float = field(default=0.0, repr=False)
    # the answer is a span of this text (kcard_core/copying.py), on a backend that ``copies``
    copy: str = field(default="", repr=False)
    # and of at most this many words (0: any length)
    words: int = field(default=0, repr=False)
    # the question: a span made only of its tokens (and white space) says nothing new, so is no answer
    asked: str = field(default="", repr=False)
    # ``copy`` is an answer to narrow: the span is a run of its whole white-space words
    narrow: bool = field(default=False, repr=False)
    # the prompt without the question: where a span starts counts for how much likelier the question
    # makes it (kcard_core/copying.py); "" for the span's likelihood alone
    unasked: str = field(default="", repr=False)
    # whole spans of ``copy`` that are no answer
    refused: tuple[str, ...] = field(default=(), repr=False)
