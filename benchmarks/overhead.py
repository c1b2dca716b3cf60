"""P1, kcard's overhead: bottom-up's wall time against the time its model calls spend generating,
and the cards stage against the ideal time of the tokens it decodes.

Bottom-up at the defaults (every first-party card, no generation cache, so every LM card writes),
models warm (one question first), over --questions MidtermQA held-out questions. Every llama.cpp
generation (the cards' documents and the base LLM's answer) is timed while it holds the backend's
compute lock (cards write concurrently, so time spent waiting for the lock is not generation); the rest of the wall time is kcard's: prompts, retrieval cards, selectors, runs, the trace.
Every token the llama.cpp batch decoder evaluates is counted per model file, as a prompt token or a
decoded one, apart for the cards and the answer; each model's prompt and decode rates are then
measured alone in the same run (2 threads, greedy), and the ideal time of the cards stage is its
decoded tokens / decode rate + prompt tokens / prompt rate, summed over the models.
Run alone.

    .venv/bin/python benchmarks/overhead.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import table, write_result

from kcard_core.chains import build_chain
from kcard_core.evaluation.datasets import load_dataset
from kcard_llama_cpp import backend as llama_backend
from kcard_llama_cpp.batched import BatchDecoder

GOAL = 1.10  # wall time / generation time (issue 20)
IDEAL_GOAL = 1.3  # the cards stage / the ideal time of its tokens (issue 48)


def count_tokens(counts: dict) -> None:
    """Count each token llama.cpp evaluates, per model file, as decoded or prompt: in the batch decoder
    (a step of one token per sequence, every logit wanted, is decoding) and in llama-cpp-python's own
    loop, which serves a lone request (one token is a decoding step)."""
    from llama_cpp import Llama

    def add(path: str, decoded: bool, tokens: int) -> None:
        counts.setdefault(path, {"prompt": 0, "decoded": 0})["decoded" if decoded else "prompt"] += tokens

    fill, evaluate = BatchDecoder._fill, Llama.eval

    def counting_fill(self, tokens, logits_for):
        add(self.llama.model_path, bool(tokens) and len(logits_for) == len(tokens), len(tokens))
        return fill(self, tokens, logits_for)

    def counting_eval(self, tokens):
        add(self.model_path, len(tokens) == 1, len(tokens))
        return evaluate(self, tokens)

    BatchDecoder._fill, Llama.eval = counting_fill, counting_eval


def rates(path: str) -> dict:
    """The model's prompt and decode rates alone (tokens a second): 400 prompt tokens, 64 decoded."""
    from llama_cpp import Llama

    llm = Llama(path, n_ctx=2048, n_threads=2, verbose=False)
    llm("The history of the city begins with", max_tokens=8)  # warm
    started = time.perf_counter()
    out = llm("The history of the city begins with", max_tokens=64, temperature=0.0)
    decode = out["usage"]["completion_tokens"] / (time.perf_counter() - started)
    prompt = llm.tokenize(("word " * 400).encode())
    llm.reset()
    started = time.perf_counter()
    llm.eval(prompt)
    return {"prompt": round(len(prompt) / (time.perf_counter() - started)), "decode": round(decode, 1)}


def card_tokenizers(chain) -> dict[str, tuple[str, object]]:
    """Each LM card's model file name and a tokenizer of it (the vocabulary alone)."""
    from llama_cpp import Llama

    paths = {card.name: str(card.manifest.artifacts["model"].resolve())
             for card in chain.cards if card.manifest.type == "lm"}
    vocabularies = {path: Llama(path, vocab_only=True, verbose=False) for path in set(paths.values())}
    return {name: (Path(path).name, vocabularies[path]) for name, path in paths.items()}


