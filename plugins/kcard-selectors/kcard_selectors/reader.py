"""The "rules" reader: the base LLM's answer, steered by English rules about what a question asks for.

See :meth:`RulesReader.reading` for the steps and :mod:`kcard_selectors.answer_types` for the rules.
"""

from __future__ import annotations

import re
from typing import Any, Generator

from langchain_core.language_models import BaseLanguageModel

from kcard_core import defaults
from kcard_core.chains.prompts import narrowing_prompt
from kcard_core.readers import Ask, Reader
from kcard_core.text import (COPIED_WORDS, answering_part, copied, labels, looped, named_option, one_line,
                             repeats, shares_a_word, split_options, stands_in, unlabelled, without_options,
                             words_of)
from kcard_core.trace import Trace, Turn
from kcard_selectors import answer_types

FAVOURED = re.compile(r"\w+(?:-\w+)*")  # a favoured word is whole with its hyphens ("thirty-one")
APPOSITION = r"\s*([,:])"  # what sets a name beside a phrase


def apposition(question: str, answer: str, knowledge: str) -> str:
    """The mark (``,`` or ``:``) that follows ``answer`` in ``knowledge`` when the answer only repeats
    the question's words, so that the answer can go on as the knowledge does; empty for an answer that
    says anything the question does not, for a question that offers a choice ("X or Y?"), and when no
    such mark follows the answer in the knowledge."""
    if not repeats(answer, question) or " or " in question.lower():
        return ""
    found = re.search(re.escape(answer) + APPOSITION, knowledge, re.IGNORECASE)
    return found.group(1) if found else ""


