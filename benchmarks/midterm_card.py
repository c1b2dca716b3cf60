"""How often the midterm cards' documents name the right winner, on MidtermQA's 505 open-book questions.

Each card writes DOCUMENTS (3) documents for every question at its manifest's temperature (0.1);
a document is right when it contains the winner's full name as MidtermQA spells it, and also names
the loser when it contains the opponent's. Compared: the trained LM card `midterm2022` (SmolLM2-135M
+ LoRA) and the retrieval card `midterm2022-news` (BM25 over the same reports), and the untrained
base model with the same prompt.

    python benchmarks/midterm_card.py [--limit N] [--backend llama-cpp|transformers]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from common import SHARED_DATA, write_result

from kcard_card_midterm2022.corpus import races
from kcard_core.plugins import load_registry

DOCUMENTS = 3  # per question


def base_model_card(card):
    """The same card without its adapter: what the base model writes from the same prompt."""
    artifacts = {role: a for role, a in card.manifest.artifacts.items() if not role.startswith("adapter-")}
    base = card.renamed("smollm2 (no adapter)")
    base.manifest = replace(base.manifest, artifacts=artifacts)
    return base


def measure(card, items, losers) -> dict:
    right = wrong_side = any_right = 0
    documents = 0
    started = time.perf_counter()
    examples = []
    for item in items:
        texts = [doc.page_content for doc in card.generate(item["question"], DOCUMENTS)]
        hits = [item["answer"] in text for text in texts]
        right += sum(hits)
        any_right += any(hits)
        wrong_side += sum(losers.get(item["answer"], "\0") in text and not hit for text, hit in zip(texts, hits))
        documents += len(texts)
        if len(examples) < 5:
            examples.append({"question": item["question"], "winner": item["answer"], "document": texts[0]})
    seconds = time.perf_counter() - started
    return {"documents": documents, "name_the_winner": round(right / documents, 4),
            "questions_with_a_right_document": round(any_right / len(items), 4),
            "name_the_loser_instead": round(wrong_side / documents, 4),
            "seconds_per_question": round(seconds / len(items), 2), "examples": examples}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--backend", default="llama-cpp")
    parser.add_argument("--base-limit", type=int, default=100, help="questions for the base model without adapter")
    args = parser.parse_args()
    items = json.loads((SHARED_DATA / "midtermqa" / "openbook.json").read_text())["testset"][: args.limit]
    losers = {race["winner"]: race["loser"] for race in races()}
    registry = load_registry(only=["kcard-card-midterm2022", "kcard-llama-cpp", "kcard-transformers"])
    backend = registry.backend(args.backend)
    lm_card = registry.card("midterm2022").with_backend(backend)
    cards = {"midterm2022 (LM card, LoRA)": lm_card, "midterm2022-news (retrieval card)": registry.card("midterm2022-news"),
             "SmolLM2-135M without the adapter": base_model_card(lm_card)}
    results = {name: measure(card, items[: args.base_limit] if "without" in name else items, losers)
               for name, card in cards.items()}
    rows = "\n".join(f"| {name} | {r['name_the_winner']:.1%} | {r['questions_with_a_right_document']:.1%} | "
                     f"{r['name_the_loser_instead']:.1%} | {r['seconds_per_question']} |" for name, r in results.items())
    report = f"""# Midterm cards: do their documents name the right winner?

MidtermQA open book, {len(items)} questions ("Who won the R in the 2022 U.S. midterm elections?"),
{DOCUMENTS} documents per question from each card (its manifest's temperature, 0.1; seed 0), backend {args.backend}.
A document counts as right when it contains the winner's full name. The base model without the
adapter is measured on the first {min(args.base_limit, len(items))} questions only (it knows none of these races).

| card | documents naming the winner | questions with ≥ 1 such document | documents naming the loser, not the winner | s / question |
|---|---|---|---|---|
{rows}

The LM card is SmolLM2-135M-Instruct with a LoRA adapter trained by `kcard train --lora` on
`kcard_card_midterm2022.corpus.training_corpus()` (every race in three news phrasings, each under a
headline naming the race; the recipe is in the card's manifest). Its prompt is the question then
"In the", the words its reports start with. It is evaluated on the races it was trained on:
this measures whether the card holds the knowledge it was given, as a knowledge card must, not
generalisation to unseen races.

Reproduce: `python benchmarks/midterm_card.py --backend {args.backend}{f' --limit {args.limit}' if args.limit else ''}`
"""
    write_result(f"midterm-card-{args.backend}", {"backend": args.backend, "questions": len(items),
                                                   "cards": results}, report)


if __name__ == "__main__":
    main()
