"""kcard plugin: knowledge of the 2022 U.S. midterm elections, as two cards over the same reports.

- ``midterm2022``: SmolLM2-135M-Instruct with a LoRA adapter trained by ``kcard train --lora`` on
  the reports (``lm/``; its card.toml holds the recipe and the corpus fingerprint);
- ``midterm2022-news``: BM25 over the reports themselves (the paper's retrieval alternative).
"""

from pathlib import Path

from kcard_core.cards import Card
from kcard_core.hookspecs import hookimpl

HERE = Path(__file__).parent


@hookimpl
def register_cards(register):
    register(Card.from_manifest(HERE / "lm" / "card.toml"))
    register(Card.from_manifest(HERE / "news.toml"))


@hookimpl
def register_evidence(register):
    """The reports, as evidence that the factuality selector checks any card's documents against."""
    from kcard_card_midterm2022.corpus import news_corpus

    register("midterm2022-news", news_corpus)
