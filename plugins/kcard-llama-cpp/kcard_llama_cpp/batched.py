"""Many sequences decoded together with llama.cpp's multi-sequence batch API.

The ``n`` samples of one prompt share its evaluation: the prompt's tokens belong to all ``n``
sequences at once, and each sample then decodes on its own sequence. Requests for one model that
arrive together (the questions of a ``batch()``, a server's concurrent clients, the cards of one
question that run the same file) are decoded in the same batches: one forward pass per step for
all of their sequences (on 2 CPU cores, 30 sequences of Gemma 3 270M wrote 2.3 times the tokens a
second of one at a time).

Sampling mirrors llama-cpp-python's ``create_completion`` (penalties, then greedy at temperature 0,
else top-k 40, typical 1.0, top-p 0.95, min-p 0.05, temperature, and a seeded draw). The logits are
not bit for bit a lone pass's (flash attention sums in float16, and a pass over many sequences
adds up in another order), so a seed can draw another text in a batch than alone; the same
requests with the same seeds draw the same texts again.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Callable

from kcard_core import backends

N_CTX = 8192  # tokens of all sequences decoded together (prompts once, plus every sample's new tokens)
MAX_SEQUENCES = 64
PENALTY_LAST_N = 64  # llama-cpp-python's default window for the repeat penalty


@dataclass(eq=False)
class Request(backends.Request):
    logit_bias: dict[int, float] = field(default_factory=dict)  # the favoured words' tokens


@dataclass
class _Sequence:
    request: Request
    seq_id: int
    sampler: Any
    prompt_tokens: list[int]
    stop: tuple[str, ...]
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    done: bool = False
    released: bool = False  # its cells and sequence id given back


class BatchDecoder:
    """A second llama.cpp context on a loaded model's weights, with room for many sequences."""

    def __init__(self, llama: Any, n_ctx: int = N_CTX, max_sequences: int = MAX_SEQUENCES):
        import llama_cpp

        self.llama, self.n_ctx, self.max_sequences = llama, n_ctx, max_sequences
        self.anchor = max_sequences - 1  # the sequence that keeps the first requests' shared start for later ones
        params = llama_cpp.llama_context_params.from_buffer_copy(llama.context_params)  # the same settings
        params.n_ctx = params.n_batch = n_ctx
        params.n_seq_max = max_sequences
        params.kv_unified = True  # one cache: a prompt's cells are shared by its samples' sequences
        # flash attention skips the other sequences' cells of the shared cache (60 sequences: 1.5x faster)
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
        self.ctx = llama_cpp.llama_init_from_model(llama.model, params)
        if not self.ctx:
            raise RuntimeError("llama.cpp could not make a batch context")
        self._apply_adapter()
        self.vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self.batch = llama_cpp.llama_batch_init(n_ctx, 0, max_sequences)
        self._formatter: Any = None

    def _apply_adapter(self) -> None:
        """llama.cpp applies a LoRA adapter to a context, not to the weights: this context needs the
        loaded model's adapter too, or a LoRA card's batched samples come from its base model."""
        import llama_cpp

        if not self.llama.lora_path:
            return
        adapter = getattr(self.llama, "_lora_adapter", None)  # llama-cpp-python keeps the one it loaded here
        if adapter is None:
            raise RuntimeError(f"llama-cpp-python did not keep the LoRA adapter {self.llama.lora_path}")
        adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
        if llama_cpp.llama_set_adapters_lora(self.ctx, adapters, 1, (ctypes.c_float * 1)(self.llama.lora_scale)):
            raise RuntimeError(f"llama.cpp could not apply the LoRA adapter {self.llama.lora_path} to a batch")

    def close(self) -> None:
        import llama_cpp

        if self.ctx:
            llama_cpp.llama_batch_free(self.batch)
            llama_cpp.llama_free(self.ctx)
            self.ctx = None

    def fits(self, requests: list[Request]) -> bool:
        if any(r.chat for r in requests) and "tokenizer.chat_template" not in self.llama.metadata:
            return False  # llama-cpp-python's fallback chat formats are its own: it runs those one at a time
        sequences = sum(r.n for r in requests)
        tokens = sum(len(self.prompt(r)[0]) + r.n * r.sampling.max_tokens for r in requests)
        return sequences < self.max_sequences and tokens <= self.n_ctx

    def prompt(self, request: Request) -> tuple[list[int], tuple[str, ...]]:
        """The request's prompt tokens and stop strings, as llama-cpp-python's completion (or chat
        completion, through the template in the model's metadata) makes them."""
        if not request.chat:
            return self.llama.tokenize(request.prompt.encode("utf-8"), special=True), request.sampling.stop
        llama = self.llama
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(
                template=llama.metadata["tokenizer.chat_template"], stop_token_ids=[llama.token_eos()],
                eos_token=llama._model.token_get_text(llama.token_eos()),
                bos_token=llama._model.token_get_text(llama.token_bos()))
        turn = self._formatter(messages=[{"role": "user", "content": request.prompt}])
        tokens = llama.tokenize(turn.prompt.encode("utf-8"), add_bos=not turn.added_special, special=True)
        stops = turn.stop if isinstance(turn.stop, list) else [turn.stop] if turn.stop else []
        return tokens, (*request.sampling.stop, *stops)

    def run(self, requests: list[Request], more: Callable[[Callable[[Request], bool]], Any] | None = None) -> None:
        """Decode the requests together (they must :meth:`fits`), and those made meanwhile: between
        steps, ``more`` is called with ``offer``, which takes a waiting request into the decode if it
        still fits (continuous batching). Sets each request's ``texts`` (or, on a failure, ``error``).

        The first requests' common start (the in-context examples before every answer, say) is
        evaluated once; a later request that starts the same way shares those cells too."""
        import llama_cpp

        memory = llama_cpp.llama_get_memory(self.ctx)
        llama_cpp.llama_memory_clear(memory, True)
        prompts = {id(request): self.prompt(request) for request in requests}
        shared = _common_start([tokens for tokens, _ in prompts.values()])
        free_ids = list(range(self.anchor))
        room = self.n_ctx - len(shared)
        sequences: list[_Sequence] = []
        admitted: list[Request] = []

        def cost(request: Request) -> int:
            return len(prompts[id(request)][0]) + request.n * request.sampling.max_tokens

        def admit(request: Request) -> None:
            nonlocal room
            tokens, stop = prompts[id(request)]
            seq_ids, start = [free_ids.pop(0) for _ in range(request.n)], 0
            room -= cost(request)
            admitted.append(request)
            if shared and tokens[:len(shared)] == shared and len(tokens) > len(shared):
                start = len(shared)
                for seq_id in seq_ids:  # the shared start's cells take these sequences too
                    llama_cpp.llama_memory_seq_cp(memory, self.anchor, seq_id, 0, start)
            rest = tokens[start:]
            self._fill([(token, pos, seq_ids) for pos, token in enumerate(rest, start=start)], [len(rest) - 1])
            self._decode()
            for index, seq_id in enumerate(seq_ids):
                sequence = _Sequence(request, seq_id, self._sampler(request, index), tokens, stop)
                sequences.append(sequence)
                self._take(sequence, llama_cpp.llama_sampler_sample(sequence.sampler, self.ctx, len(rest) - 1))

        def offer(request: Request) -> bool:
            if not self.fits([request]):
                return False
            prompts.setdefault(id(request), self.prompt(request))
            if request.n > len(free_ids) or cost(request) > room:
                return False
            admit(request)
            return True

        def release(sequence: _Sequence) -> None:
            nonlocal room
            sequence.released = True
            llama_cpp.llama_memory_seq_rm(memory, sequence.seq_id, -1, -1)
            free_ids.append(sequence.seq_id)
            mine = [s for s in sequences if s.request is sequence.request]
            if all(s.released for s in mine):
                sequence.request.texts = [s.text for s in mine]
                room += cost(sequence.request)

        try:
            if shared:
                self._fill([(token, pos, [self.anchor]) for pos, token in enumerate(shared)], logits_for=())
                self._decode()
            for request in requests:
                admit(request)
            while True:
                for sequence in sequences:
                    if sequence.done and not sequence.released:
                        release(sequence)
                if more is not None:
                    more(offer)
                active = [s for s in sequences if not s.done]
                if not active:
                    break
                self._fill([(s.tokens[-1], len(s.prompt_tokens) + len(s.tokens) - 1, [s.seq_id]) for s in active],
                           logits_for=range(len(active)))
                self._decode()
                for index, sequence in enumerate(active):
                    self._take(sequence, llama_cpp.llama_sampler_sample(sequence.sampler, self.ctx, index))
        except Exception as error:
            for request in admitted:
                if request.texts is None:
                    request.error = error
            raise
        finally:
            for sequence in sequences:
                llama_cpp.llama_sampler_free(sequence.sampler)

    def _fill(self, tokens: list[tuple[int, int, list[int]]], logits_for) -> None:
        batch, wanted = self.batch, set(logits_for)
        batch.n_tokens = len(tokens)
        for i, (token, pos, seq_ids) in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, len(seq_ids)
            for j, seq_id in enumerate(seq_ids):
                batch.seq_id[i][j] = seq_id
            batch.logits[i] = i in wanted

    def _decode(self) -> None:
        import llama_cpp

        status = llama_cpp.llama_decode(self.ctx, self.batch)
        if status != 0:
            raise RuntimeError(f"llama_decode failed ({status}): the batch does not fit the context")

    def _take(self, sequence: _Sequence, token: int) -> None:
        """Add a sampled token to its sequence, or end the sequence (end of text, a new sequence's
        start, a stop string, or its length)."""
        import llama_cpp

        if llama_cpp.llama_vocab_is_eog(self.vocab, token) or token == self.llama.token_bos():
            sequence.done = True
            return
        sequence.tokens.append(token)
        text = self.llama.detokenize(sequence.tokens, prev_tokens=sequence.prompt_tokens).decode("utf-8", "ignore")
        stops = [text.index(stop) for stop in sequence.stop if stop in text]
        sequence.text = text[: min(stops)] if stops else text
        sequence.done = bool(stops) or len(sequence.tokens) >= sequence.request.sampling.max_tokens

    def _sampler(self, request: Request, index: int) -> Any:
        import llama_cpp

        sampling = request.sampling
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())

        def add(sampler: Any) -> None:
            llama_cpp.llama_sampler_chain_add(chain, sampler)

        if request.logit_bias:
            biases = (llama_cpp.llama_logit_bias * len(request.logit_bias))(
                *[llama_cpp.llama_logit_bias(token, bias) for token, bias in request.logit_bias.items()])
            add(llama_cpp.llama_sampler_init_logit_bias(self.llama.n_vocab(), len(request.logit_bias),
                                                        ctypes.cast(biases, llama_cpp.llama_logit_bias_p)))
        add(llama_cpp.llama_sampler_init_penalties(self.llama.n_vocab(), PENALTY_LAST_N, sampling.repeat_penalty,
                                                   0.0, 0.0))  # the binding's arguments, as create_completion passes them
        if sampling.temperature == 0:
            add(llama_cpp.llama_sampler_init_greedy())
        else:
            add(llama_cpp.llama_sampler_init_top_k(40))
            add(llama_cpp.llama_sampler_init_typical(1.0, 1))
            add(llama_cpp.llama_sampler_init_top_p(0.95, 1))
            add(llama_cpp.llama_sampler_init_min_p(0.05, 1))
            add(llama_cpp.llama_sampler_init_temp(sampling.temperature))
            seed = llama_cpp.LLAMA_DEFAULT_SEED if sampling.seed is None else sampling.seed + index
            add(llama_cpp.llama_sampler_init_dist(seed))
        return chain


def _common_start(prompts: list[list[int]]) -> list[int]:
    """The tokens every prompt starts with, leaving each at least its last token of its own (whose
    logits its first sample is drawn from)."""
    if len(prompts) < 2:
        return []
    shortest = min(len(tokens) for tokens in prompts) - 1
    length = 0
    while length < shortest and all(tokens[length] == prompts[0][length] for tokens in prompts):
        length += 1
    return prompts[0][:length]
