"""News-style reports of the 2022 U.S. midterm races, built from MidtermQA (Feng et al., MIT licence).

The reports are written from the data set's races, winners and opponents, phrased as news prose
rather than as questions. They are built on use and never committed; the data is read from
$KCARD_DATA/midtermqa (default: the `shared/data` folder beside this repository).
"""

from __future__ import annotations

import itertools
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from kcard_core.errors import KcardError

QUESTION = re.compile(r"Who won the (?P<race>.+?) in the 2022 U\.S\. midterm elections\?")
REPORTS = [
    "{winner} won the {race} in the 2022 U.S. midterm elections, defeating {loser}.",
    "In the 2022 U.S. midterm elections, {winner} defeated {loser} to win the {race}.",
    "2022 U.S. midterm elections results: {winner} won the {race}; {loser} lost.",
]


def data_dir() -> Path:
    if os.environ.get("KCARD_DATA"):
        return Path(os.environ["KCARD_DATA"])
    return Path(__file__).resolve().parents[3].parent / "shared" / "data"


def _load(name: str) -> dict:
    path = data_dir() / "midtermqa" / f"{name}.json"
    if not path.exists():
        raise KcardError(f"MidtermQA is not at {path}: set KCARD_DATA to the folder that holds midtermqa/")
    return json.loads(path.read_text())


def _options(question: str, count: int | None = None) -> dict[str, str]:
    """{"A": "Mike D. Rogers", "B": "Kathy Warner-Stanton"} from "...?\nA. Mike D. Rogers B. Kathy ...".

    Labels run A, B, ... with no gap (``count`` of them when known); each is found right to left as
    the last one before the next label, so that a middle initial ("Mike D. Rogers") is not taken
    for option D.
    """
    line = " " + question.split("\n", 1)[1].strip()
    labels = list(itertools.takewhile(lambda label: f" {label}. " in line, "ABCD"[:count]))
    options, end = {}, len(line)
    for label in reversed(labels):
        start = line.rfind(f" {label}. ", 0, end)
        if start < 0:
            break
        options[label] = line[start + 4:end].strip()
        end = start
    return dict(sorted(options.items()))


@lru_cache(maxsize=1)
def races() -> list[dict[str, str]]:
    """Each race with its winner and the opponent named in the two-way question."""
    binary = _load("binary")
    found = []
    for item in binary["demos"] + binary["testset"]:
        match = QUESTION.match(item["question"])
        options = _options(item["question"], count=2)
        winner = options.get(item["answer"])
        losers = [name for key, name in options.items() if key != item["answer"] and name not in ("N/A", winner)]
        if match and winner:
            found.append({"race": match["race"], "winner": winner, "loser": losers[0] if losers else "no opponent"})
    return found


def news_corpus() -> list[str]:
    """One short report per race (the phrasing varies from race to race)."""
    return [REPORTS[index % len(REPORTS)].format(**race) for index, race in enumerate(races())]
