"""The popularity gate as a chain: cards for unpopular subjects, the base LLM alone for popular ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from langchain_core.runnables import Runnable, RunnableConfig

from kcard_core.errors import KcardError
from kcard_core.plugins import Registry, get_registry
from kcard_core.popularity import Popularity, use_cards
from kcard_core.runs import KcardRunnable
from kcard_core.trace import Turn
from kcard_core.spec import ChainSpec


class PopularityGate(KcardRunnable):
    """Answers with ``with_cards`` when the subject is unpopular (or unknown), else with ``without``.

    Both are kcard chains; the trace of the one used gains a ``gate`` turn saying why.
    """

    mode = "popularity gate"

    def __init__(self, with_cards: Runnable, without: Runnable, lookup: Callable[[str], Popularity | None],
                 thresholds: dict[str, float]):
        self.with_cards, self.without, self.lookup, self.thresholds = with_cards, without, lookup, thresholds

    def _invoke(self, input: Any, config: RunnableConfig) -> dict:
        question = input.get("question") if isinstance(input, dict) else input
        popularity = self.lookup(str(question))
        consult = use_cards(popularity, self.thresholds)
        result = (self.with_cards if consult else self.without).invoke(input, config)
        known = f"{popularity.entity!r}, {popularity.views} views a month" if popularity else "no known subject"
        result["trace"].turns.insert(0, Turn(
            "is the subject popular enough to answer alone?", f"{known}: {'consult cards' if consult else 'answer alone'}",
            details={"entity": popularity and popularity.entity, "views": popularity and popularity.views,
                     "relation": popularity and popularity.relation, "cards": consult}))
        return result


def gated(chain, thresholds_file: str | Path, popularity_name: str | None, spec: ChainSpec,
          registry: Registry | None = None) -> PopularityGate:
    """``chain`` behind a popularity gate (thresholds from `kcard calibrate`, a registered popularity
    table): popular subjects are answered by the base LLM alone, built from the same ``spec``."""
    from kcard_core.chains import build_chain

    tables = (registry or get_registry()).popularity
    if not tables:
        raise KcardError("--gate needs a popularity table: pip install kcard-popularity-popqa, or register your own")
    name = popularity_name or next(iter(tables))
    if name not in tables:
        raise KcardError(f"unknown popularity table {name!r}; installed: {', '.join(tables)}")
    thresholds = json.loads(Path(thresholds_file).read_text()).get("thresholds")
    if not isinstance(thresholds, dict):
        raise KcardError(f"{thresholds_file} holds no thresholds: write it with kcard calibrate")
    alone = build_chain(spec, mode="vanilla", cards=None, registry=registry)
    return PopularityGate(chain, alone, tables[name], thresholds)
