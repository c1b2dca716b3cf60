"""`kcard eval`: run one method over a data set, score every answer, keep every trace."""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import click

from kcard_core import defaults
from kcard_core.config import write_atomically
from kcard_core.evaluation.datasets import Dataset, Example
from kcard_core.evaluation.metrics import contains_answer, exact_match
from kcard_core.text import choose_option, f1, normalize

# "retrieval": bottom-up over the retrieval cards only (BM25 passages instead of written documents)
METHODS = (*defaults.BASELINES, "retrieval", *defaults.MODES)


def score(dataset: Dataset, example: Example, prediction: str) -> dict[str, Any]:
    """The example's scores (0/1 or F1 in [0, 1]) for the data set's metrics."""
    if dataset.kind == "choice":
        chosen = choose_option(prediction, example.options)
        # by name: some items list the winner twice (under two letters)
        right = chosen is not None and normalize(example.options[chosen]) == normalize(example.answers[0])
        return {"accuracy": float(right), "chosen": chosen}
    if dataset.kind == "popqa":
        return {"accuracy": contains_answer(prediction, example.answers)}
    return {"em": exact_match(prediction, example.answers), "f1": f1(prediction, example.answers),
            "contains": contains_answer(prediction, example.answers)}


def summarise(records: list[dict], group_by: Iterable[str] = ()) -> dict[str, Any]:
    """Mean of every numeric score (× 100), overall and per group (e.g. PopQA's relation)."""
    def means(rows: list[dict]) -> dict[str, float]:
        keys = [k for k, v in rows[0]["scores"].items() if isinstance(v, float)] if rows else []
        return {key: round(100 * sum(r["scores"][key] for r in rows) / len(rows), 2) for key in keys}

    summary: dict[str, Any] = {**means(records), "count": len(records)}
    for key in group_by:
        groups = defaultdict(list)
        for record in records:
            groups[record["meta"][key]].append(record)
        summary[f"by_{key}"] = {name: {**means(rows), "count": len(rows)} for name, rows in sorted(groups.items())}
    return summary


def chain_examples(dataset: Dataset, method: str) -> list[dict] | None:
    """In-context examples: the data set's own demos for the base LLM alone; the chains' own
    (which show knowledge being used) for the methods that add knowledge."""
    if method != "vanilla" or not dataset.demos:
        return None
    return [{"question": demo.prompt_question, "answer": demo.answers[0]} for demo in dataset.demos]


def chain_for(method: str, dataset: Dataset, cards: list[str] | None = None, revise: str | None = None,
              **options: Any):
    """The chain that runs ``method`` on ``dataset``: "retrieval" is bottom-up over the installed
    retrieval cards (of ``cards``, when given); "METHOD+revise" adds verify-and-revise (knowledge-f1),
    "METHOD+ensemble" top-down's yes/no ensemble."""
    from kcard_core.chains import build_chain
    from kcard_core.errors import KcardError
    from kcard_core.plugins import get_registry

    base, *extras = method.split("+")
    options["ensemble"] = options.get("ensemble") or "ensemble" in extras
    if base == "retrieval":
        cards = [name for name, card in get_registry().cards.items()
                 if card.manifest.type == "retrieval" and (not cards or name in cards)]
        if not cards:
            raise KcardError("the retrieval method needs a retrieval card: none is installed (or named)")
    revise = revise or ("knowledge-f1" if "revise" in extras else None)
    return build_chain("bottom-up" if base == "retrieval" else base, cards=cards or None, revise=revise,
                       examples=chain_examples(dataset, base), **options)


def evaluate(dataset: Dataset, chain, method: str, *, limit: int | None = None, out_dir: Path | None = None,
             config: dict | None = None, progress: bool = True) -> dict[str, Any]:
    """Ask every question (up to ``limit``), score the answers; write results.json and predictions.jsonl."""
    examples = dataset.examples[:limit]
    records, started = [], time.perf_counter()
    with click.progressbar(examples, label=f"{dataset.name} · {method}", file=sys.stderr,
                           hidden=not progress) as bar:
        for example in bar:
            began = time.perf_counter()
            result = chain.invoke(example.prompt_question)
            records.append({"id": example.id, "question": example.prompt_question, "answers": example.answers,
                            "label": example.label, "prediction": result["answer"],
                            "scores": score(dataset, example, result["answer"]), "meta": example.meta,
                            "seconds": round(time.perf_counter() - began, 3), "trace": result["trace"].to_dict()})
    seconds = time.perf_counter() - started
    groups = ("relation", "popularity_bin") if dataset.kind == "popqa" else ()
    result = {"dataset": dataset.name, "method": method, "metrics": summarise(records, groups),
              "seconds": {"total": round(seconds, 1), "per_question": round(seconds / max(1, len(records)), 2)},
              "date": time.strftime("%Y-%m-%d %H:%M"), "config": config or {}}
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(out_dir / "predictions.jsonl", "".join(json.dumps(r, default=str) + "\n" for r in records))
        write_atomically(out_dir / "results.json", json.dumps(result, indent=2, default=str) + "\n")
    return result
