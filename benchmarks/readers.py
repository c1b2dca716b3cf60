"""Readers side by side: each installed reader answers the same prepared prompts.

The knowledge is gathered once per question and kept (so every reader reads the same prompt):

- real-docs: the real documents of real_docs.py, a retrieval card each at kcard's defaults,
  bottom-up with `--card` (tuning and held out, as real_docs/sources.py splits them);
- own-card: the eighteen short texts of own_card.py, a retrieval card each, bottom-up with `--card`;
- own-card-lm: the same texts' LM cards, as `own_card.py --kind lm --keep DIR` trained them;
- midtermqa: the held-out open-book questions as knowledge_lift_heldout.py stored them, bottom-up
  and top-down-auto (run that first; its --work folder is read).

Rows: dataset, split, llm (the base LLM), chat (it was given chat messages), reader, questions,
em (exact match, %), contains (a gold answer in the answer, %), copied_sentences (answers of more
than eight words found word for word in the knowledge, where every gold answer has at most eight),
seconds_per_question (the reader alone).

    python benchmarks/own_card.py --kind lm --keep cards/   # trains the LM cards own-card-lm reads
    python benchmarks/readers.py --lm-cards cards/     # every reader, every data set (own-card-lm: with --lm-cards)
    python benchmarks/readers.py --reader plain --dataset real-docs
    python -m llama_cpp.server --model GGUF --port 8765 --n_ctx 4096 &    # a chat model as the base LLM
    python benchmarks/readers.py --chat http://127.0.0.1:8765/v1 --llm-name NAME --dataset real-docs
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from common import HERE, table, write_result

from kcard_core import text
from kcard_core.chains import build_chain
from kcard_core.config import cache_dir
from kcard_core.evaluation.metrics import contains_answer, exact_match
from kcard_core.models import DEFAULT_MODEL
from kcard_core.plugins import get_registry
from kcard_core.readers import ANSWER_TOKENS
from kcard_core.trace import DocumentRecord, Trace

sys.path.insert(0, str(HERE / "real_docs"))
sys.path.insert(0, str(HERE))
from sources import SOURCES, extract  # noqa: E402

STORED = cache_dir() / "benchmarks" / "knowledge-lift-heldout" / "held-out" / "midterm-openbook"


def real_docs() -> list[dict]:
    """Each real document's questions with the knowledge its card gives (bottom-up, `--card`)."""
    import real_docs as benchmark

    items = []
    for document, source in SOURCES.items():
        with tempfile.TemporaryDirectory() as work:
            file = extract(document, Path(work) / "docs")
            card, _ = benchmark.build(document, file, Path(work), "auto")
            registry = get_registry()
            registry.cards[card.name] = card
            chain = build_chain("bottom-up", registry=registry, cards=[card.name], reader="plain")
            for item in benchmark.questions(document):
                trace = Trace(mode="bottom-up", question=item["question"])
                trace.prompt = chain.prepare(item["question"], trace, None)
                items.append({"dataset": "real-docs", "split": source[2], "question": item["question"],
                              "gold": item["answers"], "trace": trace.to_dict()})
            registry.cards.pop(card.name)
    return items


def own_card(lm_cards: Path | None = None) -> list[dict]:
    """Each own-card text's questions with the knowledge its retrieval card gives (bottom-up, `--card`);
    with ``lm_cards`` (a folder `own_card.py --kind lm --keep` trained into), its LM card's instead."""
    import own_card as benchmark

    items = []
    for corpus in benchmark.CORPORA:
        with tempfile.TemporaryDirectory() as work:
            card = (benchmark.kept_lm_card(lm_cards, corpus) if lm_cards
                    else benchmark.build(corpus, "retrieval", Path(work), [])[0])
            registry = get_registry()
            registry.cards[corpus] = card
            chain = build_chain("bottom-up", registry=registry, cards=[corpus], reader="plain")
            for item in benchmark.questions(corpus):
                trace = Trace(mode="bottom-up", question=item["question"])
                trace.prompt = chain.prepare(item["question"], trace, None)
                split = "held-out" if corpus in benchmark.HELD_OUT else "tuning"
                items.append({"dataset": "own-card-lm" if lm_cards else "own-card", "split": split,
                              "question": item["question"], "gold": [item["answer"]], "trace": trace.to_dict()})
            registry.cards.pop(corpus)
    return items