def ideal(counts: dict, measured: dict) -> float:
    return sum(c["decoded"] / measured[m]["decode"] + c["prompt"] / measured[m]["prompt"] for m, c in counts.items())


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
    counts, answering = {}, {}
    count_tokens(counts)
    answer = chain.answer

    def counted_answer(*args, **kwargs):  # the base LLM's tokens, apart from the cards'
        before = {m: dict(c) for m, c in counts.items()}
        try:
            return answer(*args, **kwargs)
        finally:
            for m, c in counts.items():
                for kind in ("prompt", "decoded"):
                    spent = c[kind] - before.get(m, {}).get(kind, 0)
                    answering.setdefault(m, {"prompt": 0, "decoded": 0})[kind] += spent
                    c[kind] -= spent

    chain.answer = counted_answer
    tokenizers = card_tokenizers(chain)
    generating[0], wall, stages, written = 0.0, 0.0, {}, {}
    for question in questions[1:]:
        started = time.perf_counter()
        trace = chain.invoke(question)["trace"]
        wall += time.perf_counter() - started
        for stage, seconds in trace.seconds.items():
            stages[stage] = stages.get(stage, 0.0) + seconds
        for record in trace.documents.values():  # an LM card's documents, in its model's tokens
            if record.card in tokenizers:
                model, vocabulary = tokenizers[record.card]
                tokens = len(vocabulary.tokenize(record.text.encode(), add_bos=False))
                counted = written.setdefault(model, {"written": 0, "kept": 0})
                counted["written"] += tokens
                counted["kept"] += tokens if record.used else 0
    ratio = wall / generating[0]
    n = len(questions) - 1
    counts, answering = {m: dict(c) for m, c in counts.items()}, {m: dict(c) for m, c in answering.items()}
    # alone, on the backend's compute thread, as the cards ran (their own tokens are counted, not kept)
    measured = {model: llama_backend.computed(rates, model) for model in {*counts, *answering}}
    cards_ideal = ideal(counts, measured) / n
    row = {"questions": n, "wall_seconds_per_question": round(wall / n, 3),
           "generation_seconds_per_question": round(generating[0] / n, 3),
           "overhead_seconds_per_question": round((wall - generating[0]) / n, 3), "ratio": round(ratio, 3),
           "stages_per_question": {k: round(v / n, 3) for k, v in stages.items()},
           "models_alone": {Path(m).name: r for m, r in measured.items()},
           "card_tokens_per_question": {Path(m).name: {k: round(v / n, 1) for k, v in c.items()}
                                        for m, c in counts.items()},
           "answer_tokens_per_question": {Path(m).name: {k: round(v / n, 1) for k, v in c.items()}
                                          for m, c in answering.items()},
           "card_document_tokens_per_question": {m: {k: round(v / n, 1) for k, v in c.items()}
                                                 for m, c in written.items()},
           "cards_ideal_seconds_per_question": round(cards_ideal, 3),
           "cards_ratio_to_ideal": round(stages["cards"] / n / cards_ideal, 2)}
    documents = row["card_document_tokens_per_question"]
    tokens = table(["model", "prompt tokens", "decoded", "in the cards' documents",
                    "in the documents the selectors kept"],
                   [[m, c["prompt"], c["decoded"], documents.get(m, {}).get("written", 0),
                     documents.get(m, {}).get("kept", 0)] for m, c in row["card_tokens_per_question"].items()])
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

## The cards stage against its tokens (issue 48)

Each model alone, 2 threads: {'; '.join(f"{m} prompt {r['prompt']} tok/s, decode {r['decode']} tok/s" for m, r in row['models_alone'].items())}.

{tokens}

Tokens per question. Decoded tokens that are not in a document were cut with an unfinished sentence.
Ideal time of the cards stage: {row['cards_ideal_seconds_per_question']} s a question; measured {row['stages_per_question'].get('cards')} s:
**{row['cards_ratio_to_ideal']}×** (goal ≤ {IDEAL_GOAL}: {'met' if row['cards_ratio_to_ideal'] <= IDEAL_GOAL else 'missed'}).

Reproduce: `.venv/bin/python benchmarks/overhead.py`
"""
    write_result("overhead", {"goal": GOAL, "ideal_goal": IDEAL_GOAL, **row}, markdown)


if __name__ == "__main__":
    main()
