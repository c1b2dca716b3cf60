"""Does sampling several documents from a card built from your own text help? Inference-time variants
on the LM cards that `own_card.py --keep DIR` built (nothing is trained again).

Each variant sets the chain's n1 (documents the card samples), the card's sampling temperature and
the chain's seed; the questions are asked with the card alone (`--card NAME`, bottom-up), so the
relevance selector ranks the samples by closeness to the question and factuality keeps the one the
card's own text (its evidence artifact) supports best. kcard's defaults are n1 = 1 at the card's
temperature 0.1.

    python benchmarks/own_card.py --kind lm --dry --keep /tmp/owncards   # builds the cards
    python benchmarks/own_card_sampling.py /tmp/owncards
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from common import write_result
from own_card import CORPORA, kept_lm_card, questions

from kcard_core.chains import build_chain
from kcard_core.evaluation.metrics import contains_answer
from kcard_core.models import DEFAULT_MODEL
from kcard_core.plugins import get_registry

CARDS = "own_card.py --kind lm --keep DIR: kcard train at its defaults (seed 0), one per corpus"
VARIANTS = [(1, 0.1, 0), (1, 0.7, 0), (1, 0.7, 1)] + [(n1, 0.7, seed) for n1 in (3, 5) for seed in (0, 1, 2)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cards", type=Path, help="the --keep folder of own_card.py")
    args = parser.parse_args()
    registry, rows = get_registry(), []
    for corpus in CORPORA:
        card = kept_lm_card(args.cards, corpus)
        for n1, temperature, seed in VARIANTS:
            generation = replace(card.manifest.generation, temperature=temperature)
            registry.cards[corpus] = card.__class__(replace(card.manifest, generation=generation), card.backend)
            chain = build_chain("bottom-up", cards=[corpus], registry=registry, n1=n1, seed=seed, cache=False)
            missed, started = [], time.perf_counter()
            for item in questions(corpus):
                answer = chain.invoke(item["question"])["answer"]
                if not contains_answer(answer, [item["answer"]]):
                    missed.append({"question": item["question"], "answer": answer})
            rows.append({"corpus": corpus, "n1": n1, "temperature": temperature, "seed": seed,
                         "right_with_card": 20 - len(missed), "missed": missed,
                         "seconds_per_question": round((time.perf_counter() - started) / 20, 2)})
            print(rows[-1], flush=True)
    write_result("own-card-sampling", {"base_llm": DEFAULT_MODEL, "cards": CARDS, "rows": rows}, report(rows))


def report(rows: list[dict]) -> str:
    header = "| n1 | temperature | seed | " + " | ".join(CORPORA) + " | sum | seconds per question |"
    lines = [header, "|---" * (len(CORPORA) + 5) + "|"]
    for n1, temperature, seed in VARIANTS:
        found = [r for r in rows if (r["n1"], r["temperature"], r["seed"]) == (n1, temperature, seed)]
        counts = [str(r["right_with_card"]) for r in found]
        seconds = sum(r["seconds_per_question"] for r in found) / len(found)
        lines.append(f"| {n1} | {temperature} | {seed} | {' | '.join(counts)} "
                     f"| {sum(r['right_with_card'] for r in found)} | {seconds:.2f} |")
    return f"""# Several documents from a card built from your own text

The LM cards of `own-card.md` (`kcard train` defaults, seed 0), each asked its corpus's 20 questions
alone (`--card NAME`, bottom-up): right of 20 when the card samples n1 documents at a temperature
and the selectors keep the one its own text supports best (the closest to the question on a tie).
kcard's defaults: n1 = 1, temperature 0.1. 2 CPU cores, one process at a time. Sampling alone
(n1 = 1 at 0.7) loses 5 to 7; choosing among 3 or 5 samples wins back what it loses and no more.

{chr(10).join(lines)}

Rows: `own-card-sampling.json` (each wrong answer).
Reproduce: `python benchmarks/own_card.py --kind lm --dry --keep DIR`, then
`python benchmarks/own_card_sampling.py DIR`.
"""


if __name__ == "__main__":
    main()
