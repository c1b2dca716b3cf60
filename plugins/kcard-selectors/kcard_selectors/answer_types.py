"""What type of answer a question asks for, and the spans of that type in the knowledge.

A 270M reader handed the right text often answers with the wrong kind of thing from it: "How many
bells are in the tower?" → "1187" from "The abbey church was finished in 1187. Its tower … holds six
bells."; "To whom were the lands sold?" → "1539". Nine types are told from the question's words
alone (a count, a measure, a price, a year, a time of day, a month, a place, a person or body, the
title of a thing: "Which firm …?", "What is the night train called?"); the chains ask again,
favouring the spans of that type, only when the answer holds none of them (see
``kcard_selectors.reader.RulesReader``).
"""

from __future__ import annotations

import re
from collections import Counter

from kcard_core.retrieval import stem
from kcard_core.text import ASKING_WORDS, WORD, sentences, words_of
from kcard_selectors.spans import (CLOCK, MEASURE, MONTH, NOT_NAMES, NUMBER, NUMBER_WORDS, PRICE, SCALES, SENSES, UNIT,
                                   UNITS, WEIGHTS, YEAR, names_in)

# "which" or "what" before a thing, not before a verb ("What is …", "What did …")
WHICH_THING = r"\b(?:which|what) (?!(?:is|was|are|were|do|does|did|has|have|had)\b)"
PREPOSITIONS = frozenset("of in on at to for with from by near that which".split())  # where a thing's words end
# what a place follows ("carried the ledgers to the clock loft"), and the phrase itself: up to six
# words, to a comma, a joining word or another preposition but "of" ("to the open ground of Tanner's
# Field"), never a number ("rose to four feet")
AT_PLACE = "in into on onto at to from inside within under beneath below above behind beside near over across along"
PHRASE_ENDS = PREPOSITIONS - {"of"} | frozenset("and or but as is was are were who when while until after before "
                                                 "during".split())
PHRASE = rf"(?:(?:the|an?|its|their|his|her)\s+)?(?!{NUMBER}\b|{MONTH})[\w'’-]+(?:\s+[\w'’-]+){{0,5}}"
QUESTION_WORDS = ASKING_WORDS | frozenset("did does do was were is are has have had".split())  # and their verbs

TYPES = {  # the type, told from the question (lower case); the first that matches
    "count": r"\bhow many\b",
    "measure": r"\bhow (?:long|tall|high|wide|deep|thick|far|heavy|old|big)\b|\bhow much\b.*\bweigh",
    "price": r"\bhow much\b.*\b(?:cost|costs|pay|paid|buy|bought|sell|sold|price)\b|\bfor how much\b",
    "year": r"\b(?:which|what) year\b|^when (?:did|was|were)\b",
    "time": r"\b(?:which|what) (?:time|hour)\b",
    "month": r"\b(?:which|what) month\b",
    "place": r"^where\b",
    "name": r"^who\b|\bwhom\b",
    "title": rf"{WHICH_THING}\w|\bcalled\b|\bname of\b",
}
# where a title stands in the knowledge: after "called", "named" or "known as" ("known as the Glowworm
# Express"), and beside the thing the question asks which of ("the island of Ivra", "the river
# Dunmere", "the Grey Heron, the ship …"; "the Glasgow firm of Ardrie and Vane" is a firm, not Glasgow)
CALLED = r"\b(?:called|named|known as)\s+(?:the\s+)?$"
# the words a text may use for the thing asked which of, by each word: a schooner is a ship, a firm a company
KINDS = {word: kinds for kinds in (frozenset(group.split()) for group in (
    "ship boat vessel schooner steamer brig barque ketch sloop trawler tug yacht liner ferry",
    "company firm business maker makers works",
    "town village city port hamlet",
    "hill fell mount mountain peak ridge",
    "river stream brook burn beck",
    "lake loch tarn mere pond",
)) for word in kinds}
BETWEEN = r"(?:,?\s+[a-z]+){0,3},?\s+$"  # up to three small words between the thing and its title


def answer_type(question: str) -> str | None:
    """"count", "measure", "price", "year", "time" (of day), "month", "place", "name" (of a person or
    a body) or "title" (of a thing: "Which island …?", "What is … called?"), or None for any other
    question."""
    asked = question.lower()
    return next((kind for kind, pattern in TYPES.items() if re.search(pattern, asked)), None)


