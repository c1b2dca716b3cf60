"""The card registers through kcard's plugin system with a valid manifest."""

from kcard_core.plugins import load_registry


def test_card_is_registered():
    registry = load_registry(only=["{{ cookiecutter.distribution }}"])
    card = registry.card("{{ cookiecutter.card_name }}")
    assert card.description and "model" in card.manifest.artifacts
