"""Scale-out: three cards behind 1 vs 3 llama.cpp servers, fanned out concurrently by bottom-up.

Each card runs SmolLM2-135M-Instruct behind llama_cpp.server (OpenAI-compatible); the base LLM and
selectors run locally. With one server, its requests queue; with three, they run at once.
Run: .venv/bin/python benchmarks/scale_out.py [--questions 10]
"""

from __future__ import annotations

import argparse
import contextlib
import time
from dataclasses import replace

from common import midterm_questions, write_result
from kcard_core.cards import Card
from kcard_core.chains import build_chain
from kcard_core.models import resolve_model
from kcard_core.plugins import load_registry
from kcard_core.testing import LlamaServer

PROMPTS = {
    "textbook": "Write one short factual paragraph, like a school textbook, that helps answer this question: {query}",
    "news": "Write one short news report with the facts needed to answer this question: {query}",
    "encyclopedia": "Write one short encyclopedia entry that helps answer this question: {query}",
}


def run(questions: list[str], urls: list[str], threads: int) -> dict:
    registry = load_registry()
    template = registry.card("textbook").manifest
    registry.cards = {name: Card(replace(template, name=name, prompt=prompt)) for name, prompt in PROMPTS.items()}
    settings = {"cards": {name: {"backend": "openai", "base_url": urls[i % len(urls)], "timeout": 300}
                          for i, name in enumerate(PROMPTS)}}
    chain = build_chain("bottom-up", registry=registry, settings=settings, cache=False)
    chain.invoke(questions[0])  # warm-up: load the local base LLM and the encoder
    started = time.perf_counter()
    card_seconds = []
    for question in questions:
        trace = chain.invoke(question, config={"max_concurrency": len(PROMPTS)})["trace"]
        card_seconds.append(trace.seconds["cards"])
    total = time.perf_counter() - started
    return {"servers": len(urls), "threads_per_server": threads, "seconds_total": round(total, 2),
            "seconds_per_question": round(total / len(questions), 2),
            "card_seconds_per_question": round(sum(card_seconds) / len(card_seconds), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10)
    questions = midterm_questions(parser.parse_args().questions)
    model = resolve_model("smollm2-135m-instruct")[1]
    runs = []
    for servers, threads in ((1, 2), (3, 1)):
        with contextlib.ExitStack() as stack:
            urls = [stack.enter_context(LlamaServer(model, "--n_threads", str(threads), logits_all=False)).url
                    for _ in range(servers)]
            runs.append(run(questions, urls, threads))
            print(runs[-1], flush=True)
    one = runs[0]["card_seconds_per_question"]
    rows = "\n".join(f"| {r['servers']} | {r['threads_per_server']} | {r['card_seconds_per_question']} | "
                     f"{one / r['card_seconds_per_question']:.2f}× | {r['seconds_per_question']} |" for r in runs)
    report = f"""# Scale-out: 1 vs 3 llama.cpp servers

{len(questions)} MidtermQA questions, bottom-up, 3 cards (SmolLM2-135M-Instruct Q4_1, n1 = 3, 64 tokens)
each behind its own `llama_cpp.server`, fanned out with `max_concurrency=3`; base LLM and
selectors local. Machine: 2 CPU cores, all servers on it.

| servers | threads each | card seconds / question | speed-up | total seconds / question |
|---|---|---|---|---|
{rows}

All servers share this machine's 2 cores. Reproduce: `.venv/bin/python benchmarks/scale_out.py`
"""
    write_result("scale_out", {"questions": len(questions), "runs": runs}, report)


if __name__ == "__main__":
    main()
