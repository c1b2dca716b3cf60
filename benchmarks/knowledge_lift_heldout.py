"""Knowledge lift at the defaults, on MidtermQA's tuning split (questions 1-100) and held-out split
(101-505), with the selector ablations and n1 / n2 / n3 sweeps on the tuning split only.

Every run is `kcard eval`'s loop in one process, with every first-party card installed and the
settings of kcard_core/defaults.py (what `kcard ask` and `kcard eval` use with no flags). A run's
predictions and traces go to --work (not committed); a run whose results.json there covers the same
questions and settings, made by the same code (common.code_fingerprint), is read, not run again. Rows accumulate in
benchmarks/results/knowledge-lift-heldout.json; the report is rebuilt from all rows.

    python benchmarks/knowledge_lift_heldout.py --split held-out --methods bottom-up,top-down-auto
    python benchmarks/knowledge_lift_heldout.py --split tuning --variant n3=1 --variant "without pruning"
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from common import HERE, code_fingerprint, write_result

from kcard_core import defaults
from kcard_core.config import cache_dir
from kcard_core.evaluation.datasets import load_dataset
from kcard_core.text import normalize
from kcard_core.evaluation.run import chain_for, evaluate
from kcard_core.models import DEFAULT_MODEL

SPLITS = {"tuning": slice(0, 100), "held-out": slice(100, None)}
RESULTS = HERE / "results" / "knowledge-lift-heldout.json"
DEFAULTS = {"n1": defaults.N1, "n2": defaults.N2, "n3": defaults.N3, "judge": defaults.JUDGE,
            "selectors": list(defaults.SELECTORS), "model": DEFAULT_MODEL, "decide": "reply",
            "copy_bias": defaults.COPY_BIAS}
PAPER_SELECTORS = ("relevance", "pruning", "factuality")
VARIANTS = {  # tuning-split variants of bottom-up: name -> settings over the defaults
    **{f"{'without' if name in defaults.SELECTORS else 'with'} {name}":
       {"selectors": [s for s in PAPER_SELECTORS if (s in defaults.SELECTORS) != (s == name)]}
       for name in PAPER_SELECTORS},
    **{f"n1={n}": {"n1": n} for n in (2, 3)},
    **{f"n2={n}": {"n2": n} for n in (3, 7, 10)},
    **{f"n3={n}": {"n3": n} for n in (2, 3)},
    "judge=embedding": {"judge": "embedding"},
    "copy_bias=0": {"copy_bias": 0.0},
}


def run_one(split: str, dataset_name: str, method: str, variant: str, settings: dict, work: Path,
            limit: int | None) -> dict:
    dataset = load_dataset(dataset_name)
    dataset = dataclasses.replace(dataset, examples=dataset.examples[SPLITS[split]][:limit])
    folder = work / split / dataset_name / method / folder_name(variant)
    # the type bias is recorded beside the settings, not among them: rows from before it stay comparable
    config = {"split": split, "dataset": dataset_name, "method": method, "variant": variant, **settings,
              "type_bias": defaults.TYPE_BIAS, "code": code_fingerprint()}
    path = folder / "results.json"
    stored = json.loads(path.read_text()) if path.exists() else None
    if stored and stored["config"] == json.loads(json.dumps(config)) and stored["metrics"]["count"] == len(
            dataset.examples):
        result = stored
    else:
        options = {**settings, "selectors": tuple(settings["selectors"])}
        chain = chain_for(method, dataset, **options)
        cache = next((card.cache for card in getattr(chain, "cards", []) if card.cache), None)
        result = evaluate(dataset, chain, method, out_dir=folder, config=config)
        if cache:
            result["cache"] = {"hits": cache.hits, "misses": cache.misses}
            path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    if method.startswith("top-down"):
        result["said_no"] = said_no(folder)
    return result


def said_no(folder: Path) -> int:
    """Top-down: the questions whose first "Do you need more information?" the base LLM answered No."""
    traces = [json.loads(line)["trace"] for line in (folder / "predictions.jsonl").read_text().splitlines()]
    return sum(trace["turns"][0].get("needs_more") is False for trace in traces if trace["turns"])


def row_of(result: dict) -> dict:
    config, metrics = result["config"], result["metrics"]
    settings = {k: v for k, v in config.items()
                if k not in ("split", "dataset", "method", "variant", "type_bias", "code")}
    row = {"split": config["split"], "dataset": config["dataset"], "method": config["method"],
           "variant": config["variant"], "questions": metrics["count"],
           "seconds_per_question": result["seconds"]["per_question"], "settings": settings,
           "defaults": settings == DEFAULTS, "cache": result.get("cache"), "said_no": result.get("said_no"),
           "type_bias": config.get("type_bias"), "code": config.get("code")}
    if "em" in metrics:
        row.update(em=metrics["em"], f1=metrics["f1"])
    else:
        row["accuracy"] = metrics["accuracy"]
    return row


def auroc(positives: list[float], negatives: list[float]) -> float | None:
    """P(a right document outscores a wrong one), ties counting half."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 3)


