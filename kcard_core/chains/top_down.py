"""Top-down (Algorithm 2): the base LLM says whether it needs more information and which card to ask.

AUTO: "What kind of information do you need?" and the reply is matched to card descriptions; a
question whose words only one card's text holds goes to that card, even when the base LLM said "No".
EXP: "Choose an information source from the following: ..." and the reply is matched to a card name.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable, Sequence

from langchain_core.runnables import RunnableConfig

from kcard_core import defaults
from kcard_core.chains.base import KnowledgeChain, card_texts, subject_owners
from kcard_core.chains.prompts import (BOTTOM_UP_EXAMPLES, CHOOSE_SOURCE, NEED_MORE, NEED_MORE_TEMPLATES,
                                       TOP_DOWN_EXAMPLES, WHAT_KIND, bottom_up_prompt, reading_examples,
                                       top_down_start)
from kcard_core.config import limit
from kcard_core.errors import KcardError
from kcard_core.retrieval import claimants
from kcard_core.selectors import SelectorPipeline, lexical_similarity
from kcard_core.text import one_line, without_options
from kcard_core.trace import CardChoice, Trace, Turn

Similarity = Callable[[str, Sequence[str]], list[float]]
# A stated need (AUTO) or an unnamed source (EXP) whose closest card description is less similar
# than this (MiniLM cosine) matches no card: the base LLM answers alone rather than read the
# nearest card's guess (EXP matched "news" to the midterm card for "Who wrote Pride and Prejudice?").
MIN_MATCH = 0.3


def parse_yes_no(reply: str) -> bool | None:
    """Yes/No from the reply's first word only ("I don't know" is neither; "Nothing" is not "No")."""
    words = re.findall(r"[a-z]+", reply.lower())
    if not words:
        return None
    return {"yes": True, "no": False}.get(words[0])


def match_card_name(reply: str, names: Sequence[str]) -> tuple[str | None, str]:
    """The card the reply names first: exact word, then close spelling. (name, how) or (None, why not)."""
    lowered = reply.lower()
    named = {found.start(): name for name in names  # whole names only: "news" is not in "news-2022"
             if (found := re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered))}
    if named:
        return named[min(named)], "named"
    words = re.findall(r"[\w-]+", lowered)
    for word in words:
        close = difflib.get_close_matches(word, [n.lower() for n in names], n=1, cutoff=0.75)
        if close:
            return next(n for n in names if n.lower() == close[0]), f"close to {word!r}"
    return None, "no card name in the reply"


