"""Answers as spans of the knowledge: copy-constrained decoding on the base LLM, against its free reply.

Issue 46 asks for a default reader that extracts an answer from the knowledge instead of writing
one. This measures, on the prompts every reader reads (`readers.py`'s items, bottom-up with the
card's knowledge), four ways to read with Gemma 3 270M on llama.cpp, greedy:

- plain: the model's reply, free (what the plain reader gives);
- copy: every token must continue a span of the knowledge's tokens or end the answer (a logits
  mask); the model's own stop;
- beam: the first token is each of the B likeliest knowledge tokens in turn, each start continued
  under the copy mask, and the answer is the prefix of a continuation, of any start, with the
  greatest log-probability of being written whole (its tokens, then a line end);
- pmi: as beam, but the starts, and the candidates' scores, subtract LAMBDA times the first token's
  log-probability when the question is left out of the prompt (a start the model would copy whatever
  was asked, the passage's heading, say, loses).

The tuning splits only: real-docs (140), own-card (every fourth of 340), MidtermQA bottom-up (1-100,
as `knowledge_lift_heldout.py --split tuning` stored them). EM and contains in %, as readers.py.

    python benchmarks/knowledge_lift_heldout.py --split tuning --methods bottom-up   # MidtermQA's prompts
    python benchmarks/span_reading.py
"""

from __future__ import annotations

import json
import sys
import time

from common import HERE, table, write_result

from kcard_core.config import cache_dir
from kcard_core.copying import CopyMask
from kcard_core.evaluation.metrics import contains_answer, exact_match
from kcard_core.models import resolve_model
from kcard_core.text import one_line

sys.path.insert(0, str(HERE))
import readers  # noqa: E402

STARTS = 4  # B: starts tried by beam and pmi
LAMBDA = 0.5  # pmi: the weight of the question-less prompt's log-probability
MAX_TOKENS = 48
ITEMS = cache_dir() / "benchmarks" / "span-reading" / "items.jsonl"
MIDTERM_TUNING = (cache_dir() / "benchmarks" / "knowledge-lift-heldout" / "tuning" / "midterm-openbook"
                  / "bottom-up" / "defaults" / "predictions.jsonl")


def items() -> list[dict]:
    """The prompts, prepared once (cards built, knowledge gathered) and kept in the cache."""
    if not ITEMS.exists():
        prepared = [i for i in readers.real_docs() if i["split"] == "tuning"]
        prepared += [i for i in readers.own_card() if i["split"] == "tuning"][::4]
        prepared += [{"dataset": "midtermqa-bottom-up", "split": "tuning", "question": s["question"],
                      "gold": s["answers"], "trace": s["trace"]}
                     for s in map(json.loads, MIDTERM_TUNING.read_text().splitlines())]
        ITEMS.parent.mkdir(parents=True, exist_ok=True)
        ITEMS.write_text("".join(json.dumps(i) + "\n" for i in prepared))
    return [json.loads(line) for line in ITEMS.read_text().splitlines()]


