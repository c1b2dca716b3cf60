"""Baselines that run through the same chain interface: the base LLM alone, and GenRead.

Vanilla: few-shot "Question: ... Answer: ..." and no knowledge. GenRead (Yu et al., 2023): the base
LLM first writes its own background document, which is then used as bottom-up uses card knowledge.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from kcard_core.chains.base import KnowledgeChain
from kcard_core.chains.prompts import BOTTOM_UP_EXAMPLES, GENREAD, bottom_up_prompt
from kcard_core.text import one_line, text_of, without_options
from kcard_core.trace import CardChoice, DocumentRecord, Trace


class Vanilla(KnowledgeChain):
    mode = "vanilla"

    def __init__(self, llm, *, examples: list[dict] | None = None, **common):
        super().__init__(llm, **common)
        self.examples = BOTTOM_UP_EXAMPLES if examples is None else examples

    def prepare(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        blocks = [f"Question: {one_line(ex['question'])}\nAnswer: {ex['answer']}" for ex in self.examples]
        return "\n\n".join([*blocks, f"Question: {one_line(question)}\nAnswer:"])


class GenRead(KnowledgeChain):
    mode = "genread"
    DOCUMENT_TOKENS = 96

    def __init__(self, llm, *, examples: list[dict] | None = None, **common):
        super().__init__(llm, **common)
        self.examples = BOTTOM_UP_EXAMPLES if examples is None else examples

    def prepare(self, question: str, trace: Trace, config: RunnableConfig | None) -> str:
        with trace.timer("generate-then-read"):
            prompt = GENREAD.format(question=one_line(without_options(question))) + "\n"
            document = self.llm.invoke(prompt, config=config, max_tokens=self.DOCUMENT_TOKENS)
        document = one_line(text_of(document))
        trace.documents["genread#1"] = DocumentRecord(None, document, used=True)
        trace.cards = [CardChoice("(base LLM)", "GenRead: the base LLM writes its own background document")]
        return bottom_up_prompt(question, [document], self.examples)
