"""The record that comes with every answer: which cards ran and why, each document's fate, timings."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from langchain_core.documents import Document


TRACE_VERSION = 1  # in to_dict(); raised when a key changes its meaning (docs/concepts.md, "The trace")


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
        data = {"trace_version": TRACE_VERSION, **asdict(self)}
        data["documents"] = [{"id": doc_id, **record} for doc_id, record in self.documents.items()]
        return data


def format_trace(trace: dict) -> str:
    """The trace for a person: cards and why, each document's scores per stage, the prompt, timings."""
    lines = ["", f"── trace ({trace['mode']}, base LLM {trace['model']})"]
    for turn in trace["turns"]:
        if "reply" not in turn:  # kcard's own decision, not a question the base LLM answered
            lines.append(f"  {turn['question']}: {turn.get('why', turn.get('card'))}")
            continue
        calibrated = f" (P(yes) {turn['p_yes']:.3f} vs {turn['p_yes_content_free']:.3f} for N/A)" if "p_yes" in turn else ""
        lines.append(f"  asked: {turn['question']} → {turn['reply']!r}{calibrated}")
    for card in trace["cards"]:
        lines.append(f"  card {card['card']}: {card['why']}")
    for error in trace["errors"]:
        lines.append(f"  card {error['card']} FAILED: {error['error']}")
    for doc in trace["documents"]:
        stages = "  ".join(f"{name} {s['score']}{'' if s['kept'] else ' ✗'}" for name, s in doc["stages"].items())
        if doc.get("duplicate_of"):
            stages = f"repeats {doc['duplicate_of']}"
        elif doc.get("dropped"):
            stages = f"left out: {doc['dropped']}"
        lines.append(f"  [{'used' if doc.get('used') else 'dropped'}] {doc['id']}: {stages}")
        lines.append(f"      {doc['text'][:160]}")
    for candidate in trace.get("revisions", []):
        verdict = f"→ revised: {candidate['feedback']}" if candidate["feedback"] else "→ accepted"
        lines.append(f"  answer {candidate['round']}: {candidate['response']!r} {candidate['utility']} "
                     f"{candidate['score']} {verdict}")
    lines.append("  prompt (last 400 characters): …" + trace["prompt"][-400:].replace("\n", "\n      "))
    lines.append("  seconds: " + ", ".join(f"{k} {v}" for k, v in trace["seconds"].items()))
    return "\n".join(lines)
