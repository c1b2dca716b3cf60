"""kcard card plugin: textbook-style knowledge from SmolLM2-135M-Instruct (through its chat template)."""

from pathlib import Path

from kcard_core.cards import Card
from kcard_core.hookspecs import hookimpl


@hookimpl
def register_cards(register):
    register(Card.from_manifest(Path(__file__).with_name("card.toml")))
