"""Readers: the answer step. A chain gathers knowledge; a reader turns the question and that knowledge
into the answer, asking the base LLM what it needs.

A reader is a plugin (``register_readers``, docs/plugins.md). Its contract is one generator,
:meth:`Reader.reading`: it yields :class:`Ask` requests, is sent each reply (one line of text),
and returns the answer, recording what it decided in ``trace.turns``. The chain runs that one
generator for ``invoke``, ``ainvoke``, ``stream`` and ``astream`` alike (:func:`read`, :func:`aread`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Generator, Iterator

from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig

from kcard_core.llm import BackendLLM
from kcard_core.text import one_line, text_of
from kcard_core.trace import Trace, Turn

ANSWER_STOP = ["\n"]  # every prompt segment is one line, so is the answer
ANSWER_TOKENS = 48  # an answer's most tokens

# what a chat model is told (a completion model reads the chain's few-shot prompt instead); the
# question on both sides of the knowledge, as in the completion prompt
CHAT_PROMPT = ChatPromptTemplate.from_messages([
    ("system", "Answer the question from the knowledge given. Reply with the answer alone: a name, a number, a "
               "date or a short phrase taken from the knowledge, on one line, with no explanation."),
    ("human", "Question: {question}\n\nKnowledge:\n{knowledge}\n\nQuestion: {question}"),
])


@dataclass(frozen=True)
class Ask:
    """One request to the base LLM: a prompt (text, or chat messages), and keywords only a kcard
    backend's model takes (``favour``, ``favour_bias``: see :class:`kcard_core.llm.BackendLLM`).
    ``shown``: the reply is the start of the answer as it stands, so a stream shows it as it comes."""
    prompt: Any
    hint: dict[str, Any] = field(default_factory=dict)
    shown: bool = False


class Reader(ABC):
    """The answer step (template method): subclasses implement :meth:`reading`.

    Takes the base LLM at construction. Guarantees of every reader (the conformance suite,
    :mod:`kcard_core.testing`, checks them): the answer is one line of text; a reply marked ``shown``
    is where the answer starts; every decision beyond asking is a :class:`~kcard_core.trace.Turn`.
    """

    def __init__(self, llm: BaseLanguageModel):
        self.llm = llm

    @classmethod
    def from_spec(cls, spec: Any, llm: BaseLanguageModel) -> "Reader":
        """The reader for a chain's settings (:class:`kcard_core.spec.ChainSpec`; None: the defaults)."""
        return cls(llm)

    @property
    def takes_hints(self) -> bool:
        """Whether the base LLM runs on a kcard backend (it takes :class:`Ask` hints, gives
        log-probabilities); a LangChain model of any other kind reads the prompt alone."""
        return isinstance(self.llm, BackendLLM)

    @property
    def chat(self) -> bool:
        return isinstance(self.llm, BaseChatModel)

    @property
    def copies(self) -> bool:
        """Whether the base LLM can be asked for the knowledge's likeliest span (an :class:`Ask` hinted
        ``copy`` and ``asked``: a kcard backend whose model ``copies``, :mod:`kcard_core.copying`)."""
        return self.takes_hints and getattr(self.llm.backend, "copies", False)

    def copying(self, prompt: Any, question: str, knowledge: str, words: int = 0, weighed: bool = False,
                refused: tuple[str, ...] = ()) -> Ask:
        """The request for the span of ``knowledge`` likeliest as the whole answer to ``question``, that
        says more than the question's own words (:func:`kcard_core.copying.says`), of at most ``words``
        words (0: any number; only where the reader :attr:`copies`), and is none of ``refused``.
        ``weighed``: where ``prompt`` holds the question, where the span starts counts for what the
        question adds to it (the prompt without the question goes with the request as ``unasked``:
        :mod:`kcard_core.copying`)."""
        asked = one_line(question)
        hint = {"copy": knowledge, "asked": question, "words": words, "refused": refused}
        if weighed and isinstance(prompt, str) and asked and asked in prompt:
            hint["unasked"] = prompt.replace(asked, "")
        return Ask(prompt, hint)

    def narrowing(self, prompt: Any, question: str, answer: str, refused: tuple[str, ...] = ()) -> Ask:
        """The request for the run of ``answer``'s whole words likeliest, its tokens and then an end, as
        the reply to ``prompt``, that says more than the question's own words and is none of ``refused``:
        where greedy decoding would have started and ended that reply had it weighed every run at once
        (only where the reader :attr:`copies`)."""
        return Ask(prompt, {"copy": answer, "narrow": True, "asked": question, "refused": refused})

    def prompt(self, question: str, trace: Trace) -> Any:
        """What the base LLM reads: the chain's prompt (``trace.prompt``) for a completion model; for a
        chat model, :data:`CHAT_PROMPT`'s messages with each used document and its sources."""
        if not self.chat:
            return trace.prompt
        knowledge = "\n".join(
            f"- {record.text}" + (f" (source: {'; '.join(record.sources)})" if record.sources else "")
            for record in trace.documents.values() if record.used) or "(none)"
        return CHAT_PROMPT.format_messages(knowledge=knowledge, question=question)

    def holds_answer(self, question: str, text: str) -> bool | None:
        """Whether ``text`` holds an answer of the kind ``question`` asks for, by this reader's own
        reckoning; the selectors break near-ties with it (the factuality selector's margin). None (the
        default): this reader cannot tell, and the earlier ranking breaks ties."""
        return None

    @abstractmethod
    def reading(self, question: str, trace: Trace) -> Generator[Ask, str, str]:
        """Yield each :class:`Ask`, receive its reply (stripped), return the answer."""


