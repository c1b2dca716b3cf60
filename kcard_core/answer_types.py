"""What type of answer a question asks for, and the spans of that type in the knowledge.

A 270M reader handed the right text often answers with the wrong kind of thing from it: "How many
bells are in the tower?" → "1187" from "The abbey church was finished in 1187. Its tower … holds six
bells."; "To whom were the lands sold?" → "1539". Four types are told from the question's words
alone (a count, a measure, a year, a person or body); the chains ask again, favouring the spans of
that type, only when the answer holds none of them (see ``KnowledgeChain.answering``).
"""

from __future__ import annotations

import re

NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
                "hundred thousand million dozen").split()
_WORD_NUMBER = "|".join(NUMBER_WORDS)
NUMBER = rf"(?:\d[\d,.]*\d|\d|(?:{_WORD_NUMBER})(?:[- ](?:and[- ])?(?:{_WORD_NUMBER}))*)"
UNITS = ("miles mile metres metre meters meter feet foot inches inch yards yard kilometres kilometre kilometers "
         "kilometer km cm mm kilograms kilogram kg grams gram tonnes tonne tons ton pounds pound lb acres acre "
         "hectares hectare hours hour minutes minute seconds second days day weeks week months month years year "
         "centuries century litres litre liters liter gallons gallon degrees degree per cent percent").split()
UNIT = rf"(?:{'|'.join(UNITS)})\b"
YEAR = r"\b(?:1\d{3}|20\d{2})\b"
# words that start a sentence or join a name: not a name themselves ("The Quarne Vault" names "Quarne Vault")
NOT_NAMES = frozenset("a an the in on at by of and it its this that these those he she they his her their "
                      "since every each when after before there today once from to for with".split())
NAME = r"\b[A-Z][\w'’-]*(?:\s+(?:(?:and|of|the|de|van|von)\s+)?[A-Z][\w'’-]*)*"
WORD = re.compile(r"\w+")

TYPES = {  # the type, told from the question (lower case); the first that matches
    "count": r"\bhow many\b",
    "measure": r"\bhow (?:long|tall|high|wide|deep|far|heavy|old|big)\b|\bhow much\b.*\bweigh",
    "year": r"\b(?:which|what) year\b|^when (?:did|was|were)\b",
    "name": r"^who\b|\bwhom\b",
}


def answer_type(question: str) -> str | None:
    """"count", "measure", "year" or "name" (of a person or a body), or None for any other question."""
    asked = question.lower()
    return next((kind for kind, pattern in TYPES.items() if re.search(pattern, asked)), None)


def typed_spans(question: str, knowledge: str) -> list[str]:
    """The spans of ``knowledge`` of the type ``question`` asks for (none for an untyped question):
    for "How many bells …?" the numbers before "bells" (any number that no unit follows, when none
    is); for "How long …?" numbers with a unit; for "In which year …?" years; for "Who …?" names
    that the question does not already hold."""
    kind = answer_type(question)
    if kind == "count":
        counted = re.search(r"\bhow many (\w+)", question.lower())
        numbers = list(re.finditer(rf"\b{NUMBER}\b", knowledge, re.IGNORECASE))
        before = [m.group(0) for m in numbers if counted and re.match(
            rf"\s+(?:\w+\s+)?{re.escape(counted.group(1)[:4])}", knowledge[m.end():], re.IGNORECASE)]
        return before or [m.group(0) for m in numbers if not re.fullmatch(YEAR, m.group(0))
                          and not re.match(rf"\s+{UNIT}", knowledge[m.end():], re.IGNORECASE)]
    if kind == "measure":
        return re.findall(rf"\b{NUMBER}\s+{UNIT}", knowledge, re.IGNORECASE)
    if kind == "year":
        return re.findall(YEAR, knowledge)
    if kind == "name":
        asked = {word.lower() for word in WORD.findall(question)}
        spans = []
        for found in re.finditer(NAME, knowledge):
            words = found.group(0).split()
            while words and words[0].lower() in NOT_NAMES:
                words.pop(0)
            if key_words(" ".join(words)) - asked:
                spans.append(" ".join(words))
        return spans
    return []


def key_words(span: str) -> set[str]:
    """The words that make a span what it is (lower case): not its unit, not a joining word, not an initial."""
    return {word for word in (w.lower() for w in WORD.findall(span))
            if (len(word) > 1 or word.isdigit()) and word not in NOT_NAMES and word not in UNITS}


def of_type(answer: str, spans: list[str]) -> bool:
    """Whether ``answer`` names one of ``spans`` (one of its key words is enough: "Penlowe" names
    "Harriet Penlowe"; "30 metres" does not name "412 metres")."""
    said = {word.lower() for word in WORD.findall(answer)}
    return any(key_words(span) & said for span in spans)
