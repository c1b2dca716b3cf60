"""Factuality: score each document in [0, 1], then keep the n3 most factual.

The score averages what is available of the paper's two checks:
(a) summary faithfulness — is the pruned text supported by the document it was cut from?
    (only for pruned documents: an unpruned one is its own summary);
(b) fact-checking — is what a language model wrote supported by sources it did not write? The
    evidence is what BM25 retrieves from the corpora that plugins register, plus the passages that
    retrieval and KG cards quoted for this question, plus the passages of a card's own text (an LM
    card that memorised it carries it) that the question finds, as a retrieval card over that text
    would quote them: "How much does the dome … weigh?" finds "… weighs 40 tonnes", where BM25 over
    sentences, its words unstemmed, found the text's opening. Other LM cards' documents are *not* evidence:
    inventions that reuse the question's wording agree with each other. A quoted passage is its
    own evidence (fact-check 1).
"Supported" is judged by default by *agreement*: the share of what a sentence adds beyond the
question (its names and numbers not in the question) that the evidence states, in order — so an
echo of the question proves nothing, and "Y defeated X" agrees less with "X defeated Y" than
"X defeated Y" does (MiniLM cosine scores both alike). ``judge`` may also be "embedding" (MiniLM
cosine), "llm" (the base LLM's yes/no probability) or "both" (cosine and LLM averaged). The
paper's FactKB and VitaminC models do not exist offline; these are the stand-ins.

Choosing: the paper samples n3 of the top k with p ∝ exp(score). Scores a few hundredths apart
made that a coin toss, so by default the choice is greedy with a margin: the best document is
kept, and among documents within ``margin`` of the best the first that holds an answer of the kind
the question asks for, as the chain's reader tells (``holds_answer``: the rules reader's "How many
…?" a count, "In which year …?" a year; a reader that cannot tell leaves it out), wins, else the
one ranked first by the stage before (relevance). A memorised card's samples tie
often: "The ship of the town's founder, Ada Morrane." and "… after her ship, the Grey Heron, was
wrecked …" both state only what its text says, and the first, closer to "What was the name of the
ship …?", had won. ``sampling="paper"`` restores top-k sampling.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable, Literal, Sequence

import numpy as np
from langchain_core.documents import Document

from kcard_core.backends import yes_probability
from kcard_core.retrieval import index_for, words
from kcard_core.selectors import Selector
from kcard_core.text import STOPWORDS, WORD, sentences
from kcard_selectors import encoder

JUDGE_PROMPT = ("Evidence: {evidence}\nClaim: {claim}\n"
                "Is the claim supported by the evidence? Answer Yes or No.\nAnswer:")
QUOTED = ("retrieval", "kg")  # card types whose documents are passages of a corpus, not written text


def top_k_sample(scores: Sequence[float], n: int, k: int, rng: random.Random, temperature: float = 1.0) -> list[int]:
    """Indices of ``n`` documents drawn without replacement from the ``k`` best, p ∝ exp(score / temperature).

    exp() never vanishes, so the weights never all do (the authors' code divided by zero when every
    score was 0, and drew with replacement).
    """
    best = sorted(range(len(scores)), key=lambda i: -scores[i])[: max(k, n)]
    chosen = []
    while best and len(chosen) < n:
        top = max(scores[i] for i in best)  # shifted: exp() of a large score / small temperature overflows
        pick = rng.choices(range(len(best)), weights=[math.exp((scores[i] - top) / temperature) for i in best])[0]
        chosen.append(best.pop(pick))
    return chosen


def margin_greedy(scores: Sequence[float], n: int, margin: float, preferred: Sequence[bool] = ()) -> list[int]:
    """Indices of ``n`` documents: each time, of those within ``margin`` of the best score left, the
    first ``preferred`` one, else the one that comes first (the order the stage before ranked them in)."""
    left, chosen = list(range(len(scores))), []
    while left and len(chosen) < n:
        top = max(scores[i] for i in left)
        near = [i for i in left if scores[i] >= top - margin]
        pick = next((i for i in near if i < len(preferred) and preferred[i]), near[0])
        chosen.append(pick)
        left.remove(pick)
    return chosen


def new_words(text: str, asked: set[str]) -> list[str]:
    """What ``text`` states beyond the question: its names and numbers (capitalised words, digits)
    not in the question, lower-cased, in order; its other new words when it has no such."""
    tokens = [w for w in WORD.findall(text) if w.lower() not in STOPWORDS and w.lower() not in asked]
    named = [w.lower() for w in tokens if w[0].isupper() or w[0].isdigit()]
    return list(dict.fromkeys(named or [w.lower() for w in tokens]))


def agreement(claim: str, evidence: str, question: str = "") -> float:
    """How much of what ``claim`` adds beyond ``question`` ``evidence`` states, in the same order.

    The claim's new names and numbers (see :func:`new_words`) found in the evidence, as a share, times
    (1 + o) / 2 where o is the share of consecutive found words that the evidence has in the same
    order. Verbs are left out ("defeated" and "won" report the same result); a claim that only
    repeats the question adds nothing: 0.
    """
    new = new_words(claim, set(words(question)))
    if not new:
        return 0.0
    position: dict[str, int] = {}
    for index, word in enumerate(words(evidence)):
        position.setdefault(word, index)
    found = [w for w in new if w in position]
    if not found:
        return 0.0
    pairs = list(zip(found, found[1:]))
    order = sum(position[a] < position[b] for a, b in pairs) / len(pairs) if pairs else 1.0
    return len(found) / len(new) * (1 + order) / 2


class FactualitySelector(Selector):
    name: str = "factuality"
    top_n: int = 3  # n3: documents kept
    sampling: Literal["greedy", "paper"] = "greedy"
    margin: float = 0.05  # greedy: scores this close count as a tie, which the earlier ranking breaks
    top_k: int | None = None  # paper: sample from the k best (the paper gives no k; default n3 + 2)
    # The paper samples with p ∝ exp(score); for scores in [0, 1] that is nearly uniform (the best
    # document at most e ≈ 2.7 times as likely as the worst). 1.0 is the paper's.
    temperature: float = 0.1
    seed: int | None = 0
    judge: Literal["agreement", "embedding", "llm", "both"] = "agreement"
    logprobs: Callable[[str], dict[str, float]] | None = None  # next-token log-probs, for the LLM judge
    evidence: dict[str, Any] = {}  # name -> load(): the registered evidence corpora
    passages_for: dict[str, Any] = {}  # card name -> find(question): the passages of its own text a question finds
    evidence_k: int = 3
    # (question, text) -> whether the text holds an answer of the kind asked; None: cannot tell (the reader's)
    holds_answer: Callable[[str, str], bool | None] | None = None

    @classmethod
    def from_spec(cls, spec, logprobs=None, evidence=None, passages_for=None, holds_answer=None, **context):
        return cls(top_n=spec.n3, seed=spec.seed, judge=spec.judge, logprobs=logprobs, evidence=evidence or {},
                   passages_for=passages_for or {}, holds_answer=holds_answer)

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        # Evidence is found for the question, not for each document: a document about another race
        # than the one asked must not borrow that race's report as support.
        # A registered passage's support is weighted by how well BM25 matches it to the question
        # (relative to the best match): the report of a neighbouring race supports less.
        index = index_for(self.evidence)
        found = index.scored(query, self.evidence_k) if index else []
        evidence = [(text, score / found[0][0]) for score, text in found] + \
            [(doc.page_content, 1.0) for doc in documents if doc.metadata.get("source") in QUOTED] + \
            [(text, 1.0) for find in self.passages_for.values() for text in find(query)]
        scored = []
        for doc in documents:
            parts, details = {}, {}
            original, claims = doc.metadata.get("original"), sentences(doc.page_content) or [doc.page_content]
            if original and not all(part in original for part in claims):
                # an abstractive summary (an extractive one is the original's own sentences)
                parts["summary"] = self.faithfulness(doc.page_content, original)
            if doc.metadata.get("source") in QUOTED:
                parts["fact_check"], details["evidence"] = 1.0, "quoted from the card's corpus"
            elif evidence:
                # the best-supported sentence counts: a right report followed by another race's is right;
                # on a tie (none supports it, say) the evidence BM25 ranked first is the one shown
                support, details["evidence"] = max(((weight * self.support(claim, text, query), text[:160])
                                                    for claim in claims for text, weight in evidence),
                                                   key=lambda pair: pair[0])
                parts["fact_check"] = support
            holds = self.holds_answer(query, doc.page_content) if self.holds_answer else None
            if holds is not None:  # near-ties go to a document that holds an answer of the kind asked
                details["holds_answer"] = holds
            score = sum(parts.values()) / len(parts) if parts else 0.5
            scored.append(self.record(doc, score, **{key: round(value, 4) for key, value in parts.items()},
                                      **details))
        return scored

    def choose(self, scored: list[Document]) -> list[Document]:
        scores = [doc.metadata["scores"][self.name] for doc in scored]
        if self.sampling == "paper":
            picks = top_k_sample(scores, self.top_n, self.top_k or self.top_n + 2, random.Random(self.seed),
                                 self.temperature)
        else:
            picks = margin_greedy(scores, self.top_n, self.margin,
                                  [doc.metadata.get(self.name, {}).get("holds_answer", False) for doc in scored])
        return [scored[i] for i in picks]

    def faithfulness(self, summary: str, original: str) -> float:
        """Embedding: each summary sentence's best match in the original, averaged."""
        if self.judge == "llm":
            return self.llm_support(summary, original)
        claims, sources = sentences(summary) or [summary], sentences(original) or [original]
        vectors = encoder.embed([*claims, *sources])
        matches = vectors[: len(claims)] @ vectors[len(claims):].T
        return float(np.clip(matches.max(axis=1), 0, 1).mean())

    def support(self, claim: str, evidence: str, query: str = "") -> float:
        if self.judge == "agreement":
            return agreement(claim, evidence, query)
        if self.judge == "llm":
            return self.llm_support(claim, evidence)
        embedding = float(np.clip(encoder.similarities(claim, [evidence])[0], 0, 1))
        return embedding if self.judge == "embedding" else (embedding + self.llm_support(claim, evidence)) / 2

    def llm_support(self, claim: str, evidence: str) -> float:
        if self.logprobs is None:
            raise ValueError(f"FactualitySelector(judge={self.judge!r}) needs logprobs=<next-token log-probs>")
        return yes_probability(self.logprobs(JUDGE_PROMPT.format(evidence=evidence, claim=claim)))
