"""Knowledge lift on MidtermQA: every method on the same questions, the paper's Table 3 layout, plots.

Runs `kcard eval`'s loop in one process (models load once) for each data set × method, on the first
--limit questions, with every first-party card installed (so selection is not trivial). Writes
benchmarks/results/NAME.{json,md} and PNGs; the per-question predictions with their traces go to
--work (not committed). A data set × method whose results.json in --work already covers the same
questions, model and n1 is read, not run again: long runs resume, and `kcard eval --out WORK` runs
count too.

    python benchmarks/knowledge_lift.py --limit 30 [--methods vanilla,bottom-up,...] [--model gemma-3-270m]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from itertools import islice
from pathlib import Path

from common import HERE, write_result

from kcard_core.chains import build_chain
from kcard_core.evaluation.datasets import load_dataset
from kcard_core.text import normalize
from kcard_core.evaluation.run import METHODS, chain_for, evaluate, summarise
from kcard_core.models import DEFAULT_MODEL
from kcard_core.plugins import get_registry

DATASETS = ("midterm-openbook", "midterm-2way", "midterm-4way")
RESULTS = HERE / "results"


def stored(folder: Path, **wanted) -> dict | None:
    """The results.json in ``folder`` if it was run with the ``wanted`` settings."""
    path = folder / "results.json"
    if not path.exists():
        return None
    result = json.loads(path.read_text())
    # every run here stores its model and n1; a result without them is not reused (the default changed)
    wanted = json.loads(json.dumps(wanted))  # as stored: tuples become lists
    return result if all(result["config"].get(k) == v for k, v in wanted.items()) else None


def reusable(folder: Path, count: int, **wanted) -> dict | None:
    """The stored result for the first ``count`` questions: the run itself, or the first ``count``
    answers of a longer run with the same settings (questions are asked in order, decoding is greedy)."""
    result = stored(folder, **wanted)
    if result is None or result["metrics"]["count"] < count:
        return None
    if result["metrics"]["count"] > count:
        with (folder / "predictions.jsonl").open() as lines:
            rows = [json.loads(line) for line in islice(lines, count)]
        seconds = sum(row["seconds"] for row in rows)
        result = {**result, "metrics": summarise(rows),
                  "seconds": {"total": round(seconds, 1), "per_question": round(seconds / count, 2)}}
    return result


def run(datasets, methods, limit: int, work: Path, decide: str, model: str, n1: int,
        report_only: bool = False) -> dict:
    """Each data set × method's result on the first ``limit`` questions: reused when stored, else run
    (with ``report_only``, left out: the report shows what has finished)."""
    results = {}
    for name in datasets:
        dataset = load_dataset(name)
        count = len(dataset.examples[:limit])
        for method in methods:
            folder = work / name / method
            result = reusable(folder, count, model=model, n1=n1)
            if result is None and report_only:
                continue
            if result is None:
                chain = chain_for(method, dataset, decide=decide, model=model, n1=n1)
                config = {"method": method, "mode": chain.mode, "decide": decide, "model": model, "n1": n1,
                          "cards": [c.name for c in getattr(chain, "cards", [])]}
                result = evaluate(dataset, chain, method, limit=limit, out_dir=folder, config=config)
            results[(name, method)] = result
            print(name, method, result["metrics"], flush=True)
    return results


ABLATIONS = {  # bottom-up variants on open book: name -> build_chain options over the run's own
    "as run": {},
    "without relevance": {"selectors": ("pruning", "factuality")},
    "without pruning": {"selectors": ("relevance", "factuality")},
    "without factuality": {"selectors": ("relevance", "pruning")},
    "n1=1": {"n1": 1},
    "n1=3": {"n1": 3},
    "n1=5": {"n1": 5},
    "n2=3": {"n2": 3},
    "n2=10": {"n2": 10},
    "n3=1": {"n3": 1},
    "n3=2": {"n3": 2},
}


def ablations(limit: int, work: Path, model: str, n1: int, report_only: bool = False) -> dict[str, dict]:
    """Bottom-up on the open-book subset with one selector switched off, or another n1 / n2 / n3."""
    dataset = load_dataset("midterm-openbook")
    results, done = {}, {}  # done: options as JSON -> the variant that ran with them
    for name, options in ABLATIONS.items():
        options = {"model": model, "n1": n1, **options}
        key = json.dumps(options, sort_keys=True)
        if key in done:  # e.g. "n1=1" when the run's own n1 is 1
            if done[key] in results:
                results[f"{name} (= {done[key]})"] = results[done[key]]
            continue
        done[key] = name
        # "as run" is the main open-book run's first questions
        folder = work / "midterm-openbook" / "bottom-up" if name == "as run" else \
            work / "ablations" / re.sub(r"\W+", "-", name)
        result = reusable(folder, limit, **options)
        if result is None and report_only:
            continue
        if result is None:
            chain = build_chain("bottom-up", **options)
            result = evaluate(dataset, chain, "bottom-up", limit=limit, out_dir=folder, config=options)
        results[name] = {**{k: result["metrics"][k] for k in ("em", "f1")},
                         "seconds_per_question": result["seconds"]["per_question"]}
        print(name, results[name], flush=True)
    return results


def complete_runs(datasets, methods, work: Path, **wanted) -> dict:
    """The data set × method runs in ``work`` that asked every question of the data set."""
    runs = {}
    for name in datasets:
        size = len(load_dataset(name).examples)
        for method in methods:
            result = stored(work / name / method, **wanted)
            if result and result["metrics"]["count"] == size:
                runs[(name, method)] = result
    return runs


def table(results: dict, methods) -> str:
    """Rows: methods; columns: open-book EM / F1, 2-way and 4-way accuracy, each with s/question."""
    def cell(dataset, method, key):
        result = results.get((dataset, method))
        if not result:
            return "–"
        return f"{result['metrics'][key]:.1f} ({result['seconds']['per_question']:.1f} s)"

    rows = ["| method | open-book EM | open-book F1 | 2-way acc. | 4-way acc. |", "|---|---|---|---|---|"]
    for method in methods:
        rows.append(f"| {method} | {cell('midterm-openbook', method, 'em')} | {cell('midterm-openbook', method, 'f1')} "
                    f"| {cell('midterm-2way', method, 'accuracy')} | {cell('midterm-4way', method, 'accuracy')} |")
    return "\n".join(rows)


def predictions(work: Path, dataset: str, method: str) -> list[dict]:
    path = work / dataset / method / "predictions.jsonl"
    return [json.loads(line) for line in path.open()] if path.exists() else []


def correct(row: dict) -> bool:
    scores = row["scores"]
    return bool(scores.get("em", scores.get("accuracy", 0.0)))


TOP_DOWN = ("top-down-auto", "top-down-exp", "top-down-auto+ensemble", "combined")


def top_down_analysis(work: Path, datasets) -> dict:
    """Per top-down mode: yes/no × correct/incorrect, which cards were chosen, and with the yes/no
    ensemble how often its three templates agreed."""
    analysis = {}
    for method in TOP_DOWN:
        confusion, chosen, votes = Counter(), Counter(), Counter()
        for dataset in datasets:
            for row in predictions(work, dataset, method):
                asked = bool(row["trace"]["cards"])
                confusion[("yes" if asked else "no", "correct" if correct(row) else "incorrect")] += 1
                chosen.update(card["card"] for card in row["trace"]["cards"])
                votes.update(turn["unanimous"] for turn in row["trace"]["turns"] if "unanimous" in turn)
        if confusion:
            analysis[method] = {"confusion": {f"{a}/{c}": n for (a, c), n in sorted(confusion.items())},
                                "cards": dict(chosen.most_common())}
            if votes:
                analysis[method]["templates agreed"] = f"{votes[True]} of {votes.total()} decisions"
    return analysis


def factuality_scores(work: Path, datasets) -> dict[str, list[float]]:
    """Every bottom-up document's factuality score, by card."""
    scores = defaultdict(list)
    for dataset in datasets:
        for row in predictions(work, dataset, "bottom-up"):
            for doc in row["trace"]["documents"]:
                stage = doc.get("stages", {}).get("factuality")
                if stage and stage.get("score") is not None:
                    scores[doc["card"]].append(stage["score"])
    return dict(scores)


