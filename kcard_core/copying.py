"""Answers that copy a span of a text: greedy decoding under a copy mask, the span chosen by likelihood.

A backend that reads its model's logits step by step (``Backend.copies``) answers a
:class:`~kcard_core.sampling.Sampling` with ``copy`` set through :func:`copy_span`: the
:data:`STARTS` likeliest of the tokens that start a word of the text (:func:`copy_source`) each start
a greedy continuation in which every token continues a span of the text or ends the answer; of every
prefix of those continuations that ends a word, the answer is the one likeliest to be written whole,
its tokens and then an end, under the model's unmasked distribution, of those holding a token the
question (``Sampling.asked``) lacks. Where the backend is also given the prompt without the question
(``Sampling.unasked``), where an answer starts counts for what the question adds to it: each span's
log-likelihood less :data:`PRIOR_WEIGHT` times its first token's log-probability under the prompt
without the question (:func:`copy_span`), so a span the knowledge makes likely whatever is asked (a
sentence's opening date, say) gives way to the one this question makes likely. A span that starts
with one of the question's own tokens gains nothing so: the question makes its own words likelier
without asking for them. Nothing here knows a language: it works on token ids and tells words apart
by Unicode character classes. ``benchmarks/results/span-reading.md`` measures it ("beam"),
``benchmarks/results/readers.md`` the `span` reader that uses it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Callable

import numpy as np

STARTS = 4  # continuations tried, one from each of the likeliest first tokens
PRIOR_WEIGHT = 0.5  # how much a weighed span's first token counts less its log-probability without the question


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
                 fits: Callable[[list[int]], bool] = lambda tokens: True, cuts: frozenset[int] | None = None):
        self.source, self.ends, self.first, self.fits, self.cuts = source, sorted(set(ends)), first, fits, cuts
        self.at: list[int] = []  # where in source the tokens written so far may start
        self.where: list[list[int]] = []  # ``at`` after each prefix (1, 2, … tokens)
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
            self.where.append(self.at)
        self.written = list(written)
        self.logprobs = log_softmax(logits)
        self.ended.append(float(np.logaddexp.reduce(self.logprobs[self.ends])))
        n = len(written)
        if not written:
            allowed = set(self.source) - {GAP} if self.first is None else {self.first}
        elif self.fits(written):
            allowed = {self.source[j + n] for j in self.at if j + n < len(self.source)} - {GAP} | set(self.ends)
        else:  # no longer span fits either: end here
            allowed = set(self.ends)
        keep = sorted(allowed)
        masked = np.full_like(logits, -np.inf)
        masked[keep] = logits[keep]
        return masked

    def whole(self, k: int) -> bool:
        """Whether the first ``k`` written tokens stand in ``source`` between two ``cuts`` (None: anywhere)."""
        return self.cuts is None or any(j in self.cuts and j + k in self.cuts for j in self.where[k - 1])

    def prefixes(self, blank: frozenset[int] = frozenset(),
                 marks: frozenset[int] = frozenset()) -> list[tuple[float, list[int]]]:
        """(log-probability of writing it whole and then ending, tokens) for each prefix that says
        something (:func:`says`), ``fits`` and is made of whole words."""
        found, total = [], 0.0
        for k in range(1, min(len(self.chosen), len(self.ended) - 1) + 1):
            total += self.chosen[k - 1]
            if says(self.written[:k], blank, marks) and self.fits(self.written[:k]) and self.whole(k):
                found.append((total + self.ended[k], self.written[:k]))
        return found


def says(tokens: list[int], blank: frozenset[int], marks: frozenset[int]) -> bool:
    """Whether a span of ``tokens`` says something: it holds a token that is not in ``blank`` (tokens that
    say nothing new: :func:`copy_source`) and not one of ``marks`` (tokens of no letter or digit), or it
    is made of marks alone and one is not in ``blank`` ("$$"). The question's words with a mark beside
    them say nothing new ("REGULAR EXPRESSIONS ›")."""
    new = set(tokens) - blank
    return bool(new) and (not new <= marks or set(tokens) <= marks)


GAP = -1  # between the parts of a :class:`Source`: no span crosses it
ALSO_WORDS = 12  # how many words from a word after a mark :func:`copy_source` tokenizes again


@dataclass(frozen=True)
class Source:
    """A text as :func:`copy_span` copies from it: ``tokens`` (parts of the text, :data:`GAP` between
    them), the tokens that say nothing new (``blank``: the question's, ``said``, and white space alone),
    those of no letter or digit (``marks``), the positions a span may start and end at (``cuts``; None:
    any) and the spans that are no answer (``refused``, as token sequences). :func:`copy_source` makes
    one from a text; the defaults take the tokens as they are."""
    tokens: list[int]
    blank: frozenset[int] = frozenset()
    cuts: frozenset[int] | None = None
    said: frozenset[int] = frozenset()
    marks: frozenset[int] = frozenset()
    refused: frozenset[tuple[int, ...]] = frozenset()


def _wordy(ch: str) -> bool:
    """Whether ``ch`` joins its neighbours into a word: a letter, a digit or ``_``, of a script written
    with spaces between words (not an East Asian wide character)."""
    return (ch.isalnum() or ch == "_") and unicodedata.east_asian_width(ch) not in "WF"


def _joins(left: str, right: str) -> bool:
    """Whether two characters side by side are inside one word."""
    return _wordy(left) and _wordy(right)


def _mark(ch: str) -> bool:
    """Whether ``ch`` is a mark: no white space, no letter or digit of any script, not ``_``."""
    return not (ch.isspace() or ch.isalnum() or ch == "_")


def _cuts(tokens: list[int], text_of: Callable[[list[int]], str]) -> tuple[str, dict[int, int]]:
    """The text of ``tokens`` and, for each position between two tokens that do not join inside a word
    (and the two ends), where it lies in that text. A token's length is read after the token before it
    (a tokenizer may drop a lone token's leading space), from the whole start where either token is
    part of a character: in linear time, as a decode of every start would give."""
    text = text_of(tokens)
    at = [0] + [len(text_of(tokens[:1]))] * bool(tokens)
    for i in range(1, len(tokens)):
        pair, before = text_of(tokens[i - 1:i + 1]), text_of(tokens[i - 1:i])
        at.append(len(text_of(tokens[:i + 1])) if "\ufffd" in pair + before else at[-1] + len(pair) - len(before))
    return text, {i: a for i, a in enumerate(at) if not (0 < a < len(text) and _joins(text[a - 1], text[a]))}


def copy_source(text: str, tokenize: Callable[[str], list[int]], text_of: Callable[[list[int]], str],
                asked: str = "", narrow: bool = False, refused: tuple[str, ...] = ()) -> Source:
    """``text`` to copy answers from: its tokens as they follow a space (as an answer's first word does),
    then, for each word that starts after a mark ("(10 Jun 2016)", "urgency=high", "“Wolverine …”"),
    the next :data:`ALSO_WORDS` words from there tokenized again after a space, each part after a
    :data:`GAP`. ``blank``: the tokens that are white space alone (some tokenizers write " " before a
    number) and those of ``asked``, the question, its words as written, in lower case, with a first
    capital and in capitals (``said``: a span made of its own words does not answer it, "Every" or
    "REGULAR EXPRESSIONS" no more than "every" or "regular expressions"). ``marks``: the tokens of no
    letter or digit. ``cuts``: where a span of whole words may start and end. ``refused``: whole spans
    that are no answer, each tokenized as an answer's first word is.

    ``narrow``: the text is an answer to narrow to a run of its own white-space words, so only its own
    tokens, with ``cuts`` where it goes on with white space, after any marks (where its white-space
    words start, and end with or without the marks that close them: "Johansson" and "Johansson," of
    "Johansson, in …", never "4" of "4.1.0")."""
    first = tokenize(" " + " ".join(text.split()))
    whole, inner = _cuts(first, text_of)
    tokens, cuts = list(first), set(inner)
    if narrow:
        cuts = {i for i, at in inner.items() if i == 0 or _spaced(whole[at:])}
    else:
        for at in sorted(inner.values()):
            if 0 < at < len(whole) and _mark(whole[at - 1]) and not whole[at].isspace():
                part = tokenize(" " + " ".join(whole[at:].split()[:ALSO_WORDS]))
                cuts |= {len(tokens) + 1 + j for j in _cuts(part, text_of)[1]}
                tokens += [GAP, *part]
    words = asked.split()
    cases = [words, [word.lower() for word in words], [word[:1].upper() + word[1:] for word in words],
             [word.upper() for word in words]]
    said = {token for case in cases if case for token in tokenize(" " + " ".join(case))}
    empty = {token for token in tokens if token != GAP and not text_of([token]).strip()}
    marks = {token for token in tokens if token != GAP and all(_mark(ch) or ch.isspace() for ch in text_of([token]))}
    return Source(tokens, blank=frozenset(said | empty), cuts=frozenset(cuts), said=frozenset(said),
                  marks=frozenset(marks),
                  refused=frozenset(tuple(tokenize(" " + " ".join(span.split()))) for span in refused))


def _spaced(rest: str) -> bool:
    """Whether ``rest`` is empty or goes on with white space, after any marks."""
    return next((ch.isspace() for ch in rest if not _mark(ch)), True)


def within(words: int, text_of: Callable[[list[int]], str]) -> Callable[[list[int]], bool]:
    """Whether a span's tokens make at most ``words`` words (white-space separated; 0: any number).
    A span that does not fit never fits again as it grows."""
    return lambda tokens: not words or len(text_of(tokens).split()) <= words


def copy_span(first_logits: np.ndarray, decode: Callable[[CopyMask], object], source: Source, ends: list[int],
              starts: int = STARTS, fits: Callable[[list[int]], bool] = lambda tokens: True,
              unasked_logits: np.ndarray | None = None) -> list[int]:
    """The tokens of the span of ``source`` likeliest as a whole answer, among those that start and end
    at its ``cuts``, say something beyond its ``blank`` and ``marks`` (:func:`says`), ``fits`` (e.g.
    :func:`within` a length) and are not one of its ``refused``; empty when there is none.

    ``first_logits``: the model's logits for the answer's first token; ``decode(mask)`` runs greedy
    decoding from the same prompt with ``mask`` applied at every step (until an end or the token limit).
    ``unasked_logits``: the logits for the first token under the prompt without the question; where
    given, each span's log-likelihood counts less :data:`PRIOR_WEIGHT` times its first token's
    log-probability there, or under the prompt itself where that token is one of the question's
    (``source.said``)."""
    first = log_softmax(first_logits)
    unasked = None if unasked_logits is None else log_softmax(unasked_logits)
    best: tuple[float, list[int]] = (-np.inf, [])
    tokens, cuts = source.tokens, source.cuts
    firsts = {tokens[j] for j in (range(len(tokens)) if cuts is None else cuts) if j < len(tokens)} - {GAP}
    for token in sorted(firsts, key=lambda t: -first[t])[:starts]:
        mask = CopyMask(tokens, ends, token, fits, cuts)
        decode(mask)
        prior = 0.0 if unasked is None else PRIOR_WEIGHT * float((first if token in source.said else unasked)[token])
        best = max([best, *((score - prior, span) for score, span in mask.prefixes(source.blank, source.marks)
                            if tuple(span) not in source.refused)], key=lambda pair: pair[0])
    return best[1]
