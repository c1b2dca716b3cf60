"""The answer step and factuality's choice replayed on stored MidtermQA runs: a change to either is
checked against every question knowledge_lift_heldout.py asked, in minutes instead of hours.

knowledge_lift_heldout.py keeps each run's predictions with their traces (the prompt, every
document with its selector scores, which reached the prompt) in its --work folder. For each
stored question this asks the current answer step again with the stored prompt and knowledge
(no card writes, no selector runs), and, for bottom-up, chooses again among the documents that
reached factuality with its stored scores (current tie-break). Rows: answers that changed, and
the exact match before and after; a run whose choice or answers change needs
knowledge_lift_heldout.py again before its numbers are quoted.

    python benchmarks/answer_replay.py                 # every stored run under the default --work
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import write_result

from kcard_core.chains import build_chain
from kcard_core.config import cache_dir
from kcard_core.evaluation.metrics import exact_match
from kcard_core.trace import DocumentRecord, Trace
from kcard_selectors.factuality import FactualitySelector, margin_greedy
from kcard_selectors.reader import RulesReader


def replay(path: Path, chain) -> dict:
    """One stored run: its answers asked again, and (bottom-up) factuality's choice made again."""
    changed, choices, before, after, questions = [], 0, 0.0, 0.0, 0
    for line in path.open():
        questions += 1
        stored = json.loads(line)
        record = stored["trace"]
        trace = Trace(mode=record["mode"], question=record["question"], prompt=record["prompt"])
        for doc in record["documents"]:
            trace.documents[doc["id"]] = DocumentRecord(doc.get("card"), doc["text"], used=doc.get("used", False))
        answer = chain.answer(stored["question"], trace, None)
        before += exact_match(stored["prediction"], stored["answers"])
        after += exact_match(answer, stored["answers"])
        if answer != stored["prediction"]:
            changed.append({"question": stored["question"], "gold": stored["answers"], "stored": stored["prediction"],
                            "now": answer})
        if record["mode"] == "bottom-up":
            choices += chosen_again(record) != next(d["id"] for d in record["documents"] if d.get("used"))
    return {"questions": questions, "em_stored": before, "em_now": after,
            "answers_changed": changed, "bottom_up_choices_changed": choices}


def chosen_again(record: dict) -> str:
    """The document factuality keeps now, from the stored scores of those that reached it (in
    relevance's order) and the rules reader's tie-break (a document of the type the question asks for)."""
    reached = sorted((d for d in record["documents"] if "factuality" in d.get("stages", {})),
                     key=lambda d: -d["stages"]["relevance"]["score"])
    holds = [bool(RulesReader(None).holds_answer(record["question"], d["text"])) for d in reached]
    pick = margin_greedy([d["stages"]["factuality"]["score"] for d in reached], 1, FactualitySelector().margin,
                         holds)
    return reached[pick[0]]["id"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=cache_dir() / "benchmarks" / "knowledge-lift-heldout")
    args = parser.parse_args()
    chain = build_chain("vanilla")  # the answer step alone: the knowledge is the stored one
    rows = [{"run": str(path.parent.relative_to(args.work)), **replay(path, chain)}
            for path in sorted(args.work.glob("*/*/*/*/predictions.jsonl"))]
    lines = ["| run | questions | EM stored | EM now | answers changed | bottom-up choices changed |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['run']} | {r['questions']} | {r['em_stored']:.0f} | {r['em_now']:.0f} "
              f"| {len(r['answers_changed'])} | {r['bottom_up_choices_changed']} |" for r in rows]
    report = f"""# The answer step replayed on stored MidtermQA runs

Each stored question of `knowledge_lift_heldout.py`'s runs asked again through the current answer
step with its stored prompt and knowledge; bottom-up's factuality choice made again from the
stored scores. EM counts questions (exact match).

{chr(10).join(lines)}

Reproduce: `python benchmarks/answer_replay.py` (reads `--work`, by default kcard's cache).
"""
    write_result("answer-replay", {"work": str(args.work), "rows": rows}, report)


if __name__ == "__main__":
    main()
