"""What bottom-up and top-down share: input handling, the final answer (invoke or stream), the trace."""

from __future__ import annotations

import re
from abc import abstractmethod
from typing import TYPE_CHECKING, Any, AsyncIterator, Generator, Iterable, Iterator

from langchain_core.documents import Document
from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import patch_config, run_in_executor

from kcard_core import answer_types, defaults
from kcard_core.config import limit
from kcard_core.errors import KcardError
from kcard_core.llm import BackendLLM
from kcard_core.runs import KcardRunnable
from kcard_core.text import named_option, one_line, split_options, text_of, without_options
from kcard_core.trace import CardError, Trace, Turn

if TYPE_CHECKING:
    from kcard_core.retrieval import QuestionIndex

ANSWER_STOP = ["\n"]  # every prompt segment is one line, so is the answer
# an answer's most tokens: a 270M reader often copies the knowledge's whole sentence, and at 32 "The
# Fellgate Tunnel, 1,260 yards long, had no towpath, so boatmen … pushed the boats through with" ran out
# before its answer ("their feet")
ANSWER_TOKENS = 48
WORD = re.compile(r"\w+")
# a word the answer step favours, whole with its hyphens: favouring "thirty" and "one" alone, a 270M
# reader handed "runs for thirty-one miles" answered "thirty one miles"
FAVOURED = re.compile(r"\w+(?:-\w+)*")
APPOSITION = r"\s*([,:])"  # what sets a name beside a phrase


