"""The rules reader against the reader contract (kcard_core.testing.ReaderTests)."""

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from kcard_core.chains.prompts import narrowing_prompt
from kcard_core.plugins import load_registry
from kcard_core.readers import read
from kcard_core.testing import ReaderTests
from kcard_core.text import COPIED_WORDS
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
    """A stand-in backend whose model copies: ``reply`` when asked to write, ``span`` when asked to copy,
    ``narrowed`` when asked to narrow an answer after the chain's prompt, ``shortened`` after a long
    answer's (None: the answer whole)."""

    name, copies = "stand-in", True

    def __init__(self, reply: str, span: str, narrowed: str | None = None, shortened: str | None = None):
        self.reply, self.span, self.sources = reply, span, []  # sources: what each copy request copied from
        self.words = []  # the most words each copy request allowed
        self.refused = []  # the spans each copy request refused
        self.asked = 0  # requests to write
        self.narrowed, self.shortened = narrowed, shortened
        self.narrowing = []  # each answer asked to narrow, the question, the prompt

    def generate(self, model, prompt, *, n, sampling, chat=False):
        if sampling.narrow:
            self.narrowing.append((sampling.copy, sampling.asked, prompt))
            self.refused.append(sampling.refused)
            short = prompt.endswith("Short answer:")
            run = (self.shortened if short else self.narrowed) or sampling.copy
            return [sampling.copy if run in sampling.refused else run] * n  # a refused run never comes back
        if sampling.copy:
            self.sources.append(sampling.copy)
            self.words.append(sampling.words)
            self.refused.append(sampling.refused)
        else:
            self.asked += 1
        return [self.span if sampling.copy else self.reply] * n

    def stream(self, model, prompt, sampling):
        yield from self.generate(model, prompt, n=1, sampling=sampling)


@pytest.mark.parametrize("reply, answer, copied, turn", [
    ("2" + "0" * 46, "the Sabre", "knowledge", "looped"),  # the reply loops: the knowledge's likeliest span instead
    ("the Sabre, crossed by four bridges", "the Sabre, crossed by four bridges", None, None),  # a span: kept
    ("Kelderwick", "the Sabre", "knowledge", "only repeated the question"),  # says nothing the question does not
])
def test_an_answer_that_loops_or_copies_the_knowledge_out_gives_way_to_a_span(reply, answer, copied, turn):
    from kcard_core.llm import BackendLLM

    suite, backend = ReaderTests(), Copying(reply, span="the Sabre")
    trace = suite.trace()
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), suite.question, trace, None):
        pass
    assert trace.answer == answer and backend.sources == ([trace.knowledge()] if copied else [])
    assert backend.words == ([COPIED_WORDS] if copied else [])  # the span is never a copy itself
    assert [t.question.split(":")[0] for t in trace.turns if t.question.startswith("the answer ")] == (
        [f"the answer {turn}"] if turn else [])


def test_an_answer_that_copies_the_knowledge_out_gives_way_to_a_short_span_of_it():
    from kcard_core.llm import BackendLLM

    suite = ReaderTests()
    trace = suite.trace()
    copy = " ".join(trace.knowledge().split()[:12])  # twelve words of the knowledge, word for word
    backend = Copying(copy, span="the Sabre")
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), suite.question, trace, None):
        pass
    assert trace.answer == "the Sabre" and backend.sources == [trace.knowledge()] and backend.words == [COPIED_WORDS]
    assert trace.turns[-1].question.startswith("the answer copied the knowledge out")


def test_where_the_reply_may_be_cut_a_stream_gets_the_answer_whole():
    from kcard_core.llm import BackendLLM

    suite = ReaderTests()
    trace = suite.trace()
    copy = " ".join(trace.knowledge().split()[:12])
    reader = RulesReader(BackendLLM(model=None, backend=Copying(copy, span="the Sabre")))
    assert list(read(reader, suite.question, trace, None, stream=True)) == ["the Sabre"]
    assert not any("stream showed" in turn.question for turn in trace.turns)


def test_the_answer_keeps_its_answering_part_and_a_stream_gets_it_whole():
    suite = ReaderTests()
    trace = suite.trace()
    reader = RulesReader(FakeListChatModel(responses=["the Sabre (a river)"]))
    assert list(read(reader, suite.question, trace, None, stream=True)) == ["the Sabre"]
    assert trace.answer == "the Sabre" and trace.turns[-1].details == {"part": "the Sabre"}
    assert not any("stream showed" in turn.question for turn in trace.turns)


