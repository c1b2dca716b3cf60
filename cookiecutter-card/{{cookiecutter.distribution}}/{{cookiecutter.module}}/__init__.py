{{ ("kcard card plugin: " ~ cookiecutter.description)|tojson }}

from pathlib import Path

from kcard_core.cards import Card
from kcard_core.hookspecs import hookimpl


@hookimpl
def register_cards(register):
    register(Card.from_manifest(Path(__file__).with_name("card.toml")))
