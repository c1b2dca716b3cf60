"""BM25 indexes, built once and saved: evidence for fact-checking, and retrieval cards."""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Sequence

import numpy as np

from kcard_core.config import cache_dir
from kcard_core.text import STOPWORDS, WORD, sentences

logger = logging.getLogger(__name__)


# a version or section number stays one word ("1.14.10", "2.3.1"), as Unicode's word boundaries (UAX #29) have it:
# a question names "dbus 1.14.10", which its parts "1", "14", "10" do not tell from any other release
NUMBERED_WORD = re.compile(r"\bv?\d+(?:\.\w+)+|\w+")
K1, B = 1.5, 0.75  # Okapi BM25's term-frequency saturation and length normalisation
# the share of its weight a word of a card's subject has in ranking: the subject's words tell that a
# question is for this text, not which passage or sentence answers it (chosen on the own-card texts)
SUBJECT_RANK = 0.5


def idf(count: int, held: float | np.ndarray) -> float | np.ndarray:
    """Lucene's idf of a term that ``held`` of ``count`` texts hold: log(1 + (N - df + 0.5) / (df + 0.5))."""
    return np.log(1 + (count - held + 0.5) / (held + 0.5))


def words(text: str, word: re.Pattern = WORD) -> list[str]:
    found = (w[1:] if w[0] == "v" and "." in w else w for w in word.findall(text.lower()))  # "v3.1" is "3.1"
    return [w for w in found if w not in STOPWORDS]


# words that say what kind of answer a question wants, rarely found beside the answer itself
# ("In which year was it founded?" is answered by "founded in 1742")
ANSWER_KIND_WORDS = frozenset("year name named called kind type long many much".split())


@functools.cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    """The word's Snowball stem (the Porter2 English stemmer, by PyStemmer), the same on both sides:
    "stands" meets "stand", "released" meets "release", "beginning" meets "begin"."""
    return _stemmer().stemWord(word)