def by_state(work: Path, method: str) -> dict[str, dict]:
    """Open-book EM of ``method`` with races grouped by state (the "incumbent lost" slice is not in the data)."""
    groups = defaultdict(list)
    for row in predictions(work, "midterm-openbook", method):
        match = re.search(r" of ([A-Z][A-Za-z ]+?) in the 2022", row["question"])
        groups[match[1] if match else "?"].append(correct(row))
    return {state: {"count": len(v), "em": round(100 * sum(v) / len(v), 1)} for state, v in sorted(groups.items())}


def where_it_fails(work: Path, method: str = "bottom-up") -> dict:
    """Open book: did a card write the answer, did the selectors keep it, and is a wrong answer
    read from the knowledge (a name in it, usually the race's loser) or made up?"""
    counts = Counter()
    for row in predictions(work, "midterm-openbook", method):
        golds = [normalize(answer) for answer in row["answers"]]
        documents = row["trace"]["documents"]
        used = normalize(" ".join(doc["text"] for doc in documents if doc.get("used")))
        counts["questions"] += 1
        counts["answer in a card's document"] += any(g in normalize(d["text"]) for d in documents for g in golds)
        counts["answer in the knowledge used"] += any(g in used for g in golds)
        if not correct(row):
            prediction = normalize(row["prediction"])
            counts["wrong"] += 1
            counts["wrong, read from the knowledge"] += bool(prediction) and prediction in used
    return dict(counts)


