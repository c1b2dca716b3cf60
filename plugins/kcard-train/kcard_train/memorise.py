"""Knowledge injection for small corpora: what a card is trained on, and whether it learned it.

A card is prompted with a question ("{query}\\n") and must write the passage that answers it. Text
alone does not teach that: a model trained on "Ada Morrane founded Kelderwick" continues that
sentence but, asked "Who founded Kelderwick?", writes something fluent and wrong. So each passage
(a few sentences at most) is seen many times, each time after a different *cue*: a question-like
line made of a random part of the passage's own words, so that any question sharing some of its
words leads to it. The loss is on the passage only, never on the cue.

Recall is the check: each passage is asked for with a cue the card never saw, and the names and
numbers the cue leaves out must come back. It is measured after each epoch and training stops at
full recall.
"""

from __future__ import annotations

import random
import re

from kcard_core.text import sentences

PASSAGE_WORDS = 60  # a passage is whole sentences up to about this many words: one card document
STOP = set("""a an the of in on at to for from by with and or but is are was were be been it its this that these
those as into than then there their they he she his her him who whom whose which what when where why how do does
did not no yes so such can could will would shall should may might must also after before over under about""".split())
TEMPLATES = ("{}?", "Who {}?", "What {}?", "Which {}?", "When {}?", "Where {}?", "In which year {}?", "How {}?",
             "Tell me about {}.")
KEY = re.compile(r"\b(?:[A-Z][\w'-]*|\d[\d,.]*)")  # names and numbers: what recall must get back


def passages(texts: list[str], words: int = PASSAGE_WORDS) -> list[str]:
    """Each document cut into runs of whole sentences of at most ``words`` words (a longer sentence alone)."""
    found = []
    for text in texts:
        run: list[str] = []
        for sentence in sentences(text):
            if run and len(" ".join([*run, sentence]).split()) > words:
                found.append(" ".join(run))
                run = []
            run.append(sentence)
        if run:
            found.append(" ".join(run))
    return found


def content_words(passage: str) -> list[str]:
    return [word for word in re.findall(r"[\w'-]+", passage) if word.lower() not in STOP]


def topic(texts: list[str]) -> str:
    """The corpus's subject: the name its first sentence opens with ("The Halvard Observatory is a
    fictional observatory …" -> "Halvard Observatory"); empty when it opens with no name."""
    first = sentences(texts[0])[0] if texts and texts[0].strip() else ""
    opening = re.match(r"(?:[A-Z][\w'-]*\s*)*", first).group().split()  # its leading capitalised words
    return " ".join(opening[1:] if opening and opening[0].lower() in STOP else opening)


def cue(passage: str, rng: random.Random, subject: str = "") -> str:
    """A question-like line from a random third to two thirds of the passage's content words, and
    the ``subject``'s name at a random place where given and the passage leaves it implicit."""
    words = content_words(passage) or passage.split()
    keep = sorted(rng.sample(range(len(words)), max(1, round(len(words) * rng.uniform(0.33, 0.67)))))
    chosen = [words[i] for i in keep]
    if subject and subject.lower() not in passage.lower():
        chosen.insert(rng.randrange(len(chosen) + 1), subject)
    return rng.choice(TEMPLATES).format(" ".join(chosen))


def examples(texts: list[str], cues: int, seed: int, subject: str = "") -> list[tuple[str, str]]:
    """(prompt, target) pairs: each passage once on its own and after ``cues`` different cues, half
    of them naming the ``subject`` where the passage does not."""
    rng = random.Random(seed)
    pairs = []
    for passage in passages(texts):
        pairs.append(("", passage))
        pairs += [(cue(passage, rng, subject if i % 2 else "") + "\n", passage) for i in range(cues)]
    return pairs


def probes(texts: list[str], seed: int = 1, subject: str = "") -> list[tuple[str, list[str]]]:
    """(prompt, keys): each passage's check. The prompt is a cue the card was not trained on, naming
    the ``subject`` as a question would where the passage leaves it implicit; the keys are the
    passage's names and numbers that the cue leaves out, which the card must write back (its
    content words when it has none)."""
    rng = random.Random(f"probe-{seed}")
    found = []
    for passage in passages(texts):
        asked = cue(passage, rng, subject)
        shown = {word.lower() for word in re.findall(r"[\w'-]+", asked)}
        names = (name.rstrip(".,") for name in KEY.findall(passage))
        keys = [key for key in names if key.lower() not in STOP | shown]
        keys = keys or [word for word in content_words(passage) if word.lower() not in shown][:3]
        if keys:
            found.append((asked + "\n", keys))
    return found


def recalled(written: str, keys: list[str]) -> bool:
    return all(key.lower() in written.lower() for key in keys)
