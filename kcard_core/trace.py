"""The record that comes with every answer: which cards ran and why, each document's fate, timings."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from langchain_core.documents import Document


@dataclass
class Trace:
    mode: str
    question: str
    model: str = ""
    answer: str = ""
    cards: list[dict[str, str]] = field(default_factory=list)  # {"card", "why"}
    turns: list[dict[str, Any]] = field(default_factory=list)  # the base LLM's replies on the way (top-down, options)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> text, card, stages
    prompt: str = ""
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per stage
    errors: list[dict[str, str]] = field(default_factory=list)  # {"card", "error"}: the answer still comes
    revisions: list[dict[str, Any]] = field(default_factory=list)  # verify-and-revise: each candidate answer

    @contextmanager
    def timer(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = round(self.seconds.get(stage, 0.0) + time.perf_counter() - started, 3)

    def add_documents(self, documents: list[Document]) -> None:
        for doc in documents:
            meta = doc.metadata
            self.documents[meta["id"]] = {"card": meta.get("card"), "text": doc.page_content,
                                          "backend": meta.get("backend"), "generation": meta.get("generation"),
                                          "stages": {}, "used": False}

    def add_stage(self, stage: str, scores: dict[str, float | None], kept: list[str],
                  texts: dict[str, str] | None = None, details: dict[str, dict] | None = None) -> None:
        for doc_id, score in scores.items():
            record = self.documents.setdefault(doc_id, {"stages": {}})
            record["stages"][stage] = {"score": score, "kept": doc_id in kept, **(details or {}).get(doc_id, {})}
            if texts and texts.get(doc_id) not in (None, record.get("text")):
                record["stages"][stage]["text"] = texts[doc_id]

    def mark_used(self, documents: list[Document]) -> None:
        """Note which documents reached the base LLM's prompt."""
        for doc in documents:
            self.documents[doc.metadata["id"]]["used"] = True

    def problems(self) -> list[str]:
        """What went wrong on the way, in words for stderr: cards that failed, documents that were empty."""
        found = [f"card {error['card']} failed: {error['error']}" for error in self.errors]
        written: dict[str, list[bool]] = {}
        for record in self.documents.values():
            if record.get("card"):
                written.setdefault(record["card"], []).append(record.get("dropped") == "empty")
        found += [f"card {card} wrote {sum(empty)} empty document{'s' * (sum(empty) > 1)} of {len(empty)} "
                  f"(its model stopped at once: is it trained on text like this question?)"
                  for card, empty in written.items() if any(empty)]
        return found

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["documents"] = [{"id": doc_id, **record} for doc_id, record in self.documents.items()]
        return data
