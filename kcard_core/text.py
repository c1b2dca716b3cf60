"""Text helpers every layer shares: words, the word lists, sentences and whitespace.

Sentences come from sentencex (Wikimedia's rule-based segmenter, MIT): it knows abbreviations
("U.S.", "Dr.", "Sen."), initials ("Mike D. Rogers"), decimals and quotes. A split after every
". " cut 531 of the 1,041 sentences of the midterm news corpus at "2022 U.S." and dropped the
winner's name that followed; `benchmarks/segmenters.py` compares it with pysbd and blingfire.
"""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
from collections import Counter
from typing import Callable, Sequence

ENDS = (".", "!", "?", '."', '?"', '!"', ".”", "?”", "!”", ".'", ".)")
# Words too common to count as a match between a question and a passage (retrieval, evidence,
# factuality). "not", "no", "since", "after" stay matchable: with them left out, the reader answered
# 3 instead of 7 of the 10 real-document questions whose passages changed (docs/decisions.md).
STOPWORDS = frozenset("a an and are as at be by can could did do does for from has have in is it its of on or "
                      "that the this to was were what when where which who whom why how will with would".split())
# A card that memorised a text (kcard_train.memorise) learned to write each passage after *cues*: a
# question word and some of the passage's words, never these ("In which year built clothier the
# mill?"). Its manifest's prompt "{cue}" hands it a question in the same form.
FUNCTION_WORDS = (STOPWORDS - {"has", "have"}) | frozenset("""about after also been before but he her him his into
may might must no not over shall she should since so such than their then there these they those under whose
yes""".split())
ASKING_WORDS = frozenset("who whom which what when where how".split())  # a cue keeps these
CUE_WORD = re.compile(r"[\w'-]+")
SEPARATOR = " › "  # between the headings of a path ("Usage › Options")
WORD = re.compile(r"\w+")  # a word: a run of Unicode word characters
DIGIT = re.compile(r"\d")  # in any script


def words_of(text: str, word: re.Pattern = WORD) -> set[str]:
    """The words of ``text`` (by ``word``), in lower case."""
    return {found.lower() for found in word.findall(text)}


def one_line(text: str) -> str:
    """Collapse whitespace: a document can never start a line of its own in a prompt."""
    return " ".join(text.split())


def text_of(output: object) -> str:
    """The text of a LangChain model's output: plain LLMs return str, chat models a message."""
    return output if isinstance(output, str) else str(getattr(output, "content", output))


