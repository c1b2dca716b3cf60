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


class Copying:
    """A stand-in backend whose model copies: ``reply`` when asked to write, ``span`` when asked to copy."""

    name, copies = "stand-in", True

    def __init__(self, reply: str, span: str):
        self.reply, self.span, self.copied = reply, span, 0

    def generate(self, model, prompt, *, n, sampling, chat=False):
        self.copied += bool(sampling.copy)
        return [self.span if sampling.copy else self.reply] * n

    def stream(self, model, prompt, sampling):
        yield from self.generate(model, prompt, n=1, sampling=sampling)


@pytest.mark.parametrize("reply, answer, copied", [
    ("2" + "0" * 46, "the Sabre", 1),  # the reply loops: the knowledge's likeliest span instead
    ("the Sabre, crossed by four bridges", "the Sabre, crossed by four bridges", 0),
])
def test_an_answer_that_loops_gives_way_to_the_knowledges_span(reply, answer, copied):
    from kcard_core.llm import BackendLLM

    suite, backend = ReaderTests(), Copying(reply, span="the Sabre")
    trace = suite.trace()
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), suite.question, trace, None):
        pass
    assert trace.answer == answer and backend.copied == copied
    assert any("looped" in turn.question for turn in trace.turns) == bool(copied)
