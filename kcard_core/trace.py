"""The record that comes with every answer: which cards ran and why, each document's fate, timings."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from langchain_core.documents import Document

from kcard_core.text import SEPARATOR


TRACE_VERSION = 1  # in to_dict(); raised when a key changes its meaning (docs/concepts.md, "The trace")


def _plain(record: Any) -> dict[str, Any]:
    """A record as JSON: its fields without the empty optional ones, its ``details`` spread in."""
    data = {key: value for key, value in vars(record).items() if key != "details" and value is not None}
    return {**data, **getattr(record, "details", {})}


@dataclass
class CardChoice:
    """A card the chain asked, and why."""
    card: str
    why: str


@dataclass
class Turn:
    """A step on the way to the answer: a question the base LLM answered (``reply``), or kcard's own
    decision (no reply: ``details["why"]`` says it)."""
    question: str
    reply: str | None = None
    iteration: int | None = None  # top-down: the round of asking
    needs_more: bool | None = None  # top-down: its yes/no
    card: str | None = None  # the card this step chose
    details: dict[str, Any] = field(default_factory=dict)  # what else it measured (p_yes, similarity, how, …)


@dataclass
class StageScore:
    """One selector's verdict on one document."""
    score: float | None
    kept: bool
    text: str | None = None  # the document as this stage left it, when it rewrote it (pruning)
    details: dict[str, Any] = field(default_factory=dict)  # the selector's own (fact_check, evidence, …)


@dataclass
class DocumentRecord:
    """A document a card wrote, and its fate."""
    card: str | None
    text: str
    backend: str | None = None
    generation: dict[str, Any] | None = None  # n, max_tokens, temperature, seed
    stages: dict[str, StageScore] = field(default_factory=dict)  # selector name -> its verdict
    used: bool = False  # reached the base LLM's prompt
    dropped: str | None = None  # left out before any selector ("empty")
    duplicate_of: str | None = None  # the id of the document it repeats
    sources: list[str] | None = None  # a retrieval card's: each quoted passage's file › heading path
    headed: bool | None = None  # a retrieval card's passages under a heading path ("A › B: text")


@dataclass
class CardError:
    """A card that failed: the answer still comes, from the others."""
    card: str
    error: str


@dataclass
class Revision:
    """Verify-and-revise: one candidate answer, its utility score, and the feedback when it was revised."""
    round: int
    response: str
    score: float
    utility: str
    feedback: str | None


@dataclass
class Trace:
    mode: str
    question: str
    model: str = ""
    answer: str = ""
    cards: list[CardChoice] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)  # the base LLM's replies on the way (top-down, options)
    documents: dict[str, DocumentRecord] = field(default_factory=dict)  # by document id
    prompt: str = ""
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per stage
    errors: list[CardError] = field(default_factory=list)
    revisions: list[Revision] = field(default_factory=list)

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
            self.documents[meta["id"]] = DocumentRecord(meta.get("card"), doc.page_content, meta.get("backend"),
                                                        meta.get("generation"), sources=meta.get("sources"),
                                                        headed=meta.get("headed"))

    def add_stage(self, stage: str, scores: dict[str, float | None], kept: list[str],
                  texts: dict[str, str] | None = None, details: dict[str, dict] | None = None) -> None:
        for doc_id, score in scores.items():
            record = self.documents.setdefault(doc_id, DocumentRecord(None, (texts or {}).get(doc_id, "")))
            text = (texts or {}).get(doc_id)
            record.stages[stage] = StageScore(score, doc_id in kept, text if text != record.text else None,
                                              dict((details or {}).get(doc_id, {})))

    def mark_used(self, documents: list[Document]) -> None:
        """Note which documents reached the base LLM's prompt."""
        for doc in documents:
            self.documents[doc.metadata["id"]].used = True

    def knowledge(self) -> str:
        """The text of the documents that reached the base LLM's prompt."""
        return " ".join(record.text for record in self.documents.values() if record.used)

    def headings(self) -> list[str]:
        """The heading paths the used documents' passages stand under, as the knowledge writes them
        ("A › B" of "A › B: text"; a retrieval card's ``sources`` name them, after the passage's file)."""
        found: list[str] = []
        for record in (record for record in self.documents.values() if record.used):
            for source in record.sources or []:
                levels = source.split(SEPARATOR)  # the file, then the headings: the longest path written
                paths = (SEPARATOR.join(levels[k:]).rstrip(":") for k in range(len(levels)))
                if path := next((path for path in paths if f"{path}: " in record.text), None):
                    found.append(path)
        return list(dict.fromkeys(found))

    def headed(self) -> bool:
        """Whether a document that reached the prompt is passages under their heading paths."""
        return any(record.headed for record in self.documents.values() if record.used)

    def problems(self) -> list[str]:
        return problems(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The trace as JSON (docs/concepts.md, "The trace")."""
        documents = [{"id": doc_id, **_plain(record), "stages": {name: _plain(stage) for name, stage in
                                                                 record.stages.items()}}
                     for doc_id, record in self.documents.items()]
        return {"trace_version": TRACE_VERSION, "mode": self.mode, "question": self.question, "model": self.model,
                "answer": self.answer, "cards": [_plain(c) for c in self.cards],
                "turns": [_plain(t) for t in self.turns], "documents": documents, "prompt": self.prompt,
                "seconds": self.seconds, "errors": [_plain(e) for e in self.errors],
                "revisions": [asdict(r) for r in self.revisions]}


def problems(trace: dict) -> list[str]:
    """What went wrong on the way, in words for stderr: cards that failed, documents that were empty
    (of a trace's JSON form, as ``kcard ask`` gets it from this process or from a server)."""
    found = [f"card {error['card']} failed: {error['error']}" for error in trace["errors"]]
    written: dict[str, list[bool]] = {}
    for record in trace["documents"]:
        if record.get("card"):
            written.setdefault(record["card"], []).append(record.get("dropped") == "empty")
    found += [f"card {card} wrote {sum(empty)} empty document{'s' * (sum(empty) > 1)} of {len(empty)} "
              f"(its model stopped at once: is it trained on text like this question?)"
              for card, empty in written.items() if any(empty)]
    return found


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
        lines += [f"      from {source}" for source in doc.get("sources", [])]
    for candidate in trace.get("revisions", []):
        verdict = f"→ revised: {candidate['feedback']}" if candidate["feedback"] else "→ accepted"
        lines.append(f"  answer {candidate['round']}: {candidate['response']!r} {candidate['utility']} "
                     f"{candidate['score']} {verdict}")
    lines.append("  prompt (last 400 characters): …" + trace["prompt"][-400:].replace("\n", "\n      "))
    lines.append("  seconds: " + ", ".join(f"{k} {v}" for k, v in trace["seconds"].items()))
    return "\n".join(lines)
