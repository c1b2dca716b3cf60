"""Factuality: score each document in [0, 1], then top-k factuality sampling.

The score averages what is available of the paper's two checks:
(a) summary faithfulness — is the pruned text supported by the document it was cut from?
    (only for pruned documents: an unpruned one is its own summary);
(b) fact-checking — is the document supported by evidence? Evidence is what BM25 retrieves from
    the corpora that plugins register, plus the documents of the other cards (agreement between
    independent sources); the best-supporting piece counts.
"Supported" is judged by embedding similarity, by an LLM's yes/no token probabilities, or both.
The paper's FactKB and VitaminC models do not exist offline; these are the stand-ins.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable, Literal, Sequence

import numpy as np
from langchain_core.documents import Document

from kcard_core.backends import yes_probability
from kcard_core.retrieval import index_for, sentences
from kcard_core.selectors import Selector
from kcard_selectors import encoder

JUDGE_PROMPT = ("Evidence: {evidence}\nClaim: {claim}\n"
                "Is the claim supported by the evidence? Answer Yes or No.\nAnswer:")


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


class FactualitySelector(Selector):
    name: str = "factuality"
    top_n: int = 3  # n3: documents kept
    top_k: int | None = None  # sample from the k best (the paper gives no k; default n3 + 2)
    # The paper samples with p ∝ exp(score); for scores in [0, 1] that is nearly uniform (the best
    # document at most e ≈ 2.7 times as likely as the worst), and a 0.5-scored hallucination was
    # kept over a 0.96-scored report. 1.0 is the paper's.
    temperature: float = 0.1
    seed: int | None = 0
    judge: Literal["embedding", "llm", "both"] = "embedding"
    logprobs: Callable[[str], dict[str, float]] | None = None  # next-token log-probs, for the LLM judge
    evidence: dict[str, Any] = {}  # name -> load(): the registered evidence corpora
    evidence_k: int = 3

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        index = index_for(self.evidence)
        scored = []
        for doc in documents:
            parts = {}
            if doc.metadata.get("original"):
                parts["summary"] = self.faithfulness(doc.page_content, doc.metadata["original"])
            # retrieved evidence and other cards' documents together: an off-topic passage that BM25
            # happens to return must not count as a contradiction. A card's own samples do not vouch
            # for each other: at temperature 0.1 they repeat one another, true or not.
            evidence = (index.search(doc.page_content, self.evidence_k) if index else []) + \
                [other.page_content for other in documents if other.metadata.get("card") != doc.metadata.get("card")]
            if evidence:
                support = [self.support(doc.page_content, text) for text in evidence]
                best = max(range(len(support)), key=support.__getitem__)
                parts["fact_check"] = support[best]
            score = sum(parts.values()) / len(parts) if parts else 0.5
            details = {key: round(value, 4) for key, value in parts.items()}
            if evidence:
                details["evidence"] = evidence[best][:120]
            scored.append(self.record(doc, score, **details))
        return scored

    def choose(self, scored: list[Document]) -> list[Document]:
        scores = [doc.metadata["scores"][self.name] for doc in scored]
        picks = top_k_sample(scores, self.top_n, self.top_k or self.top_n + 2, random.Random(self.seed),
                             self.temperature)
        return [scored[i] for i in picks]

    def faithfulness(self, summary: str, original: str) -> float:
        """Embedding: each summary sentence's best match in the original, averaged."""
        if self.judge == "llm":
            return self.llm_support(summary, original)
        claims, sources = sentences(summary) or [summary], sentences(original) or [original]
        vectors = encoder.embed([*claims, *sources])
        matches = vectors[: len(claims)] @ vectors[len(claims):].T
        return float(np.clip(matches.max(axis=1), 0, 1).mean())

    def support(self, claim: str, evidence: str) -> float:
        embedding = float(np.clip(encoder.similarities(claim, [evidence])[0], 0, 1))
        if self.judge == "embedding":
            return embedding
        llm = self.llm_support(claim, evidence)
        return llm if self.judge == "llm" else (embedding + llm) / 2

    def llm_support(self, claim: str, evidence: str) -> float:
        if self.logprobs is None:
            raise ValueError(f"FactualitySelector(judge={self.judge!r}) needs logprobs=<next-token log-probs>")
        return yes_probability(self.logprobs(JUDGE_PROMPT.format(evidence=evidence, claim=claim)))