def midtermqa() -> list[dict]:
    """The stored held-out open-book questions, bottom-up and top-down-auto."""
    items = []
    for mode in ("bottom-up", "top-down-auto"):
        for line in (STORED / mode / "defaults" / "predictions.jsonl").open():
            stored = json.loads(line)
            items.append({"dataset": f"midtermqa-{mode}", "split": "held-out", "question": stored["question"],
                          "gold": stored["answers"], "trace": stored["trace"]})
    return items


def trace_of(record: dict) -> Trace:
    trace = Trace(mode=record["mode"], question=record["question"], prompt=record["prompt"])
    for doc in record["documents"]:
        trace.documents[doc["id"]] = DocumentRecord(doc.get("card"), doc["text"], used=doc.get("used", False),
                                                    sources=doc.get("sources"), headed=doc.get("headed"))
    return trace


def copied(answer: str, gold: list[str], knowledge: str) -> bool:
    """A sentence copied where a span was asked for."""
    return all(len(g.split()) <= text.COPIED_WORDS for g in gold) and text.copied(answer, knowledge)


def run(reader: str, items: list[dict], chat: str | None = None, llm_name: str = DEFAULT_MODEL,
        answers: Path | None = None) -> list[dict]:
    """Each item answered by ``reader``: the base LLM at the defaults, or a chat model served at ``chat``
    (an OpenAI-compatible URL), named ``llm_name`` in the rows; with ``answers``, each answer and its
    trace's turns appended there as a JSON line."""
    llm = None
    if chat:
        from langchain_openai import ChatOpenAI

        llm = ChatOpenAI(base_url=chat, api_key="none", model=llm_name, temperature=0, max_tokens=ANSWER_TOKENS)
    chain = build_chain("bottom-up", cards=["general"], reader=reader, llm=llm)
    rows = {}
    for item in items:
        trace = trace_of(item["trace"])
        started = time.perf_counter()
        answer = chain.answer(item["question"], trace, None)
        seconds = time.perf_counter() - started
        if answers:
            with answers.open("a") as out:
                out.write(json.dumps({"dataset": item["dataset"], "split": item["split"], "reader": reader,
                                      "question": item["question"], "gold": item["gold"], "answer": answer,
                                      "turns": trace.to_dict()["turns"]}) + "\n")
        row = rows.setdefault((item["dataset"], item["split"]), {
            "dataset": item["dataset"], "split": item["split"], "reader": reader, "llm": llm_name,
            "chat": bool(chat), "questions": 0, "em": 0.0,
            "contains": 0.0, "copied_sentences": 0, "seconds_per_question": 0.0})
        row["questions"] += 1
        row["em"] += exact_match(answer, item["gold"])
        row["contains"] += contains_answer(answer, item["gold"]) > 0
        row["copied_sentences"] += copied(answer, item["gold"], trace.knowledge())
        row["seconds_per_question"] += seconds
    for row in rows.values():
        n = row["questions"]
        row.update(em=round(100 * row["em"] / n, 1), contains=round(100 * row["contains"] / n, 1),
                   seconds_per_question=round(row["seconds_per_question"] / n, 2))
    return list(rows.values())


