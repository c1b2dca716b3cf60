"""Cards and base LLMs served by any OpenAI-compatible server, through langchain-openai.

Settings (config.toml ``[backends.openai]``, overridable per card in ``[cards.NAME]``):
``base_url`` (else $OPENAI_BASE_URL), ``api_key`` (else $OPENAI_API_KEY), ``model`` (the name the
server knows; default: the artifact's file name), ``timeout`` seconds per request (60),
``max_retries`` with exponential backoff (2), ``repeat_penalty_param`` (the server's name for it:
"repeat_penalty" for llama.cpp, "repetition_penalty" for vLLM and TGI), ``eos_token_id`` (needed
for yes/no judges on llama_cpp.server, which reports no log-probabilities when the most likely
next token is end-of-text: kcard bans that token for the one-token request).
Base models without a chat template use the completions endpoint; ``chat=True`` uses chat.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from kcard_core.backends import Backend, BackendStatus, Sampling
from kcard_core.errors import KcardError
from kcard_core.text import text_of


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout: float = 60.0
    max_retries: int = 2
    repeat_penalty_param: str = "repeat_penalty"
    eos_token_id: int | None = None

    def __str__(self) -> str:
        return f"{self.model} at {self.base_url}"


class OpenAIBackend(Backend):
    name = "openai"
    description = "any OpenAI-compatible server (llama.cpp server, vLLM, TGI) through langchain-openai"

    def status(self) -> BackendStatus:
        if importlib.util.find_spec("langchain_openai") is None:
            return BackendStatus(False, "remote", "pip install langchain-openai")
        return BackendStatus(True, "remote", os.environ.get("OPENAI_BASE_URL", "base_url from config.toml"))

    def locate(self, artifact, settings: dict[str, Any]) -> Endpoint:
        base_url = settings.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise KcardError("the openai backend needs a server: set base_url under [backends.openai] "
                             "(or [cards.NAME]) in config.toml, or OPENAI_BASE_URL")
        return Endpoint(base_url=base_url, model=settings.get("model") or Path(artifact.file).name,
                        api_key=settings.get("api_key") or os.environ.get("OPENAI_API_KEY") or "not-needed",
                        timeout=float(settings.get("timeout", 60)), max_retries=int(settings.get("max_retries", 2)),
                        repeat_penalty_param=settings.get("repeat_penalty_param", "repeat_penalty"),
                        eos_token_id=settings.get("eos_token_id"))

    def client(self, endpoint: Endpoint, sampling: Sampling, chat: bool = False, **extra: Any):
        """A langchain-openai model for one endpoint and one way of sampling."""
        from langchain_openai import ChatOpenAI, OpenAI

        body = {endpoint.repeat_penalty_param: sampling.repeat_penalty} if sampling.repeat_penalty != 1.0 else None
        if not chat:
            extra.setdefault("batch_size", 1)  # llama_cpp.server takes one prompt per request
        return (ChatOpenAI if chat else OpenAI)(
            base_url=endpoint.base_url, api_key=endpoint.api_key, model=endpoint.model,
            temperature=sampling.temperature, max_tokens=sampling.max_tokens, seed=sampling.seed,
            timeout=endpoint.timeout, max_retries=endpoint.max_retries, extra_body=body, **extra)

    def generate(self, model: Endpoint, prompt: str, *, n: int, sampling: Sampling, chat: bool = False) -> list[str]:
        texts = []
        for index in range(n):  # one request per sample, each with its own seed (servers seldom honour n)
            seed = None if sampling.seed is None else sampling.seed + index
            output = self.client(model, Sampling(**{**sampling.__dict__, "seed": seed}), chat).invoke(
                prompt, stop=list(sampling.stop) or None)
            texts.append(text_of(output))
        return texts

    def stream(self, model: Endpoint, prompt: str, sampling: Sampling) -> Iterator[str]:
        yield from self.client(model, sampling).stream(prompt, stop=list(sampling.stop) or None)

    def next_token_logprobs(self, model: Endpoint, prompt: str, top: int = 20) -> dict[str, float]:
        ban_eos = {str(model.eos_token_id): -100} if model.eos_token_id is not None else None
        llm = self.client(model, Sampling(max_tokens=1, temperature=0.0), logprobs=top, logit_bias=ban_eos)
        info = llm.generate([prompt]).generations[0][0].generation_info or {}
        top_logprobs = (info.get("logprobs") or {}).get("top_logprobs") or []
        if not top_logprobs:
            raise KcardError(f"{model} returned no log-probabilities: llama_cpp.server needs --logits_all true, "
                             "and eos_token_id in the backend's settings")
        return dict(sorted(top_logprobs[0].items(), key=lambda item: -item[1]))

    def language_model(self, model: Endpoint, sampling: Sampling):
        return self.client(model, sampling)