class BM25:
    """Texts scored against a query by Okapi BM25 (:data:`K1`, :data:`B`, Lucene's idf); claims against
    evidence sentences here (fact-checking), :class:`QuestionIndex` for questions.

    The scores are a sparse term-by-text matrix that bm25s builds once; :meth:`save` writes it to one
    ``.npz`` file and :meth:`load` (numpy alone) reads it back with texts from anywhere that indexes
    by position, so a process that asks neither tokenises nor holds the whole corpus.
    """

    subject: frozenset[str] | set[str] = frozenset()  # words that every text is about: each text holds them in coverage
    TOKENS = "words-1"  # names what terms() makes: a saved index made another way is not loaded

    def __init__(self, texts: Sequence[str], *, postings: Postings | None = None):
        self.texts = texts
        self.postings = postings or Postings.build([self.terms(text) for text in texts])
        self.vocab = self.postings.vocab
        self.idf = self.postings.idf()
        self.rank = np.ones(len(self.idf))  # a word's share of its weight in a text's score

    def terms(self, text: str) -> list[str]:
        return words(text)

    def query_terms(self, query: str) -> set[str]:
        return set(self.terms(query))

    def search(self, query: str, k: int = 3) -> list[str]:
        return [text for _, text in self.scored(query, k)]

    def scored(self, query: str, k: int = 3, coverage: float = 0.0) -> list[tuple[float, str]]:
        """The ``k`` best (score, text) pairs, best first, of the texts that hold at least ``coverage``
        of the query's words, weighted by their rarity (a word no text has counts as the rarest; a
        word of the :attr:`subject` as held by every text)."""
        return [(score, self.texts[index]) for score, index in self.found(query, k, coverage)]

    def found(self, query: str, k: int = 3, coverage: float = 0.0) -> list[tuple[float, int]]:
        """:meth:`scored` with each text's position in :attr:`texts` (ties: the later text first)."""
        asked = self.query_terms(query)
        rarest = float(idf(len(self.texts), 0))
        ids = {term: self.vocab[term] for term in asked if term in self.vocab}
        weight = {term: float(self.idf[ids[term]]) if term in ids else rarest for term in asked}
        held = np.full(len(self.texts), sum(weight[term] for term in ids if term in self.subject), dtype=float)
        score = np.zeros(len(self.texts))
        for term, id in ids.items():
            texts, scores = self.postings.column(id)
            score[texts] += scores * self.rank[id]
            if term not in self.subject:
                held[texts] += weight[term]
        passing = np.flatnonzero((held >= coverage * sum(weight.values()) - 1e-9) & (score > 0))
        if len(passing) > k:  # the k best, and all that tie with the k-th
            passing = passing[score[passing] >= np.partition(score[passing], -k)[-k]]
        best = passing[np.lexsort((-passing, -score[passing]))][:k]
        return [(float(score[index]), int(index)) for index in best]

    def save(self, path: str | Path) -> None:
        """Write the index (not its texts) to ``path``, an ``.npz`` file, atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as handle:
            self.postings.write(handle, self.TOKENS)
        os.replace(handle.name, path)

    def to_bytes(self) -> bytes:
        """What :meth:`save` writes."""
        buffer = io.BytesIO()
        self.postings.write(buffer, self.TOKENS)
        return buffer.getvalue()

    @classmethod
    def load(cls, path: str | Path, texts: Sequence[str], **kwargs) -> "BM25":
        """The index :meth:`save` wrote, over ``texts`` (the same texts, in the same order).
        Raises ValueError when the file is no such index, was made with other :meth:`terms` or holds
        another number of texts."""
        return cls(texts, postings=Postings.load(path, cls.TOKENS, len(texts)), **kwargs)

    @classmethod
    def cached(cls, texts: Sequence[str], **kwargs) -> "BM25":
        """The index of ``texts``, built once per machine: saved under kcard's cache, keyed by the texts."""
        digest = hashlib.sha256(cls.TOKENS.encode())
        for text in texts:
            digest.update(text.encode())
            digest.update(b"\0")
        path = cache_dir() / "indexes" / f"{digest.hexdigest()}.npz"
        try:
            return cls.load(path, texts, **kwargs)
        except (OSError, ValueError):
            index = cls(texts, **kwargs)
            index.save(path)
            return index


@dataclass
class Postings:
    """The BM25 score matrix: for each term (an id in ``vocab``), the texts that hold it (``indices``)
    and its part of their score, idf × tf part (``data``), column by column (``indptr``), as bm25s builds it."""

    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    count: int  # texts

    @classmethod
    def build(cls, terms: list[list[str]]) -> "Postings":
        import bm25s

        if not any(terms):  # bm25s needs a word
            return cls({}, np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(1, np.int64), len(terms))
        model = bm25s.BM25(k1=K1, b=B, method="lucene", csc_backend="numpy")
        model.index(terms, show_progress=False)
        scores = model.scores
        return cls(model.vocab_dict, scores["data"], scores["indices"], scores["indptr"], len(terms))

    def column(self, id: int) -> tuple[np.ndarray, np.ndarray]:
        """(the texts that hold term ``id``, its part of their scores)."""
        if id + 1 >= len(self.indptr):  # bm25s's empty term has no column
            return self.indices[:0], self.data[:0]
        start, end = self.indptr[id], self.indptr[id + 1]
        return self.indices[start:end], self.data[start:end]

    def idf(self) -> np.ndarray:
        """Each term's :func:`idf`, by id."""
        held = np.zeros(len(self.vocab))
        frequency = np.diff(self.indptr)
        held[: len(frequency)] = frequency
        return idf(self.count, held)

    def write(self, handle: BinaryIO, tokens: str) -> None:
        """Write the matrix, its vocabulary and ``tokens`` (how its terms were made) as one ``.npz``."""
        vocab = "\n".join(sorted(self.vocab, key=self.vocab.get)).encode()
        np.savez(handle, data=self.data, indices=self.indices, indptr=self.indptr, count=self.count,
                 vocab=np.frombuffer(vocab, dtype=np.uint8), tokens=np.frombuffer(tokens.encode(), dtype=np.uint8))

    @classmethod
    def load(cls, path: str | Path, tokens: str, count: int) -> "Postings":
        with np.load(path, allow_pickle=False) as saved:
            if saved["tokens"].tobytes().decode() != tokens or int(saved["count"]) != count:
                raise ValueError(f"{path} is an index of other texts or made by another version of kcard")
            terms = saved["vocab"].tobytes().decode().split("\n")
            return cls({term: id for id, term in enumerate(terms)}, saved["data"], saved["indices"],
                       saved["indptr"], count)


