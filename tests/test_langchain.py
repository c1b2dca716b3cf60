"""kcard as a LangChain citizen: one run per question, a standard retriever, compressors for any
document, and any LangChain chat model as the base LLM."""

import asyncio
import re
import uuid
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.tracers.base import BaseTracer
from langchain_tests.integration_tests import RetrieversIntegrationTests

from kcard_core.chains import BottomUp, TopDown, build_chain
from kcard_core.errors import KcardError
from kcard_core.retriever import CardRetriever
from kcard_core.selectors import SelectorPipeline
from kcard_selectors.reader import RulesReader
from test_chains import ByLength, cards  # noqa: F401  (a fixture)

DOCS = Path(__file__).resolve().parent.parent / "docs"


class Recorder(BaseTracer):
    """Keeps every finished root run (with its tree of child runs)."""

    def __init__(self):
        super().__init__()
        self.roots = []

    def _persist_run(self, run):
        self.roots.append(run)


def tree(run):
    yield run
    for child in run.child_runs:
        yield from tree(child)


def test_a_question_is_one_run_whose_children_are_named_after_cards_selectors_and_the_llm(cards):  # noqa: F811
    chain = BottomUp(FakeListLLM(responses=["Paris"]), cards, [ByLength(keep=1)], n1=1, examples=[])
    recorder, run_id = Recorder(), uuid.uuid4()
    result = chain.invoke("Capital of France?", {"callbacks": [recorder], "run_id": run_id})
    assert len(recorder.roots) == 1
    root = recorder.roots[0]
    assert (root.name, root.id, root.outputs["answer"]) == ("kcard bottom-up", run_id, result["answer"])
    ids = [run.id for run in tree(root)]
    assert len(ids) == len(set(ids))  # the run id given is the root's alone
    children = {run.name: run for run in root.child_runs}
    assert set(children) == {"science", "politics", "broken", "length", "FakeListLLM"}
    assert "the model crashed" in children["broken"].error and children["science"].error is None
    assert children["length"].outputs["kept"][0].metadata["card"] in ("science", "politics")

    recorder.roots.clear()
    chain.with_config(run_name="mine").invoke("Capital of France?", {"callbacks": [recorder]})
    assert recorder.roots[0].name == "mine" and "science" in {run.name for run in recorder.roots[0].child_runs}


def test_top_down_is_one_run_too(cards):  # noqa: F811
    llm = FakeListLLM(responses=["Yes", "physics", "Fact."])
    recorder = Recorder()
    chain = TopDown(llm, cards[:2], ByLength(keep=1), examples=[])
    chain.invoke("What is light?", {"callbacks": [recorder]})
    assert [root.name for root in recorder.roots] == ["kcard top-down-auto"]
    assert [run.name for run in recorder.roots[0].child_runs] == ["FakeListLLM", "FakeListLLM", "science", "length",
                                                                   "FakeListLLM"]


def test_stream_and_astream_yield_the_same_chunks_in_one_run(cards):  # noqa: F811
    chain = BottomUp(FakeListLLM(responses=["Paris"]), cards[:1], [], n1=1, examples=[])
    recorder = Recorder()
    streamed = list(chain.stream("Capital?", {"callbacks": [recorder]}))

    async def collect():
        return [chunk async for chunk in chain.astream("Capital?")]

    astreamed = asyncio.run(collect())
    assert [list(chunk) for chunk in streamed] == [list(chunk) for chunk in astreamed] == [["answer"], ["trace"]]
    assert streamed[0] == astreamed[0] == {"answer": "Paris"}
    assert [root.name for root in recorder.roots] == ["kcard bottom-up"]


class AsyncOnly(FakeListLLM):
    """A model that can only be awaited: a sync call fails the test."""

    def _call(self, *args, **kwargs):
        raise AssertionError("the base LLM was called synchronously")


@pytest.mark.parametrize("question", ["Capital of France?", "Capital of France? Options: A. Lyon; B. Paris."])
def test_ainvoke_and_astream_await_the_base_llm_in_one_run(cards, question):  # noqa: F811
    llm = AsyncOnly(responses=["Paris"])
    chain = BottomUp(llm, cards[:2], [ByLength(keep=1)], n1=1, examples=[], reader=RulesReader(llm))
    recorder = Recorder()

    async def run():
        result = await chain.ainvoke(question, {"callbacks": [recorder]})
        return result, [chunk async for chunk in chain.astream(question)]

    result, chunks = asyncio.run(run())
    assert result["answer"] == chunks[0]["answer"] == ("B. Paris" if "Options" in question else "Paris")
    assert result["trace"].answer == chunks[-1]["trace"].answer == result["answer"]
    assert [root.name for root in recorder.roots] == ["kcard bottom-up"]
    assert {run.name for run in recorder.roots[0].child_runs} == {"science", "politics", "length", "AsyncOnly"}


def test_astream_events_shows_the_chain_and_its_cards(cards):  # noqa: F811
    chain = BottomUp(FakeListLLM(responses=["Paris"]), cards[:2], [ByLength(keep=1)], n1=1, examples=[])

    async def events():
        return [(event["event"], event["name"]) async for event in chain.astream_events("Capital?", version="v2")]

    seen = asyncio.run(events())
    assert seen[0] == ("on_chain_start", "kcard bottom-up") and seen[-1] == ("on_chain_end", "kcard bottom-up")
    assert {("on_chain_start", "science"), ("on_chain_start", "length"), ("on_llm_start", "FakeListLLM")} <= set(seen)
    assert ("on_chain_stream", "kcard bottom-up") in seen


