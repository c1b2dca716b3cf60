"""Popularity-gated activation on PopQA (Mallen et al., 2023): accuracy of never / always / gated
consulting the cards, and the share of questions that consulted them.

Runs `kcard eval popqa` for the base LLM alone (vanilla) and with the cards (bottom-up) on a sample of
PopQA's dev questions, then `kcard calibrate`'s brute-force thresholds per relation, averaged over
random 75/25 dev/test splits.

    python benchmarks/popularity_gate.py [--limit 150] [--model gemma-3-270m] [--n1 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from common import HERE, write_result

from kcard_core.models import DEFAULT_MODEL


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the base LLM")
    parser.add_argument("--n1", type=int, default=3, help="documents per card")
    args = parser.parse_args()
    runs = HERE / "work" / "popularity"
    kcard = [sys.executable, "-m", "kcard_core"]
    subprocess.run(kcard + ["eval", "popqa", "--mode", "vanilla", "--mode", "bottom-up", "--limit", str(args.limit),
                            "--model", args.model, "--n1", str(args.n1), "--out", str(runs)], check=True)
    thresholds = HERE / "results" / "popularity-thresholds.json"
    subprocess.run(kcard + ["calibrate", "popqa", "--runs", str(runs), "--splits", str(args.splits),
                            "--out", str(thresholds)], check=True)
    result = json.loads(thresholds.read_text())
    timing = {m: json.loads((runs / "popqa" / m / "results.json").read_text())["seconds"]["per_question"]
              for m in ("vanilla", "bottom-up")}
    held_out = result["held_out"]
    report = f"""# Popularity-gated cards on PopQA

The first {args.limit} PopQA dev questions (after the 16 demos); base LLM {args.model}; cards: all
first-party cards, bottom-up, n1 = {args.n1} documents per card. Thresholds per relation by brute
force over the histogram edges of ln(page views), fitted on a random 75 % and scored on the other
25 %, averaged over {args.splits} splits.

| policy | held-out accuracy % | questions that consulted cards |
|---|---|---|
| never (base LLM alone, {timing['vanilla']} s/question) | {held_out['never']} | 0 % |
| always (bottom-up, {timing['bottom-up']} s/question) | {held_out['always']} | 100 % |
| gated by popularity | {held_out['gated']} | {held_out['gated_card_share']} % |

Thresholds fitted on all {result['questions']} questions: `benchmarks/results/popularity-thresholds.json`
(use them with `kcard ask --gate benchmarks/results/popularity-thresholds.json`).

Reproduce: `python benchmarks/popularity_gate.py --limit {args.limit} --model {args.model} --n1 {args.n1}`
"""
    write_result("popularity-gate", {"limit": args.limit, "model": args.model, "n1": args.n1,
                                      "seconds_per_question": timing, **result}, report)


if __name__ == "__main__":
    main()
