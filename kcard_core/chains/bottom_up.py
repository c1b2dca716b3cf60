"""Bottom-up (Algorithm 1): every card writes, the selectors filter, the knowledge is prepended."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig

from kcard_core import defaults
from kcard_core.chains.base import KnowledgeChain, card_texts, subject_owners
from kcard_core.chains.prompts import BOTTOM_UP_EXAMPLES, bottom_up_prompt, reading_examples
from kcard_core.text import without_options
from kcard_core.selectors import SelectorPipeline
from kcard_core.trace import CardChoice, Trace


class BottomUp(KnowledgeChain):
    mode = "bottom-up"

    def __init__(self, llm, cards: list, selectors: list, *, n1: int | None = defaults.N1,
                 examples: list[dict] | None = None, **common):
        super().__init__(llm, **common)
        self.cards = cards
        self.pipeline = SelectorPipeline(selectors=selectors)
        self.n1 = n1
        self.examples = BOTTOM_UP_EXAMPLES if examples is None else examples

    def prepare(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        kept = self.knowledge(question, trace, config)
        return bottom_up_prompt(question, [doc.page_content for doc in kept],
                                reading_examples(self.examples, trace.headed()))

    def knowledge(self, question: str, trace: Trace, config: RunnableConfig | None) -> list[Document]:
        """The documents that reach the prompt: every card writes, the selectors filter.

        A question that names the subject of one card's text (its ``[retrieval] subject``) is for that
        card alone, so that other cards' documents that copy the question's names do not outscore
        the card's own passage.
        """
        # only cards with a subject: building every card's index cost a cold `kcard ask` 0.6 s
        texts = card_texts(card for card in self.cards if card.manifest.retrieval.subject)
        query = without_options(question)
        named = subject_owners(texts, query)
        owners = [card for card in self.cards if card.name in named]
        if len(owners) == 1:
            cards, why = owners, f"the question names its subject, {owners[0].manifest.retrieval.subject!r}"
        else:
            cards, why = self.cards, "bottom-up asks every active card"
        trace.cards = [CardChoice(card.name, why) for card in cards]
        with trace.timer("cards"):
            documents = self.run_cards(cards, question, self.n1, trace, config)
        kept, stages = self.pipeline.run(documents, query, config)
        for stage in stages:
            trace.seconds[stage.selector] = stage.seconds
            trace.add_stage(stage.selector, stage.scores, stage.kept, stage.texts, stage.details)
        trace.mark_used(kept)
        return kept