@pytest.mark.parametrize("reply, answer", [
    ("Release 2.1", "2.1"),  # the heading's label word the question says goes
    ("Release 2.1: The Osk timetable was removed.", "2.1"),  # a copied path and sentence: its part, unlabelled
    ("NEWS › Release 2.1", "NEWS › Release 2.1"),  # the file is no heading the knowledge stands under
])
def test_an_answer_taken_from_a_heading_keeps_what_the_question_does_not_say(reply, answer):
    from kcard_core.trace import DocumentRecord, Trace

    question = "In which release was the Osk timetable removed?"
    trace = Trace(mode="bottom-up", question=question)
    trace.documents["quillan-0"] = DocumentRecord("quillan", "Release 2.1: The Osk timetable was removed.",
                                                  used=True, sources=["NEWS › Release 2.1"], headed=True)
    assert trace.headings() == ["Release 2.1"]
    for _ in read(RulesReader(FakeListChatModel(responses=[reply])), question, trace, None):
        pass
    assert trace.answer == answer


@pytest.mark.parametrize("headed, asked_again", [(False, True), (True, False)])
def test_a_typed_answer_is_asked_again_only_of_prose(headed, asked_again):
    """The question types are told from prose: of a document's passages under heading paths the
    base LLM's answer stands, whatever type the question asks for."""
    from kcard_core.llm import BackendLLM
    from kcard_core.trace import DocumentRecord, Trace

    question = "How many bells are in the tower?"
    knowledge = "The abbey church was finished in 1187. Its tower holds six bells."
    backend = Copying("1187", span="")
    trace = Trace(mode="bottom-up", question=question, prompt=f"Knowledge: {knowledge}\nQuestion: {question}\nAnswer:")
    trace.documents["abbey-0"] = DocumentRecord("abbey", knowledge, used=True, headed=headed)
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), question, trace, None):
        pass
    assert backend.asked == (2 if asked_again else 1)
    assert any("asked again" in turn.question for turn in trace.turns) == asked_again


@pytest.mark.parametrize("reply, narrowed, shortened, answer", [
    ("the Sabre, crossed by four bridges", "the Sabre", None, "the Sabre"),  # a whole answer likelier ended early
    ("is the Sabre, crossed", "the Sabre", None, "the Sabre"),  # or started late
    ("the Sabre, crossed by four bridges", None, "Sabre", "Sabre"),  # or as the short answer after it
    ("the Sabre, crossed by four bridges", "the Sabre", "Sabre", "Sabre"),  # narrowed twice
    ("the Sabre, crossed by four bridges", None, None, None),  # or whole
    ("Kelderwick river, the Sabre", "Kelderwick river", "Kelderwick", None),  # parts that only repeat the question
    ("Sabre River, with four bridges", "Sabre River", None, None),  # a part the knowledge does not say
    ("Sabre", "", "", None),  # one word: never asked
])
@pytest.mark.parametrize("headed", [True, False])
def test_an_answer_narrows_to_its_part_the_base_llm_finds_likeliest(reply, narrowed, shortened, answer, headed):
    from kcard_core.llm import BackendLLM

    suite, backend = ReaderTests(), Copying(reply, span="", narrowed=narrowed, shortened=shortened)
    trace = suite.trace()
    trace.documents["d1"].headed = headed  # a document's passages (the short answer asked for) or prose
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), suite.question, trace, None):
        pass
    first = narrowed if narrowed == "the Sabre" else reply  # what the chain's prompt leaves
    # after the chain's prompt, then shown as a long answer after the demonstrations' long and short answers
    asked = [(reply, suite.question, trace.prompt),
             (first, suite.question, narrowing_prompt(suite.question, first))] if " " in reply else []
    assert backend.narrowing == asked[:2 if headed else 1]
    assert trace.answer == ((answer or reply) if headed else first)
    narrows = [turn for turn in trace.turns if turn.question.startswith("the answer narrows")]
    assert len(narrows) == (narrowed == "the Sabre") + (headed and shortened == "Sabre")


