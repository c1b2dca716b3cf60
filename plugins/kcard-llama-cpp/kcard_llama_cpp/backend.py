"""GGUF models through llama-cpp-python: each file is loaded once per process and shared."""

from __future__ import annotations

import atexit
import importlib.util
import math
import os
import sys
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from kcard_core.backends import Adapted, Backend, BackendStatus, Gather, Sampling
from kcard_core.copying import copy_source, copy_span, within
from kcard_llama_cpp.batched import BatchDecoder, Request

N_CTX = 2048
# loaded models kept at once; the least recently used is freed first (25 cards need not mean 25 models)
MAX_MODELS = int(os.environ.get("KCARD_MAX_MODELS", "4"))


# One model computes at a time in this process. A Llama object is not thread-safe, and two models
# decoding at once on the same cores only fight: each runs a thread per core, and those threads
# spin while they wait for each other (on 2 cores, a query that takes 3 s alone took 45-60 s while
# another process kept one core busy). Remote backends still fan out.
COMPUTE_LOCK = threading.Lock()
# ... and on one thread. llama.cpp's CPU threads are an OpenMP team per calling thread, and an idle team
# spins: once cards had computed from several threads (a chain runs each card in a worker thread), every
# later call ran 1.5x slower (three cards 1.58 s a question called from one thread, 2.42 s after calls
# from others, benchmarks/results/overhead.md).
COMPUTE_THREAD = "kcard-llama-cpp"
COMPUTE = ThreadPoolExecutor(max_workers=1, thread_name_prefix=COMPUTE_THREAD)


