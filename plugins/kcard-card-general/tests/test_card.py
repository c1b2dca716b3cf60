"""The general card passes the card conformance suite on the default backend."""

import pytest

from kcard_core.plugins import load_registry
from kcard_core.testing import CardTests

pytestmark = pytest.mark.slow


class TestCard(CardTests):
    @pytest.fixture
    def card(self):
        return load_registry().card("general")
