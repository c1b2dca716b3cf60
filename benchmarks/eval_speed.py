"""`kcard eval` seconds a question, uncached: bottom-up at the defaults over the first --limit questions
of each data set, in a fresh process whose cache folder holds the assembled weights but no card
generations (so every card writes) and no built indexes (built on the first question, as on a new
machine). The seconds are `kcard eval`'s own (its results.json: the questions' time, models loading
on the first). Run alone.

    .venv/bin/python benchmarks/eval_speed.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import table, write_result

from kcard_core.config import cache_dir

GOAL = 3.0  # seconds a question, uncached bottom-up (issue 48)
KCARD = Path(sys.executable).with_name("kcard")


def one_run(dataset: str, limit: int) -> dict:
    with tempfile.TemporaryDirectory() as work:
        cache = Path(work) / "cache"
        shutil.copytree(cache_dir() / "artifacts", cache / "artifacts")  # no assembling of weights in the time
        done = subprocess.run([str(KCARD), "eval", dataset, "--mode", "bottom-up", "--limit", str(limit),
                               "--out", str(Path(work) / "out"), "--json"],
                              capture_output=True, text=True, env={**os.environ, "KCARD_CACHE": str(cache)})
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        result = json.loads(done.stdout)[0]
    return {"dataset": dataset, "questions": limit, "seconds_per_question": result["seconds"]["per_question"],
            "metrics": {k: v for k, v in result["metrics"].items() if not k.startswith("by_")}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args()
    rows = [one_run(dataset, args.limit) for dataset in ("popqa", "midterm-openbook")]
    lines = table(["data set", "questions", "s / question", "scores"],
                  [[r["dataset"], r["questions"], r["seconds_per_question"], r["metrics"]] for r in rows])
    worst = max(r["seconds_per_question"] for r in rows)
    report = f"""# `kcard eval` seconds a question, uncached

`kcard eval DATASET --mode bottom-up --limit {args.limit}` at the defaults (every first-party card, Gemma 3
270M reading), in a fresh process with an empty generation cache (every card writes) and no built
indexes; 2 CPU cores, nothing else running. Seconds are `kcard eval`'s own per question (models
load during the first).

{lines}

Goal ≤ {GOAL} s a question: {'met' if worst <= GOAL else 'missed'}.

Reproduce: `.venv/bin/python benchmarks/eval_speed.py`
"""
    write_result("eval-speed", {"goal": GOAL, "rows": rows}, report)


if __name__ == "__main__":
    main()
