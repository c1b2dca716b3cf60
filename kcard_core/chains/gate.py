"""The popularity gate as a chain: cards for unpopular subjects, the base LLM alone for popular ones."""

from __future__ import annotations

from typing import Any, Callable

from langchain_core.runnables import Runnable, RunnableConfig

from kcard_core.popularity import Popularity, use_cards


class PopularityGate(Runnable[Any, dict]):
    """Answers with ``with_cards`` when the subject is unpopular (or unknown), else with ``without``.

    Both are kcard chains; the trace of the one used gains a ``gate`` turn saying why.
    """

    def __init__(self, with_cards: Runnable, without: Runnable, lookup: Callable[[str], Popularity | None],
                 thresholds: dict[str, float]):
        self.with_cards, self.without, self.lookup, self.thresholds = with_cards, without, lookup, thresholds

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        question = input.get("question") if isinstance(input, dict) else input
        popularity = self.lookup(str(question))
        consult = use_cards(popularity, self.thresholds)
        result = (self.with_cards if consult else self.without).invoke(input, config)
        known = f"{popularity.entity!r}, {popularity.views} views a month" if popularity else "no known subject"
        result["trace"].turns.insert(0, {
            "question": "is the subject popular enough to answer alone?",
            "reply": f"{known}: {'consult cards' if consult else 'answer alone'}",
            "entity": popularity and popularity.entity, "views": popularity and popularity.views,
            "relation": popularity and popularity.relation, "cards": consult})
        return result
