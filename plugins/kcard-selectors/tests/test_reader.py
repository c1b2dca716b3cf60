"""The rules reader against the reader contract (kcard_core.testing.ReaderTests)."""

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from kcard_core.plugins import load_registry
from kcard_core.readers import read
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


def test_the_rules_reader_matches_a_chat_models_open_answer_to_an_option():
    suite = ReaderTests()
    question = f"{suite.question} Options: A. the Esk; B. the Sabre."
    trace = suite.trace()
    llm = FakeListChatModel(responses=["The Sabre"])
    for _ in read(RulesReader(llm), question, trace, None):
        pass
    assert trace.answer == "B. the Sabre" and trace.turns[-1].details == {"option": "B"}
