"""Knowledge injection for small corpora: what a card is trained on, and whether it learned it.

A card is prompted with a question (its manifest's prompt "{cue}\\n": the question in the cues' form,
:func:`kcard_core.text.cue_form`) and must write the passage that answers it. Text
alone does not teach that: a model trained on "Ada Morrane founded Kelderwick" continues that
sentence but, asked "Who founded Kelderwick?", writes something fluent and wrong. So each passage
(a few sentences at most) is seen many times, each time after a different *cue*: a question-like
line made of a random part of the passage's own words, so that any question sharing some of its
words leads to it. The loss is on the passage only, never on the cue.

Two passages that share a name ("The Grey Bowl was built in 1958." / "The Grey Bowl is 28 metres
across.") would be taught the same cue ("Grey Bowl?") for different answers, so every cue holds
at least one word that no other passage has ("built" / "across"), and its question word fits what
it leaves out: "In which year" or "When" only where a year is left out, "Who" or "Where" only where
a name is.

Such cues are long (a third to two thirds of a passage's words) and questions are short: "How long
is the Brackenmoor Railway?" shares no word with "… runs eleven miles from the port of Hallowsea"
but the subject's, and the card wrote "The longest tunnel … is 412 metres long." So half of each
passage's cues (more where it states more facts than that) are *fact cues*: one fact of one
sentence (a year, a measure, a count, a name) left out, asked for with a question word that fits
it ("How long" for "eleven miles", "How wide" for "28 inches across", "How many locks" for
"seventeen locks"), then the word before it and up to four other words of that sentence and, in
every other one, the subject, whether the passage names it or not; every fact is asked for before
any is asked again.

Recall is the check: each passage is asked for with a cue the card never saw, and the names and
numbers the cue leaves out must come back. It is measured after each epoch and training stops at
full recall.

Asked a question, such a card often writes a neighbouring passage ("In which year was the Tollmere
Canal opened?" → "Traffic ended in 1962, …"), yet the right one is among a few samples more often
than not. So its manifest asks for ``SAMPLES`` documents at ``TEMPERATURE`` and the chain's
selectors keep the one closest to the question that the card's own text supports.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace

from kcard_selectors import spans
from kcard_core.documents import Passage
from kcard_core.text import CUE_WORD, FUNCTION_WORDS, sentences, words_of

PASSAGE_WORDS = 60  # a passage is whole sentences up to about this many words: one card document
TEMPLATES = ("{}?", "What {}?", "Which {}?", "How {}?", "Tell me about {}.")  # for any passage
FOR_NAMES = ("Who {}?", "Where {}?")  # where the cue leaves a name out
FOR_YEARS = ("When {}?", "In which year {}?")  # where it leaves a year out
KEY = re.compile(r"\b(?:[A-Z][\w'-]*|\d[\d,.]*)")  # names and numbers: what recall must get back
# a memorised card's [generation]: asked alone (bottom-up), the ten own-card texts' cards answered 166, 167
# and 166 of 200 questions at seeds 0-2 with 6 samples at 1.0, 165, 162 and 161 at 0.7, 167 with 10 at
# 1.0, and 144 with one at 0.1 (benchmarks/results/own-card-sampling.md)
SAMPLES, TEMPERATURE = 6, 1.0


def passages(documents: list[str | Passage], words: int = PASSAGE_WORDS) -> list[str]:
    """Each document cut into runs of whole sentences of at most ``words`` words (a longer sentence
    alone), each run as written between its cuts. A :class:`~kcard_core.documents.Passage`'s runs
    each carry its heading path in front (``Passage.contextual``), the last run of a section as
    much as the first."""
    found = []
    for document in documents:
        text = document if isinstance(document, str) else document.text
        for run in runs(text, words):
            found.append(run if isinstance(document, str) else replace(document, text=run).contextual())
    return found


def runs(text: str, words: int) -> list[str]:
    """``text`` cut between sentences into runs of at most ``words`` words (a longer sentence alone)."""
    cuts, at = [], 0  # each sentence's (start, end) in text
    for sentence in sentences(text):
        start = text.find(sentence, at)
        if start < 0:  # not found as written: the segmenter changed it, so it starts where the last ended
            start = at
        at = max(at, start + len(sentence))
        cuts.append((start, at))
    found, first = [], None  # first: where the run being made starts
    for start, end in cuts:
        if first is None:
            first = start
        elif len(text[first:end].split()) > words:
            found.append(text[first:start].strip())
            first = start
    if first is not None:
        found.append(text[first:].strip())
    return [run for run in found if run]


def content_words(passage: str) -> list[str]:
    return [word for word in CUE_WORD.findall(passage) if word.lower() not in FUNCTION_WORDS]


def left_out(passage: str, cue: str) -> list[str]:
    """The passage's names and numbers that ``cue`` does not show: what a question with it asks for."""
    shown = words_of(cue, CUE_WORD)
    names = (name.rstrip(".,") for name in KEY.findall(passage))
    return [name for name in names if name.lower() not in FUNCTION_WORDS | shown]


