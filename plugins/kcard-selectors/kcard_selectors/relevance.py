"""Relevance: cosine(query, document) with MiniLM; keep the top n2, none far below the best."""

from __future__ import annotations

from typing import Sequence

from langchain_core.documents import Document

from kcard_core.selectors import Selector
from kcard_selectors import encoder


class RelevanceSelector(Selector):
    name: str = "relevance"
    top_n: int = 5  # n2 in the paper
    # Documents scoring under this share of the best are dropped even within the top n2: with fewer
    # documents than n2 the top n2 keep everything, and a retrieval card's off-topic passage
    # ("girl: Graph Information Retrieval Language … Naval Ship …", cosine 0.05 for "What was the
    # name of the ship of Kelderwick's founder?") then beat the user's card's answer (0.30) at the
    # factuality stage, where a quoted passage counts as its own evidence. 0.25: bottom-up over
    # every card 143 -> 147 of 160 own-card questions, MidtermQA tuning 96 EM either way; 0.5 lost
    # three (benchmarks/results/own-card.md, knowledge-lift-heldout.md).
    floor: float = 0.25

    @classmethod
    def from_spec(cls, spec, **context):
        return cls(top_n=spec.n2)

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        scores = encoder.similarities(query, [doc.page_content for doc in documents])
        return [self.record(doc, score) for doc, score in zip(documents, scores)]

    def choose(self, scored: list[Document]) -> list[Document]:
        ranked = sorted(scored, key=lambda doc: -doc.metadata["scores"][self.name])[: self.top_n]
        floor = self.floor * ranked[0].metadata["scores"][self.name] if ranked else 0.0
        return ranked[:1] + [doc for doc in ranked[1:] if doc.metadata["scores"][self.name] >= floor]  # the best stays

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """The same encoder, for matching a stated need to card descriptions (top-down AUTO)."""
        return encoder.similarities(query, texts)
