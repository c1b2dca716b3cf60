"""Answer scoring: SQuAD-style exact match and F1 (kcard_core.text), PopQA's alias match."""

from __future__ import annotations

from kcard_core.text import normalize


def exact_match(prediction: str, answers: list[str]) -> float:
    return float(any(normalize(prediction) == normalize(answer) for answer in answers))


def contains_answer(prediction: str, answers: list[str]) -> float:
    """PopQA's accuracy: some gold alias occurs in the prediction (case-insensitively)."""
    lowered = prediction.lower()
    return float(any(answer.lower() in lowered for answer in answers if answer))
