"""The base LLM as a LangChain language model, so the chains are ordinary runnables."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.llms import LLM
from langchain_core.outputs import GenerationChunk
from pydantic import ConfigDict

from kcard_core.backends import Sampling


class TransformersLLM(LLM):
    """A model as a text-completion LLM (greedy by default) that shares the backend's loaded weights."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model_path: str
    sampling: Sampling = Sampling(max_tokens=32, temperature=0.0)
    backend: Any

    @property
    def _llm_type(self) -> str:
        return "kcard-transformers"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, **self.sampling.__dict__}

    def _with_stop(self, stop: list[str] | None) -> Sampling:
        return replace(self.sampling, stop=tuple(stop or self.sampling.stop))

    def _call(self, prompt: str, stop: list[str] | None = None,
              run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> str:
        return self.backend.generate(Path(self.model_path), prompt, n=1, sampling=self._with_stop(stop))[0]

    def _stream(self, prompt: str, stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[GenerationChunk]:
        for text in self.backend.stream(Path(self.model_path), prompt, self._with_stop(stop)):
            chunk = GenerationChunk(text=text)
            if run_manager:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk
