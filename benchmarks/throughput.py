"""Throughput: bottom-up over MidtermQA questions with 3 cards, kcard's way against the naive way.

kcard's way: each model loaded once and shared (two cards share SmolLM2), the questions asked as one
``batch()``: the n1 samples of every card for every question are decoded together, as parallel
sequences of shared batches (llama.cpp's multi-sequence API; transformers batches the samples).
The naive way (what the authors' code does): load the card's model for every query and generate
one sequence per call, one question after another. Same models, prompts, selectors and seeds.
Run: .venv/bin/python benchmarks/throughput.py [--questions 50] [--backend llama-cpp]
"""

from __future__ import annotations

import argparse
import importlib
import time
from dataclasses import replace

from common import midterm_questions, write_result
from kcard_core.cards import Card
from kcard_core.chains import build_chain
from kcard_core.models import DEFAULT_MODEL
from kcard_core.plugins import load_registry

N1 = 3  # samples per LM card (the setting)
# where each backend keeps its loaded models (emptied to force the naive reload)
MODEL_CACHES = {"llama-cpp": ("kcard_llama_cpp.backend", "_models"),
                "transformers": ("kcard_transformers.backend", "_models")}


def three_cards(registry):
    textbook = registry.card("textbook")
    encyclopedia = Card(replace(textbook.manifest, name="encyclopedia",
                                prompt="Write one short encyclopedia entry that helps answer this question: {query}"))
    return {"general": registry.card("general"), "textbook": textbook, "encyclopedia": encyclopedia}


class NaiveCard(Card):
    """Reloads its model for every query and asks for one sequence per call."""

    def write(self, query, n, sampling):
        module, attribute = MODEL_CACHES[self.backend.name]
        texts = []
        for index in range(n):
            cache = getattr(importlib.import_module(module), attribute)
            for loaded in list(cache.values()):
                with loaded.lock:  # never free a model another thread is using
                    getattr(loaded, "close", lambda: None)()
            cache.clear()
            seed = None if sampling.seed is None else sampling.seed + index
            texts += super().write(query, 1, replace(sampling, seed=seed))
        return texts


def timed(questions, cards, backend, together: bool) -> dict:
    registry = load_registry()
    registry.cards = cards
    chain = build_chain("bottom-up", registry=registry, backend=backend, cache=False, settings={}, n1=N1)
    started = time.perf_counter()
    if together:
        chain.batch(questions, config={"max_concurrency": len(questions)})
    else:
        for question in questions:
            chain.invoke(question, config={"max_concurrency": 1})
    total = time.perf_counter() - started
    return {"seconds_total": round(total, 1), "seconds_per_question": round(total / len(questions), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--backend", default="llama-cpp", choices=sorted(MODEL_CACHES))
    args = parser.parse_args()
    questions = midterm_questions(args.questions)
    cards = three_cards(load_registry())
    naive_cards = {name: NaiveCard(card.manifest) for name, card in cards.items()}
    build_chain("bottom-up", registry=load_registry(), backend=args.backend, settings={}).invoke(questions[0])  # warm-up
    fast = timed(questions, cards, args.backend, together=True)
    naive = timed(questions, naive_cards, args.backend, together=False)
    speedup = naive["seconds_total"] / fast["seconds_total"]
    report = f"""# Throughput: kcard vs the naive way ({args.backend})

{len(questions)} MidtermQA open-book questions, bottom-up, 3 cards (`general`: Gemma 3 270M base;
`textbook` and `encyclopedia`: SmolLM2-135M-Instruct), n1 = {N1}, 64 new tokens per document,
the default selectors, base LLM {DEFAULT_MODEL}, backend `{args.backend}`, 2 CPU cores, no generation cache.

| | seconds / question |
|---|---|
| naive (reload per query, one sequence per call, one question at a time) | {naive['seconds_per_question']} |
| kcard (`chain.batch(questions)`: models loaded once, all samples decoded together) | {fast['seconds_per_question']} |
| speed-up | **{speedup:.2f}×** |

Goal: ≥ 3×: {"met" if speedup >= 3 else "missed"}.
Reproduce: `.venv/bin/python benchmarks/throughput.py --questions {len(questions)} --backend {args.backend}`
"""
    write_result(f"throughput-{args.backend}", {"questions": len(questions), "backend": args.backend,
                                                  "n1": N1, "kcard": fast, "naive": naive,
                                                  "speedup": round(speedup, 2)}, report)


if __name__ == "__main__":
    main()