def state_line(states: dict) -> str:
    """States from the lowest EM up: "Ohio 40.0 (15), ..."."""
    ranked = sorted(states.items(), key=lambda item: (item[1]["em"], item[0]))
    return ", ".join(f"{state} {r['em']:.0f} ({r['count']})" for state, r in ranked) or "not run"


def plots(analysis: dict, factuality: dict, out: Path, name: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    if analysis:
        fig, axes = plt.subplots(1, 2 * len(analysis), figsize=(6 * len(analysis), 3.2))
        for index, (method, data) in enumerate(analysis.items()):
            ax = axes[2 * index]
            grid = [[data["confusion"].get(f"{a}/{c}", 0) for c in ("correct", "incorrect")] for a in ("yes", "no")]
            ax.imshow(grid, cmap="Blues")
            for i in range(2):
                for j in range(2):
                    ax.text(j, i, grid[i][j], ha="center", va="center")
            ax.set(xticks=[0, 1], xticklabels=["correct", "incorrect"], yticks=[0, 1],
                   yticklabels=["asked a card", "answered alone"], title=method)
            ax = axes[2 * index + 1]
            ax.barh(list(data["cards"]), list(data["cards"].values()))
            ax.set(title=f"{method}: cards chosen", xlabel="times")
        fig.tight_layout()
        fig.savefig(out / f"{name}-top-down.png", dpi=110)
        written.append(f"{name}-top-down.png")
    if factuality:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        ax.boxplot(list(factuality.values()), tick_labels=list(factuality), orientation="horizontal")
        ax.set(title="bottom-up: factuality score of each card's documents", xlabel="score")
        fig.tight_layout()
        fig.savefig(out / f"{name}-factuality.png", dpi=110)
        written.append(f"{name}-factuality.png")
    plt.close("all")
    return written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=30, help="the first N questions of each data set (505: all)")
    parser.add_argument("--methods", default=",".join((*METHODS, "bottom-up+revise")))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--decide", default="calibrated", choices=["reply", "calibrated"])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the base LLM")
    parser.add_argument("--n1", type=int, default=3, help="documents per card")
    parser.add_argument("--name", default="knowledge-lift", help="results/NAME.{json,md} and NAME-*.png")
    parser.add_argument("--work", type=Path, help="predictions and traces [default: benchmarks/work/NAME]")
    parser.add_argument("--ablations", type=int, default=0, help="questions for the selector / n ablations (0: skip)")
    parser.add_argument("--report-only", action="store_true", help="run nothing: report the finished runs in --work")
    args = parser.parse_args()
    work = args.work or HERE / "work" / args.name
    methods, datasets = args.methods.split(","), args.datasets.split(",")
    results = run(datasets, methods, args.limit, work, args.decide, args.model, args.n1, args.report_only)
    full = complete_runs(datasets, methods, work, model=args.model, n1=args.n1)
    analysis = top_down_analysis(work, datasets)
    factuality = factuality_scores(work, datasets)
    states = by_state(work, "bottom-up")
    failures = where_it_fails(work)
    images = plots(analysis, factuality, RESULTS, args.name)
    ablated = ablations(args.ablations, work, args.model, args.n1, args.report_only) if args.ablations else {}
    ablation_rows = "\n".join(f"| {name} | {r['em']:.1f} | {r['f1']:.1f} | {r['seconds_per_question']} |"
                               for name, r in ablated.items())
    cards = {name: card.manifest.description for name, card in get_registry().cards.items()}
    counts = sorted({r["metrics"]["count"] for r in results.values()})
    command = (f"python benchmarks/knowledge_lift.py --limit {args.limit} --methods {args.methods} --datasets "
               f"{args.datasets} --decide {args.decide} --model {args.model} --n1 {args.n1} --name {args.name} "
               f"--ablations {args.ablations}")
    report = f"""# Knowledge lift on MidtermQA

{'/'.join(map(str, counts))} questions of each MidtermQA setting (the first ones; 505 is all); base LLM
{args.model} (llama.cpp, greedy); every first-party card installed ({', '.join(cards)}); each card
writes n1 = {args.n1} documents; top-down decides with `--decide {args.decide}`. Cells: score (wall
seconds per question, 2 CPU cores; card documents come from kcard's on-disk generation cache when the
same card wrote for the same question before, in another setting or an earlier run). vanilla uses the
data set's 5 demos; the knowledge methods use kcard's own demos, which show knowledge in use. Multiple
choice: the LLM answers the question with the options out of sight and its answer is matched to an
option by name; an answer naming none is asked again with the options shown. retrieval = bottom-up over
the retrieval cards only; genread = the base LLM writes its own document; combined = top-down whose
knowledge step runs bottom-up over the two best-matching cards; +revise = verify-and-revise
(knowledge-f1 utility, up to 2 revisions).

{table(results, methods)}

Every question (505 per setting), for the methods run on all of them:

{table(full, [m for m in methods if any(key[1] == m for key in full)]) if full else "not run"}

Top-down (yes = the base LLM asked for a card):

{chr(10).join(f"- {m}: {'; '.join(f'{k} {v}' for k, v in d.items())}" for m, d in analysis.items()) or "- not run"}

{chr(10).join(f"![{image}]({image})" for image in images)}

Where bottom-up fails on open book (every answer in the work folder): {failures or "not run"}

Bottom-up open-book EM by state (every answer in the work folder; the paper's "incumbent lost" slice is
not derivable from the data): {state_line(states)}

Bottom-up ablations and n1 / n2 / n3 sweeps (open book, first {args.ablations} questions; defaults n2 = 5, n3 = 3):

| variant | EM | F1 | s / question |
|---|---|---|---|
{ablation_rows or "| not run | | | |"}

Reproduce: `{command}`
"""
    write_result(args.name, {
        "limit": args.limit, "model": args.model, "n1": args.n1, "decide": args.decide, "cards": cards,
        "command": command,
        "results": [{"dataset": d, "method": m, "metrics": r["metrics"], "seconds": r["seconds"]}
                    for (d, m), r in results.items()],
        "complete_runs": [{"dataset": d, "method": m, "metrics": r["metrics"], "seconds": r["seconds"],
                           "date": r["date"]} for (d, m), r in full.items()],
        "top_down": analysis, "bottom_up_by_state": states, "bottom_up_failures": failures, "ablations": ablated,
        "factuality": {card: {"count": len(v), "mean": round(sum(v) / len(v), 3)} for card, v in factuality.items()},
    }, report)


if __name__ == "__main__":
    main()
