"""The reader alone: given the one right report, does the base LLM name the winner?

Bottom-up's selectors deliver a report naming the gold winner for 403 of 405 held-out MidtermQA
questions; before this benchmark, every one of the 62 wrong answers was the loser's name, read from
that report. Here each race of a split is given to the base LLM in each of the news card's three
phrasings ("X defeated Y", "was won by X, who defeated Y", "X won and Y lost"), in three prompt
layouts with the same demonstrations (kcard_core.chains.prompts.BOTTOM_UP_EXAMPLES):

- knowledge, question: the layout before (the paper's);
- question, knowledge: the question first;
- question, knowledge, question: the question on both sides (kcard's bottom_up_prompt now).

The layout was chosen on the tuning split (questions 1-100); held-out (101-505) is the report.

    python benchmarks/reader.py --split tuning
    python benchmarks/reader.py --split held-out
"""

from __future__ import annotations

import argparse
import json
import time

from common import HERE, write_result

from kcard_card_midterm2022.corpus import QUESTION, REPORTS, races
from kcard_core.chains.prompts import BOTTOM_UP_EXAMPLES, bottom_up_prompt
from kcard_core.evaluation.datasets import load_dataset
from kcard_core.text import normalize
from kcard_core.models import DEFAULT_MODEL, resolve_model

SPLITS = {"tuning": slice(0, 100), "held-out": slice(100, None)}


def layout(order: tuple[str, ...]):
    def prompt(question: str, knowledge: str) -> str:
        def block(q: str, k: str) -> str:
            return "\n".join(f"Question: {q}" if part == "q" else f"Knowledge: {k}" for part in order) + "\nAnswer:"
        demos = [f"{block(ex['question'], ex['knowledge'])} {ex['answer']}" for ex in BOTTOM_UP_EXAMPLES]
        return "\n\n".join([*demos, block(question, knowledge)])
    return prompt


LAYOUTS = {"knowledge, question": layout(("k", "q")), "question, knowledge": layout(("q", "k")),
           "question, knowledge, question (kcard)": lambda q, k: bottom_up_prompt(q, [k])}


def items(split: str) -> list[tuple[str, str, str, str, int]]:
    """(question, report, winner, loser, phrasing) for each contested race of the split."""
    by_race = {race["race"]: race for race in races()}
    found = []
    for example in load_dataset("midterm-openbook").examples[SPLITS[split]]:
        match = QUESTION.match(example.question)
        race = by_race.get(match["race"]) if match else None
        if race and race["loser"] != "no opponent":
            found += [(example.question, phrasing.format(**race), race["winner"], race["loser"], index)
                      for index, phrasing in enumerate(REPORTS)]
    return found


def main() -> None:
    from llama_cpp import Llama

    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=list(SPLITS), default="tuning")
    args = parser.parse_args()
    llm = Llama(model_path=str(resolve_model(None)[1]), n_ctx=2048, n_threads=2, verbose=False, seed=0)
    probes = items(args.split)
    path = HERE / "results" / "reader.json"
    rows = [r for r in (json.loads(path.read_text())["rows"] if path.exists() else []) if r["split"] != args.split]
    for name, prompt in LAYOUTS.items():
        started, right, loser, by_phrasing = time.perf_counter(), 0, 0, [0] * len(REPORTS)
        for question, report, winner, other, phrasing in probes:
            reply = llm(prompt(question, report), max_tokens=16, temperature=0, stop=["\n"])["choices"][0]["text"]
            ok = normalize(reply) == normalize(winner)
            right += ok
            by_phrasing[phrasing] += ok
            loser += normalize(reply) == normalize(other)
        rows.append({"split": args.split, "layout": name, "probes": len(probes), "right": right, "loser": loser,
                     "right_by_phrasing": by_phrasing, "seconds": round(time.perf_counter() - started, 1)})
        print(json.dumps(rows[-1]), flush=True)
    lines = ["| split | layout | right | named the loser | right by phrasing (defeated / was won by / won and lost) |",
             "|---|---|---|---|---|"] + [
        f"| {r['split']} | {r['layout']} | {r['right']}/{r['probes']} ({100 * r['right'] / r['probes']:.1f}%) "
        f"| {r['loser']} | {' / '.join(map(str, r['right_by_phrasing']))} |" for r in rows]
    report = f"""# The reader alone: the right report in, the winner out?

Base LLM {DEFAULT_MODEL} (llama.cpp, greedy), the bottom-up demonstrations, one race's report in each
of the news card's three phrasings; MidtermQA races with an opponent. Chosen on the tuning split.

{chr(10).join(lines)}

Reproduce: `python benchmarks/reader.py --split tuning` and `--split held-out`.
"""
    write_result("reader", {"model": DEFAULT_MODEL, "rows": rows}, report)


if __name__ == "__main__":
    main()
