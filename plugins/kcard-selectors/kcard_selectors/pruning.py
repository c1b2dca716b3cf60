"""Pruning: keep each document brief.

Extractive (default): keep the sentences closest to the query, in their original order, within a
token budget. The paper uses a Pegasus summariser, which does not exist offline; ``method="llm"``
asks a language model for a one-sentence summary instead.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from langchain_core.documents import Document

from kcard_core.text import sentences
from kcard_core.selectors import Selector
from kcard_core.text import text_of
from kcard_selectors import encoder

SUMMARY_PROMPT = "Summarize the following text in one sentence.\nText: {text}\nSummary:"


class PruningSelector(Selector):
    name: str = "pruning"
    max_tokens: int = 48
    method: Literal["extractive", "llm"] = "extractive"
    llm: Any = None  # a LangChain language model, for method="llm"

    @classmethod
    def from_spec(cls, spec, llm=None, **context):
        return cls(method=spec.prune, llm=llm)

    def score_documents(self, documents: Sequence[Document], query: str) -> list[Document]:
        pruned = []
        for doc in documents:
            original = doc.metadata.get("original", doc.page_content)
            short = self.summarise(original) if self.method == "llm" else self.extract(original, query)
            kept = encoder.count_tokens(short) / max(1, encoder.count_tokens(original))
            scored = self.record(doc, min(1.0, kept))
            if short != original:
                scored.metadata["original"] = original  # the factuality selector checks the summary against it
            scored.page_content = short
            pruned.append(scored)
        return pruned

    def extract(self, text: str, query: str) -> str:
        parts = sentences(text)
        if len(parts) <= 1 and encoder.count_tokens(text) <= self.max_tokens:
            return text
        closeness = encoder.similarities(query, parts)
        order = sorted(range(len(parts)), key=lambda i: -closeness[i])
        chosen, used = [], 0
        for index in order:
            cost = encoder.count_tokens(parts[index])
            if used + cost <= self.max_tokens:
                chosen.append(index)
                used += cost
        if not chosen:  # even the best sentence is over budget: cut it there
            return self.cut(parts[order[0]] if order else text)
        return " ".join(parts[i] for i in sorted(chosen))

    def cut(self, text: str) -> str:
        words = text.split()
        while len(words) > 1 and encoder.count_tokens(" ".join(words)) > self.max_tokens:
            words = words[: -max(1, len(words) // 10)]
        return " ".join(words)

    def summarise(self, text: str) -> str:
        if self.llm is None:
            raise ValueError("PruningSelector(method='llm') needs llm=<a LangChain language model>")
        output = self.llm.invoke(SUMMARY_PROMPT.format(text=text), stop=["\n"])
        summary = text_of(output).strip()
        return summary or text
