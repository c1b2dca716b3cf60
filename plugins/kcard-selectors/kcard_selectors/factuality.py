"""Factuality: score each document in [0, 1], then top-k factuality sampling.

The score averages what is available of the paper's two checks:
(a) summary faithfulness — is the pruned text supported by the document it was cut from?
    (only for pruned documents: an unpruned one is its own summary);
(b) fact-checking — is the document supported by evidence? Evidence is what BM25 retrieves from
    the corpora that plugins register, plus the other candidate documents (agreement between
    independent samples, as in SelfCheckGPT); the best-supporting piece counts.
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


def top_k_sample(scores: Sequence[float], n: int, k: int, rng: random.Random) -> list[int]:
    """Indices of ``n`` documents drawn without replacement from the ``k`` best, p ∝ exp(score).

    exp() of scores in [0, 1] is never zero, so the weights never all vanish (the authors' code
    divided by zero when every score was 0, and drew with replacement).
    """
    best = sorted(range(len(scores)), key=lambda i: -scores[i])[: max(k, n)]
    chosen = []
    while best and len(chosen) < n:
        pick = rng.choices(range(len(best)), weights=[math.exp(scores[i]) for i in best])[0]
        chosen.append(best.pop(pick))
    return chosen


class FactualitySelector(Selector):
    name: str = "factuality"
    top_n: int = 3  # n3: documents kept
    top_k: int | None = None  # sample from the k best (the paper gives no k; default n3 + 2)
    seed: int | None = 0
    judge: Literal["embedding", "llm", "both"] = "embedding"
    logprobs: Callable[[str], dict[str, float]] | None = None  # next-token log-probs, for the LLM judge
    evidence: dict[str, Any] = {}  # name -> load(): the registered evidence corpora
    evidence_k: int = 3

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        index = index_for(self.evidence)
        scored = []
        for position, doc in enumerate(documents):
            parts = {}
            if doc.metadata.get("original"):
                parts["summary"] = self.faithfulness(doc.page_content, doc.metadata["original"])
            # retrieved evidence and the other candidates together: an off-topic passage that BM25
            # happens to return must not count as a contradiction
            evidence = (index.search(doc.page_content, self.evidence_k) if index else []) + \
                [other.page_content for i, other in enumerate(documents) if i != position]
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
        picks = top_k_sample(scores, self.top_n, self.top_k or self.top_n + 2, random.Random(self.seed))
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