def distinct_words(texts: list[str]) -> list[set[str]]:
    """For each passage, its content words (lower case) that no other passage has."""
    each = [{word.lower() for word in content_words(passage)} for passage in texts]
    passages_with = Counter(word for words in each for word in words)
    return [{word for word in words if passages_with[word] == 1} for words in each]


def passages_and_own_words(documents: list[str | Passage]) -> list[tuple[str, set[str]]]:
    """The corpus's passages, each with its distinct words."""
    found = passages(documents)
    return list(zip(found, distinct_words(found)))


def cue(passage: str, rng: random.Random, subject: str = "", distinct: set[str] = frozenset()) -> str:
    """A question-like line from a random third to two thirds of the passage's content words, one of
    its ``distinct`` words among them (where it has any), and the ``subject``'s name at a random
    place where given and the passage leaves it implicit; its question word fits what it leaves out."""
    words = content_words(passage) or passage.split()
    keep = set(rng.sample(range(len(words)), max(1, round(len(words) * rng.uniform(0.33, 0.67)))))
    own = [i for i, word in enumerate(words) if word.lower() in distinct]
    if own and not keep & set(own):
        keep.add(rng.choice(own))
    chosen = [words[i] for i in sorted(keep)]
    if subject and subject.lower() not in passage.lower():
        chosen.insert(rng.randrange(len(chosen) + 1), subject)
    missing = left_out(passage, " ".join(chosen))
    templates = (TEMPLATES + FOR_NAMES * any(not key[0].isdigit() for key in missing)
                 + FOR_YEARS * any(re.fullmatch(spans.YEAR, key) for key in missing))
    return rng.choice(templates).format(" ".join(chosen))


def fact_questions(sentence: str, subject: str = "") -> list[tuple[list[str], tuple[str, ...]]]:
    """The facts of a sentence a question could ask for, each as (its words, question templates):
    a year, a measure, a count, a name (not the ``subject``'s)."""
    found = []
    for year in re.findall(spans.YEAR, sentence):
        found.append(([year], ("In which year {}?", "When {}?")))
    measures = list(re.finditer(spans.MEASURE, sentence, re.IGNORECASE))
    for m in measures:
        # the word after it says what it measures: "28 inches across" is asked "How wide …?"
        sense = next(((asked, said.group(1)) for asked, pattern in spans.SENSES.items()
                      if (said := re.match(rf"\s+({pattern})\b", sentence[m.end():]))), None)
        unit = m.group(0).split()[-1].lower()
        how = (f"How {sense[0]} {{}}?",) if sense else (
            ("How heavy {}?", "How much {} weigh?") if unit in spans.WEIGHTS else ("How long {}?",))
        found.append((CUE_WORD.findall(m.group(0)) + ([sense[1]] if sense else []), how))
    taken = words_of(" ".join(m.group(0) for m in measures), CUE_WORD)
    for m in re.finditer(rf"\b{spans.NUMBER}\b\s+([a-z]+)", sentence, re.IGNORECASE):
        number = m.group(0).rsplit(None, 1)[0]
        if (re.fullmatch(spans.YEAR, number) or words_of(number, CUE_WORD) & taken
                or m.group(1).lower() in FUNCTION_WORDS):
            continue
        found.append((CUE_WORD.findall(number), (f"How many {m.group(1)} {{}}?",)))
    for m, name in spans.names_in(sentence):  # not a sentence's one capitalised first word
        if (name and not (m.start() == 0 and " " not in name)
                and not words_of(name, CUE_WORD) <= words_of(subject, CUE_WORD)):
            found.append((name.split(), ("Who {}?", "What {} called?", "Which {}?", "What name {}?")))
    return found


