"""Selectors keep the documents that are relevant, brief and factual.

A selector is a LangChain document compressor: ``compress_documents(documents, query)``, for any
``Document``. It writes its score into each document's ``metadata["scores"][name]`` so the trace can
show every stage; in a chain, each selector's step is a LangChain run named after it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import Document
from langchain_core.documents.compressor import BaseDocumentCompressor
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import patch_config


class Selector(BaseDocumentCompressor):
    """Base class: subclasses set ``name``, implement ``score_documents`` and, to drop some, ``choose``."""

    name: str = "selector"

    @classmethod
    def from_spec(cls, spec: Any, **context: Any) -> "Selector":
        """The selector a chain's settings ask for: ``spec`` is its :class:`kcard_core.spec.ChainSpec`,
        ``context`` the chain's ``llm`` (the base LLM), ``logprobs`` (its next-token log-probabilities,
        or None), ``evidence`` (the registered corpora) and ``passages_for`` (for each card that carries its
        own text, ``find(question)``: the passages of it the question finds). Each selector reads what it needs."""
        return cls()

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        """Every document, scored (and possibly rewritten, as pruning does)."""
        raise NotImplementedError

    def choose(self, scored: list[Document]) -> list[Document]:
        """The scored documents this selector keeps."""
        return scored

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        return self.step(documents, query, {"callbacks": callbacks})["kept"]

    def step(self, documents: Sequence[Document], query: str, config: RunnableConfig | None) -> dict[str, list]:
        """{"scored": every document scored, "kept": those chosen}, as one run named after the selector."""
        def run(documents: list[Document]) -> dict[str, list]:
            scored = self.score_documents(documents, query)
            return {"scored": scored, "kept": self.choose(scored)}

        return RunnableLambda(run).invoke(with_ids(documents), patch_config(config, run_name=self.name))

    def record(self, document: Document, score: float, **details: Any) -> Document:
        """A copy of ``document`` with this selector's score (and details) in its metadata."""
        metadata = dict(document.metadata)
        metadata["scores"] = {**metadata.get("scores", {}), self.name: round(float(score), 4)}
        if details:
            metadata[self.name] = details
        return Document(page_content=document.page_content, metadata=metadata)


@dataclass
class StageRecord:
    selector: str
    scores: dict[str, float]  # document id -> score at this stage
    details: dict[str, dict]  # document id -> how the score was made (what the selector recorded)
    kept: list[str]
    seconds: float
    texts: dict[str, str]  # document id -> text after this stage (pruning rewrites it)


class SelectorPipeline(BaseDocumentCompressor):
    """Runs selectors in order; the order is the list's."""

    selectors: list[Selector]

    def run(self, documents: Sequence[Document], query: str,
            config: RunnableConfig | None = None) -> tuple[list[Document], list[StageRecord]]:
        stages = []
        for selector in self.selectors:
            started = time.perf_counter()
            step = selector.step(documents, query, config)
            scored, documents = step["scored"], step["kept"]
            stages.append(StageRecord(
                selector=selector.name,
                scores={doc.metadata["id"]: doc.metadata.get("scores", {}).get(selector.name) for doc in scored},
                details={doc.metadata["id"]: doc.metadata.get(selector.name, {}) for doc in scored},
                kept=[doc.metadata["id"] for doc in documents],
                seconds=round(time.perf_counter() - started, 3),
                texts={doc.metadata["id"]: doc.page_content for doc in scored}))
        return list(documents), stages

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        return self.run(documents, query, {"callbacks": callbacks})[0]


def with_ids(documents: Sequence[Document]) -> list[Document]:
    """The documents, each with a ``metadata["id"]`` (the trace's key): a card's documents have one;
    another source's get their ``Document.id`` or their place in the list."""
    return [doc if "id" in doc.metadata else
            Document(page_content=doc.page_content, metadata={**doc.metadata, "id": doc.id or f"document#{index}"},
                     id=doc.id)
            for index, doc in enumerate(documents, start=1)]


def lexical_similarity(query: str, texts: Sequence[str]) -> list[float]:
    """Word-overlap (Jaccard) similarity: the fallback when no embedding encoder is installed."""
    words = set(re.findall(r"\w+", query.lower()))
    scores = []
    for text in texts:
        other = set(re.findall(r"\w+", text.lower()))
        scores.append(len(words & other) / len(words | other) if words | other else 0.0)
    return scores