def typed_spans(question: str, knowledge: str) -> list[str]:
    """The spans of ``knowledge`` of the type ``question`` asks for (none for an untyped question):
    for "How many bells …?" the numbers before "bells" (any number that no unit follows, when none
    is); for "How long …?" numbers with a unit (those the question's sense follows, when any do: "…
    miles away" for "How far …?"; weights only for "How heavy …?": "40 tonnes", not "28 inches");
    for "For how much …?" sums of money; for "In which year …?" years; for "At what time …?" times
    of day; for "In which month …?" months; for "Where …?" the places of the knowledge's sentences
    closest to the question (:func:`phrases_after`); for "Who …?" names that the question does not already
    hold, and where the closest sentences hold none, who they say did it ("worn by the county's
    postmen"); for a title, such names where :func:`titled` finds them."""
    kind = answer_type(question)
    if kind == "count":
        counted = re.search(r"\bhow many (\w+)", question.lower())
        numbers = list(re.finditer(rf"\b{NUMBER}\b", knowledge, re.IGNORECASE))
        before = [m.group(0) for m in numbers if counted and re.match(
            rf"\s+(?:\w+\s+)?{re.escape(counted.group(1)[:4])}", knowledge[m.end():], re.IGNORECASE)]
        return before or [m.group(0) for m in numbers if not re.fullmatch(YEAR, m.group(0))
                          and not re.match(rf"\s+{UNIT}", knowledge[m.end():], re.IGNORECASE)]
    if kind == "measure":  # a weight for "How heavy …?" or "How much … weigh?", else no weight
        weighed = bool(re.search(r"\bhow heavy\b|\bweigh", question.lower()))
        found = [m for m in re.finditer(MEASURE, knowledge, re.IGNORECASE)
                 if (m.group(0).split()[-1].lower() in WEIGHTS) == weighed]
        how = re.search(rf"\bhow ({'|'.join(SENSES)})\b", question.lower())
        sensed = [m for m in found if how and re.match(rf"\s+(?:{SENSES[how.group(1)]})\b", knowledge[m.end():])]
        return [m.group(0) for m in sensed or found]
    if kind == "price":
        return [m.group(0) for m in re.finditer(PRICE, knowledge, re.IGNORECASE)]
    if kind == "year":
        return re.findall(YEAR, knowledge)
    if kind == "time":
        return re.findall(CLOCK, knowledge, re.IGNORECASE)
    if kind == "month":
        return re.findall(MONTH, knowledge)
    if kind == "place":
        return phrases_after(AT_PLACE, question, closest(question, knowledge))
    if kind in ("name", "title"):
        asked = words_of(question)
        things = asked_things(question)
        spans = []
        for found, name in names_in(knowledge):
            # a name the question holds is no answer, unless it ends in the thing asked for and the
            # question holds its words apart ("Mill Day" for "What is the day the Saltholme Mill
            # Society … called?", not "Lifeboat Day" for "What was the first lifeboat … called?")
            new = key_words(name) - asked or (kind == "title" and name.split()[-1].lower().startswith(tuple(things))
                                              and not contains(WORD.findall(question), name.split()))
            if new and (kind == "name" or titled(name, things, knowledge[:found.start()], knowledge[found.end():])):
                spans.append(name)
        # a title that holds the thing's own word is that thing ("the Hartsmere Brewery" for "Which
        # brewery …?", not "the Green Room" after "called" in the same sentence)
        spans = [span for span in spans if holds_thing(span, things)] or spans
        if kind == "name":
            near = closest(question, knowledge)
            if not any(key_words(name) - asked for sentence in near for _, name in names_in(sentence)):
                spans += phrases_after("by", question, near)  # "worn by the county's postmen"
        return spans
    return []


def contains(words: list[str], part: list[str]) -> bool:
    """Whether ``part`` stands in ``words`` as it is, in order and side by side (any case)."""
    words, part = [w.lower() for w in words], [w.lower() for w in part]
    return any(words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1))


def whole(answer: str, question: str, knowledge: str) -> str:
    """The knowledge's name that ``answer`` says only part of, the rest being the question's words
    (the copy bias favours only words the question lacks): "The Mill Society" → "Saltholme Mill
    Society" for "Which society bought Saltholme Windmill?"; else (no name fits, or more than one)
    ``answer`` itself."""
    said = WORD.findall(answer)
    said = said[1:] if said and said[0].lower() in ("the", "a", "an") else said
    rest = words_of(question) | {word.lower() for word in said}
    names = {name for _, name in names_in(knowledge)
             if said and len(WORD.findall(name)) > len(said) and contains(WORD.findall(name), said)
             and words_of(name) <= rest}
    return names.pop() if len(names) == 1 else answer


def stems(text: str) -> set[str]:
    """The stems (retrieval's Snowball stemmer) of ``text``'s words that carry its meaning: "carri" of
    "carry" and "carried"; none of a question word or of :data:`NOT_NAMES`."""
    return {stem(word) for word in words_of(text) - NOT_NAMES - QUESTION_WORDS if len(word) > 2}


def closest(question: str, knowledge: str) -> list[str]:
    """The sentences of ``knowledge`` that share the most word stems (:func:`stems`) with the
    question, in their order; none where no sentence shares one."""
    asked, found = stems(question), sentences(knowledge)
    shared = [len(stems(sentence) & asked) for sentence in found]
    return [sentence for sentence, n in zip(found, shared) if n and n == max(shared)]


