"""P1, kcard's overhead: bottom-up's wall time against the time its model calls spend generating.

Bottom-up at the defaults (every first-party card, no generation cache, so every LM card writes),
models warm (one question first), over --questions MidtermQA held-out questions. Every llama.cpp
generation (the cards' documents and the base LLM's answer) is timed while it holds the backend's
compute lock (cards write concurrently, so time spent waiting for the lock is not generation); the rest of the wall time is kcard's: prompts, retrieval cards, selectors, runs, the trace.
Run alone.

    .venv/bin/python benchmarks/overhead.py
"""

from __future__ import annotations

import argparse
import time

from common import write_result

from kcard_core.chains import build_chain
from kcard_core.evaluation.datasets import load_dataset
from kcard_llama_cpp import backend as llama_backend

GOAL = 1.10  # wall time / generation time (issue 20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    generating = [0.0]

    class TimedLock:
        """llama.cpp's one compute lock, timing how long a model holds it: the generation itself,
        without the time a card's thread waits for another's."""

        def __init__(self, lock):
            self.lock = lock

        def __enter__(self):
            self.lock.acquire()
            self.started = time.perf_counter()

        def __exit__(self, *exc):
            generating[0] += time.perf_counter() - self.started
            self.lock.release()

    llama_backend.COMPUTE_LOCK = TimedLock(llama_backend.COMPUTE_LOCK)  # before any model loads
    chain = build_chain("bottom-up", cache=False)
    questions = [e.question for e in load_dataset("midterm-openbook").examples[100:101 + args.questions]]
    chain.invoke(questions[0])  # models load
    generating[0], wall, stages = 0.0, 0.0, {}
    for question in questions[1:]:
        started = time.perf_counter()
        trace = chain.invoke(question)["trace"]
        wall += time.perf_counter() - started
        for stage, seconds in trace.seconds.items():
            stages[stage] = stages.get(stage, 0.0) + seconds
    ratio = wall / generating[0]
    n = len(questions) - 1
    row = {"questions": n, "wall_seconds_per_question": round(wall / n, 3),
           "generation_seconds_per_question": round(generating[0] / n, 3),
           "overhead_seconds_per_question": round((wall - generating[0]) / n, 3), "ratio": round(ratio, 3),
           "stages_per_question": {k: round(v / n, 3) for k, v in stages.items()}}
    markdown = f"""# P1: kcard's overhead over generation

Bottom-up at the defaults (every first-party card, `--no-cache`: every LM card writes), models warm,
{n} MidtermQA held-out questions on 2 CPU cores; generation = the time llama.cpp models hold the
backend's compute lock (the cards' documents and the base LLM's answer), the rest is kcard's own work
(prompts, retrieval cards, selectors, LangChain runs, the trace).

| per question | seconds |
|---|---|
| wall | {row['wall_seconds_per_question']} |
| generation | {row['generation_seconds_per_question']} |
| everything else | {row['overhead_seconds_per_question']} |

Wall / generation = **{row['ratio']}** (goal ≤ {GOAL}: {'met' if ratio <= GOAL else 'missed'}). Stages per question
(from the trace): {', '.join(f'{k} {v}' for k, v in row['stages_per_question'].items())}.

Reproduce: `.venv/bin/python benchmarks/overhead.py`
"""
    write_result("overhead", {"goal": GOAL, **row}, markdown)


if __name__ == "__main__":
    main()