def _kwargs(ask: Ask, takes_hints: bool) -> dict[str, Any]:
    return {"stop": ANSWER_STOP, **(ask.hint if takes_hints else {})}


def _grow(parts: list[str], chunk: Any) -> str:
    """Append a streamed chunk's text to ``parts`` (the reply's first text without its leading space)."""
    text = text_of(chunk) if "".join(parts).strip() else text_of(chunk).lstrip()
    parts.append(text)
    return text


def read(reader: Reader, question: str, trace: Trace, config: RunnableConfig | None,
         stream: bool = False) -> Iterator[str]:
    """Run ``reader`` to its answer, set as ``trace.answer``; yields the answer's text as it comes
    (the ``shown`` reply's chunks with ``stream``, then the rest in one piece)."""
    steps, shown = reader.reading(question, trace), None
    try:
        ask = next(steps)
        while True:
            kwargs = _kwargs(ask, reader.takes_hints)
            if stream and ask.shown and shown is None:
                parts: list[str] = []
                for chunk in reader.llm.stream(ask.prompt, config=config, **kwargs):
                    if text := _grow(parts, chunk):
                        yield text
                reply = shown = "".join(parts).strip()
            else:
                reply = text_of(reader.llm.invoke(ask.prompt, config=config, **kwargs)).strip()
            ask = steps.send(reply)
    except StopIteration as done:
        trace.answer = done.value.strip()
    yield from _rest(trace, shown, stream)


async def aread(reader: Reader, question: str, trace: Trace, config: RunnableConfig | None,
                stream: bool = False) -> AsyncIterator[str]:
    """:func:`read`, the base LLM awaited natively where it can be (a ChatOpenAI, say)."""
    steps, shown = reader.reading(question, trace), None
    try:
        ask = next(steps)
        while True:
            kwargs = _kwargs(ask, reader.takes_hints)
            if stream and ask.shown and shown is None:
                parts: list[str] = []
                async for chunk in reader.llm.astream(ask.prompt, config=config, **kwargs):
                    if text := _grow(parts, chunk):
                        yield text
                reply = shown = "".join(parts).strip()
            else:
                reply = text_of(await reader.llm.ainvoke(ask.prompt, config=config, **kwargs)).strip()
            ask = steps.send(reply)
    except StopIteration as done:
        trace.answer = done.value.strip()
    for text in _rest(trace, shown, stream):
        yield text


def _rest(trace: Trace, shown: str | None, stream: bool) -> Iterator[str]:
    """What a stream still owes once the answer is known: all of it, or what follows the shown reply."""
    if not stream:
        return
    if shown is None:
        yield trace.answer
    elif trace.answer.startswith(shown):
        if rest := trace.answer[len(shown):]:
            yield rest
    else:  # a reader broke its promise: the trace says what the answer became
        trace.turns.append(Turn("the stream showed a reply the reader then replaced", shown,
                                details={"answer": trace.answer}))


class PlainReader(Reader):
    """The base LLM's reply to the prompt, as it writes it: one ask, shown as it comes. What a chain
    reads with when no other reader is installed."""

    def reading(self, question: str, trace: Trace) -> Generator[Ask, str, str]:
        return (yield Ask(self.prompt(question, trace), shown=True))


class SpanReader(Reader):
    """A span of the knowledge, the one the base LLM finds likeliest as the whole answer that says more
    than the question's own words, where it starts weighed by what the question adds to it
    (:mod:`kcard_core.copying`): one ask with ``copy``, where the base LLM runs on a backend that
    ``copies``. Otherwise (a chat model, a server, no knowledge), and where no span comes back, the
    base LLM's own reply; a trace turn says which path was taken."""

    def reading(self, question: str, trace: Trace) -> Generator[Ask, str, str]:
        prompt, knowledge = self.prompt(question, trace), trace.knowledge()
        if not knowledge:
            why = "no knowledge to copy from"
        elif not self.copies:
            why = f"the base LLM ({type(self.llm).__name__}) gives no logits to copy with"
        else:
            span = yield self.copying(prompt, question, knowledge, weighed=True)
            if span:
                trace.turns.append(Turn("the answer: the knowledge's span likeliest as a whole answer", span))
                return span
            why = "no span of the knowledge came back"
        trace.turns.append(Turn("the answer: the base LLM's own reply", details={"why": why}))
        return (yield Ask(prompt, shown=True))
