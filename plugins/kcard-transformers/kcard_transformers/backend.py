"""Full-precision models through Hugging Face transformers, from the same GGUF files as llama.cpp.

A GGUF file is dequantized once (slow: half a minute for 135M parameters) into a plain safetensors folder
in kcard's cache; later processes load that folder in seconds. torch and transformers are imported only
inside functions, so registering the backend stays cheap.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from kcard_core.artifacts import pickle_allowed, sha256_of
from kcard_core.backends import Adapted, Backend, BackendStatus, Gather, Request, Sampling
from kcard_core.config import cache_dir
from kcard_core.copying import copy_source, copy_span, within

if TYPE_CHECKING:
    import torch
    from transformers import BatchEncoding

REQUIRED = ("torch", "transformers", "gguf", "accelerate", "peft")


def requested_device() -> str:
    """KCARD_DEVICE when set, else "auto" (cuda when visible, otherwise cpu; decided at load)."""
    return os.environ.get("KCARD_DEVICE") or "auto"


def resolved_device() -> str:
    """The device models load on: KCARD_DEVICE when set, else cuda when visible, otherwise cpu."""
    import torch

    requested = requested_device()
    if requested != "auto":
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


def _device_and_dtype() -> tuple[str, torch.dtype]:
    import torch

    device = resolved_device()
    if device.startswith("cuda"):
        return device, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return device, torch.float32  # half precision on CPUs is slow or unsupported


def converted_folder(gguf: Path) -> Path:
    """Where the dequantized copy of ``gguf`` lives; keyed by content so a changed file is re-converted."""
    return cache_dir() / "transformers" / f"{gguf.stem}-{sha256_of(gguf)[:16]}"


def dequantize(gguf: Path, target: Path) -> None:
    """Write ``gguf`` as an ordinary transformers folder, atomically (a crash leaves no half folder)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # the weights are plain tensors now, but save_pretrained refuses a model still marked GGUF-quantized,
    # and a saved quantization_config would make loading the folder ask for a GGUF file again
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    scratch.chmod(0o755)  # mkdtemp makes it private; the cache's other folders are not
    try:
        model.save_pretrained(scratch, safe_serialization=True)
        tokenizer.save_pretrained(scratch)
        os.rename(scratch, target)
    except OSError:
        if not (target / "config.json").is_file():  # not merely another process finishing first
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def weights_folder(model: Path) -> Path:
    """A folder transformers can load: ``model`` itself, or the cached conversion of a GGUF file."""
    if model.is_dir():
        return model
    folder = converted_folder(model)
    if not (folder / "config.json").is_file():
        dequantize(model, folder)
    return folder


