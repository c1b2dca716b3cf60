"""kcard's knowledge as a LangChain retriever, for a chain of your own (docs/langchain.md)."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr

from kcard_core import defaults
from kcard_core.chains import BottomUp, build_chain
from kcard_core.chains.base import question_of
from kcard_core.errors import KcardError
from kcard_core.trace import Trace


class CardRetriever(BaseRetriever):
    """The cards write documents for the query and the selectors keep the ``k`` best: bottom-up's
    knowledge, without the answer.

    ``cards``: the card names (default: every installed card); ``options``: any other setting of
    :func:`kcard_core.chains.build_chain` (``n1``, ``selectors``, ``judge``, ``backend``, ``settings``,
    ``registry`` …). Each document's metadata names its card and holds every selector's score.
    """

    cards: list[str] | None = None
    k: int = defaults.N3
    options: dict[str, Any] = {}
    _chains: dict[int, BottomUp] = PrivateAttr(default_factory=dict)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None) -> list[Document]:
        chain = self.chain(self.k if k is None else k)
        question = question_of(query)
        return chain.knowledge(question, Trace(mode="retriever", question=question),
                               {"callbacks": run_manager.get_child()})

    def chain(self, k: int) -> BottomUp:
        """The bottom-up chain whose last selector keeps ``k`` documents (built once per ``k``)."""
        if k < 1:
            raise KcardError(f"k must be at least 1, not {k}")
        if k not in self._chains:
            selectors = self.options.get("selectors", defaults.SELECTORS)
            cut = {"n3": k, "n2": max(k, self.options.get("n2", defaults.N2))} if "factuality" in selectors else {"n2": k}
            self._chains[k] = build_chain("bottom-up", cards=self.cards, **{**self.options, **cut})
        return self._chains[k]
