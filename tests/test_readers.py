"""The reader contract (kcard_core.readers): the built-in plain reader, the drivers, chat prompts."""

from langchain_core.language_models.fake_chat_models import FakeListChatModel
import pytest

from kcard_core.errors import UnknownNameError
from kcard_core.plugins import Registry
from kcard_core.readers import Ask, PlainReader, Reader
from kcard_core.testing import ReaderTests


class TestPlain(ReaderTests):
    @pytest.fixture
    def factory(self):
        return PlainReader


class Replaces(Reader):
    """Shows a reply, then answers something else: a reader that breaks its promise."""

    def reading(self, question, trace):
        yield Ask(self.prompt(question, trace), shown=True)
        return "something else"


def test_a_replaced_shown_reply_is_named_in_the_trace():
    suite = ReaderTests()
    answer, chunks, trace = suite.answer(Replaces, suite.llm(), stream=True)
    assert answer == "something else" and chunks == ["the Sabre"]
    assert trace.turns[-1].details == {"answer": "something else"}


def test_a_chat_model_reads_the_task_the_knowledge_with_its_sources_and_the_question():
    suite = ReaderTests()
    messages = PlainReader(FakeListChatModel(responses=["x"])).prompt(suite.question, suite.trace())
    assert [message.type for message in messages] == ["system", "human"]
    assert messages[1].content == (f"Question: {suite.question}\n\nKnowledge:\n- {suite.knowledge} "
                                   f"(source: notes.md › Rivers)\n\nQuestion: {suite.question}")
    assert PlainReader(suite.llm()).prompt(suite.question, suite.trace()) == suite.trace().prompt


def test_the_registry_names_the_default_reader_and_refuses_an_unknown_one():
    registry = Registry()  # no plugins: kcard's own plain reader
    assert registry.reader() is PlainReader and registry.reader("plain") is PlainReader
    with pytest.raises(UnknownNameError, match="unknown reader 'nope'"):
        registry.reader("nope")
    registry.readers["rules"] = Replaces  # the default, once installed
    assert registry.reader() is Replaces


def test_unknown_reader_is_refused_before_any_model_loads():
    from click.testing import CliRunner

    from kcard_core.cli import cli

    result = CliRunner().invoke(cli, ["ask", "Who?", "--reader", "nope", "--model", "/nonexistent.gguf"])
    assert result.exit_code == 1 and "unknown reader 'nope'" in result.output