def computed(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` run on the one compute thread (directly when already on it)."""
    if threading.current_thread().name.startswith(COMPUTE_THREAD):
        return function(*args)
    return COMPUTE.submit(function, *args).result()


_log_callback = None  # kept: llama.cpp calls it for as long as the process runs


def _log_errors_only() -> None:
    """llama.cpp's errors on stderr and nothing else. llama-cpp-python 0.3's own log callback reads
    ggml's levels in an older numbering: it hides the errors and prints warnings as if they were
    errors (Gemma 3's "using full-size SWA cache" on every load, under every answer)."""
    global _log_callback
    if _log_callback is not None:
        return
    import ctypes

    import llama_cpp
    import llama_cpp.llama  # noqa: F401 - installs llama-cpp-python's callback, which this one replaces

    error, cont, last = 4, 5, [0]  # ggml_log_level: ... WARN 3, ERROR 4, CONT 5 (continues the line before)

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        last[0] = last[0] if level == cont else level
        if last[0] == error:
            print(text.decode("utf-8", "replace"), end="", flush=True, file=sys.stderr)

    _log_callback = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


class LoadedModel:
    def __init__(self, path: Path, adapter: Path | None, n_ctx: int, n_threads: int):
        from llama_cpp import Llama, StoppingCriteriaList

        _log_errors_only()
        self.llama = Llama(model_path=str(path), lora_path=str(adapter) if adapter else None, n_ctx=n_ctx,
                           n_threads=n_threads, verbose=False)
        self.lock = COMPUTE_LOCK
        # llama.cpp stops at end-of-generation tokens; a new sequence's start ends a text too (a card
        # trained on documents may close one with BOS, and a chat model starts a new turn with it)
        bos = self.llama.token_bos()
        self.stop_at_bos = StoppingCriteriaList([lambda tokens, logits: len(tokens) > 0 and tokens[-1] == bos])
        self.gather = Gather(self.lock)  # completions asked for while the model was busy
        self._decoder: BatchDecoder | None = None
        self._ends: dict[tuple[str, ...], list[int]] = {}

    def close(self) -> None:
        if self._decoder is not None:
            self._decoder.close()
        self.llama.close()

    def logit_bias(self, sampling: Sampling) -> dict[int, float]:
        """The favoured words' tokens, at a text's start and after a space."""
        if not (sampling.favour and sampling.favour_bias):
            return {}
        tokens = {token for word in sampling.favour for text in (word, " " + word)
                  for token in self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)}
        return dict.fromkeys(tokens, sampling.favour_bias)

    def sampling_kwargs(self, sampling: Sampling, seed_offset: int = 0) -> dict[str, Any]:
        kwargs = {"max_tokens": sampling.max_tokens, "temperature": sampling.temperature,
                  "seed": None if sampling.seed is None else sampling.seed + seed_offset,
                  "stop": list(sampling.stop) or None, "repeat_penalty": sampling.repeat_penalty}
        if bias := self.logit_bias(sampling):
            kwargs["logit_bias"] = bias
        return kwargs

    def ends(self, stop: tuple[str, ...]) -> list[int]:
        """The tokens that end an answer: end of generation, each stop string's first token, and every
        token whose text starts with a stop string (a scan of the vocabulary, kept per stop set)."""
        if stop not in self._ends:
            llama = self.llama
            pieces = (llama._model.token_get_text(token) for token in range(llama.n_vocab()))
            self._ends[stop] = [llama.token_eos(), *(token for token, piece in enumerate(pieces) if piece.startswith(stop)),
                                *(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)[0] for text in stop)]
        return self._ends[stop]

    def copy_span(self, request: Request) -> str:
        """The span of ``request.sampling.copy`` likeliest as a whole answer (kcard_core/copying.py),
        each continuation llama-cpp-python's greedy loop under a copy mask (the prompt's KV cache reused)."""
        import numpy as np
        from llama_cpp import LogitsProcessorList

        llama, sampling = self.llama, request.sampling

        def text_of(tokens: list[int]) -> str:
            return llama.detokenize(tokens).decode("utf-8", "replace")

        source = copy_source(sampling.copy, lambda text: llama.tokenize(text.encode("utf-8"), add_bos=False),
                             text_of, sampling.asked, sampling.narrow, sampling.refused)

        def run(prompt: str, mask: Callable[[list[int], Any], Any], max_tokens: int) -> None:
            """Greedy decoding from ``prompt`` under ``mask`` (given the tokens written after the prompt)."""
            start = len(llama.tokenize(prompt.encode("utf-8"), special=True))
            llama.create_completion(prompt, max_tokens=max_tokens, temperature=0.0,
                                    stop=list(sampling.stop) or None, stopping_criteria=self.stop_at_bos,
                                    logits_processor=LogitsProcessorList([lambda ids, logits: mask(
                                        ids[start:].tolist(), logits)]))

        def first_logits(prompt: str) -> np.ndarray:
            """The logits for the first token after ``prompt``."""
            seen: list[np.ndarray] = []
            run(prompt, lambda written, logits: seen.append(np.array(logits)) or logits, 1)
            return seen[0]

        unasked = first_logits(sampling.unasked) if sampling.unasked else None  # first: the prompt's cache stays
        span = copy_span(first_logits(request.prompt), lambda mask: run(request.prompt, mask, sampling.max_tokens),
                         source, self.ends(tuple(sampling.stop) or ("\n",)), fits=within(sampling.words, text_of),
                         unasked_logits=unasked)
        return text_of(span)

    def serve(self, requests: list[Request]) -> None:
        """A lone request for one completion runs llama-cpp-python's own loop (whose prompt cache
        serves repeated prompts); the others are packed into batches that fit the batch context, and
        one too big for it runs one sample at a time."""
        groups: list[list[Request]] = []
        if len(requests) == 1 and requests[0].n == 1:
            groups = [requests]
        else:
            for request in requests:
                if request.sampling.copy:  # decoded alone (llama-cpp-python's loop, under a logits mask)
                    groups.append([request])
                elif groups and not groups[-1][0].sampling.copy and self.decoder.fits(groups[-1] + [request]):
                    groups[-1].append(request)
                else:
                    groups.append([request])
        for group in groups:
            try:
                if group[0].sampling.copy:
                    group[0].texts = [self.copy_span(group[0])] * group[0].n  # greedy: one span
                elif len(group) > 1 or group[0].n > 1 and self.decoder.fits(group):
                    self.decoder.run(group, more=self.gather.take)
                else:
                    self.one_by_one(group[0])
            except Exception as error:  # noqa: BLE001 - each waiting caller gets its own request's error
                for request in group:
                    if request.texts is None:
                        request.error = error

    def one_by_one(self, request: Request) -> None:
        """llama-cpp-python's own loop, one sample after another (the prompt's KV cache is reused)."""
        texts = []
        for index in range(request.n):
            kwargs = self.sampling_kwargs(request.sampling, index)
            if request.chat:
                out = self.llama.create_chat_completion([{"role": "user", "content": request.prompt}], **kwargs)
                texts.append(out["choices"][0]["message"]["content"] or "")
            else:
                out = self.llama.create_completion(request.prompt, stopping_criteria=self.stop_at_bos, **kwargs)
                texts.append(out["choices"][0]["text"])
        request.texts = texts

    def held(self, tokens: list[int]) -> int:
        """How many of ``tokens``, from the first, the KV cache already holds."""
        cached = self.llama.input_ids[:self.llama.n_tokens]
        n = min(len(cached), len(tokens))
        return next((i for i in range(n) if cached[i] != tokens[i]), n)

    @property
    def decoder(self) -> BatchDecoder:
        if self._decoder is None:
            self._decoder = BatchDecoder(self.llama)
        return self._decoder


@dataclass(frozen=True)
class Own:
    """A model the base LLM keeps to itself: its own instance of the file, so that its prompts' shared
    start (the in-context examples) stays in the KV cache from one question to the next even when a
    card runs the same file (Gemma 3 270M is both the default base LLM and the general card's model;
    sharing one instance, every answer evaluated its ~400-token prompt again: 1.1 s instead of 0.2 s).
    ``slot``: which of its instances (:meth:`LlamaCppBackend.instance`)."""
    model: Path | Adapted
    slot: int = 0


OWN_INSTANCES = 2  # the base LLM's instances: prompts of two starts (answers, narrowing) each stay cached


_models: OrderedDict[tuple, LoadedModel] = OrderedDict()
_models_lock = threading.Lock()


@atexit.register
def _close_all() -> None:
    """Free models before interpreter shutdown (llama-cpp-python's __del__ fails noisily after it)."""
    for loaded in _models.values():
        loaded.close()
    _models.clear()


def _key(model: Path | Adapted | Own, n_ctx: int = N_CTX, n_threads: int | None = None) -> tuple:
    own, model = (model.slot, model.model) if isinstance(model, Own) else (None, model)
    path, adapter = (model.base, model.adapter) if isinstance(model, Adapted) else (model, None)
    return Path(path).resolve(), adapter and Path(adapter).resolve(), n_ctx, n_threads or os.cpu_count() or 1, own


def load(model: Path | Adapted | Own, n_ctx: int = N_CTX, n_threads: int | None = None) -> LoadedModel:
    """The model for (file, adapter, settings, owner), loaded on first use and reused afterwards."""
    key = _key(model, n_ctx, n_threads)
    with _models_lock:
        if key not in _models:
            while len(_models) >= MAX_MODELS:
                _, evicted = _models.popitem(last=False)
                with evicted.lock:  # wait for its current call to finish
                    evicted.close()
            _models[key] = LoadedModel(*key[:4])
        _models.move_to_end(key)
        return _models[key]


class LlamaCppBackend(Backend):
    name = "llama-cpp"
    description = "quantized GGUF models on the CPU with llama-cpp-python"
    adapter_role = "adapter-gguf"
    copies = True

    def status(self) -> BackendStatus:
        if importlib.util.find_spec("llama_cpp") is None:
            return BackendStatus(False, "cpu", "pip install llama-cpp-python")
        return BackendStatus(True, "cpu")

    def language_model(self, model: Path | Adapted, sampling: Sampling):
        return super().language_model(Own(model), sampling)

    def generate(self, model: Path, prompt: str, *, n: int, sampling: Sampling, chat: bool = False) -> list[str]:
        """The ``n`` samples decode as parallel sequences, together with whatever other threads ask of
        the same model meanwhile (:mod:`kcard_llama_cpp.batched`)."""
        loaded = self.instance(model, prompt)
        request = Request(prompt, n, sampling, chat, logit_bias=loaded.logit_bias(sampling))
        return loaded.gather.submit(request, lambda requests: computed(loaded.serve, requests))

    @staticmethod
    def instance(model: Path | Adapted | Own, prompt: str) -> LoadedModel:
        """The loaded model to run ``prompt`` on. For the base LLM's (:class:`Own`), of its instances
        (:data:`OWN_INSTANCES` at most), the one whose KV cache holds the longest start of the prompt;
        where none holds half of it, a new one while there is room, else the least recently used."""
        if not isinstance(model, Own):
            return load(model)
        slots = {_key(slot): slot for slot in (replace(model, slot=n) for n in range(OWN_INSTANCES))}
        with _models_lock:  # those loaded, least recently used first
            loaded = [(slots[key], instance) for key, instance in _models.items() if key in slots]
        if not loaded:
            return load(next(iter(slots.values())))
        tokens = loaded[0][1].llama.tokenize(prompt.encode("utf-8"), special=True)
        held = [instance.held(tokens) for _, instance in loaded]
        best = max(range(len(loaded)), key=held.__getitem__)  # of equals, the least recently used
        if 2 * held[best] >= len(tokens):
            return load(loaded[best][0])
        used = [slot for slot, _ in loaded]
        return load(next((slot for slot in slots.values() if slot not in used), used[0]))

    def stream(self, model: Path, prompt: str, sampling: Sampling) -> Iterator[str]:
        if sampling.copy:  # the span is chosen once every continuation is known
            yield from self.generate(model, prompt, n=1, sampling=sampling)
            return
        loaded = self.instance(model, prompt)
        with loaded.lock:
            chunks = loaded.llama.create_completion(prompt, stream=True, stopping_criteria=loaded.stop_at_bos,
                                                    **loaded.sampling_kwargs(sampling))
            while (chunk := computed(next, chunks, None)) is not None:
                yield chunk["choices"][0]["text"]

    def next_token_logprobs(self, model: Path, prompt: str, top: int = 20) -> dict[str, float]:
        import llama_cpp
        import numpy as np

        loaded = load(model)
        with loaded.lock:
            llama = loaded.llama
            tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True)
            llama.reset()
            computed(llama.eval, tokens)
            # only the last position's logits are kept (logits_all=False saves n_ctx × vocab floats)
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, -1),
                                           shape=(llama.n_vocab(),)).astype(np.float64)
            best = np.argpartition(-logits, top)[:top]
            log_norm = logits.max() + math.log(np.exp(logits - logits.max()).sum())
            result: dict[str, float] = {}
            for token in best[np.argsort(-logits[best])]:
                text = llama.detokenize([int(token)]).decode("utf-8", "replace")
                result.setdefault(text, float(logits[token] - log_norm))
            return result
