"""The card registers through kcard's plugin system and passes kcard's card conformance suite."""

import pytest

from kcard_core.plugins import load_registry
from kcard_core.testing import CardTests


class TestCard(CardTests):
    @pytest.fixture
    def card(self):
        return load_registry(only=["{{ cookiecutter.distribution }}"]).card("{{ cookiecutter.card_name }}")