def pairs(text: str, leave_out: frozenset[str] = STOPWORDS) -> set[str]:
    """The text's adjacent pairs of words, stemmed, neither of them common or one letter long ("grey
    bowl" of "the Grey Bowl's"): the two-word names a text holds."""
    kept = [stem(w) if len(w) > 1 and w not in leave_out else "" for w in re.findall(r"\w+", text.lower())]
    return {f"{a} {b}" for a, b in zip(kept, kept[1:]) if a and b}


def with_parts(text: str) -> str:
    """``text`` with each snake-case identifier's parts after it ("ATSPI_ROLE_MARK" → "ATSPI_ROLE_MARK
    ATSPI ROLE MARK"), so that a question that names the thing in words meets it."""
    return re.sub(r"\w*_\w*", lambda found: f"{found[0]} {found[0].replace('_', ' ')}", text)


def passage_terms(text: str) -> list[str]:
    """The terms a passage is indexed by for questions: its words and identifiers' parts, stemmed,
    common ones left out."""
    return [stem(word) for word in words(with_parts(text), NUMBERED_WORD)]


def question_terms(query: str) -> set[str]:
    """The terms a question is looked up by: :func:`passage_terms`, less the words of its answer's kind."""
    return {stem(word) for word in words(with_parts(query), NUMBERED_WORD) if word not in ANSWER_KIND_WORDS}


def closest(query: str, texts: Sequence[str], k: int, subject: frozenset[str] | set[str] = frozenset()) -> list[int]:
    """The positions of the ``k`` of ``texts`` closest to ``query``, best first: BM25 over these texts
    alone, as :class:`QuestionIndex` scores a card's passages (its terms, :data:`K1`, :data:`B`, Lucene's
    idf, ``subject``'s terms at :data:`SUBJECT_RANK`), computed here for a few texts (the sentences of
    the passages a card found) rather than by an index built for them. Ties, and texts that hold none
    of the query's terms, keep their order."""
    held = [Counter(passage_terms(text)) for text in texts]
    lengths = np.array([sum(counts.values()) for counts in held], dtype=float)
    damping = K1 * (1 - B + B * lengths / max(lengths.mean(), 1.0))
    score = np.zeros(len(texts))
    for term in question_terms(query):
        frequency = np.array([counts[term] for counts in held], dtype=float)
        holding = np.count_nonzero(frequency)
        if holding:
            rank = SUBJECT_RANK if term in subject else 1.0
            score += rank * idf(len(texts), holding) * frequency / (frequency + damping)
    return sorted(range(len(texts)), key=lambda position: -score[position])[:k]