def test_an_answer_beyond_a_heading_does_not_end_inside_it():
    from kcard_core.llm import BackendLLM
    from kcard_core.trace import DocumentRecord, Trace

    question = "What did release 2.1 remove?"
    trace = Trace(mode="bottom-up", question=question, prompt=f"Question: {question}\nAnswer:")
    trace.documents["quillan-0"] = DocumentRecord("quillan", "Release 2.1 (May 2020): The Osk timetable was removed.",
                                                  used=True, sources=["NEWS › Release 2.1 (May 2020)"], headed=True)
    backend = Copying("May 2020 and the Osk timetable", span="", narrowed="May 2020")
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), question, trace, None):
        pass
    assert backend.narrowing and trace.answer == "May 2020 and the Osk timetable"


def read_passage(question: str, text: str, sources: list[str], backend: "Copying", headed: bool = True):
    """The trace of the rules reader answering ``question`` from one document passage (``text``, under
    ``sources``' heading path) on ``backend``."""
    from kcard_core.llm import BackendLLM
    from kcard_core.trace import DocumentRecord, Trace

    trace = Trace(mode="bottom-up", question=question, prompt=f"Question: {question}\nAnswer:")
    trace.documents["doc-0"] = DocumentRecord("doc", text, used=True, sources=sources, headed=headed)
    for _ in read(RulesReader(BackendLLM(model=None, backend=backend)), question, trace, None):
        pass
    return trace


@pytest.mark.parametrize("shortened, answer", [
    ("2.1", "2.1"),  # a heading's part, as the short answer after the long one
    ("Quillan", "2.1: The Osk timetable was removed."),  # the document's title names the document, not the answer
])
def test_a_short_answer_may_stand_in_a_heading_but_not_be_the_documents_title(shortened, answer):
    backend = Copying("2.1: The Osk timetable was removed.", span="", narrowed="2.1", shortened=shortened)
    trace = read_passage("Which release removed the Osk timetable?",
                         "Quillan › Release 2.1 (May 2020): The Osk timetable was removed.",
                         ["NEWS › Quillan › Release 2.1 (May 2020)"], backend)
    assert len(backend.narrowing) == 2  # after the chain's prompt "2.1" stands in a heading: kept whole
    assert trace.answer == answer
    assert backend.refused[-1] == ("Quillan",)  # the path's first level names the text


def test_a_copied_passage_gives_way_to_a_span_that_is_not_a_path_s_first_level():
    backend = Copying("Release 2.1 (May 2020): The Osk timetable was removed from every station.", span="Osk")
    trace = read_passage("Which timetable did release 2.1 remove?",
                         "Quillan › Release 2.1 (May 2020): The Osk timetable was removed from every station.",
                         ["NEWS › Quillan › Release 2.1 (May 2020)"], backend)
    assert backend.refused == [("Quillan",)]  # the title names the document, it answers nothing
    assert trace.answer == "Osk"


@pytest.mark.parametrize("reply, headed, answer", [
    ("2.2", True, "2.1"),  # a document's passages do not say "2.2": their likeliest span instead
    ("2.1", True, "2.1"),  # it stands in them: kept
    ("Release 2.2 on", True, "Release 2.2 on"),  # a word of it stands in them: left to the narrowing
    ("2.2", False, "2.2"),  # prose: an answer may be put in words of its own
])
def test_a_documents_answer_with_no_word_of_its_passages_gives_way(reply, headed, answer):
    trace = read_passage("Which release removed the Osk timetable?",
                         "Quillan › Release 2.1 (May 2020): The Osk timetable was removed.",
                         ["NEWS › Quillan › Release 2.1 (May 2020)"] if headed else [], Copying(reply, span="2.1"),
                         headed=headed)
    assert trace.answer == answer
    assert any(t.question.startswith("the answer has no word of the document's") for t in trace.turns) == (
        reply != answer)


def test_a_numbered_titles_number_is_never_the_answer():
    reply = "1 Introduction › 1.2 Options › -l, --mathlib"
    backend = Copying(reply, span="", narrowed=None, shortened="1")
    trace = read_passage("Which bc option defines the standard math library?",
                         "1 Introduction › 1.2 Options › '-l, --mathlib': Define the standard math library.",
                         ["bc.info › 1 Introduction › 1.2 Options › '-l, --mathlib'"], backend)
    assert backend.refused[0] == ("1", "1.", "1.2", "1.2.")  # after the chain's prompt: the numbers
    assert backend.refused[1] == ("1 Introduction", "1", "1.", "1.2", "1.2.")  # as a short answer: the title too
    assert trace.answer == reply  # "1" never comes back