def apposition(question: str, answer: str, knowledge: str) -> str:
    """The mark the knowledge sets right after an answer that only repeats the question, so that the
    answer can go on as the knowledge does: "," for "Kelderwick's school", a 270M reader's answer to
    "What is the name of Kelderwick's school?" handed "Kelderwick's school, the Morrane Academy, was
    founded in 1851". Empty for an answer that says anything the question does not, for a question
    that offers a choice ("X or Y?"), and when no such mark follows the answer in the knowledge."""
    words, asked = ({word.lower() for word in WORD.findall(text)} for text in (answer, question))
    if not words or not words <= asked or " or " in question.lower():
        return ""
    found = re.search(re.escape(answer) + APPOSITION, knowledge, re.IGNORECASE)
    return found.group(1) if found else ""


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

    def __init__(self, llm: BaseLanguageModel, *, model_name: str = "", seed: int | None = 0,
                 type_bias: float = defaults.TYPE_BIAS):
        """Every chain's settings (a subclass takes its own and passes these on as keywords)."""
        self.llm = llm
        self.model_name = model_name
        self.seed = seed
        self.type_bias = type_bias  # asking again for an answer of the question's type (0: never)

    @abstractmethod
    def prepare(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        """Gather knowledge and return the final prompt (recording everything in ``trace``)."""

    def ask(self, prompt: str, config: RunnableConfig | None, **hint: Any) -> str:
        """One line from the base LLM."""
        return text_of(self.llm.invoke(prompt, config=config, stop=ANSWER_STOP, **hint)).strip()

    async def aask(self, prompt: str, config: RunnableConfig | None, **hint: Any) -> str:
        """One line from the base LLM, natively async where the model is (a ChatOpenAI, say)."""
        return text_of(await self.llm.ainvoke(prompt, config=config, stop=ANSWER_STOP, **hint)).strip()

    def copy_hint(self, question: str, knowledge: str) -> dict[str, Any]:
        """What the answer step asks of a kcard backend's model: favour the words of the knowledge that
        the question does not hold (the answer is in the knowledge, and rarely repeats the question).
        A 270M reader handed "The river that runs through Kelderwick is the Sabre." answered "The River
        Esk" without it; other LangChain models take no such hint and read the prompt alone."""
        if not isinstance(self.llm, BackendLLM):
            return {}
        asked = {word.lower() for word in FAVOURED.findall(without_options(question))}
        words = dict.fromkeys(word for word in FAVOURED.findall(knowledge) if word.lower() not in asked)
        return {"favour": tuple(words)} if words else {}

    def _start(self, input: Any, config: RunnableConfig | None) -> tuple[str, Trace]:
        question = question_of(input)
        trace = Trace(mode=self.mode, question=question, model=self.model_name)
        with trace.timer("knowledge"):
            trace.prompt = self.prepare(question, trace, config)
        return question, trace

    def answering(self, question: str, trace: Trace) -> Generator[tuple[str, dict], str, str]:
        """The final answer to the prepared prompt, as steps: yields each prompt for the base LLM with
        what to ask of it (the :meth:`copy_hint`), is sent its reply, returns the answer (``answer``
        and ``aanswer`` drive it).

        A multiple-choice question ("… Options: A. X; B. Y.") is first answered open, the knowledge in
        sight but not the options, and the answer is matched to an option by name: small LLMs shown the
        options tend to pick the first whatever the knowledge says. Only an answer that names no
        option is asked again with the options shown. An open answer that only repeats the question
        goes on as the knowledge does (:func:`apposition`); one that names nothing of the type the
        question asks for ("1187" for "How many bells …?") is asked again, favouring the knowledge's
        spans of that type (:mod:`kcard_core.answer_types`); the new answer is kept if it names one
        and does not run on (one that runs on is cut to the span it says most often). A typed answer
        that says part of a name, the rest being the question's words, becomes the whole name
        (:func:`~kcard_core.answer_types.whole`).
        """
        hint = self.copy_hint(question, trace.knowledge())
        stem, options = split_options(question)
        if options and one_line(question) in trace.prompt:  # wherever the prompt asks it, it asks the stem
            reply = yield trace.prompt.replace(one_line(question), one_line(stem)), hint
            key = named_option(reply, options)
            trace.turns.append(Turn("answered without the options, matched to one", reply, details={"option": key}))
            if key:
                return f"{key}. {options[key]}"
        reply = yield trace.prompt, hint
        if options:
            return reply
        if mark := self.repeated(question, reply, trace):
            more = yield f"{trace.prompt} {reply}{mark}", hint
            reply = f"{reply}{mark} {more}" if more else reply
        if not (spans := self.typed_spans(question, trace)):
            return reply
        if not answer_types.of_type(reply, spans):
            again = yield trace.prompt, {"favour": tuple(dict.fromkeys(FAVOURED.findall(" ".join(spans)))),
                                         "favour_bias": self.type_bias}
            trace.turns.append(Turn(f"the answer is no {answer_types.answer_type(question)} from the knowledge: "
                                    "asked again, favouring those", reply,
                                    details={"spans": spans, "asked again": again}))
            reply = answer_types.settled(again, spans) or reply
        return answer_types.whole(reply, question, trace.knowledge())

    def typed_spans(self, question: str, trace: Trace) -> list[str]:
        """The knowledge's spans of the type the question asks for, where an answer of another type
        will be asked again (:meth:`answering`): none with ``type_bias`` 0, for a multiple-choice
        question, or for a LangChain model that takes no hint (asked again, it would say the same)."""
        if not self.type_bias or not isinstance(self.llm, BackendLLM) or split_options(question)[1]:
            return []
        return answer_types.typed_spans(question, trace.knowledge())

    @staticmethod
    def repeated(question: str, answer: str, trace: Trace) -> str:
        """For an answer that only repeats the question, the mark the knowledge sets after it (the base
        LLM goes on from there, see :func:`apposition`), recorded in the trace; empty for any other."""
        mark = apposition(question, answer, trace.knowledge())
        if mark:
            trace.turns.append(Turn("the answer only repeated the question: it goes on as the knowledge does",
                                    answer, details={"goes on after": answer + mark}))
        return mark

    def answer(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        steps = self.answering(question, trace)
        prompt, hint = next(steps)
        try:
            while True:
                prompt, hint = steps.send(self.ask(prompt, config, **hint))
        except StopIteration as done:
            return done.value

    async def aanswer(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        steps = self.answering(question, trace)
        prompt, hint = next(steps)
        try:
            while True:
                prompt, hint = steps.send(await self.aask(prompt, config, **hint))
        except StopIteration as done:
            return done.value

    def _invoke(self, input: Any, config: RunnableConfig) -> dict:
        question, trace = self._start(input, config)
        with trace.timer("answer"):
            trace.answer = self.answer(question, trace, config)
        return {"question": question, "answer": trace.answer, "trace": trace}

    async def _ainvoke(self, input: Any, config: RunnableConfig) -> dict:
        """Cards and selectors run in a worker thread (local models); the base LLM is awaited."""
        question, trace = await run_in_executor(config, self._start, input, config)
        with trace.timer("answer"):
            trace.answer = await self.aanswer(question, trace, config)
        return {"question": question, "answer": trace.answer, "trace": trace}

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict]:
        """Yields {"answer": chunk} as the base LLM writes, then {"trace": trace}. An answer that may be
        replaced comes in one piece: a multiple-choice one (it is matched to an option first) and
        one whose type is checked (:meth:`typed_spans`)."""
        yield from self._transform_stream_with_config(iter([input]), self._stream, config, run_type="chain")

    def _stream(self, inputs: Iterator[Any], config: RunnableConfig) -> Iterator[dict]:
        question, trace = self._start(next(inputs), config)
        with trace.timer("answer"):
            if self.in_one_piece(question, trace):
                trace.answer = self.answer(question, trace, config)
                yield {"answer": trace.answer}
            else:
                hint, prompt = self.copy_hint(question, trace.knowledge()), trace.prompt
                while prompt:  # the answer, then its continuation when it only repeated the question
                    for chunk in self.llm.stream(prompt, config=config, stop=ANSWER_STOP, **hint):
                        if text := self._grow_answer(trace, chunk):
                            yield {"answer": text}
                    mark, prompt = self._go_on(question, trace, prompt)
                    if mark:
                        yield {"answer": f"{mark} "}
                trace.answer = trace.answer.strip()
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
            if self.in_one_piece(question, trace):
                trace.answer = await self.aanswer(question, trace, config)
                yield {"answer": trace.answer}
            else:
                hint, prompt = self.copy_hint(question, trace.knowledge()), trace.prompt
                while prompt:
                    async for chunk in self.llm.astream(prompt, config=config, stop=ANSWER_STOP, **hint):
                        if text := self._grow_answer(trace, chunk):
                            yield {"answer": text}
                    mark, prompt = self._go_on(question, trace, prompt)
                    if mark:
                        yield {"answer": f"{mark} "}
                trace.answer = trace.answer.strip()
        yield {"trace": trace}

    def in_one_piece(self, question: str, trace: Trace) -> bool:
        """Whether the answer may be replaced once written, and so is not streamed as it is written."""
        return bool(split_options(question)[1] or self.typed_spans(question, trace))

    def _go_on(self, question: str, trace: Trace, streamed: str) -> tuple[str, str]:
        """After the stream of the answer prompt: for an answer that only repeated the question, the
        mark it goes on from (added to ``trace.answer``) and the prompt to stream next; else two ''."""
        mark = self.repeated(question, trace.answer.strip(), trace) if streamed == trace.prompt else ""
        if mark:
            trace.answer = f"{trace.answer.strip()}{mark} "
        return mark, mark and f"{trace.prompt} {trace.answer.rstrip()}"

    @staticmethod
    def _grow_answer(trace: Trace, chunk: Any) -> str:
        """The text a streamed chunk adds to ``trace.answer`` (the first loses "Answer: X"'s space, and so
        does the first after a space already there)."""
        text = text_of(chunk) if trace.answer[-1:].strip() else text_of(chunk).lstrip()
        trace.answer += text
        return text

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