def looped(text: str) -> bool:
    """Whether ``text`` ends in one piece of at most 24 characters said over and over, for the last
    three times its length and at least 24 characters ("20000…", "Profiles › Overrides: Profiles ›
    Overrides: …"): a reply the model could not end."""
    text = text.rstrip()
    for size in range(1, 25):
        span = max(3 * size, 24)
        tail = text[-span:]
        if len(text) >= span and tail == (tail[:size] * (span // size + 1))[:span]:
            return True
    return False


COPIED_WORDS = 8  # a reply of more words found word for word in the knowledge copies it rather than answering


def stands_in(text: str, knowledge: str) -> bool:
    """Whether ``text`` has words and stands word for word in ``knowledge`` (white space and case aside)."""
    return bool(text.split()) and one_line(text).lower() in one_line(knowledge).lower()


def shares_a_word(text: str, knowledge: str) -> bool:
    """Whether a white-space word of ``text`` stands in ``knowledge`` (case aside)."""
    known = one_line(knowledge).lower()
    return any(word.lower() in known for word in text.split())


def copied(reply: str, knowledge: str) -> bool:
    """Whether ``reply`` holds more than :data:`COPIED_WORDS` words in a row standing word for word in
    ``knowledge`` (white space and case aside): a stretch of the knowledge copied out, whole or with a
    word left out or put before it, not a span that answers."""
    words, run, text = reply.split(), COPIED_WORDS + 1, one_line(knowledge).lower()
    return any(" ".join(words[i:i + run]).lower() in text for i in range(len(words) - run + 1))


# an aside closing an answer: a bracketed group after white space, a stop after it at most
ASIDE = re.compile(r"(.*?\S)\s+(?:\(([^()]*)\)|\[([^\[\]]*)\]|（([^（）]*)）)[.,:;。]?")


def repeats(text: str, question: str) -> bool:
    """Whether ``text`` has words and all of them are ``question``'s ("$$" says something)."""
    words = words_of(text)
    return bool(words) and words <= words_of(question)


def _bare(token: str) -> str:
    """``token`` in lower case without the marks at its ends ("-R," → "r", "“Anchoring”" → "anchoring")."""
    return re.sub(r"^\W+|\W+$", "", token).lower()


def _ends_cut(items: list[str], goes: Callable[[str], bool]) -> list[str]:
    """``items`` without those at either end that ``goes``; one is always left."""
    start, end = 0, len(items)
    while end - start > 1 and goes(items[start]):
        start += 1
    while end - start > 1 and goes(items[end - 1]):
        end -= 1
    return items[start:end]


SECTION_NUMBER = re.compile(r"(\d+(?:\.\d+)*)\.?\s+[^\W\d_]")  # a numbered title's number ("5.1 Functions")


def labels(headings: Sequence[str], titles: bool = True) -> tuple[str, ...]:
    """What names the text rather than answers, of ``headings`` (heading paths, "A › B"): the number of
    each numbered title ("5.1" of "5.1 Math Library Functions", with and without its closing full
    stop; not a release's "1.2.1 - 2025-10-26"), and with ``titles`` each path's first level (a
    document's title, its file)."""
    found = [heading.split(SEPARATOR)[0] for heading in headings] if titles else []
    for level in (level for heading in headings for level in heading.split(SEPARATOR)):
        if number := SECTION_NUMBER.match(level):
            found += [number.group(1), number.group(1) + "."]
    return tuple(dict.fromkeys(found))


def unlabelled(answer: str, question: str, headings: Sequence[str]) -> str:
    """``answer`` without the label it copies from a heading around what answers: where the answer
    stands in one of ``headings`` (the heading paths the knowledge stands under, "A › B"), the levels
    at the ends of its path whose words the question holds all ("ENVIRONMENT › GREP_COLORS" →
    "GREP_COLORS" for "Which environment variable …?"); then, of an answer holding a number, the
    words at its ends that the question holds and that hold no digit ("Version 4.3" → "4.3" for
    "Which make version added X?"): a numbered heading's number is what tells it from the others,
    its words say which kind it is. Words of a name stay ("kcard cache clear" for "Which kcard
    command clears the cache?"), and so does an answer that stands in no heading. Returns ``answer``
    stripped where nothing goes; never an empty string."""
    whole = one_line(answer).strip(" :" + SEPARATOR)
    if not whole or not any(whole.lower() in heading.lower() for heading in headings):
        return answer.strip()
    asked = words_of(question)
    levels = _ends_cut(whole.split(SEPARATOR), lambda level: words_of(level) <= asked)
    tokens = SEPARATOR.join(levels).split()
    if any(DIGIT.search(token) for token in tokens):
        said = {_bare(token) for token in question.split()} | {""}
        tokens = _ends_cut(tokens, lambda token: _bare(token) in said and not DIGIT.search(token))
    return " ".join(tokens).strip(" :," + SEPARATOR) or whole


def answering_part(answer: str, question: str) -> str:
    """The part of ``answer`` that answers ``question``, by its punctuation and the question's words
    alone (no word list, any language that writes these marks):

    - of a pair "A: B", one side where the other only repeats the question's words ("1: An error
      occurred." → "1" for "Which exit status means that an error occurred?");
    - then, of an answer closing on an aside in brackets, "A (B)", what stands before it ("3.4.0
      (2024-10-08)" → "3.4.0"), or the aside where A only repeats the question's words;
    - last, of an answer quoted whole, what it quotes ("“Wolverine distrusts my printer”", "`--with-ssl'"):
      a quotation mark at each end (:func:`quote_mark`) and none between them.

    Returns ``answer`` unchanged (stripped) when none applies; never an empty string."""
    whole = answer.strip()
    part = whole
    if ": " in part:
        before, after = part.split(": ", 1)
        part = before if repeats(after, question) else after if repeats(before, question) else part
    if aside := ASIDE.fullmatch(part):  # one bracket pair matched: the last group that took part
        before, inside = aside.group(1), aside.group(aside.lastindex)
        part = inside.strip() if repeats(before, question) else before
    part = part if part == whole else part.rstrip(".,:;。 ") or whole
    inside = part[1:-1].strip()
    quoted = inside and quote_mark(part[0]) and quote_mark(part[-1]) and not any(map(quote_mark, inside))
    return inside if quoted else part


def quote_mark(ch: str) -> bool:
    """Whether ``ch`` is a quotation mark of any script (Unicode names it one: " “ ” „ « »), an
    apostrophe or a grave accent (which plain text quotes with: 'A', `A')."""
    return ch in "'`" or "QUOTATION MARK" in unicodedata.name(ch, "")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out. A sentence ends only where white space
    follows its mark: a full stop inside a name ("orjson.JSONDecodeError", "1.2.Final") ends nothing."""
    from sentencex import segment  # a compiled extension: a few milliseconds, paid by the first caller

    text, found, end = text.strip(), [], 0
    for part in filter(None, (part.strip() for part in segment("en", text))):
        start = text.find(part, end)
        if found and start == end and found[-1].endswith("."):
            found[-1] += part
        else:
            found.append(part)
        end = start + len(part) if start >= 0 else end
    return found


def cue_form(question: str) -> str:
    """``question`` as a memorised card's cues put it: its words but the function words, its asking
    words kept, and "In" before "which year" ("In which year was the mill built?" → "In which year
    mill built?"; "On which hill does the observatory stand?" → "Which hill observatory stand?")."""
    words = CUE_WORD.findall(question)
    kept = [word for i, word in enumerate(words)
            if word.lower() not in FUNCTION_WORDS or word.lower() in ASKING_WORDS
            or (word.lower() == "in" and [w.lower() for w in words[i + 1:i + 3]] == ["which", "year"])]
    line = " ".join(kept)
    return f"{line[:1].upper()}{line[1:]}?"


def complete_sentences(text: str) -> str:
    """A card's text on one line, without the unfinished sentence that generation cut off.

    Only the last sentence is dropped, and only when it is unfinished and a finished one comes
    before it: a text that is one unfinished sentence ("In the Idaho senate race in the 2022 U.S.
    midterm elections, Mike Crapo defeated") is kept whole, since the name at its end is what it
    knows.
    """
    text = one_line(text)
    parts = sentences(text)
    if len(parts) < 2 or parts[-1].endswith(ENDS):
        return text
    cut = text.rfind(parts[-1])
    return text[:cut].rstrip() if cut > 0 else text


# -- answers and multiple choice: one place for the chains, the cards and kcard eval -------------

OPTIONS_MARK = " Options: "  # a multiple-choice question as asked: "Who won …? Options: A. X; B. Y."
ARTICLES = re.compile(r"\b(a|an|the)\b")


def without_options(question: str) -> str:
    """What knowledge is written for: the question without its answer options (a card that reads
    "A. Neil Parrott; B. David Trone" writes about the first name as if it were the answer)."""
    return question.split(OPTIONS_MARK)[0]


def split_options(question: str) -> tuple[str, dict[str, str]]:
    """("Who won …?", {"A": "X", "B": "Y"}) from "Who won …? Options: A. X; B. Y."; no options when the
    question is not in that form."""
    stem, mark, listed = question.partition(OPTIONS_MARK)
    listed = listed[:-1] if listed.endswith(".") else listed
    options = [re.fullmatch(r"([A-Z])\. (.+)", part.strip()) for part in listed.split("; ")] if mark else []
    if not options or not all(options):
        return question, {}
    return stem, {match[1]: match[2] for match in options}


def parse_options(line: str, count: int | None = None) -> dict[str, str]:
    """{"A": "Mike D. Rogers", "B": "Kathy Warner-Stanton"} from "A. Mike D. Rogers B. Kathy Warner-Stanton".

    Labels run A, B, ... without a gap; each is found right to left as the last one before the next
    label, so that a middle initial ("Mike D. Rogers") is not taken for option D.
    """
    line = " " + line.strip()
    labels = list(itertools.takewhile(lambda label: f" {label}. " in line, "ABCDEFGH"[:count]))
    options, end = {}, len(line)
    for label in reversed(labels):
        start = line.rfind(f" {label}. ", 0, end)
        options[label] = line[start + 4:end].strip()
        end = start
    return dict(sorted(options.items()))


def normalize(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(ARTICLES.sub(" ", text).split())


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
