"""The midterm LM card on its own, behind two base LLMs: what reaches the answer of what it knows.

`benchmarks/midterm_card.py` shows the card's documents name the winner; this measures the answers
when only that card feeds bottom-up (selectors on, kcard's default n1; the recorded run had
n1 = 3), against the same base LLM alone, on the first --limit questions of each MidtermQA
setting. Base LLMs: SmolLM2-135M-Instruct (kcard's default) and Gemma 3 270M (base). Card
documents are not cached, so timings include writing them.

    python benchmarks/midterm_card_alone.py [--limit 30]
"""

from __future__ import annotations

import argparse

from common import write_result

from kcard_core.evaluation.datasets import load_dataset
from kcard_core.evaluation.run import chain_for, evaluate

MODELS = ("smollm2-135m-instruct", "gemma-3-270m")
DATASETS = ("midterm-openbook", "midterm-2way", "midterm-4way")
METHODS = {"base LLM alone": ("vanilla", None), "midterm2022 card, bottom-up": ("bottom-up", ["midterm2022"])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=30)
    args = parser.parse_args()
    results, rows = {}, []
    datasets = {name: load_dataset(name) for name in DATASETS}
    for model in MODELS:
        for label, (method, cards) in METHODS.items():
            cells = []
            for name, dataset in datasets.items():
                chain = chain_for(method, dataset, cards=cards, model=model, cache=False)
                result = evaluate(dataset, chain, method, limit=args.limit, progress=False)
                results[f"{model} / {label} / {name}"] = result
                metrics = result["metrics"]
                cells.append(f"{metrics.get('em', metrics.get('accuracy'))} ({result['seconds']['per_question']} s)")
                print(model, label, name, metrics, flush=True)
            rows.append(f"| {model} | {label} | " + " | ".join(cells) + " |")
    report = f"""# The midterm LM card on its own

First {args.limit} questions of each MidtermQA setting; only the `midterm2022` card (SmolLM2-135M +
LoRA, llama.cpp) feeds bottom-up (relevance, pruning, factuality selectors; one document: the card
sets no [generation] n), against the same base LLM with no knowledge (the data set's 5 demos). Cells: open-book EM / choice accuracy
(wall seconds per question, 2 CPU cores, card documents written afresh).

| base LLM | knowledge | open-book EM | 2-way acc. | 4-way acc. |
|---|---|---|---|---|
{chr(10).join(rows)}

The card's documents name the winner in 93% of cases (`midterm-card-llama-cpp.md`); what is lost
between them and the answer is the base LLM's reading. SmolLM2-135M-Instruct, given "X defeated Y",
answers Y (the last name it read) more often than X; Gemma 3 270M reads it right. On multiple
choice both models tend to answer with the first option's letter whatever the knowledge says.

Reproduce: `python benchmarks/midterm_card_alone.py --limit {args.limit}`
"""
    write_result("midterm-card-alone", {"limit": args.limit, "results": results}, report)


if __name__ == "__main__":
    main()
