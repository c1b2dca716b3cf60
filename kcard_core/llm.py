"""Any backend's model as a LangChain language model, so the chains are ordinary runnables."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.llms import LLM
from langchain_core.outputs import GenerationChunk
from pydantic import ConfigDict

from kcard_core.sampling import Sampling


class BackendLLM(LLM):
    """A text-completion LLM (greedy by default) that runs on a kcard backend and shares its loaded model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model: Any  # what the backend's locate() returned
    sampling: Sampling = Sampling(max_tokens=32, temperature=0.0)
    backend: Any

    @property
    def _llm_type(self) -> str:
        return f"kcard-{self.backend.name}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": str(self.model), **self.sampling.__dict__}

    def _sampling(self, stop: list[str] | None, kwargs: dict[str, Any]) -> Sampling:
        favour_bias = kwargs.get("favour_bias")
        return replace(self.sampling, stop=tuple(stop or self.sampling.stop),
                       max_tokens=kwargs.get("max_tokens") or self.sampling.max_tokens,
                       favour=tuple(kwargs.get("favour", ())), copy=kwargs.get("copy", ""),
                       asked=kwargs.get("asked", ""), words=kwargs.get("words", 0),
                       narrow=kwargs.get("narrow", False), unasked=kwargs.get("unasked", ""),
                       refused=tuple(kwargs.get("refused", ())),
                       favour_bias=self.sampling.favour_bias if favour_bias is None else favour_bias)

    def _call(self, prompt: str, stop: list[str] | None = None,
              run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> str:
        """``max_tokens=N`` (as in ``llm.invoke(prompt, max_tokens=N)``) overrides the default length;
        ``favour=words`` adds the sampling's ``favour_bias`` (or ``favour_bias=B``) to those words' tokens;
        ``copy=text`` makes the answer a span of ``text`` where the backend ``copies``, ``asked=question``
        keeps it from being made of the question's tokens alone and ``words=N`` from being longer than N words,
        ``unasked=prompt`` (the prompt without the question) weighs where a span starts by what the question adds,
        ``refused=spans`` keeps those whole spans out;
        ``narrow=True`` makes it a run of ``copy``'s whole words (an answer narrowed to its likeliest part)."""
        sampling = self._sampling(stop, kwargs)
        return self.backend.generate(self.model, prompt, n=1, sampling=sampling)[0]

    def _stream(self, prompt: str, stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[GenerationChunk]:
        sampling = self._sampling(stop, kwargs)
        for text in self.backend.stream(self.model, prompt, sampling):
            chunk = GenerationChunk(text=text)
            if run_manager:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk
