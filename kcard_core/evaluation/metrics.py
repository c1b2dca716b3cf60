"""Answer scoring: SQuAD-style exact match and F1, multiple-choice parsing, PopQA's alias match."""

from __future__ import annotations

import re
import string
from collections import Counter

ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, answers: list[str]) -> float:
    return float(any(normalize(prediction) == normalize(answer) for answer in answers))


def f1(prediction: str, answers: list[str]) -> float:
    """The best token-overlap F1 against any gold answer."""
    predicted = normalize(prediction).split()
    best = 0.0
    for answer in answers:
        gold = normalize(answer).split()
        common = sum((Counter(predicted) & Counter(gold)).values())
        if common:
            precision, recall = common / len(predicted), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains_answer(prediction: str, answers: list[str]) -> float:
    """PopQA's accuracy: some gold alias occurs in the prediction (case-insensitively)."""
    lowered = prediction.lower()
    return float(any(answer.lower() in lowered for answer in answers if answer))


def _named(prediction: str, options: dict[str, str]) -> list[str]:
    """The options whose names the prediction contains, in the order it names them; a name inside
    another named one ("John Smith" in "John Smith Jr.") is not a second choice."""
    lowered = normalize(prediction)
    found = {key: normalize(name) for key, name in options.items()}
    found = {key: name for key, name in found.items() if name and name in lowered}
    named = [key for key, name in found.items() if not any(name != other and name in other for other in found.values())]
    return sorted(named, key=lambda key: lowered.index(found[key]))


def _closest(prediction: str, options: dict[str, str], at_least: float) -> str | None:
    """The option whose name has the best token F1 with the prediction, if that F1 exceeds ``at_least``."""
    scores = {key: f1(prediction, [name]) for key, name in options.items()}
    best = max(scores, key=scores.get, default=None)
    return best if best is not None and scores[best] > at_least else None


def named_option(prediction: str, options: dict[str, str]) -> str | None:
    """The option a free answer names ("Mike Rogers" names "Mike D. Rogers"); None when it names none.
    Letters do not count: this reads answers given without the options in sight."""
    named = _named(prediction, options)
    return named[0] if named else _closest(prediction, options, at_least=0.5)


def choose_option(prediction: str, options: dict[str, str]) -> str | None:
    """The option a free-text prediction picks: the one option whose name it contains (a name outweighs
    a letter small models put first by habit, as in "A. <option B's name>"), else a leading label
    ("B", "B.", "(B)"), else the first option it names, else the option with the best token F1, else None."""
    text = prediction.strip()
    named = _named(text, options)
    if len(named) == 1:
        return named[0]
    label = re.match(r"^\(?([A-Z])\)?(?:[.):\s]|$)", text)
    if label and label[1] in options:
        return label[1]
    return named[0] if named else _closest(text, options, at_least=0.0)
