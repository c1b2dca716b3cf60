"""Adaptive activation (Mallen et al., ACL 2023): consult cards only about entities that are not popular.

A language model remembers what the web repeats: facts about popular entities it knows, facts about
rare ones it does not. So the question's subject is looked up in a popularity table (monthly page
views), and cards are asked only when it is below a per-relation threshold. Thresholds are fitted by
brute force on a dev split (``calibrate``), as in the paper.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from kcard_core.errors import KcardError

ALWAYS, NEVER = math.inf, 0.0  # thresholds: cards below the threshold, so inf = always, 0 = never


@dataclass(frozen=True)
class Popularity:
    entity: str
    views: int  # monthly page views of the entity
    relation: str | None = None  # what is asked about it ("capital", "director", ...), when known


class PopularityTable:
    """Entity → monthly page views, with question templates per relation ("What is the capital of {}?").

    The subject of a question is the longest entity of the table it names.
    """

    MAX_WORDS = 12

    def __init__(self, views: dict[str, int], templates: dict[str, str] | None = None):
        self.views = views
        self.templates = {relation: re.compile(re.escape(t).replace(r"\{\}", "(.+)") + "$")
                          for t, relation in (templates or {}).items()}

    def __call__(self, question: str) -> Popularity | None:
        question = question.strip()
        relation = next((r for r, pattern in self.templates.items() if pattern.match(question)), None)
        words = question.split()
        for size in range(min(self.MAX_WORDS, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                candidate = " ".join(words[start:start + size]).strip("?.,!;:\"'")
                if candidate in self.views:
                    return Popularity(candidate, self.views[candidate], relation)
        return None

    @classmethod
    def from_popqa(cls, path: Path) -> "PopularityTable":
        """PopQA's subjects with their s_pop, and each relation's question template."""
        views, templates = {}, {}
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                views[row["subj"]] = row["s_pop"]
                if row["subj"] in row["question"]:
                    templates[row["question"].replace(row["subj"], "{}", 1)] = row["prop"]
        return cls(views, templates)


def use_cards(popularity: Popularity | None, thresholds: dict[str, float]) -> bool:
    """Below the relation's threshold (or ``default``), or unknown: ask the cards."""
    if popularity is None:
        return True
    threshold = thresholds.get(popularity.relation or "", thresholds.get("default", ALWAYS))
    return popularity.views < threshold


def best_threshold(rows: list[dict]) -> float:
    """The threshold that maximises accuracy over ``rows`` ({"views", "with", "without"}: 1 when the
    system with / without cards was right). Candidates: the 10-bin histogram edges of ln(views),
    never and always; ties go to the cheaper one (fewer card calls)."""
    logs = [math.log(max(row["views"], 1)) for row in rows]
    low, high = min(logs), max(logs)
    edges = [math.exp(low + (high - low) * i / 10) for i in range(11)]
    candidates = sorted({NEVER, *edges, ALWAYS})

    def accuracy(threshold: float) -> float:
        return sum(row["with"] if row["views"] < threshold else row["without"] for row in rows)

    return max(candidates, key=lambda t: (accuracy(t), -t))


def fit(rows: list[dict]) -> dict[str, float]:
    """Per-relation thresholds (rows carry "relation"), and "default" fitted over all rows."""
    relations = {row["relation"] for row in rows}
    thresholds = {relation: best_threshold([r for r in rows if r["relation"] == relation]) for relation in relations}
    thresholds["default"] = best_threshold(rows)
    return thresholds


def score(rows: Iterable[dict], thresholds: dict[str, float]) -> tuple[float, float]:
    """(accuracy, share of questions that consulted cards) of the gate on ``rows``."""
    rows = list(rows)
    consulted = [use_cards(Popularity("", row["views"], row["relation"]), thresholds) for row in rows]
    right = sum(row["with"] if c else row["without"] for row, c in zip(rows, consulted))
    return right / len(rows), sum(consulted) / len(rows)


def calibrate(rows: list[dict], splits: int = 100, dev_share: float = 0.75, seed: int = 0) -> dict[str, Any]:
    """Fit on a random 75 % and score on the rest, ``splits`` times; then fit once on everything.

    Returns the mean held-out accuracy of never / always / gated, the gated share of card calls,
    and the thresholds fitted on all rows (the ones to use).
    """
    generator = random.Random(seed)
    totals = {"never": 0.0, "always": 0.0, "gated": 0.0, "gated_card_share": 0.0}
    for _ in range(splits):
        shuffled = rows[:]
        generator.shuffle(shuffled)
        cut = int(len(shuffled) * dev_share)
        dev, test = shuffled[:cut], shuffled[cut:]
        gated, share = score(test, fit(dev))
        totals["gated"] += gated
        totals["gated_card_share"] += share
        totals["never"] += score(test, {"default": NEVER})[0]
        totals["always"] += score(test, {"default": ALWAYS})[0]
    means = {key: round(100 * value / splits, 2) for key, value in totals.items()}
    return {"held_out": means, "splits": splits, "questions": len(rows), "thresholds": fit(rows)}


def paired_runs(runs: str | Path, dataset: str, with_method: str, without_method: str) -> list[dict]:
    """The questions ``kcard eval DATASET --out RUNS`` answered both with and without cards, each with
    its relation, its subject's popularity and both scores: what :func:`calibrate` fits."""
    def load(method: str) -> dict[str, dict]:
        path = Path(runs) / dataset / method / "predictions.jsonl"
        if not path.is_file():
            raise KcardError(f"no predictions at {path}: run kcard eval {dataset} --mode {method} --out {runs}")
        return {row["id"]: row for row in map(json.loads, path.open())}

    with_rows, without_rows = load(with_method), load(without_method)
    rows = [{"relation": row["meta"].get("relation"), "views": row["meta"]["s_pop"],
             "with": row["scores"]["accuracy"], "without": without_rows[key]["scores"]["accuracy"]}
            for key, row in with_rows.items() if key in without_rows and "s_pop" in row["meta"]]
    if len(rows) < 8:
        raise KcardError(f"{len(rows)} questions with a popularity in both runs: at least 8 are needed")
    return rows