def phrases_after(after: str, question: str, near: list[str]) -> list[str]:
    """The phrases of the sentences ``near`` after one of the words ``after`` (:data:`PHRASE`, cut at
    :data:`PHRASE_ENDS`: a place after :data:`AT_PLACE`, who did a thing after "by") that the
    question does not already say; those right after the question's own words where any are ("the
    clock loft" of "… carried the ledgers to the clock loft" for "Where did the staff carry the
    ledgers?", not "the lower hall" of "the water in the lower hall")."""
    asked, asked_stems, found, right_after = words_of(question), stems(question), [], []
    for sentence in near:
        for match in re.finditer(rf"\b(?:{after.replace(' ', '|')})\s+({PHRASE})", sentence):
            words = match.group(1).split()
            words = words[:next((i for i, w in enumerate(words) if i and w.lower() in PHRASE_ENDS), len(words))]
            phrase = " ".join(words).rstrip(",.;:!?")
            if key_words(phrase) - asked:
                found.append(phrase)
                if stems(" ".join(WORD.findall(sentence[:match.start()])[-3:])) & asked_stems:
                    right_after.append(phrase)
    return right_after or found


def asked_things(question: str) -> list[str]:
    """The thing a title question asks which of, as its words' starts, then the words of its kind
    (:data:`KINDS`): ["island"] of "From which island …?", ["ship", "schooner", …] of "What was the
    name of the ship …?", ["largest", "pond", "lake", …] of "What is the largest pond in the garden
    called?"."""
    found = (re.search(r"\bname of (?:the |an? )?(?:[A-Z][\w'’]*\s+)*([a-z]\w*)", question)
             or re.search(rf"{WHICH_THING}(\w+)", question, re.I)
             or re.search(r"\b(?i:what) (?:is|was|are|were) (?:the |an? )?(?:[A-Z][\w'’]*\s+)*"
                          r"((?:[a-z][\w'’]*\s+)+)", question))
    words = [word.rstrip("'’") for word in found.group(1).lower().split()] if found else []
    words = words[:next((i for i, word in enumerate(words) if word in PREPOSITIONS | NOT_NAMES), len(words))]
    things = [word[:-1] if word.endswith("s") else word for word in words if word != "called"]
    return things + [kind for thing in things for kind in sorted(KINDS.get(thing, frozenset()) - {thing})]


def holds_thing(name: str, things: list[str]) -> bool:
    """Whether a word of ``name`` starts with one of ``things`` ("the Ellow Hills" for "hill")."""
    return any(word.lower().startswith(thing) for word in name.split() for thing in things)


def titled(name: str, things: list[str], before: str, after: str) -> bool:
    """Whether ``name``, with the knowledge ``before`` and ``after`` it, is the title of the thing
    asked for (:func:`asked_things`): after "called", "named" or "known as"; after the thing or a word
    of its kind ("the wrecked schooner Kittiwake" for "Which ship …?") with at most three small words
    between; before ", the thing"; or holding the thing's word ("the Ellow Hills" for "In which
    hills …?")."""
    return bool(re.search(CALLED, before)) or holds_thing(name, things) or any(
        re.search(rf"\b{thing}\w*{BETWEEN}", before, re.I)
        or re.match(rf",\s+(?:the|an?)\s+(?:\w+\s+)?{thing}", after, re.I) for thing in map(re.escape, things))


def runs_on(answer: str) -> bool:
    """Whether ``answer`` says the same two words three times or more: favoured words can loop ("MIS
    Director MIS Director …" for a PopQA "Who was the director of …?" with unrelated knowledge)."""
    words = [word.lower() for word in WORD.findall(answer)]
    return any(count >= 3 for count in Counter(zip(words, words[1:])).values())


def settled(again: str, spans: list[str]) -> str | None:
    """What an answer asked again, favouring ``spans``, settles on: itself when it names one and does
    not run on; when it runs on, the span it says in full most often ("The Leeds and Crane and
    Hattersley and Crane and Hattersley and Crane …" → "Hattersley and Crane"); when it names none,
    the knowledge's one span of the type where it has only one ("For how many years was the theatre
    closed?" read "1887" twice from "In 1887 a fire …, and the theatre stayed closed for two years");
    else None (the first answer stands)."""
    if not runs_on(again):
        if of_type(again, spans):
            return again
        return spans[0] if len(set(spans)) == 1 else None
    said = max(spans, key=lambda span: again.lower().count(span.lower()), default="")
    return said if said and said.lower() in again.lower() else None


def key_words(span: str) -> set[str]:
    """The words that make a span what it is (lower case): its numbers where it has any ("38 nautical
    miles" does not name "twenty-two nautical miles"), but a scale word beside another ("12 thousand"
    does not name "eight thousand"), else its words but a unit, a joining word or an initial."""
    found = {word for word in (w.lower() for w in WORD.findall(span))
             if (len(word) > 1 or word.isdigit()) and word not in NOT_NAMES and word not in UNITS}
    numbers = {word for word in found if word.isdigit() or word in NUMBER_WORDS}
    return numbers - set(SCALES) or numbers or found


def of_type(answer: str, spans: list[str]) -> bool:
    """Whether ``answer`` names one of ``spans`` (one of its key words is enough: "Penlowe" names
    "Harriet Penlowe"; "30 metres" does not name "412 metres")."""
    said = words_of(answer)
    return any(key_words(span) & said for span in spans)
