"""The rules reader against the reader contract (kcard_core.testing.ReaderTests)."""

import pytest

from kcard_core.plugins import load_registry
from kcard_core.testing import ReaderTests
from kcard_selectors.reader import RulesReader


class TestRules(ReaderTests):
    @pytest.fixture
    def factory(self):
        return load_registry(only=["kcard-selectors"]).reader("rules")

    def test_is_the_default_where_installed(self, factory):
        registry = load_registry(only=["kcard-selectors"])
        assert registry.reader() is registry.reader("rules")
        assert isinstance(factory.from_spec(None, self.llm()), RulesReader)
