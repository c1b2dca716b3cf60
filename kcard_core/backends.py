"""A backend turns a model file into text. Cards and chains only talk to this interface."""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from kcard_core.sampling import Sampling  # noqa: F401  (part of the backend interface)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseLanguageModel

    from kcard_core.artifacts import Artifact


@dataclass(frozen=True)
class BackendStatus:
    available: bool
    device: str
    detail: str = ""


@dataclass(eq=False)
class Request:
    """``n`` samples of ``prompt`` (a user's turn, with ``chat``), filled in by whoever serves it."""

    prompt: str
    n: int
    sampling: Sampling
    chat: bool = False
    texts: list[str] | None = None
    error: BaseException | None = None


class Gather:
    """Requests for one model, served together: each caller queues its request and waits for the
    model's lock; whoever gets the lock serves every request queued by then (``serve`` sets each
    one's texts or error), so requests that other threads make meanwhile are decoded together."""

    def __init__(self, lock: Any):
        self.lock = lock
        self.pending: list[Request] = []
        self.pending_lock = threading.Lock()

    def submit(self, request: Request, serve: Callable[[list[Request]], None]) -> list[str]:
        with self.pending_lock:
            self.pending.append(request)
        with self.lock:
            if request.texts is None and request.error is None:  # not yet served by another thread
                serve(self.take())
        if request.error is not None:
            raise request.error
        return request.texts or []

    def take(self, accept: Callable[[Request], bool] = lambda request: True) -> list[Request]:
        """The queued requests that ``accept`` takes (it may start serving them), in order."""
        with self.pending_lock:
            taken = [request for request in self.pending if accept(request)]
            self.pending = [request for request in self.pending if request not in taken]
        return taken


@dataclass(frozen=True)
class Adapted:
    """A base model with a LoRA adapter applied at load (``model`` for backends that take adapters)."""

    base: Path
    adapter: Path


class Backend(ABC):
    """Runs models. Implementations load each model once and reuse it.

    ``model`` in the methods below is what :meth:`locate` returned: a verified local file for local
    backends, an endpoint for remote ones, or an :class:`Adapted` pair when the card has a LoRA
    adapter in this backend's format.
    """

    name: str = ""
    description: str = ""
    # the adapter artifact this backend applies ("adapter-gguf" or "adapter-peft"); None: it takes none
    # (a remote server serves whatever model it was started with, adapter included)
    adapter_role: str | None = None
    # whether generate() honours ``Sampling.copy`` (kcard_core/copying.py); a backend that does not
    # ignores it, and the span reader takes its prompt-only path
    copies: bool = False

    def locate(self, artifact: "Artifact", settings: dict[str, Any]) -> Any:
        """Where this backend finds ``artifact``; ``settings`` come from the user's config
        ([backends.NAME] merged with [cards.CARD])."""
        return artifact.resolve()

    @abstractmethod
    def status(self) -> BackendStatus:
        """Whether this backend can run here, and on which device. Must not import heavy libraries."""

    @abstractmethod
    def generate(self, model: Path, prompt: str, *, n: int, sampling: Sampling, chat: bool = False) -> list[str]:
        """``n`` samples continuing ``prompt`` (or answering it through the chat template when ``chat``)."""

    def stream(self, model: Path, prompt: str, sampling: Sampling) -> Iterator[str]:
        """Pieces of one completion as they are written; backends that cannot stream yield it whole."""
        yield self.generate(model, prompt, n=1, sampling=sampling)[0]

    @abstractmethod
    def next_token_logprobs(self, model: Path, prompt: str, top: int = 20) -> dict[str, float]:
        """Log-probabilities of the most likely next tokens (used by yes/no judges)."""

    def language_model(self, model: Any, sampling: Sampling) -> "BaseLanguageModel":
        """The model as a LangChain language model (the base LLM of the chains)."""
        from kcard_core.llm import BackendLLM

        return BackendLLM(model=model, sampling=sampling, backend=self)


def yes_probability(logprobs: dict[str, float]) -> float:
    """P(yes) / (P(yes) + P(no)) from next-token log-probabilities; 0.5 when neither appears."""
    yes = sum(math.exp(lp) for token, lp in logprobs.items() if token.strip().lower() == "yes")
    no = sum(math.exp(lp) for token, lp in logprobs.items() if token.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.5
