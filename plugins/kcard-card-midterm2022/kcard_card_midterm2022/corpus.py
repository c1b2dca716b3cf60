"""News-style reports of the 2022 U.S. midterm races, built from MidtermQA (Feng et al., MIT licence).

The races (each with its winner and the opponent named in the two-way question) ship in this
package as races.jsonl, derived from MidtermQA's binary.json, with MidtermQA's licence beside it
(MIDTERMQA-LICENSE); `python -m kcard_card_midterm2022.corpus races` rebuilds the file from
$KCARD_DATA/midtermqa. The reports are written from the races on use, phrased as news prose rather
than as questions.
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path

from kcard_core.text import parse_options

RACES = Path(__file__).with_name("races.jsonl")
QUESTION = re.compile(r"Who won the (?P<race>.+?) in the 2022 U\.S\. midterm elections\?")
# The race comes before the winner in every phrasing: a language model trained on "X won race R"
# learns to name the race after the winner, not the winner after the race (the "reversal curse").
REPORTS = [
    "In the {race} in the 2022 U.S. midterm elections, {winner} defeated {loser}.",
    "The {race} in the 2022 U.S. midterm elections was won by {winner}, who defeated {loser}.",
    "2022 U.S. midterm elections, {race}: {winner} won and {loser} lost.",
]
# A card is prompted with the user's question, then writes. Training reports under a headline that
# names the race teaches the model to write about the race named in the line above it; without
# one it starts a report on any race it likes, whatever the question asked.
HEADLINES = [
    "{race}, 2022 U.S. midterm elections",
    "2022 midterm results: the {race}",
    "Election night 2022 in the {race}",
]


@lru_cache(maxsize=1)
def races() -> list[dict[str, str]]:
    """Each race with its winner and the opponent named in the two-way question (shipped: races.jsonl)."""
    return [json.loads(line) for line in RACES.read_text(encoding="utf-8").splitlines() if line.strip()]


def races_from_midtermqa(folder: Path) -> list[dict[str, str]]:
    """The races as MidtermQA's binary.json (in ``folder``) gives them: how races.jsonl is made."""
    binary = json.loads((folder / "binary.json").read_text())
    found = []
    for item in binary["demos"] + binary["testset"]:
        match = QUESTION.match(item["question"])
        options = parse_options(item["question"].partition("\n")[2], count=2)
        winner = options.get(item["answer"])
        losers = [name for key, name in options.items() if key != item["answer"] and name not in ("N/A", winner)]
        if match and winner:
            found.append({"race": match["race"], "winner": winner, "loser": losers[0] if losers else "no opponent"})
    return found


def news_corpus() -> list[str]:
    """One short report per race (the phrasing varies from race to race): the retrieval card's passages."""
    return [REPORTS[index % len(REPORTS)].format(**race) for index, race in enumerate(races())]


def training_corpus() -> list[str]:
    """Every race in every phrasing, each under a headline: the LM card's training text (facts seen
    in several wordings are recalled from new wordings, such as a question, far better than facts
    seen once)."""
    return [f"{HEADLINES[(index + shift) % len(HEADLINES)]}\n{report}".format(**race)
            for index, race in enumerate(races()) for shift, report in enumerate(REPORTS)]


if __name__ == "__main__":
    # python -m kcard_card_midterm2022.corpus races: rebuild races.jsonl from $KCARD_DATA/midtermqa;
    # python -m kcard_card_midterm2022.corpus OUT.jsonl: write the LM card's training text for `kcard train`
    if sys.argv[1] == "races":
        from kcard_core.config import data_dir

        RACES.write_text("".join(json.dumps(race, ensure_ascii=False) + "\n"
                                 for race in races_from_midtermqa(data_dir() / "midtermqa")), encoding="utf-8")
    else:
        with open(sys.argv[1], "w") as out:
            out.writelines(json.dumps({"text": text}) + "\n" for text in training_corpus())
