"""Relevance: cosine(query, document) with MiniLM; keep the top n2."""

from __future__ import annotations

from typing import Sequence

from langchain_core.documents import Document

from kcard_core.selectors import Selector
from kcard_selectors import encoder


class RelevanceSelector(Selector):
    name: str = "relevance"
    top_n: int = 5  # n2 in the paper

    @classmethod
    def from_spec(cls, spec, **context):
        return cls(top_n=spec.n2)

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        scores = encoder.similarities(query, [doc.page_content for doc in documents])
        return [self.record(doc, score) for doc, score in zip(documents, scores)]

    def choose(self, scored: list[Document]) -> list[Document]:
        return sorted(scored, key=lambda doc: -doc.metadata["scores"][self.name])[: self.top_n]

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """The same encoder, for matching a stated need to card descriptions (top-down AUTO)."""
        return encoder.similarities(query, texts)
