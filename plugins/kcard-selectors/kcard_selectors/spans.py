"""Spans of English text that a question can ask for: numbers (in figures or words), measures,
prices, times of day, years, months and names, as regular expressions over the text.

Shared by the rules reader's answer types (:mod:`kcard_selectors.answer_types`) and by LM-card
training's fact cues (``kcard_train.memorise``); English only.
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
WEIGHTS = frozenset("kilograms kilogram kg grams gram tonnes tonne tons ton pounds pound lb".split())  # of UNITS
UNIT = rf"(?:{'|'.join(UNITS)})\b"
MEASURE = rf"\b{NUMBER}\s+(?:[a-z]+\s+)?{UNIT}"  # a word may qualify the unit: "twenty-two nautical miles"
# the word after a measure that tells what it measures, for the question's "how …" ("38 metres tall"
# is no answer to "How far away can the light be seen?", "twenty-two nautical miles away" is)
SENSES = {"tall": "tall|high", "high": "high|tall", "far": "away|off|distant", "wide": "wide|across",
          "deep": "deep", "thick": "thick", "long": "long", "old": "old"}
# a sum of money: "£40,000", "$3 million", "a single pound", "twelve guineas"
CURRENCY = r"(?:pounds?|shillings?|guineas?|pence|penny|dollars?|euros?|francs?|crowns?)\b"
SCALES = ("hundred", "thousand", "million", "billion", "dozen")  # how many of a number, not the number itself
SCALE = rf"(?:{'|'.join(SCALES)})\b"  # after figures: "£3 million", "3 million pounds"
PRICE = rf"[£$€]\s?{NUMBER}(?:\s+{SCALE})?|\b(?:{NUMBER}|an?(?:\s+single)?)\s+(?:{SCALE}\s+)?{CURRENCY}"
CLOCK = (rf"\b(?:(?:half|quarter|\d+|{_WORD_NUMBER}) (?:minutes )?(?:past|to) {NUMBER}|{NUMBER} o'clock"
         r"|\d{1,2}[.:]\d{2}(?:\s*[ap]\.?m\b\.?)?|\d{1,2}\s*[ap]\.?m\b\.?|noon|midday|midnight|dawn|dusk|sunrise|sunset)\b")
YEAR = r"\b(?:1\d{3}|20\d{2})\b"
MONTH = r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b"
# words that start a sentence or join a name: not a name themselves ("The Quarne Vault" names "Quarne Vault")
NOT_NAMES = frozenset("a an the in on at by of and it its this that these those he she they his her their "
                      "since every each when after before during there today once from to for with".split())
NAME = r"\b[A-Z][\w'’-]*(?:\s+(?:(?:and|of|the|de|van|von)\s+)?[A-Z][\w'’-]*)*"


def names_in(text: str):
    """Each name in ``text`` with the match it came from, less the words before it that are no name
    (:data:`NOT_NAMES`: "The Quarne Vault" names "Quarne Vault"; "In" names nothing)."""
    for found in re.finditer(NAME, text):
        words = found.group(0).split()
        while words and words[0].lower() in NOT_NAMES:
            words.pop(0)
        if words:
            yield found, " ".join(words)
