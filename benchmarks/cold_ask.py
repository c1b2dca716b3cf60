"""P5, a cold `kcard ask`: the README's question in a fresh process, every first-party card, no
generation cache (`--no-cache`: every card writes again), with the stage split from the trace.

Each embedder of the selectors (KCARD_EMBEDDER: numpy, the default, and sentence-transformers, which
imports torch) is timed over --runs fresh processes; the median run is reported. Run alone.

    .venv/bin/python benchmarks/cold_ask.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import write_result

QUESTION = "Who won the 7th congressional district of Georgia in the 2022 U.S. midterm elections?"
GOAL = 10.0  # seconds (issue 20)


def one_run(mode: str, embedder: str) -> dict:
    env = {**os.environ, "KCARD_EMBEDDER": embedder}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kcard_core", "ask", QUESTION, "--mode", mode, "--no-cache", "--json"],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    trace = json.loads(done.stdout)["trace"]
    return {"wall": round(wall, 2), "answer": trace["answer"], "stages": trace["seconds"],
            "cards": sorted({doc["card"] for doc in trace["documents"] if doc.get("card")})}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for mode in ("bottom-up", "top-down-auto"):
        for embedder in ("numpy", "sentence-transformers"):
            runs = sorted((one_run(mode, embedder) for _ in range(args.runs)), key=lambda r: r["wall"])
            median = runs[len(runs) // 2]
            rows.append({"mode": mode, "embedder": embedder, "seconds": median["wall"],
                         "all_runs": [r["wall"] for r in runs], "stages": median["stages"],
                         "answer": median["answer"], "cards_with_documents": median["cards"]})
            print(json.dumps(rows[-1]), flush=True)
    lines = ["| mode | embedder | seconds (median) | runs | stages (from the trace) | answer |", "|---|---|---|---|---|---|"]
    for r in rows:
        stages = ", ".join(f"{k} {v}" for k, v in r["stages"].items())
        lines.append(f"| {r['mode']} | {r['embedder']} | {r['seconds']} | {r['all_runs']} | {stages} | {r['answer']} |")
    best = min(r["seconds"] for r in rows if r["mode"] == "bottom-up" and r["embedder"] == "numpy")
    markdown = f"""# P5: a cold `kcard ask`

`kcard ask "{QUESTION}" --mode MODE --no-cache --json` in a fresh process: every first-party card
installed, no generation cache (every card writes again), median of {args.runs} runs, 2 CPU cores,
nothing else running. Stages are the trace's wall times (knowledge = cards + selectors; the rest of
the wall time is Python, plugin loading and model loading). Goal: ≤ {GOAL} s for the default
(bottom-up, numpy embedder): {'met' if best <= GOAL else 'missed'} ({best} s).

{chr(10).join(lines)}

Reproduce: `.venv/bin/python benchmarks/cold_ask.py`
"""
    write_result("cold-ask", {"question": QUESTION, "runs": args.runs, "goal_seconds": GOAL, "rows": rows}, markdown)


if __name__ == "__main__":
    main()