class RulesReader(Reader):
    """Takes the base LLM and ``type_bias``, the logit bias for asking again for an answer of the
    question's type (0: never). Returns the answer after these steps, each decision a trace turn:

    1. A multiple-choice question ("… Options: A. X; B. Y.") is answered open, the options out of
       sight, and matched to an option by name; only an answer that names none is asked again with
       the options shown.
    2. The answer favours the knowledge's words that the question lacks (a kcard backend's model).
    3. An answer that only repeats the question goes on as the knowledge does (:func:`apposition`).
    4. Where the question asks for a type (:func:`~kcard_selectors.answer_types.answer_type`), the
       knowledge is prose (no passages under heading paths) and the answer names none of the
       knowledge's spans of that type, it is asked again favouring those; a typed answer that says
       part of a name becomes the whole name.
    5. An answer that loops (:func:`~kcard_core.text.looped`) or copies a stretch of the knowledge out
       (:func:`~kcard_core.text.copied`) gives way to the knowledge's span of at most
       :data:`~kcard_core.text.COPIED_WORDS` words (so never a copy itself) that the base LLM finds
       likeliest as a whole answer, where the base LLM ``copies``; never a label
       (:func:`~kcard_core.text.labels`: a heading path's first level, a numbered heading's number),
       which names the text rather than answers ("pic-21.html", a document's title, "5.1").
    6. The answer keeps the part that answers (:func:`~kcard_core.text.answering_part`): of "A: B"
       the side that says a word the question does not, no closing aside in brackets, and no
       quotation marks around it whole; an answer standing in a heading the knowledge is under, not
       the label words the question repeats (:func:`~kcard_core.text.unlabelled`: "Version 4.3" → "4.3").
    7. An answer that still only repeats the question (:func:`~kcard_core.text.repeats`: "14.0" for
       "Which option did 14.0 add?"), or, where the knowledge is passages under heading paths (a
       document, quoted), has no white-space word that stands in it ("2.1.0" where it says "2.1.*";
       "4.1.0 to 4.2.0." goes on to step 8, which keeps a run the knowledge says), gives way to the
       knowledge's likeliest span that says more, as in step 5.
    8. An answer of more than one word narrows to the run of its whole words that the base LLM finds
       likeliest as a whole answer (its tokens, then an end; :meth:`~kcard_core.readers.Reader.narrowing`):
       "1.1.1" of "1.1.1 - 2025-06-24", "<bug-patch@gnu.org>" of "Please report bugs via email to
       <bug-patch@gnu.org>"; then, where the knowledge is passages under heading paths and the answer
       is still of more than one word, to the run it finds likeliest as the short answer after it
       shown as a long answer (:func:`~kcard_core.chains.prompts.narrowing_prompt`):
       "95.2%" of "95.2% lines of code.", "14.2" of "14.2: Fix port switching …". Each time it stays
       whole where the knowledge does not say that run ("4.1.0" of "4.1.0 to 4.2.0." says what no
       passage does) or where the run only repeats the question; the first time also where the run
       stands in a heading path the answer goes beyond ("python-dotenv" of "python-dotenv ›
       Command-line Interface: $ pip install …"). Neither run is ever a numbered title's number ("1"
       of "1 Introduction › 1.2 Options › -l: Define …"), the second never a label as in step 5 (a
       document's title: "python-dotenv"), though a heading's other parts may be ("14.2").

    As any reply may still change, none is shown as it comes: a stream gets the answer whole.
    """

    def __init__(self, llm: BaseLanguageModel, type_bias: float = defaults.TYPE_BIAS):
        super().__init__(llm)
        self.type_bias = type_bias

    @classmethod
    def from_spec(cls, spec: Any, llm: BaseLanguageModel) -> "RulesReader":
        return cls(llm) if spec is None else cls(llm, type_bias=spec.type_bias)

    def copy_hint(self, question: str, knowledge: str) -> dict[str, Any]:
        """``favour``: the knowledge's words the question does not hold (a kcard backend's model only)."""
        if not self.takes_hints:
            return {}
        asked = words_of(without_options(question), FAVOURED)
        words = dict.fromkeys(word for word in FAVOURED.findall(knowledge) if word.lower() not in asked)
        return {"favour": tuple(words)} if words else {}

    def holds_answer(self, question: str, text: str) -> bool | None:
        """Whether ``text`` holds a span of the type the question asks for (a year, a count, a name);
        None for a question of no type."""
        return bool(answer_types.typed_spans(question, text)) if answer_types.answer_type(question) else None

    def typed_spans(self, question: str, trace: Trace) -> list[str]:
        """The knowledge's spans of the type the question asks for; none with ``type_bias`` 0, for a
        multiple-choice question, for a model that takes no hint (asked again, it would say the same),
        or for knowledge under heading paths (a document's passages: the types are told from prose)."""
        if not self.type_bias or not self.takes_hints or split_options(question)[1] or trace.headed():
            return []
        return answer_types.typed_spans(question, trace.knowledge())

    def reading(self, question: str, trace: Trace) -> Generator[Ask, str, str]:
        knowledge, prompt = trace.knowledge(), self.prompt(question, trace)
        hint = self.copy_hint(question, knowledge)
        stem, options = split_options(question)
        chat = not isinstance(prompt, str)
        if options and (chat or one_line(question) in prompt):  # the stem wherever the prompt asks the question
            reply = yield Ask(self.prompt(stem, trace) if chat else prompt.replace(one_line(question), one_line(stem)),
                              hint)
            key = named_option(reply, options)
            trace.turns.append(Turn("answered without the options, matched to one", reply, details={"option": key}))
            if key:
                return f"{key}. {options[key]}"
        spans = self.typed_spans(question, trace)
        reply = yield Ask(prompt, hint)
        if options:
            return reply
        headings = trace.headings()
        named, numbers = labels(headings), labels(headings, titles=False)  # a document's title, a section's number
        mark = "" if chat else apposition(question, reply, knowledge)
        if mark:
            trace.turns.append(Turn("the answer only repeated the question: it goes on as the knowledge does",
                                    reply, details={"goes on after": reply + mark}))
            more = yield Ask(f"{prompt} {reply}{mark}", hint)
            reply = f"{reply}{mark} {more}" if more else reply
        # a reply that loops, or copies the knowledge out, gives way to the knowledge's likeliest short span
        why = ("looped" if looped(reply) else "copied the knowledge out" if copied(reply, knowledge) else "")
        if why and knowledge and self.copies:
            span = yield self.copying(prompt, question, knowledge, words=COPIED_WORDS, refused=named)
            trace.turns.append(Turn(f"the answer {why}: the knowledge's span likeliest as a whole answer instead",
                                    reply, details={"span": span}))
            reply = span or reply
        if spans:
            if not answer_types.of_type(reply, spans):
                again = yield Ask(prompt, {"favour": tuple(dict.fromkeys(FAVOURED.findall(" ".join(spans)))),
                                           "favour_bias": self.type_bias})
                trace.turns.append(Turn(f"the answer is no {answer_types.answer_type(question)} from the "
                                        "knowledge: asked again, favouring those", reply,
                                        details={"spans": spans, "asked again": again}))
                reply = answer_types.settled(again, spans) or reply
            reply = answer_types.whole(reply, question, knowledge)
        part = unlabelled(answering_part(reply, question), question, headings)
        if part != reply:
            trace.turns.append(Turn("the answer keeps its part that says what the question does not", reply,
                                    details={"part": part}))
        lack = ""  # an answer that only repeats the question, or (a document's passages) has no word they hold
        if repeats(part, question):
            lack = "only repeated the question"
        elif trace.headed() and not shares_a_word(part, knowledge):
            lack = "has no word of the document's"
        if lack and not why and knowledge and self.copies:
            span = yield self.copying(prompt, question, knowledge, words=COPIED_WORDS, refused=named)
            trace.turns.append(Turn(f"the answer {lack}: the knowledge's span likeliest as a whole answer instead",
                                    part, details={"span": span}))
            part = unlabelled(answering_part(span, question), question, headings) if span else part
        for short in (False, True):  # the answer to the chain's prompt, then (documents) a long answer's short one
            if len(part.split()) < 2 or not self.copies or short and not trace.headed():
                break
            refused = tuple(label for label in (named if short else numbers) if label != part)  # it may stay whole
            shorter = yield self.narrowing(narrowing_prompt(question, part) if short else prompt, question, part,
                                           refused=refused)
            label = not short and any(shorter in h for h in headings) and not any(part in h for h in headings)
            if (shorter != part and stands_in(shorter, knowledge) and not label
                    and not repeats(shorter, question)):
                trace.turns.append(Turn("the answer narrows to its part the base LLM finds likeliest as a whole "
                                        + ("short answer after it" if short else "answer"), part,
                                        details={"narrowed": shorter}))
                part = shorter
        return part