def folder_name(variant: str) -> str:
    return variant.replace(" ", "-").replace("=", "")


def factuality_auroc(work: Path, split: str, variant: str = "defaults") -> dict:
    """Per card (and over all cards), the AUROC of the factuality score at separating documents that
    name the gold winner as the winner from those that do not (bottom-up, open book)."""
    from kcard_card_midterm2022.corpus import races

    losers = {normalize(race["winner"]): normalize(race["loser"]) for race in races()}
    path = work / split / "midterm-openbook" / "bottom-up" / folder_name(variant) / "predictions.jsonl"
    if not path.exists():
        return {}
    scores: dict[str, tuple[list, list]] = {}
    for line in path.open():
        row = json.loads(line)
        gold = normalize(row["answers"][0])
        loser = losers.get(gold)
        for doc in row["trace"]["documents"]:
            stage = doc.get("stages", {}).get("factuality")
            if not stage or stage.get("score") is None:
                continue
            text = normalize(stage.get("text") or doc["text"])
            right = gold in text and not (loser and loser in text and text.index(loser) < text.index(gold))
            for card in (doc["card"], "all cards"):
                scores.setdefault(card, ([], []))[0 if right else 1].append(stage["score"])
    return {card: {"auroc": auroc(*pair), "right": len(pair[0]), "wrong": len(pair[1])}
            for card, pair in sorted(scores.items())}


