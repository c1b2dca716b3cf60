"""Answers that copy a span of a text: greedy decoding under a copy mask, the span chosen by likelihood.

A backend that reads its model's logits step by step (``Backend.copies``) answers a
:class:`~kcard_core.sampling.Sampling` with ``copy`` set through :func:`copy_span`: the
:data:`STARTS` likeliest of the text's tokens each start a greedy continuation in which every token
continues a span of the text or ends the answer; of every prefix of those continuations, the answer
is the one likeliest to be written whole, its tokens and then an end, under the model's unmasked
distribution, of those holding a token the question (``Sampling.asked``) lacks. Nothing here knows a
language: it works on token ids. ``benchmarks/results/span-reading.md`` measures it ("beam").
"""

from __future__ import annotations

from typing import Callable

import numpy as np

STARTS = 4  # continuations tried, one from each of the likeliest first tokens


def log_softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits.astype(np.float64)
    top = logits.max()
    return logits - (top + np.log(np.exp(logits - top).sum()))


class CopyMask:
    """One continuation's mask, called at each step with the tokens written so far and the next
    token's logits; returns the logits with every token masked out but ``first`` at the first step
    (None: any token of ``source``), then but the tokens that continue a span of ``source`` the
    written tokens copy, and ``ends`` (only ``ends`` once the written tokens no longer ``fit``: no
    longer span can). Records each written token's log-probability and that of ending after each
    prefix, unmasked."""

    def __init__(self, source: list[int], ends: list[int], first: int | None = None,
                 fits: Callable[[list[int]], bool] = lambda tokens: True):
        self.source, self.ends, self.first, self.fits = source, sorted(set(ends)), first, fits
        self.at: list[int] = []  # where in source the tokens written so far may start
        self.written: list[int] = []
        self.chosen: list[float] = []  # log-probability of each written token
        self.ended: list[float] = []  # log-probability of ending after each prefix (0, 1, … tokens)
        self.logprobs: np.ndarray | None = None

    def __call__(self, written: list[int], logits: np.ndarray) -> np.ndarray:
        if written:
            token, k = written[-1], len(written) - 1
            self.chosen.append(float(self.logprobs[token]))
            self.at = [j for j in (self.at if k else range(len(self.source)))
                       if j + k < len(self.source) and self.source[j + k] == token]
        self.written = list(written)
        self.logprobs = log_softmax(logits)
        self.ended.append(float(np.logaddexp.reduce(self.logprobs[self.ends])))
        n = len(written)
        if not written:
            allowed = set(self.source) if self.first is None else {self.first}
        elif self.fits(written):
            allowed = {self.source[j + n] for j in self.at if j + n < len(self.source)} | set(self.ends)
        else:  # no longer span fits either: end here
            allowed = set(self.ends)
        keep = sorted(allowed)
        masked = np.full_like(logits, -np.inf)
        masked[keep] = logits[keep]
        return masked

    def prefixes(self, blank: frozenset[int] = frozenset()) -> list[tuple[float, list[int]]]:
        """(log-probability of writing it whole and then ending, tokens) for each prefix that holds a
        token not in ``blank`` (tokens that say nothing new: :func:`source_tokens`) and ``fits``."""
        found, total = [], 0.0
        for k in range(1, min(len(self.chosen), len(self.ended) - 1) + 1):
            total += self.chosen[k - 1]
            if not set(self.written[:k]) <= blank and self.fits(self.written[:k]):
                found.append((total + self.ended[k], self.written[:k]))
        return found


def source_tokens(text: str, tokenize: Callable[[str], list[int]], text_of: Callable[[list[int]], str],
                  asked: str = "") -> tuple[list[int], frozenset[int]]:
    """``text``'s tokens as they follow a space (as an answer's first word does), and the tokens that say
    nothing new: those of ``text`` that are white space alone (some tokenizers write " " before a
    number) and those of ``asked``, the question (a span made of its own words does not answer it):
    :func:`copy_span`'s ``source`` and ``blank``."""
    source = tokenize(" " + " ".join(text.split()))
    said = set(tokenize(" " + " ".join(asked.split()))) if asked.strip() else set()
    return source, frozenset(said | {token for token in source if not text_of([token]).strip()})


def within(words: int, text_of: Callable[[list[int]], str]) -> Callable[[list[int]], bool]:
    """Whether a span's tokens make at most ``words`` words (white-space separated; 0: any number).
    A span that does not fit never fits again as it grows."""
    return lambda tokens: not words or len(text_of(tokens).split()) <= words


def copy_span(first_logits: np.ndarray, decode: Callable[[CopyMask], object], source: list[int],
              ends: list[int], blank: frozenset[int] = frozenset(), starts: int = STARTS,
              fits: Callable[[list[int]], bool] = lambda tokens: True) -> list[int]:
    """The tokens of the span of ``source`` likeliest as a whole answer, among those that hold a token not
    in ``blank`` and that ``fits`` (e.g. :func:`within` a length); empty when there is none.

    ``first_logits``: the model's logits for the answer's first token; ``decode(mask)`` runs greedy
    decoding from the same prompt with ``mask`` applied at every step (until an end or the token limit)."""
    first = log_softmax(first_logits)
    best: tuple[float, list[int]] = (-np.inf, [])
    for token in sorted(set(source), key=lambda t: -first[t])[:starts]:
        mask = CopyMask(source, ends, token, fits)
        decode(mask)
        best = max([best, *mask.prefixes(blank)], key=lambda found: found[0])
    return best[1]