def _usable_cpus() -> int:
    """The CPUs this process may run on (fewer than os.cpu_count() under taskset or a container's cpuset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class LoadedModel:
    """One model on one device, with the lock that serialises its use (generation mutates RNG and caches)."""

    def __init__(self, folder: Path, adapter: Path | None, device: str, dtype: torch.dtype):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        # all cores are fastest on an idle machine, but a busy one makes torch's threads wait on each other
        # (10x slower): OMP_NUM_THREADS, when set, is the user's choice and wins
        if device == "cpu" and "OMP_NUM_THREADS" not in os.environ:
            torch.set_num_threads(_usable_cpus())
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        # safetensors only, unless the user allowed pickle files (which run code when loaded)
        model = AutoModelForCausalLM.from_pretrained(folder, use_safetensors=not pickle_allowed())
        if adapter is not None:  # merged once: generation then costs what the base model costs
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, adapter.parent).merge_and_unload()
        self.model = model.to(device=device, dtype=dtype).eval()
        self.device = device  # the device really used, whatever was requested
        self.lock = threading.Lock()
        # the model's end tokens, and a new sequence's start (a card trained on documents may close
        # one with BOS, and a chat model starts a new turn with it)
        ends = model.generation_config.eos_token_id
        ends = [ends] if isinstance(ends, int) else list(ends or [])
        self.end_tokens = ends + [t for t in (self.tokenizer.eos_token_id, self.tokenizer.bos_token_id)
                                  if t is not None and t not in ends]
        self.gather = Gather(self.lock)  # completions asked for while the model was busy
        self._ends: dict[tuple[str, ...], list[int]] = {}

    def serve(self, requests: list[Request]) -> None:
        """Those that sample alike (one way of sampling, one count) in one ``generate`` call each."""
        groups: dict[tuple, list[Request]] = {}
        for request in requests:
            groups.setdefault((request.chat, request.n, replace(request.sampling, seed=None)), []).append(request)
        for group in groups.values():
            try:
                if group[0].sampling.copy:
                    for request in group:
                        request.texts = [self.copy_span(request)] * request.n  # greedy: one span
                    continue
                for request, texts in zip(group, self.generate_together(group)):
                    request.texts = texts
            except Exception as error:  # noqa: BLE001 - each waiting caller gets the reason
                for request in group:
                    request.error = error

    def ends(self, stop: tuple[str, ...]) -> list[int]:
        """The tokens that end an answer: the model's end tokens and every token whose text starts with a
        stop string (the vocabulary decoded once per stop set)."""
        if stop not in self._ends:
            pieces = self.tokenizer.batch_decode([[token] for token in range(len(self.tokenizer))])
            self._ends[stop] = self.end_tokens + [token for token, piece in enumerate(pieces) if piece.startswith(stop)]
        return self._ends[stop]

    def copy_span(self, request: Request) -> str:
        """The span of ``request.sampling.copy`` likeliest as a whole answer (kcard_core/copying.py), each
        continuation a greedy ``generate`` under a copy mask."""
        import torch
        from transformers import LogitsProcessor, LogitsProcessorList

        sampling = request.sampling
        inputs = self.encode(request.prompt, request.chat)
        start = inputs["input_ids"].shape[1]
        source = copy_source(sampling.copy, lambda text: self.tokenizer.encode(text, add_special_tokens=False),
                             self.tokenizer.decode, sampling.asked, sampling.narrow, sampling.refused)
        kwargs = self.generate_kwargs(replace(sampling, temperature=0.0, repeat_penalty=1.0))

        class Masked(LogitsProcessor):
            def __init__(self, mask):
                self.mask = mask

            def __call__(self, input_ids, scores):
                masked = self.mask(input_ids[0, start:].tolist(), scores[0].float().cpu().numpy())
                return torch.from_numpy(masked).to(scores)[None]

        with torch.inference_mode():  # the prompt but its last token is read once; each decoding goes on from it
            prefix = self.model(input_ids=inputs["input_ids"][:, :-1], attention_mask=inputs["attention_mask"][:, :-1],
                                use_cache=True).cache if start > 1 else None

            def decode(mask) -> None:
                self.model.generate(**inputs, **kwargs, cache=copy.deepcopy(prefix),
                                    logits_processor=LogitsProcessorList([Masked(mask)]))

            first = self.model(input_ids=inputs["input_ids"][:, -1:] if prefix is not None else inputs["input_ids"],
                               attention_mask=inputs["attention_mask"], cache=copy.deepcopy(prefix))
            unasked = self.model(**self.encode(sampling.unasked, request.chat)).logits[0, -1].float().cpu().numpy() \
                if sampling.unasked else None  # the first token's logits without the question
            span = copy_span(first.logits[0, -1].float().cpu().numpy(), decode, source,
                             self.ends(tuple(sampling.stop) or ("\n",)),
                             fits=within(sampling.words, self.tokenizer.decode), unasked_logits=unasked)
        return self.tokenizer.decode(span, skip_special_tokens=True)

    def generate_together(self, requests: list[Request]) -> list[list[str]]:
        import torch

        first = requests[0]
        kwargs = self.generate_kwargs(first.sampling)
        # greedy samples are all alike, and transformers refuses num_return_sequences > 1 without sampling
        count = first.n if kwargs["do_sample"] else 1
        inputs = self.encode([r.prompt for r in requests], first.chat)
        with torch.inference_mode():
            if first.sampling.seed is not None:  # one draw for the whole batch: the first request's seed
                torch.manual_seed(first.sampling.seed)
            output = self.model.generate(**inputs, num_return_sequences=count, **kwargs)
        texts = self.tokenizer.batch_decode(output[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        texts = [cut_at_stop(text, first.sampling.stop) for text in texts]
        return [texts[i * count:(i + 1) * count] * (first.n // count) for i in range(len(requests))]

    def encode(self, prompts: str | list[str], chat: bool = False) -> BatchEncoding:
        """The prompt, or several left-padded to one length (with their attention mask)."""
        templated = chat and bool(self.tokenizer.chat_template)  # without a template the prompt goes as is
        if templated:
            prompts = [self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                                          add_generation_prompt=True, tokenize=False)
                       for prompt in ([prompts] if isinstance(prompts, str) else prompts)]
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # a templated prompt already holds its special tokens (BOS included)
        inputs = self.tokenizer(prompts, return_tensors="pt", add_special_tokens=not templated, padding=True,
                                padding_side="left")
        return inputs.to(self.device)

    def generate_kwargs(self, sampling: Sampling) -> dict[str, Any]:
        sample = sampling.temperature > 0
        pad = self.tokenizer.pad_token_id
        kwargs = {"max_new_tokens": sampling.max_tokens, "do_sample": sample, "eos_token_id": self.end_tokens,
                  "repetition_penalty": sampling.repeat_penalty,
                  "pad_token_id": self.tokenizer.eos_token_id if pad is None else pad}
        if sample:
            kwargs["temperature"] = sampling.temperature
        if sampling.stop:  # ends generation early; the texts are still cut at the stop afterwards
            kwargs["stopping_criteria"] = _stop_criteria(self.tokenizer, sampling.stop)
        if sampling.favour and sampling.favour_bias:  # a word's tokens at a text's start and after a space
            tokens = {token for word in sampling.favour for text in (word, " " + word)
                      for token in self.tokenizer.encode(text, add_special_tokens=False)}
            kwargs["sequence_bias"] = {(token,): sampling.favour_bias for token in tokens}
        return kwargs


@functools.lru_cache(maxsize=64)
def _stop_criteria(tokenizer: Any, stop: tuple[str, ...]) -> Any:
    """Built once per stop set: building one scans the whole vocabulary (half a second for SmolLM2)."""
    from transformers import StoppingCriteriaList, StopStringCriteria

    return StoppingCriteriaList([StopStringCriteria(tokenizer, list(stop))])


_models: dict[tuple, LoadedModel] = {}
_models_lock = threading.Lock()


def load(model: Path | Adapted) -> LoadedModel:
    """The model for (file, adapter, device, dtype), loaded on first use and reused afterwards."""
    path, adapter = (model.base, model.adapter) if isinstance(model, Adapted) else (model, None)
    device, dtype = _device_and_dtype()
    key = (Path(path).resolve(), adapter and Path(adapter).resolve(), device, str(dtype))
    with _models_lock:
        if key not in _models:
            _models[key] = LoadedModel(weights_folder(key[0]), key[1], device, dtype)
        return _models[key]


def cut_at_stop(text: str, stop: Iterable[str]) -> str:
    """``text`` up to the first of the stop strings."""
    return text[:min((index for s in stop if (index := text.find(s)) >= 0), default=len(text))]


def _held_back(text: str, stop: Iterable[str]) -> int:
    """How many trailing characters of ``text`` could be the start of a stop string."""
    return max((k for s in stop for k in range(1, len(s)) if text.endswith(s[:k])), default=0)


def until_stop(pieces: Iterable[str], stop: tuple[str, ...]) -> Iterator[str]:
    """The pieces up to the first stop string, which may be split across pieces."""
    pending = ""
    for piece in pieces:
        pending += piece
        cut = cut_at_stop(pending, stop)
        if len(cut) < len(pending):
            if cut:
                yield cut
            return
        ready = len(pending) - _held_back(pending, stop)
        if ready:
            yield pending[:ready]
            pending = pending[ready:]
    if pending:
        yield pending


class TransformersBackend(Backend):
    name = "transformers"
    description = "full-precision models with Hugging Face transformers (GGUF files dequantized once)"
    adapter_role = "adapter-peft"  # the adapter's safetensors file; adapter_config.json lies beside it
    copies = True

    def status(self) -> BackendStatus:
        missing = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
        if missing:
            return BackendStatus(False, requested_device(), "pip install " + " ".join(missing))
        device = requested_device()
        if device == "auto" and "torch" in sys.modules:  # only ask torch when that costs nothing
            device = resolved_device()
        return BackendStatus(True, device)

    def generate(self, model: Path, prompt: str, *, n: int, sampling: Sampling, chat: bool = False) -> list[str]:
        """The n samples in one ``generate`` call, with the requests of other threads made meanwhile
        that sample alike (a ``batch()`` of questions, ``kcard serve``'s clients)."""
        loaded = load(model)
        return loaded.gather.submit(Request(prompt, n, sampling, chat), loaded.serve)

    def stream(self, model: Path, prompt: str, sampling: Sampling) -> Iterator[str]:
        if sampling.copy:  # the span is chosen once every continuation is known
            yield from self.generate(model, prompt, n=1, sampling=sampling)
            return
        loaded = load(model)
        with loaded.lock:
            yield from until_stop(_streamed(loaded, prompt, sampling), sampling.stop)

    def next_token_logprobs(self, model: Path, prompt: str, top: int = 20) -> dict[str, float]:
        import torch

        loaded = load(model)
        with loaded.lock, torch.inference_mode():
            logits = loaded.model(**loaded.encode(prompt)).logits[0, -1]
        logprobs = torch.log_softmax(logits.float(), dim=-1).topk(top)
        result: dict[str, float] = {}
        for value, token in zip(logprobs.values.tolist(), logprobs.indices.tolist()):
            result.setdefault(loaded.tokenizer.decode([token]), value)  # topk is sorted: first is likeliest
        return result


def _streamed(loaded: LoadedModel, prompt: str, sampling: Sampling) -> Iterator[str]:
    """Text pieces as a generation thread writes them (the caller holds the model's lock)."""
    import torch
    from transformers import TextIteratorStreamer

    streamer = TextIteratorStreamer(loaded.tokenizer, skip_prompt=True, skip_special_tokens=True)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            with torch.inference_mode():
                if sampling.seed is not None:
                    torch.manual_seed(sampling.seed)
                loaded.model.generate(**loaded.encode(prompt), streamer=streamer, **loaded.generate_kwargs(sampling))
        except BaseException as error:  # re-raised in the caller's thread; end() unblocks the iterator
            failures.append(error)
            streamer.end()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield from streamer
    finally:
        thread.join()  # the model stays locked until its generation is over
    if failures:
        raise failures[0]