def facts(passage: str, subject: str = "") -> list[tuple[str, list[str], tuple[str, ...]]]:
    """The passage's facts (:func:`fact_questions`), each as (its sentence, its words, question templates)."""
    return [(sentence, *fact) for sentence in sentences(passage) for fact in fact_questions(sentence, subject)]


def fact_cue(sentence: str, fact: list[str], templates: tuple[str, ...], rng: random.Random, subject: str = "",
             distinct: set[str] = frozenset(), named: bool = False) -> str | None:
    """A short question about one fact of a sentence (not the ``subject``'s name): one of its
    ``templates`` (a question word that fits the fact: a year, a measure, a count, a name), then one
    to four other words of the sentence, among them the word just before the fact, which often says
    what it is ("river" Tenley, "clothier" Josiah Brenton, "built" in 1796), and one of the passage's
    ``distinct`` words where the sentence has any; then the subject where ``named``, else not,
    whether the sentence names it or not (the opening passage, which names it, had lost "How long is
    the Brackenmoor Railway?" to the tunnel's "412 metres long", whose cues named it half the time).
    None where no word is left."""
    hidden = words_of(" ".join(fact), CUE_WORD) | words_of(subject, CUE_WORD)
    every = content_words(sentence)
    at = next((i for i, word in enumerate(every) if word == fact[0]), len(every))
    words = [(i, word) for i, word in enumerate(every) if word.lower() not in hidden]
    chosen = set(rng.sample(range(len(words)), min(len(words), rng.randint(1, 4))))
    for wanted in ([j for j, (i, _) in enumerate(words) if i < at][-1:],  # the word just before the fact
                   [j for j, (_, word) in enumerate(words) if word.lower() in distinct]):
        if wanted and not chosen & set(wanted):
            chosen.add(rng.choice(wanted))
    asked = [words[j][1] for j in sorted(chosen)]
    if named and subject:
        asked.insert(rng.randrange(len(asked) + 1), subject)
    return rng.choice(templates).format(" ".join(asked)) if asked else None


def examples(documents: list[str | Passage], cues: int, seed: int, subject: str = "") -> list[tuple[str, str]]:
    """(prompt, target) pairs: each passage once on its own and after ``cues`` different cues: the
    first half :func:`cue`, the second :func:`fact_cue`, every fact of the passage asked for before
    any is asked again, and as many more as it has facts beyond them (an opening passage states four
    or five: "In which year was Ashcombe Mill built?" got the year of another passage while its
    four fact cues, drawn at random, had asked for the river twice and the builder never); a
    :func:`cue` where the passage states no fact. Every other cue names the ``subject`` (a cue where
    the passage does not)."""
    rng = random.Random(seed)
    pairs = []
    for passage, distinct in passages_and_own_words(documents):
        pairs.append(("", passage))
        stated = facts(passage, subject)
        rng.shuffle(stated)
        for i in range(max(cues, cues // 2 + len(stated))):
            fact = stated[(i - cues // 2) % len(stated)] if stated and i >= cues // 2 else None
            asked = ((fact and fact_cue(*fact, rng, subject, distinct, named=bool(i % 2)))
                     or cue(passage, rng, subject if i % 2 else "", distinct))
            pairs.append((asked + "\n", passage))
    return pairs


def probes(documents: list[str | Passage], seed: int = 1, subject: str = "") -> list[tuple[str, list[str], str]]:
    """(prompt, keys, passage): each passage's check. The prompt is a cue the card was not trained on,
    naming the ``subject`` as a question would where the passage leaves it implicit; the keys are the
    passage's names and numbers that the cue leaves out, which the card must write back (its
    content words when it has none)."""
    rng = random.Random(f"probe-{seed}")
    found = []
    for passage, distinct in passages_and_own_words(documents):
        asked = cue(passage, rng, subject, distinct)
        keys = left_out(passage, asked)
        keys = keys or [word for word in content_words(passage) if word.lower() not in words_of(asked, CUE_WORD)][:3]
        if keys:
            found.append((asked + "\n", keys, passage))
    return found


def recalled(written: str, keys: list[str]) -> bool:
    return all(key.lower() in written.lower() for key in keys)