def report(rows: list[dict], aurocs: dict) -> str:
    def table(split: str, variants: bool) -> str:
        lines = ["| data set | method | variant | questions | EM / accuracy | s / question | cache hits | said No |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if r["split"] == split and (r["variant"] != "defaults") == variants:
                score = r.get("em", r.get("accuracy"))
                cache = r["cache"] or {}
                mark = "" if r.get("type_bias") else " †"
                lines.append(f"| {r['dataset']} | {r['method']}{mark} | {r['variant']} | {r['questions']} "
                             f"| {score:.1f} "
                             f"| {r['seconds_per_question']:.2f} | {cache.get('hits', '–')} / "
                             f"{cache.get('hits', 0) + cache.get('misses', 0) or '–'} "
                             f"| {'–' if r.get('said_no') is None else r['said_no']} |")
        return "\n".join(lines)

    cards = sorted({card for by_card in aurocs.values() for card in by_card})
    auroc_lines = ["| card | " + " | ".join(aurocs) + " |", "|---|" + "---|" * len(aurocs)] + [
        f"| {card} | " + " | ".join(
            f"{v[card]['auroc']} ({v[card]['right']} right, {v[card]['wrong']} wrong)" if card in v else "–"
            for v in aurocs.values()) + " |" for card in cards]
    settings = ", ".join(f"{k} = {v}" for k, v in DEFAULTS.items()).replace(
        "n1 = None", "n1 = each card's own (one document: no first-party card sets [generation] n)")
    return f"""# Knowledge lift on held-out MidtermQA, at the defaults

Base LLM and settings: the defaults of `kcard ask` / `kcard eval` ({settings}); every first-party
card installed (7); llama.cpp, greedy answers, seeded card samples; 2 CPU cores, one process alone.
The answer prompt asks the question, gives the knowledge, asks the question again (the reader's
layout, chosen on the tuning split: `reader.md`); with answer options, neither copy shows them.
Questions 1-100 are the tuning split (prompts, demos and defaults were chosen on them); 101-505
are held out. Open book: EM; 2-way / 4-way: accuracy. Cache hits: card generations read from the
on-disk cache (a hit costs no generation), of all card calls. Said No: top-down questions whose
"Do you need more information?" the base LLM answered No (top-down-auto still asks the card whose
text alone holds a word of the question; none of these did). † asked before the answer step asked
again for an answer of the question's type (type_bias = {defaults.TYPE_BIAS}; not run again).

## Held out (questions 101-505)

{table("held-out", False)}

## Tuning split (questions 1-100)

{table("tuning", False)}

Variants of bottom-up (tuning split; each changes one setting of the defaults):

{table("tuning", True)}

## Factuality: does the score separate right documents from wrong ones?

Bottom-up, open book: a document is right when it names the gold winner (and not after the
loser); AUROC = the chance that a right document outscores a wrong one (ties count half), per card
and over all documents that reached the factuality selector. "–" or None: the card wrote only
one kind. Quoted passages (retrieval cards) score 1 by design; the LM cards' rows measure the judge.

{chr(10).join(auroc_lines)}

Reproduce: `python benchmarks/knowledge_lift_heldout.py --split held-out --methods
vanilla,retrieval,bottom-up,top-down-auto,top-down-exp --datasets midterm-openbook` (and
`--split tuning --methods bottom-up,top-down-auto --variant all`; n1 = 3 was not run: n1 = 2 already
costs 7 s a question for the same EM); rows accumulate in `results/knowledge-lift-heldout.json`.
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=list(SPLITS), default="held-out")
    parser.add_argument("--methods", default="bottom-up")
    parser.add_argument("--datasets", default="midterm-openbook")
    parser.add_argument("--variant", action="append", default=[],
                        help=f"a tuning variant of bottom-up, or 'all': {', '.join(VARIANTS)}")
    parser.add_argument("--limit", type=int, default=None, help="only the split's first N questions (a probe)")
    parser.add_argument("--work", type=Path, default=cache_dir() / "benchmarks" / "knowledge-lift-heldout")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    rows = stored.get("rows", [])
    jobs = [] if args.report_only else [(d, m, "defaults", DEFAULTS) for d in args.datasets.split(",")
                                        for m in args.methods.split(",")]
    names = list(VARIANTS) if "all" in args.variant else args.variant
    jobs += [("midterm-openbook", "bottom-up", name, {**DEFAULTS, **VARIANTS[name]}) for name in names]
    for dataset, method, variant, settings in jobs:
        result = run_one(args.split, dataset, method, variant, settings, args.work, args.limit)
        row = row_of(result)
        print(json.dumps(row), flush=True)
        if args.limit is None:  # probes on part of a split are not reported
            key = (row["split"], row["dataset"], row["method"], row["variant"])
            rows = [r for r in rows if (r["split"], r["dataset"], r["method"], r["variant"]) != key] + [row]
    rows = [r for r in rows if r["settings"] == {**DEFAULTS, **VARIANTS.get(r["variant"], {})}]  # stale ones go
    rows.sort(key=lambda r: (r["split"] != "held-out", r["dataset"], r["variant"] != "defaults", r["variant"],
                             r["method"]))
    aurocs = {"held-out, agreement (default)": factuality_auroc(args.work, "held-out"),
              "tuning, agreement (default)": factuality_auroc(args.work, "tuning"),
              "tuning, judge = embedding": factuality_auroc(args.work, "tuning", "judge=embedding")}
    # from the traces in --work; where they are not there (another machine), as stored
    aurocs = {name: by_card or stored.get("factuality_auroc", {}).get(name) for name, by_card in aurocs.items()}
    aurocs = {name: by_card for name, by_card in aurocs.items() if by_card}
    write_result("knowledge-lift-heldout", {"rows": rows, "factuality_auroc": aurocs, "defaults": DEFAULTS},
                 report(rows, aurocs))


if __name__ == "__main__":
    main()