def test_selectors_compress_documents_from_any_source():
    foreign = [Document("Paris is the capital of France."), Document("Bananas are yellow, sweet and soft.", id="b")]
    kept = SelectorPipeline(selectors=[ByLength(keep=1)]).compress_documents(foreign, "capital of France")
    assert [doc.page_content for doc in kept] == ["Bananas are yellow, sweet and soft."]
    assert kept[0].metadata["id"] == "b" and kept[0].metadata["scores"]["length"] == 35
    assert ByLength(keep=2).compress_documents(foreign, "q")[1].metadata["id"] == "document#1"


@pytest.mark.slow
def test_kcard_selectors_compress_documents_from_any_source():
    from kcard_core.plugins import get_registry

    registry = get_registry()
    foreign = [Document("Bananas are yellow and sweet."), Document("Paris is the capital of France.")]
    relevance = registry.selector("relevance", top_n=1)
    assert [d.page_content for d in relevance.compress_documents(foreign, "What is the capital of France?")] == [
        "Paris is the capital of France."]
    factuality = registry.selector("factuality", top_n=2, evidence={"facts": lambda: ["Paris is the capital of France."]})
    scored = factuality.compress_documents(foreign, "What is the capital of France?")
    assert scored[0].page_content == "Paris is the capital of France." and scored[0].metadata["scores"]["factuality"] > \
        scored[1].metadata["scores"]["factuality"]


def test_build_chain_takes_any_langchain_model_as_base_llm(tmp_path):
    from conftest import FakeBackend, make_card
    from kcard_core.plugins import Registry

    registry = Registry()
    registry.cards["science"] = make_card(tmp_path, "science", "physics")
    registry.backends["llama-cpp"] = FakeBackend()
    llm = FakeListLLM(responses=["Light is a wave."])
    result = build_chain("bottom-up", llm=llm, registry=registry, selectors=(), settings={}).invoke("What is light?")
    assert result["answer"] == "Light is a wave." and "science knows fact 0" in result["trace"].prompt
    assert result["trace"].model == "FakeListLLM"
    with pytest.raises(KcardError, match="log-probabilities"):
        build_chain("bottom-up", llm=llm, registry=registry, judge="llm", settings={})


def test_selectors_build_themselves_from_the_chain_spec(tmp_path):
    from conftest import FakeBackend, make_card
    from kcard_core.plugins import Registry, get_registry

    registry = Registry()  # kcard-selectors' real factories; nothing here loads a model
    registry.selectors.update(get_registry().selectors)
    registry.cards["science"] = make_card(tmp_path, "science", "physics")
    registry.backends["llama-cpp"] = FakeBackend()
    llm = FakeListLLM(responses=["x"])
    chain = build_chain("bottom-up", llm=llm, registry=registry, settings={}, n2=3, n3=2, judge="embedding", seed=7,
                        selectors=("relevance", "pruning", "factuality"), prune="llm")
    relevance, pruning, factuality = chain.pipeline.selectors
    assert relevance.top_n == 3 and (pruning.method, pruning.llm) == ("llm", llm)
    assert (factuality.top_n, factuality.judge, factuality.seed) == (2, "embedding", 7)
    top_down = build_chain("top-down-auto", llm=llm, registry=registry, settings={}, n3=4)
    assert top_down.factuality.top_n == 4


class TestCardRetriever(RetrieversIntegrationTests):
    """langchain-tests' standard retriever suite, on every installed first-party card for real."""

    pytestmark = pytest.mark.slow

    @property
    def retriever_constructor(self):
        return CardRetriever

    @property
    def retriever_constructor_params(self):
        return {"k": 2}

    @property
    def retriever_query_example(self):
        return "Who won the 2022 election for governor of Nevada?"


@pytest.fixture(scope="module")
def chat_server():
    """A real llama.cpp server with a chat model (SmolLM2-135M-Instruct), as OPENAI_BASE_URL."""
    from kcard_core.models import resolve_model
    from kcard_core.testing import LlamaServer

    with LlamaServer(resolve_model("smollm2-135m-instruct")[1]) as server:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("OPENAI_BASE_URL", server.url)
            env.setenv("OPENAI_API_KEY", "x")
            yield server.url


@pytest.mark.slow
def test_chat_openai_against_a_real_server_is_the_base_llm(chat_server):
    from langchain_openai import ChatOpenAI

    recorder = Recorder()
    chain = build_chain("bottom-up", llm=ChatOpenAI(model="smollm2", temperature=0, max_tokens=32), cards=["countries"])
    result = chain.invoke("What is the capital of Australia?", {"callbacks": [recorder]})
    assert "Canberra" in result["trace"].prompt and "Canberra" in result["answer"]
    assert result["trace"].model == "smollm2"
    assert [run.name for run in recorder.roots[0].child_runs] == ["countries", "relevance", "factuality", "ChatOpenAI"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["bottom-up", "top-down-auto"])
def test_a_chat_model_reads_chat_messages_and_names_the_winner(chat_server, mode):
    from langchain_openai import ChatOpenAI

    chain = build_chain(mode, llm=ChatOpenAI(model="smollm2", temperature=0, max_tokens=32))
    result = chain.invoke("Who won the senate race of Ohio in the 2022 U.S. midterm elections?")
    assert "Vance" in result["trace"].knowledge() and "Vance" in result["answer"], result["answer"]


@pytest.mark.slow
def test_the_lcel_page_runs_as_written(chat_server):
    retriever_in_front, own_base_llm = re.findall(r"```python\n(.*?)```", (DOCS / "langchain.md").read_text(), re.S)
    page = {}
    exec(retriever_in_front, page)
    assert "Canberra" in page["answer"]
    exec(own_base_llm, page)
    assert page["result"]["trace"].model == "any" and page["result"]["trace"].mode == "top-down-auto"
