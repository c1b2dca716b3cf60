"""What bottom-up and top-down share: input handling, the final answer (invoke or stream), the trace."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterable, Iterator

from langchain_core.documents import Document
from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import patch_config, run_in_executor

from kcard_core.config import limit
from kcard_core.errors import KcardError
from kcard_core.readers import ANSWER_STOP, PlainReader, Reader, aread, read
from kcard_core.runs import KcardRunnable
from kcard_core.text import one_line, text_of, without_options
from kcard_core.trace import CardError, Trace

if TYPE_CHECKING:
    from kcard_core.retrieval import QuestionIndex

def card_texts(cards: Iterable) -> dict[str, QuestionIndex]:
    """Each card's searchable text (:meth:`kcard_core.cards.Card.index`) by name; a card whose text
    cannot load has none here (its error shows when it is asked)."""
    texts = {}
    for card in cards:
        try:
            index = card.index()
        except Exception:  # noqa: BLE001 - a card's own data; reported where the card runs
            continue
        if index is not None:
            texts[card.name] = index
    return texts


def subject_owners(texts: dict[str, QuestionIndex], query: str) -> list[str]:
    """The cards (of ``texts``) whose subject ``query`` names: such a question is for that card alone
    when there is one, whatever other cards' texts hold (a dictionary card's entry for "grep" does
    not outrank the card made from grep's own manual)."""
    return [name for name, index in texts.items() if index.names_subject(query)]


def question_of(input: Any) -> str:
    """The question as clean text: not empty, not over the limit, no bytes that are not UTF-8."""
    question = input.get("question") if isinstance(input, dict) else input
    if not isinstance(question, str):
        raise KcardError(f"the question must be text, not {type(question).__name__}")
    if len(question) > limit("KCARD_MAX_QUESTION_CHARS"):
        raise KcardError(f"the question has {len(question)} characters; the limit is "
                         f"{limit('KCARD_MAX_QUESTION_CHARS')} (KCARD_MAX_QUESTION_CHARS)")
    # undecodable command-line bytes arrive as lone surrogates, which no tokenizer accepts
    question = question.encode("utf-8", "replace").decode("utf-8")
    question = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in question).strip()
    if not question:
        raise KcardError("the question is empty")
    return question


class KnowledgeChain(KcardRunnable):
    """A chain: a question (str or {"question": ...}) in; {"question", "answer", "trace"} out.

    Each question is one LangChain run named after the mode ("kcard bottom-up"), whose children are
    the runs of the cards (named after each card), the selectors and the base LLM.
    """

    mode = ""
    cards: list = []  # the cards it may consult: none for the baselines (vanilla, genread)

    def __init__(self, llm: BaseLanguageModel, *, reader: Reader | None = None, model_name: str = "",
                 seed: int | None = 0):
        """Every chain's settings (a subclass takes its own and passes these on as keywords); ``reader``:
        the answer step (default: :class:`~kcard_core.readers.PlainReader` on ``llm``)."""
        self.llm = llm
        self.reader = reader or PlainReader(llm)
        self.model_name = model_name
        self.seed = seed

    @abstractmethod
    def prepare(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        """Gather knowledge and return the final prompt (recording everything in ``trace``)."""

    def ask(self, prompt: str, config: RunnableConfig | None, **hint: Any) -> str:
        """One line from the base LLM."""
        return text_of(self.llm.invoke(prompt, config=config, stop=ANSWER_STOP, **hint)).strip()

    def _start(self, input: Any, config: RunnableConfig | None) -> tuple[str, Trace]:
        question = question_of(input)
        trace = Trace(mode=self.mode, question=question, model=self.model_name)
        with trace.timer("knowledge"):
            trace.prompt = self.prepare(question, trace, config)
        return question, trace

    def answer(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        """The reader's answer to the prepared ``trace`` (also set as ``trace.answer``)."""
        for _ in read(self.reader, question, trace, config):
            pass
        return trace.answer

    def _invoke(self, input: Any, config: RunnableConfig) -> dict:
        question, trace = self._start(input, config)
        with trace.timer("answer"):
            self.answer(question, trace, config)
        return {"question": question, "answer": trace.answer, "trace": trace}

    async def _ainvoke(self, input: Any, config: RunnableConfig) -> dict:
        """Cards and selectors run in a worker thread (local models); the base LLM is awaited."""
        question, trace = await run_in_executor(config, self._start, input, config)
        with trace.timer("answer"):
            async for _ in aread(self.reader, question, trace, config):
                pass
        return {"question": question, "answer": trace.answer, "trace": trace}

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict]:
        """Yields {"answer": chunk} as the answer is written (the reader says which reply may be shown
        as it comes; the rest comes in one piece), then {"trace": trace}."""
        yield from self._transform_stream_with_config(iter([input]), self._stream, config, run_type="chain")

    def _stream(self, inputs: Iterator[Any], config: RunnableConfig) -> Iterator[dict]:
        question, trace = self._start(next(inputs), config)
        with trace.timer("answer"):
            for text in read(self.reader, question, trace, config, stream=True):
                yield {"answer": text}
        yield {"trace": trace}

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[dict]:
        """What :meth:`stream` yields, the base LLM's chunks awaited natively where it can."""
        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in self._atransform_stream_with_config(one(), self._astream, config, run_type="chain"):
            yield chunk

    async def _astream(self, inputs: AsyncIterator[Any], config: RunnableConfig) -> AsyncIterator[dict]:
        question, trace = await run_in_executor(config, self._start, await anext(inputs), config)
        with trace.timer("answer"):
            async for text in aread(self.reader, question, trace, config, stream=True):
                yield {"answer": text}
        yield {"trace": trace}

    def run_cards(self, cards: list, question: str, n: int | None, trace: Trace,
                  config: RunnableConfig | None) -> list[Document]:
        """Every card writes ``n`` documents (None: each its own number), concurrently up to
        ``config['max_concurrency']``.

        A card that fails is named in the trace and the others' documents are used; empty documents
        and repeats are dropped (and marked in the trace).
        """
        query = without_options(question)
        write = RunnableLambda(lambda card: card.generate(query, n, seed=self.seed))
        # one run per card, named after it
        results = write.batch(cards, [patch_config(config, run_name=card.name) for card in cards],
                              return_exceptions=True)
        documents, seen = [], {}
        for card, result in zip(cards, results):
            if isinstance(result, Exception):
                trace.errors.append(CardError(card.name, f"{type(result).__name__}: {result}"))
                continue
            trace.add_documents(result)
            for doc in result:  # low-temperature samples often repeat: a copy adds nothing but length
                key = one_line(doc.page_content.lower())
                if not key:
                    trace.documents[doc.metadata["id"]].dropped = "empty"
                elif key in seen:
                    trace.documents[doc.metadata["id"]].duplicate_of = seen[key]
                else:
                    seen[key] = doc.metadata["id"]
                    documents.append(doc)
        return documents
