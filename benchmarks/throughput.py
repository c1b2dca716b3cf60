"""Throughput: bottom-up over MidtermQA questions with 3 cards, kcard's way against the naive way.

kcard's way: each model loaded once and shared (the base LLM and two cards share SmolLM2), the n1
samples of a card generated in one backend call (batched where the backend can: transformers;
llama.cpp reuses the prompt's KV cache between samples), cards fanned out concurrently.
The naive way (what the authors' code does): load the card's model for every query and generate
one sequence per call. Same models, prompts, selectors and seeds in both.
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
from kcard_core.plugins import load_registry

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
                    getattr(getattr(loaded, "llama", None), "close", lambda: None)()
            cache.clear()
            seed = None if sampling.seed is None else sampling.seed + index
            texts += super().write(query, 1, replace(sampling, seed=seed))
        return texts


def timed(questions, cards, backend) -> dict:
    registry = load_registry()
    registry.cards = cards
    chain = build_chain("bottom-up", registry=registry, backend=backend, cache=False, settings={})
    started, card_seconds = time.perf_counter(), []
    for question in questions:  # one card at a time: the naive way is sequential
        card_seconds.append(chain.invoke(question, config={"max_concurrency": 1})["trace"].seconds["cards"])
    total = time.perf_counter() - started
    return {"seconds_total": round(total, 1), "seconds_per_question": round(total / len(questions), 2),
            "card_seconds_per_question": round(sum(card_seconds) / len(questions), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--backend", default="llama-cpp", choices=sorted(MODEL_CACHES))
    args = parser.parse_args()
    questions = midterm_questions(args.questions)
    cards = three_cards(load_registry())
    naive_cards = {name: NaiveCard(card.manifest) for name, card in cards.items()}
    build_chain("bottom-up", registry=load_registry(), backend=args.backend, settings={}).invoke(questions[0])  # warm-up
    fast = timed(questions, cards, args.backend)
    naive = timed(questions, naive_cards, args.backend)
    speedup = naive["seconds_total"] / fast["seconds_total"]
    card_speedup = naive["card_seconds_per_question"] / fast["card_seconds_per_question"]
    report = f"""# Throughput: kcard vs the naive way ({args.backend})

{len(questions)} MidtermQA open-book questions, bottom-up, 3 cards (`general`: Gemma 3 270M base;
`textbook` and `encyclopedia`: SmolLM2-135M-Instruct), n1 = 3, 64 new tokens per document,
selectors MiniLM, base LLM SmolLM2-135M-Instruct, backend `{args.backend}`, 2 CPU cores.

| | seconds / question | card phase / question |
|---|---|---|
| naive (reload per query, one sequence per call) | {naive['seconds_per_question']} | {naive['card_seconds_per_question']} |
| kcard (load once, n1 per call, fan-out) | {fast['seconds_per_question']} | {fast['card_seconds_per_question']} |
| speed-up | **{speedup:.2f}×** | {card_speedup:.2f}× |

Goal: ≥ 3×: {"met" if speedup >= 3 else "missed"}.
Reproduce: `.venv/bin/python benchmarks/throughput.py --questions {len(questions)} --backend {args.backend}`
"""
    write_result(f"throughput-{args.backend}", {"questions": len(questions), "backend": args.backend,
                                                  "kcard": fast, "naive": naive, "speedup": round(speedup, 2),
                                                  "card_phase_speedup": round(card_speedup, 2)}, report)


if __name__ == "__main__":
    main()