def report(rows: list[dict]) -> str:
    lines = table(["data", "split", "base LLM", "reader", "questions", "EM", "contains", "copied sentences",
                   "s / question"],
                  [[r["dataset"], r["split"], r.get("llm", DEFAULT_MODEL) + (" (chat)" if r.get("chat") else ""),
                    r["reader"], r["questions"], r["em"], r["contains"], r["copied_sentences"],
                    r["seconds_per_question"]] for r in rows])
    return f"""# Readers side by side

Every installed reader answers the same prepared prompts (greedy, 2 CPU cores): the real
documents' and the eighteen own-card texts' questions with their retrieval card's knowledge
(bottom-up, `--card`; `own-card-lm`: with their LM card's, trained by `kcard train` at its
defaults), and MidtermQA's held-out open-book questions with the knowledge stored by
knowledge_lift_heldout.py. The base LLM is Gemma 3 270M on llama.cpp (the default, given the
completion prompt) unless the row names a chat model, served by llama-cpp-python's server and given
chat messages through `ChatOpenAI`. EM and contains in %; copied sentences: answers holding more
than eight words in a row of the knowledge where the gold is a short span.

Which code each row read. At the current code (2026-12-07, sessions 56 and 57, on a 2-core host
whose CPU has AVX2 alone, so its seconds are about twice the others'): the `rules` rows of the real
documents (twenty-nine documents as `real-docs.md` splits them, eighteen tuning and eleven held out;
session 57's change can read only the 25 and 15 prompts whose answer did not stand in the knowledge
differently, and those were read again) and of the own-card texts (prose, which it does not touch).
Before later reading changes: the `rules` MidtermQA rows (2026-12-05; the changes since touch
answers of more than eight words and documents' heading paths, and MidtermQA's right answers are
short names read from prose; `knowledge-lift-heldout.md` read MidtermQA whole again at session 56's
code: 92.8 EM in both modes), the `plain` rows (2026-12-05), the `span` rows (2026-12-06;
its MidtermQA rows 2026-12-05, its real-document held-out rows 2026-12-07, session 52, ten documents)
and the `own-card-lm` rows (2026-12-06, with the LM cards `own_card.py --kind lm --keep` trained that
day). Copied sentences: the rows read at the current code count every answer holding more than
eight words in a row of the knowledge; the older rows counted only answers standing in the
knowledge whole, so they may count fewer.
How each reading change moved these prompts: docs/decisions.md.

{lines}

Rows: `readers.json`. Reproduce: `python benchmarks/readers.py --lm-cards DIR` (after
`python benchmarks/knowledge_lift_heldout.py` and `python benchmarks/own_card.py --kind lm --keep DIR`);
a chat model's rows: `python benchmarks/readers.py --chat URL --llm-name NAME --dataset real-docs`.
"""


def key(row: dict) -> tuple:
    return row["dataset"], row["split"], row.get("llm", DEFAULT_MODEL), row.get("chat", False), row["reader"]


DATASETS = {"real-docs": lambda args: real_docs(), "own-card": lambda args: own_card(),
            "own-card-lm": lambda args: own_card(args.lm_cards), "midtermqa": lambda args: midtermqa()}
RESULT = HERE / "results" / "readers.json"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reader", action="append", help="default: every installed reader")
    parser.add_argument("--dataset", action="append", choices=list(DATASETS))
    parser.add_argument("--chat", metavar="URL", help="the base LLM: a chat model at this OpenAI-compatible URL "
                                                      "(python -m llama_cpp.server --model GGUF)")
    parser.add_argument("--llm-name", default=DEFAULT_MODEL, help="the base LLM's name in the rows")
    parser.add_argument("--split", help="only this split's questions")
    parser.add_argument("--answers", type=Path, help="append each answer and its trace's turns to this JSONL file")
    parser.add_argument("--lm-cards", type=Path, help="own-card-lm: the folder `own_card.py --kind lm --keep` "
                                                      "trained the LM cards into")
    args = parser.parse_args()
    chosen = args.dataset or [name for name in DATASETS if name != "own-card-lm" or args.lm_cards]
    if "own-card-lm" in chosen and not args.lm_cards:
        parser.error("own-card-lm reads the LM cards of `own_card.py --kind lm --keep DIR`: give --lm-cards DIR")
    items = [item for name in chosen for item in DATASETS[name](args)
             if args.split in (None, item["split"])]
    rows = json.loads(RESULT.read_text())["rows"] if RESULT.exists() else []
    for reader in args.reader or sorted(get_registry().readers):
        found = run(reader, items, args.chat, args.llm_name, args.answers)
        rows = [r for r in rows if key(r) not in {key(f) for f in found}] + found
        print(json.dumps(found), flush=True)
    rows.sort(key=key)
    write_result("readers", {"rows": rows}, report(rows))


if __name__ == "__main__":
    main()
