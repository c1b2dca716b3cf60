"""A second domain, so that nothing is tuned to the midterms alone: questions about countries.

Capital questions are made from the countryinfo data (the `countries` cards' source) for every
country; the base LLM answers them alone, and the first --limit it gets wrong are asked again with
bottom-up and top-down-auto over every first-party card, at the defaults. Right = a gold answer is
in the answer (PopQA's metric).

    python benchmarks/second_domain.py --limit 40
"""

from __future__ import annotations

import argparse
import time

from common import write_result

from kcard_core import defaults
from kcard_core.chains import build_chain
from kcard_core.evaluation.metrics import contains_answer


def questions() -> list[tuple[str, str]]:
    from countryinfo import all_countries

    found = []
    for country in all_countries():
        try:
            name, capital = country.name().title(), country.capital()
        except Exception:  # countryinfo lacks some fields for some territories
            continue
        if isinstance(capital, str) and capital.strip():
            found.append((f"What is the capital of {name}?", capital.strip()))
    return sorted(found)


def accuracy(chain, items) -> tuple[int, float, list]:
    right, answers, started = 0, [], time.perf_counter()
    for question, gold in items:
        result = chain.invoke(question)
        answers.append(result)
        right += contains_answer(result["answer"], [gold]) > 0
    return right, round((time.perf_counter() - started) / max(1, len(items)), 2), answers


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=40, help="questions the base LLM got wrong, to ask again")
    args = parser.parse_args()
    everything = questions()
    vanilla_right, vanilla_seconds, answers = accuracy(build_chain("vanilla"), everything)
    wrong = [item for item, result in zip(everything, answers)
             if not contains_answer(result["answer"], [item[1]])][: args.limit]
    rows = [{"method": "vanilla", "questions": len(everything), "right": vanilla_right,
             "seconds_per_question": vanilla_seconds, "on": "all capital questions"}]
    for mode in ("bottom-up", "top-down-auto"):
        right, seconds, results = accuracy(build_chain(mode), wrong)
        row = {"method": mode, "questions": len(wrong), "right": right, "seconds_per_question": seconds,
               "on": "the questions vanilla got wrong"}
        if mode == "top-down-auto":
            row["cards chosen"] = sorted({c.card for r in results for c in r["trace"].cards})
        rows.append(row)
        print(row, flush=True)
    lines = ["| method | on | right | s / question |", "|---|---|---|---|"] + [
        f"| {r['method']} | {r['on']} | {r['right']} / {r['questions']} | {r['seconds_per_question']} |" for r in rows]
    report = f"""# A second domain: capitals of the world's countries

Questions "What is the capital of X?" for every country in the countryinfo data; the base LLM
alone answers them first, and the first {len(wrong)} it gets wrong are asked again with every
first-party card installed, at the defaults (n1 = each card's own, one for these cards, n2 = {defaults.N2},
n3 = {defaults.N3}, judge = {defaults.JUDGE}). Right = the gold capital is in the answer.
No prompt or setting was tuned on these questions.

{chr(10).join(lines)}

Reproduce: `python benchmarks/second_domain.py --limit {args.limit}`
"""
    write_result("second-domain", {"rows": rows}, report)


if __name__ == "__main__":
    main()