class QuestionIndex(BM25):
    """A user's question against a card's passages: words stemmed, question-form words left out.

    ``subject`` (the name the whole text is about) counts as held by every passage in coverage: its
    words tell that a question is for this text, not which passage answers it. In a passage that
    names it, its words count at :data:`SUBJECT_RANK` of their weight in ranking.
    """

    TOKENS = "snowball-english-2"

    def __init__(self, texts: Sequence[str], subject: str = "", *, postings: Postings | None = None):
        super().__init__(texts, postings=postings)
        self.subject = set(self.terms(subject)) & self.vocab.keys()
        for term in self.subject:
            self.rank[self.vocab[term]] = SUBJECT_RANK

    def names_subject(self, query: str) -> bool:
        """Whether ``query`` names the whole text's subject (every word of it): such a question is for
        this text even when its other words are not the text's."""
        return bool(self.subject) and self.subject <= self.query_terms(query)

    def terms(self, text: str) -> list[str]:
        return passage_terms(text)

    def query_terms(self, query: str) -> set[str]:
        return question_terms(query)

    def holds(self, term: str) -> bool:
        """Whether a passage holds ``term``: a word of :meth:`query_terms` or a pair of :func:`pairs`
        (looked for only in the passages that hold both words: a big card's every pair took 2 s)."""
        if " " not in term:
            return term in self.vocab
        first, second = term.split()
        if first not in self.vocab or second not in self.vocab:
            return False
        both = np.intersect1d(self.postings.column(self.vocab[first])[0], self.postings.column(self.vocab[second])[0])
        return any(term in pairs(self.texts[index]) for index in both)


def claimants(query: str, indexes: dict[str, QuestionIndex], coverage: float = 0.5) -> dict[str, list[str]]:
    """The texts (by name) that claim ``query``, each with the query's words (or adjacent pairs of
    words) that it alone holds: a text claims a query when no other text holds one of its words or
    pairs and one of its passages holds at least ``coverage`` of its words, weighted by rarity. "How
    wide is the lens of the Sorrell Refractor?" names nothing a description says, but only one
    card's text holds "Sorrell"; of "In which year was the Grey Bowl built?" other texts hold each
    word, but only one "Grey Bowl"."""
    if not indexes:
        return {}
    own: dict[str, list[str]] = {}
    asked = next(iter(indexes.values())).query_terms(query) | pairs(query, STOPWORDS | ANSWER_KIND_WORDS)
    for term in sorted(asked):
        holders = [name for name, index in indexes.items() if index.holds(term)]
        if len(holders) == 1:
            own.setdefault(holders[0], []).append(term)
    return {name: words for name, words in own.items() if indexes[name].scored(query, 1, coverage)}


def subject(texts: list[str]) -> str:
    """What a text is about: the name its first sentence opens by saying what it is ("The Eiffel Tower
    is a wrought-iron tower …" -> "Eiffel Tower"); empty for any other opening ("Fact one.", "The
    town of Brill lies on a river.")."""
    first = sentences(texts[0])[0] if texts and texts[0].strip() else ""
    opening = re.match(r"((?:[A-Z][\w'-]*\s+)+)(?:is|was|are|were)\b", first)  # its leading capitalised words
    words = opening.group(1).split() if opening else []
    return " ".join(words[1:] if words and words[0].lower() in STOPWORDS else words)


_indexes: dict[tuple[str, ...], BM25] = {}


def index_for(corpora: dict[str, Callable[[], list[str]]]) -> BM25 | None:
    """One index over the sentences of all registered corpora, built on first use (None if none).

    Sentences, not passages: a short claim compared with a long passage scores low even when the
    passage states it. Each sentence comes with the one before it, which often names what "it" is.
    """
    key = tuple(sorted(corpora))
    if not key:
        return None
    if key not in _indexes:
        _indexes[key] = BM25.cached([part for name in key for text in _texts(name, corpora[name])
                                     for part in windows(text)])
    return _indexes[key]


def windows(text: str) -> list[str]:
    """Each sentence of ``text``, after the one before it (the first alone)."""
    found = sentences(text)
    return [" ".join(found[max(0, i - 1): i + 1]) for i in range(len(found))]


def _texts(name: str, load: Callable[[], list[str]]) -> list[str]:
    """A corpus's texts; one that cannot load (its data missing, say) is reported and left out."""
    try:
        return list(load())
    except Exception as error:  # a plugin's loader: any failure is its own, never the query's
        logger.warning("evidence corpus %s is left out: %s: %s", name, type(error).__name__, error)
        return []