class Reading:
    """Gemma on llama-cpp-python, read with a copy mask (a logits processor)."""

    def __init__(self):
        from llama_cpp import Llama

        self.llm = Llama(model_path=str(resolve_model(None)[1]), n_ctx=4096, n_threads=2, verbose=False)
        ends = {self.tokens(text)[0] for text in ("\n", "\n\n")} | {self.llm.token_eos()}
        self.ends = sorted(ends)

    def tokens(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def text(self, tokens: list[int]) -> str:
        return self.llm.detokenize(tokens).decode("utf-8", "replace").strip()

    def complete(self, prompt: str, mask: CopyMask | None = None, max_tokens: int = MAX_TOKENS) -> str:
        """Greedy, to a line end; with ``mask`` (kcard_core.copying) applied to the answer's tokens."""
        from llama_cpp import LogitsProcessorList

        start = len(self.llm.tokenize(prompt.encode("utf-8"), special=True))
        masked = LogitsProcessorList([lambda ids, scores: mask(ids[start:].tolist(), scores)]) if mask else None
        out = self.llm.create_completion(prompt, max_tokens=max_tokens, temperature=0, stop=["\n"],
                                         logits_processor=masked)
        return out["choices"][0]["text"].strip()

    def first_logprobs(self, prompt: str, source: list[int]):
        mask = CopyMask(source, self.ends)
        self.complete(prompt, mask, max_tokens=1)
        return mask.logprobs

    def continued(self, prompt: str, source: list[int], first: int) -> list[tuple[float, str]]:
        """Each prefix of the copy continuing from token ``first``, with its log-probability as a whole answer."""
        mask = CopyMask(source, self.ends, first)
        self.complete(prompt, mask)
        return [(score, self.text(tokens)) for score, tokens in mask.prefixes()]

    def read(self, variant: str, item: dict) -> str:
        prompt = item["trace"]["prompt"]
        knowledge = " ".join(d["text"] for d in item["trace"]["documents"] if d.get("used"))
        if variant == "plain" or not knowledge:
            return self.complete(prompt)
        source = self.tokens(" " + " ".join(knowledge.split()))
        if variant == "copy":
            return self.complete(prompt, CopyMask(source, self.ends))
        asked = self.first_logprobs(prompt, source)
        if variant == "pmi":
            question = one_line(item["question"])
            cut = prompt.rfind(f"Question: {question}", 0, prompt.rfind(f"Question: {question}"))
            unasked = self.first_logprobs(prompt[:cut] + prompt[cut:].replace(question, ""), source)
            prior = {token: LAMBDA * unasked[token] for token in set(source)}
        else:
            prior = dict.fromkeys(set(source), 0.0)
        starts = sorted(set(source), key=lambda token: prior[token] - asked[token])[:STARTS]
        candidates = [(score - prior[token], text) for token in starts
                      for score, text in self.continued(prompt, source, token) if text]
        return max(candidates)[1] if candidates else ""


VARIANTS = ("plain", "copy", "beam", "pmi")


def main() -> None:
    prepared, reading, rows = items(), Reading(), []
    for variant in VARIANTS:
        found: dict[str, dict] = {}
        for item in prepared:
            started = time.perf_counter()
            answer = reading.read(variant, item)
            row = found.setdefault(item["dataset"], {"dataset": item["dataset"], "split": item["split"],
                                                     "variant": variant, "questions": 0, "em": 0.0,
                                                     "contains": 0.0, "copied_sentences": 0, "seconds": 0.0})
            row["questions"] += 1
            row["em"] += exact_match(answer, item["gold"])
            row["contains"] += contains_answer(answer, item["gold"]) > 0
            knowledge = " ".join(d["text"] for d in item["trace"]["documents"] if d.get("used"))
            row["copied_sentences"] += readers.copied(answer, item["gold"], knowledge)
            row["seconds"] += time.perf_counter() - started
        for row in found.values():
            n = row["questions"]
            row.update(em=round(100 * row["em"] / n, 1), contains=round(100 * row["contains"] / n, 1),
                       seconds_per_question=round(row.pop("seconds") / n, 2))
            print(json.dumps(row), flush=True)
            rows.append(row)
    write_result("span-reading", {"starts": STARTS, "lambda": LAMBDA, "rows": rows}, report(rows))


def report(rows: list[dict]) -> str:
    rows = sorted(rows, key=lambda r: (r["dataset"], VARIANTS.index(r["variant"])))
    lines = table(["data", "split", "reading", "questions", "EM", "contains", "copied sentences", "s / question"],
                  [[r["dataset"], r["split"], r["variant"], r["questions"], r["em"], r["contains"],
                    r["copied_sentences"], r["seconds_per_question"]] for r in rows])
    return f"""# Answers as spans of the knowledge

Gemma 3 270M (the default base LLM) on llama-cpp-python, greedy, 2 CPU cores, the bottom-up prompts
readers.py prepares (tuning splits; own-card: every fourth question). plain: the free reply; copy:
each token continues a span of the knowledge or ends the answer; beam: the {STARTS} likeliest
starts, each continued under that mask, the prefix likeliest as a whole answer (then a line end);
pmi: beam's starts and scores less {LAMBDA} × the start's log-probability with the question left
out of the prompt. EM and contains in %; copied sentences as in readers.md.

{lines}

## What it shows

- The mask alone changes little: Gemma copies a span already, from the passage's first words (on the
  real documents, its heading path: "Changes from versions 4.1.* to version 4.2.0: The …").
- Choosing the start and the end by likelihood (beam) gives spans ("Fredrik Johansson",
  "$XDG_RUNTIME_DIR/bus", "150 seconds" where plain copied the passage), and raises EM everywhere,
  but on the real documents a quarter of the questions that plain's copied passage answered get a
  span that is not the answer: contains falls from 62 to 48.
- Leaving the question out of the prompt as a prior (pmi) helps the own-card texts most (EM 74 of
  contains 91) and costs MidtermQA 13 points: its knowledge names the winner and the loser, and the
  prior counts against the name the model would copy whatever was asked.
- None is a default: each loses "contains" somewhere, which the own-card and real-document
  benchmarks count as right. The limit is the reader model's choice of where an answer starts.

Reproduce: `python benchmarks/span_reading.py` (after `python benchmarks/knowledge_lift_heldout.py
--split tuning --methods bottom-up`).
"""


if __name__ == "__main__":
    main()
