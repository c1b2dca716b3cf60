"""Evaluation data sets: MidtermQA (open book, 2-way, 4-way), PopQA, and the user's own JSONL.

Nothing is committed: the files are read from --data, $KCARD_DATA, or the user's data folder
(kcard_core.config.data_dir).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcard_core.config import data_dir, user_data_dir
from kcard_core.errors import KcardError
from kcard_core.text import OPTIONS_MARK, parse_options


# name -> (file under the data folder, kind)
DATASETS = {
    "midterm-openbook": ("midtermqa/openbook.json", "open"),
    "midterm-2way": ("midtermqa/binary.json", "choice"),  # 2 options
    "midterm-4way": ("midtermqa/fourchoice.json", "choice"),  # 4 options
    "popqa": ("popqa/dev.jsonl", "popqa"),
}


@dataclass
class Example:
    id: str
    question: str  # as asked (a multiple-choice question without its options line)
    answers: list[str]  # gold answers (aliases); for multiple choice, the right option's name
    options: dict[str, str] = field(default_factory=dict)  # multiple choice: {"A": "Dean Tran", ...}
    label: str | None = None  # multiple choice: the right option's letter
    meta: dict[str, Any] = field(default_factory=dict)  # PopQA: relation, subject popularity

    @property
    def prompt_question(self) -> str:
        """The question the model reads: with its options, for multiple choice."""
        if not self.options:
            return self.question
        return self.question + OPTIONS_MARK + "; ".join(f"{k}. {v}" for k, v in self.options.items()) + "."


@dataclass
class Dataset:
    name: str
    kind: str  # "open" | "choice" | "popqa"
    demos: list[Example]
    examples: list[Example]


def load_dataset(name: str, data: str | Path | None = None) -> Dataset:
    """A known data set by name (``data``: the folder holding midtermqa/ and popqa/), or a JSONL file
    of {"question", "answers"} lines given as ``name``."""
    if name not in DATASETS:
        path = Path(name)
        if path.suffix != ".jsonl" or not path.is_file():
            raise KcardError(f"unknown data set {name!r}: one of {', '.join(DATASETS)}, or a .jsonl file of "
                             '{"question": ..., "answers": [...]} lines')
        return Dataset(path.stem, "open", [], _own_file(path))
    relative, kind = DATASETS[name]
    path = Path(data or data_dir()) / relative
    if not path.is_file():
        raise KcardError(f"{name} is not at {path}: pass --data FOLDER, set KCARD_DATA to that folder, or "
                         f"put {relative.split('/')[0]}/ in {user_data_dir()}")
    if kind == "popqa":
        return _popqa(name, path)
    raw = json.loads(path.read_text())
    count = {"midterm-2way": 2, "midterm-4way": 4}.get(name)
    convert = (lambda item: _choice(item, count)) if kind == "choice" else _open
    return Dataset(name, kind, [convert(item) for item in raw["demos"]], [convert(item) for item in raw["testset"]])


def _open(item: dict) -> Example:
    return Example(str(item["id"]), item["question"], [item["answer"]])


def _choice(item: dict, count: int | None) -> Example:
    question, _, line = item["question"].partition("\n")
    options = parse_options(line, count)
    return Example(str(item["id"]), question.strip(), [options.get(item["answer"], item["answer"])], options,
                   item["answer"])


def _popqa(name: str, path: Path) -> Dataset:
    """PopQA with 15-shot demos: the first question of each of its relations, kept out of the test set."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    examples = [Example(str(row["id"]), row["question"], row["possible_answers"],
                        meta={"relation": row["prop"], "s_pop": row["s_pop"],
                              "popularity_bin": popularity_bin(row["s_pop"])}) for row in rows]
    demos, seen = [], set()
    for example in examples:
        if example.meta["relation"] not in seen:
            seen.add(example.meta["relation"])
            demos.append(example)
    return Dataset(name, "popqa", demos, [e for e in examples if e not in demos])


def popularity_bin(s_pop: int) -> str:
    """Decades of monthly page views: "10^2-10^3" and so on."""
    power = int(math.log10(max(s_pop, 1)))
    return f"10^{power}-10^{power + 1}"


def _own_file(path: Path) -> list[Example]:
    examples = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            answers = row["answers"] if isinstance(row["answers"], list) else [row["answers"]]
            examples.append(Example(str(row.get("id", number)), row["question"], [str(a) for a in answers]))
        except (ValueError, KeyError, TypeError) as error:
            raise KcardError(f"{path}:{number}: need a JSON object with 'question' and 'answers' ({error})") from None
    if not examples:
        raise KcardError(f"{path} holds no questions")
    return examples
