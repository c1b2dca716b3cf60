"""Does sampling several documents from a card built from your own text help? Inference-time variants
on the LM cards that `own_card.py --keep DIR` built (nothing is trained again).

Each variant sets the chain's n1 (documents the card samples), the card's sampling temperature and
the chain's seed; the questions are asked with the card alone (`--card NAME`, bottom-up), so the
relevance selector ranks the samples by closeness to the question and factuality keeps the one the
card's own text (its evidence artifact) supports best. What `kcard train` writes into a memorised
card's manifest (6 samples at 1.0) was chosen here.

    python benchmarks/own_card.py --kind lm --dry --keep /tmp/owncards   # builds the cards
    python benchmarks/own_card_sampling.py /tmp/owncards
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from common import HERE, write_result
from own_card import TUNING, kept_lm_card, questions

from kcard_core.chains import build_chain
from kcard_core.evaluation.metrics import contains_answer
from kcard_core.models import DEFAULT_MODEL
from kcard_core.plugins import get_registry

CARDS = "own_card.py --kind lm --keep DIR: kcard train at its defaults (seed 0), one per corpus"
# (n1, temperature, seed, the card's evidence artifact kept)
VARIANTS = ([(1, 0.1, 0, True)] + [(6, temperature, seed, True) for temperature in (1.0, 0.7) for seed in (0, 1, 2)]
            + [(10, 1.0, 0, True), (6, 1.0, 0, False), (6, 0.7, 0, False)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cards", type=Path, help="the --keep folder of own_card.py")
    parser.add_argument("--add", action="store_true", help="keep the stored rows (asked of the same cards) and ask "
                                                            "only the variants they lack")
    args = parser.parse_args()
    path = HERE / "results" / "own-card-sampling.json"
    rows = json.loads(path.read_text())["rows"] if args.add else []
    registry, done = get_registry(), {key(row) for row in rows}
    for corpus in TUNING:
        card = kept_lm_card(args.cards, corpus)
        for n1, temperature, seed, evidence in VARIANTS:
            if (corpus, n1, temperature, seed, evidence) in done:
                continue
            generation = replace(card.manifest.generation, temperature=temperature)
            artifacts = {role: a for role, a in card.manifest.artifacts.items() if evidence or role != "evidence"}
            manifest = replace(card.manifest, generation=generation, artifacts=artifacts)
            registry.cards[corpus] = card.__class__(manifest, card.backend)
            chain = build_chain("bottom-up", cards=[corpus], registry=registry, n1=n1, seed=seed, cache=False)
            missed, started = [], time.perf_counter()
            for item in questions(corpus):
                answer = chain.invoke(item["question"])["answer"]
                if not contains_answer(answer, [item["answer"]]):
                    missed.append({"question": item["question"], "answer": answer})
            rows.append({"corpus": corpus, "n1": n1, "temperature": temperature, "seed": seed, "evidence": evidence,
                         "right_with_card": 20 - len(missed), "missed": missed,
                         "seconds_per_question": round((time.perf_counter() - started) / 20, 2)})
            print(rows[-1], flush=True)
    rows.sort(key=lambda r: (TUNING.index(r["corpus"]), VARIANTS.index(key(r)[1:])))
    write_result("own-card-sampling", {"base_llm": DEFAULT_MODEL, "cards": CARDS, "rows": rows}, report(rows))


def key(row: dict) -> tuple:
    return row["corpus"], row["n1"], row["temperature"], row["seed"], row["evidence"]


def report(rows: list[dict]) -> str:
    header = "| n1 | temperature | seed | evidence | " + " | ".join(TUNING) + " | sum | seconds per question |"
    lines = [header, "|---" * (len(TUNING) + 6) + "|"]
    for n1, temperature, seed, evidence in VARIANTS:
        found = [r for r in rows if key(r)[1:] == (n1, temperature, seed, evidence)]
        counts = [str(r["right_with_card"]) for r in found]
        seconds = sum(r["seconds_per_question"] for r in found) / len(found)
        lines.append(f"| {n1} | {temperature} | {seed} | {'kept' if evidence else 'removed'} | {' | '.join(counts)} "
                     f"| {sum(r['right_with_card'] for r in found)} | {seconds:.2f} |")
    return f"""# Several documents from a card built from your own text

The LM cards of `own-card.md` (`kcard train` at its defaults, seed 0; kept with `own_card.py --keep`),
each asked its text's 20 questions alone (`--card NAME`, bottom-up): right of 20 when the card
samples n1 documents at a temperature and the selectors keep one (relevance: the 5 closest to the
question; factuality: the one the card's own text, its evidence artifact, supports best, near-ties
to the closest). "removed": the card's evidence artifact left out, as for a text kept private.
Base LLM {DEFAULT_MODEL}; 2 CPU cores, one process at a time; no cache.

Such a card often writes a neighbouring passage of its text for a question ("In which year was the
Tollmere Canal opened?" → "Traffic ended in 1962, …"); among six samples the right one is there more
often than not. Six at 1.0 is `kcard train`'s default since 2026-11-25 (written into the card's
`[generation]`): 166 to 167 of 200 over three seeds, against 144 for one sample at 0.1 (kcard's
earlier default). At 0.7 the development text does better (17-19 against 16-17) and the others
worse; ten samples add nothing; without the evidence the selectors have only closeness to the
question to go by (158 and 154). None of these texts is held out from the choice: penmarrow is
(`own-card.md`).

{chr(10).join(lines)}

Rows: `own-card-sampling.json` (each wrong answer).
Reproduce: `python benchmarks/own_card.py --kind lm --dry --keep DIR`, then
`python benchmarks/own_card_sampling.py DIR` (`--add` asks only the variants the stored rows lack).
"""


if __name__ == "__main__":
    main()
