"""Verify and revise (LLM-Augmenter, Peng et al. 2023): score the answer against the knowledge it was
given; when the score is low, tell the base LLM so and let it answer again; keep the best answer.

A *utility* scores ``(query, knowledge, response)`` and says what to fix: ``score(...) -> (score,
feedback)``. Two ship with kcard (``knowledge-f1`` and ``self-critique``, registered by
kcard_core.default_plugins); plugins add their own through the ``register_utilities`` hook.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from langchain_core.runnables import RunnableConfig

from kcard_core.backends import yes_probability
from kcard_core.runs import KcardRunnable
from kcard_core.trace import Revision
from kcard_core.text import f1, one_line

INCONSISTENT = "The response is inconsistent with the knowledge. Please generate again."


class Utility(Protocol):
    name: str
    threshold: float  # below it, the answer is revised

    def score(self, query: str, knowledge: str, response: str) -> tuple[float, str]: ...


class KnowledgeF1:
    """Unigram F1 between the response and the knowledge (the paper's KF1).

    A short answer shares few words with a long knowledge text, so its F1 is small even when it is
    right: the default threshold only catches answers that share no word with the knowledge.
    """

    name = "knowledge-f1"

    def __init__(self, threshold: float = 0.01, **_: Any):
        self.threshold = threshold

    def score(self, query: str, knowledge: str, response: str) -> tuple[float, str]:
        return f1(response, [knowledge]), INCONSISTENT


class SelfCritique:
    """The base LLM judges its own answer: P(yes) to "Is the answer supported by the knowledge?"."""

    name = "self-critique"
    PROMPT = ("Knowledge: {knowledge}\nQuestion: {query}\nAnswer: {response}\n"
              "Is the answer supported by the knowledge? (Yes or No)\nJudgement:")

    def __init__(self, logprobs: Callable[[str], dict[str, float]], threshold: float = 0.5, **_: Any):
        self.logprobs, self.threshold = logprobs, threshold

    def score(self, query: str, knowledge: str, response: str) -> tuple[float, str]:
        prompt = self.PROMPT.format(knowledge=one_line(knowledge), query=one_line(query), response=one_line(response))
        p_yes = yes_probability(self.logprobs(prompt))
        return p_yes, (f"The answer {one_line(response)!r} is not supported by the knowledge "
                       f"(P(yes) {p_yes:.2f}). Please answer again using the knowledge.")


class VerifyAndRevise(KcardRunnable):
    """Wraps a kcard chain: answer → utility → (feedback → answer again) up to ``max_rounds`` times.

    The trace's ``revisions`` is the working memory: every candidate with its score and feedback.
    """

    def __init__(self, chain, utility: Utility, max_rounds: int = 2):
        self.chain, self.utility, self.max_rounds = chain, utility, max_rounds

    @property
    def mode(self) -> str:
        return f"{self.chain.mode}+revise"

    @property
    def cards(self) -> list:
        return getattr(self.chain, "cards", [])

    def _invoke(self, input: Any, config: RunnableConfig) -> dict:
        result = self.chain.invoke(input, config)
        trace = result["trace"]
        knowledge = trace.knowledge()
        if not knowledge:  # nothing to verify against
            return result
        prompt, response = trace.prompt, result["answer"]
        for round_number in range(self.max_rounds + 1):
            score, feedback = self.utility.score(result["question"], knowledge, response)
            revised = score < self.utility.threshold and round_number < self.max_rounds
            trace.revisions.append(Revision(round_number, response, round(score, 4), self.utility.name,
                                            feedback if revised else None))
            if not revised:
                break
            prompt = revision_prompt(prompt, response, feedback)
            with trace.timer("revise"):
                response = self.chain.ask(prompt, config)
        best = max(trace.revisions, key=lambda candidate: candidate.score)  # the first of equals
        trace.answer = result["answer"] = best.response
        return result


def revision_prompt(prompt: str, response: str, feedback: str) -> str:
    """The chain's final prompt with the rejected answer and the feedback, asking again."""
    return f"{prompt} {one_line(response)}\nFeedback: {one_line(feedback)}\nAnswer:"