class TopDown(KnowledgeChain):
    """``yes_probability`` (prompt -> P(yes)), when given, decides "do you need more information?" by
    contextual calibration (Zhao et al., 2021) instead of the reply's first word: yes when P(yes) is
    above its value for a content-free question ("N/A") after the same examples. Small base LLMs
    answer "No" to nearly everything; calibration removes that prior. ``ensemble`` asks the paper's
    three yes/no templates and follows the majority.
    """

    def __init__(self, llm, cards: list, factuality, *, explicit: bool = False, similarity: Similarity | None = None,
                 yes_probability: Callable[[str], float] | None = None, ensemble: bool = False,
                 n1: int | None = defaults.N1, max_iterations: int = 1, min_match: float = MIN_MATCH,
                 examples: list[dict] | None = None, **common):
        super().__init__(llm, **common)
        if not 1 <= max_iterations <= limit("KCARD_MAX_ITERATIONS"):
            raise KcardError(f"max_iterations must be between 1 and {limit('KCARD_MAX_ITERATIONS')} "
                             "(KCARD_MAX_ITERATIONS)")
        self.cards = cards
        self.by_name = {card.name: card for card in cards}
        self.factuality = factuality
        self.explicit = explicit
        self.similarity = similarity or lexical_similarity
        self.min_match = min_match if similarity else 0.0  # word overlap has no scale to hold it to
        self.n1 = n1
        self.max_iterations = max_iterations
        self.examples = TOP_DOWN_EXAMPLES if examples is None else examples
        self.yes_probability = yes_probability
        self.templates = NEED_MORE_TEMPLATES if ensemble else (NEED_MORE,)
        self._content_free: dict[str, float] = {}

    @property
    def mode(self) -> str:
        return "top-down-exp" if self.explicit else "top-down-auto"

    def prepare(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        prompt, knowledge = top_down_start(question, self.examples, self.explicit), []
        for iteration in range(1, self.max_iterations + 1):  # a real counter (the paper's forgets to count)
            votes = [self.needs_more(prompt, template, iteration, trace, config) for template in self.templates]
            need = sum(votes) * 2 > len(votes)  # the majority; an undecided reply voted yes already
            if len(votes) > 1:
                trace.turns.append(Turn("majority of the yes/no templates", "Yes" if need else "No", iteration, need,
                                        details={"unanimous": len(set(votes)) == 1}))
            if not need and not knowledge and self.overrules_no:
                need = self.claimed(question, trace, iteration)
            prompt += f"{NEED_MORE} {'Yes' if need else 'No'}\n"
            if not need:
                break
            prompt, found = self.knowledge_for(prompt, question, trace, config)
            if found:
                prompt += f"Knowledge: {one_line(found)}\n"
                knowledge.append(found)
        # The answer is read as bottom-up reads it: after this dialogue's two demos small LLMs copy the
        # whole document as their answer; the reading demos show a short answer drawn from knowledge.
        if knowledge:
            return bottom_up_prompt(question, knowledge,
                                    reading_examples(BOTTOM_UP_EXAMPLES, trace.headed()) if self.examples else [])
        if need:  # it asked but no card gave knowledge: its stated need must not read as the answer
            return top_down_start(question, self.examples, self.explicit) + "Answer:"
        return prompt + "Answer:"

    def needs_more(self, prompt: str, template: str, iteration: int, trace: Trace,
                   config: RunnableConfig | None) -> bool:
        """One template's vote, recorded in the trace: the reply's Yes/No, or calibrated P(yes)."""
        reply = self.ask(prompt + template, config)
        need = parse_yes_no(reply)
        turn = Turn(template, reply, iteration, need)
        trace.turns.append(turn)
        if self.yes_probability is not None:
            p_yes, content_free = self.yes_probability(prompt + template), self.content_free(template)
            turn.details.update(p_yes=p_yes, p_yes_content_free=content_free)
            need = turn.needs_more = p_yes > content_free
        elif need is None:  # neither yes nor no: asking a card costs less than a wrong answer
            turn.details["assumed"] = "yes"
        return need is not False

    @property
    def overrules_no(self) -> bool:
        """AUTO: a question whose words only one card's text holds goes to that card even after a "No"."""
        return not self.explicit

    def claimed(self, question: str, trace: Trace, iteration: int) -> bool:
        """Whether exactly one card claims the question (recorded in the trace when it does): a small
        base LLM says "No" to questions about what it cannot know, such as a name only one card's
        text holds."""
        claims = self.claims(question)
        if len(claims) != 1:
            return False
        (name, words), = claims.items()
        trace.turns.append(Turn("need more information", iteration=iteration, needs_more=True, card=name, details={
            "why": f"Yes: {name}: {self.claim_why(name, words)}"}))
        return True

    def knowledge_for(self, prompt: str, question: str, trace: Trace, config: RunnableConfig | None):
        """(the prompt with the card choice, the knowledge): one card chosen, its most factual document."""
        card, why, prompt = self.choose_card(prompt, question, trace, config)
        if card is None:
            trace.turns.append(Turn("which card", details={"why": why}))
            return prompt, None
        trace.cards.append(CardChoice(card.name, why))
        return prompt, self.best_document(card, question, trace, config)

    def content_free(self, template: str = NEED_MORE) -> float:
        if template not in self._content_free:
            start = top_down_start("N/A", self.examples, self.explicit)
            self._content_free[template] = self.yes_probability(start + template)
        return self._content_free[template]

    def choose_card(self, prompt: str, question: str, trace: Trace, config: RunnableConfig | None):
        names = list(self.by_name)
        if self.explicit:
            prompt += CHOOSE_SOURCE.format(sources=", ".join(names))
            reply = self.ask(prompt, config)
            name, how = match_card_name(reply, names)
            if name is None:  # a fallback: the reply (or, if empty, the question) matched to descriptions
                name, similarity, _ = self.match_description(reply or question)
                how = f"{how}; closest description {similarity:.2f}"
            trace.turns.append(Turn("choose a source", reply, card=name, details={"how": how}))
            why = f"the base LLM chose {reply!r} ({how})"
        else:
            prompt += WHAT_KIND
            reply = self.ask(prompt, config)
            # A card whose text alone holds a word (or name) of the question claims it; among several
            # claims, or with none, the stated need or the question, whichever is closer to a description,
            # picks the card (a small base LLM often restates its demonstration's need, "The results of the
            # 2022 Nevada governor election.", for a question that names the card's subject itself).
            claims = self.claims(question)
            name, similarity, matched = self.match_description(reply, without_options(question), among=claims)
            trace.turns.append(Turn(WHAT_KIND, reply, card=name, details={
                "similarity": round(similarity, 4), "matched": matched, "claims": claims}))
            why = f"its description is closest to the {matched} {(reply if matched == 'need' else question)!r} " \
                  f"({similarity:.2f})"
            if len(claims) == 1:
                why = self.claim_why(name, claims[name])
            elif claims:
                why += f" of the {len(claims)} cards whose text alone holds a word or name of the question"
        if name is None:
            why = f"no card matches {reply!r} well enough ({similarity:.2f} < {self.min_match}): answered without one"
        return self.by_name.get(name), why, prompt + f" {one_line(reply)}\n"

    def claims(self, question: str) -> dict[str, list[str]]:
        """The card whose subject the question names, with the subject (:func:`subject_owners`, as
        bottom-up has it), when there is one such card; else the cards whose text alone holds a word
        or name of the question, with those words (:func:`kcard_core.retrieval.claimants`)."""
        query, texts = without_options(question), card_texts(self.by_name.values())
        owners = subject_owners(texts, query)
        if len(owners) == 1:
            return {owners[0]: [self.by_name[owners[0]].manifest.retrieval.subject]}
        return claimants(query, texts)

    def claim_why(self, name: str, words: list[str]) -> str:
        """Why card ``name`` claims a question, for the trace (``words``: its :meth:`claims` entry)."""
        if words == [self.by_name[name].manifest.retrieval.subject]:
            return f"the question names its subject, {words[0]!r}"
        return f"only its text holds {', '.join(map(repr, words))} of the question"

    def description_scores(self, *texts: str, among: Sequence[str] = ()) -> dict[str, tuple[float, str]]:
        """Each card's (similarity, which text) to the closest of ``texts`` ("need" first, then "question"),
        for the cards named in ``among`` (default: all)."""
        names = list(among or self.by_name)
        descriptions = [self.by_name[name].description for name in names]
        best = {name: (-1.0, "need") for name in names}
        for text, which in zip(texts, ("need", "question")):
            if text:
                for name, score in zip(names, self.similarity(text, descriptions)):
                    best[name] = max(best[name], (float(score), which), key=lambda pair: pair[0])
        return best

    def match_description(self, *texts: str, among: Sequence[str] = ()) -> tuple[str | None, float, str]:
        """(the card among ``among`` (default: all) whose description is closest to any of ``texts``, or
        None below ``min_match`` unless the card was among those named; the similarity; which text matched)."""
        scores = self.description_scores(*texts, among=among)
        name = max(scores, key=lambda n: scores[n][0])
        similarity, which = scores[name]
        return (name if among or similarity >= self.min_match else None), similarity, which

    def best_document(self, card, question: str, trace: Trace, config: RunnableConfig | None) -> str | None:
        """The card writes n1 documents; the most factual one is kept (no pruning in top-down), and of
        near-ties the one closest to the question (a card's samples may be other passages of its text)."""
        with trace.timer("cards"):
            documents = self.run_cards([card], question, self.n1, trace, config)
        if not documents:
            return None
        query = without_options(question)
        if len(documents) > 1:  # closest first: factuality's near-ties go to the first
            closeness = self.similarity(query, [doc.page_content for doc in documents])
            documents = [doc for _, doc in sorted(zip(closeness, documents), key=lambda pair: -pair[0])]
        with trace.timer(self.factuality.name):
            step = self.factuality.step(documents, query, config)
        scored, best = step["scored"], step["kept"][0]
        name = self.factuality.name
        trace.add_stage(name, {d.metadata["id"]: d.metadata["scores"][name] for d in scored}, [best.metadata["id"]],
                        details={d.metadata["id"]: d.metadata.get(name, {}) for d in scored})
        trace.mark_used([best])
        return best.page_content


class Combined(TopDown):
    """Top-down meets bottom-up (the paper's future work): when the base LLM needs more, it states
    what; the ``pool_size`` cards whose descriptions match best all write, and bottom-up's selectors
    filter their documents before the knowledge is added."""

    mode = "combined"
    overrules_no = False  # its pool is chosen by descriptions alone

    def __init__(self, llm, cards: list, factuality, *, selectors: list, pool_size: int = 2, **options):
        super().__init__(llm, cards, factuality, **options)
        self.pipeline = SelectorPipeline(selectors=selectors)
        self.pool_size = pool_size

    def knowledge_for(self, prompt: str, question: str, trace: Trace, config: RunnableConfig | None):
        prompt += WHAT_KIND
        need = self.ask(prompt, config)
        scores = self.description_scores(need, without_options(question))
        pool = sorted(scores, key=lambda n: -scores[n][0])[: self.pool_size]
        trace.turns.append(Turn(WHAT_KIND, need, details={"cards": pool}))
        trace.cards += [CardChoice(name, f"one of the {len(pool)} descriptions closest to {need!r}") for name in pool]
        with trace.timer("cards"):
            documents = self.run_cards([self.by_name[n] for n in pool], question, self.n1, trace, config)
        kept, stages = self.pipeline.run(documents, without_options(question), config)
        for stage in stages:
            trace.add_stage(stage.selector, stage.scores, stage.kept, stage.texts, stage.details)
        trace.mark_used(kept)
        return prompt + f" {one_line(need)}\n", " ".join(doc.page_content for doc in kept)
