"""Turn a corpus into a knowledge card: train a small causal LM on it, then package it.

Presets: "memorise" (the default) teaches a small corpus well enough that the card writes its facts
back when asked (kcard_train/memorise.py: cued passages, loss on the passage, stop at full recall);
"cpu" continues pre-training on a large corpus (SmolLM2-135M: ~2.8 s a step at seq 128 × batch 4 on
2 cores); "paper" is the Knowledge Card paper's recipe (OPT-1.3B there) for a machine with a GPU.
Output, full training: model.gguf, written by kcard_train/gguf_file.py with the base GGUF's tokenizer
(llama.cpp reads it, and transformers through a dequantized copy), and hf/ (safetensors, for further
training).
Output, LoRA: the adapter as PEFT safetensors (peft/, for transformers) and as a GGUF adapter
(adapter.gguf, for llama.cpp), both over the unchanged base model. A card.toml names every artifact
with its sha256. No pickle files.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import json
import math
import random
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Iterator

import click
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from kcard_core.artifacts import Artifact, sha256_of
from kcard_core.documents import describe, passages_jsonl, read_passages
from kcard_core.errors import KcardError
from kcard_core.models import BASE_MODELS, TRAINING_BASE, resolve_model
from kcard_train import gguf_file, memorise
from kcard_transformers.backend import resolved_device, weights_folder

@dataclass(frozen=True)
class Recipe:
    steps: int | None = 200  # None: from epochs
    epochs: float | None = None
    seq_len: int = 128
    batch_size: int = 4
    lr: float = 5e-5
    weight_decay: float = 0.0
    adam_eps: float = 1e-8
    betas: tuple[float, float] = (0.9, 0.999)
    warmup_ratio: float = 0.06
    seed: int = 0
    lora_rank: int | None = None  # None: train every weight; else a LoRA adapter of this rank on all linear layers
    cues: int = 0  # memorise: each passage is also seen after this many question-like cues (0: plain text)
    train_embeddings: bool = True  # False: the token embeddings (and an output layer tied to them) stay the base's
    frozen: float = 0.0  # the bottom share of the decoder's layers that stays the base's (0: none, 1: every one)
    bf16: bool | None = None  # matrix products in bfloat16 (weights stay fp32); None: where the hardware has it
    focus: bool = False  # a pass trains only the rows not yet written back (:class:`Resting`)
    recompute_above: int | None = 512  # a CPU step on more padded tokens recomputes its activations (:func:`recompute`)

    def with_(self, **changes) -> "Recipe":
        return replace(self, **changes)


LORA_LR = 1e-3  # adapters need a larger step than full training (5e-5)
MEMORISE_EPOCHS, MEMORISE_LR, MEMORISE_CUES = 8, 3e-4, 8  # measured: benchmarks/own_card.py (lr: own-card-probes.jsonl)

PRESETS = {
    "memorise": Recipe(steps=None, epochs=MEMORISE_EPOCHS, batch_size=8, lr=MEMORISE_LR, cues=MEMORISE_CUES,
                       train_embeddings=False),
    "cpu": Recipe(),
    "paper": Recipe(steps=None, epochs=10, batch_size=32, lr=2e-5, weight_decay=1e-5, adam_eps=1e-6,
                    betas=(0.9, 0.98)),
}


def fingerprint(texts: list[str]) -> dict:
    digest = hashlib.sha256("\n\n".join(texts).encode()).hexdigest()
    return {"sha256": digest, "documents": len(texts), "characters": sum(map(len, texts))}


def base_artifact(base: str) -> Artifact | None:
    """The GGUF a LoRA adapter is applied to at run time: a catalog model or a file (None otherwise)."""
    if base in BASE_MODELS:
        return BASE_MODELS[base]
    if base.endswith(".gguf"):
        path = Path(base).resolve()
        return Artifact(file=str(path), sha256=sha256_of(path))
    return None


def tokenizer_gguf(base: str, artifact: Artifact | None) -> Path | None:
    """The GGUF whose tokenizer ``base`` (its GGUF ``artifact``, from :func:`base_artifact`) uses and a
    card trained from it carries, verified: the base's own, SmolLM2's for 'tiny-random', None for an
    HF folder."""
    if base == "tiny-random":
        return resolve_model(TRAINING_BASE)[1]
    return artifact.resolve() if artifact else None


def load_base(base: str):
    """(model, tokenizer, description) for a catalog name, a GGUF file, an HF folder or 'tiny-random'."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    if base == "tiny-random":  # a few-M-parameter Llama with SmolLM2's tokenizer: tests the path in seconds
        tokenizer = AutoTokenizer.from_pretrained(weights_folder(tokenizer_gguf(base, None)))
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                             tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                             eos_token_id=tokenizer.eos_token_id)
        return LlamaForCausalLM(config), tokenizer, "tiny-random (randomly initialised Llama)"
    folder = Path(base)
    if base in BASE_MODELS or folder.suffix == ".gguf":
        folder = weights_folder(resolve_model(base)[1])  # dequantized once, cached
    if not folder.is_dir():
        raise KcardError(f"unknown base {base!r}: a known name ({', '.join(BASE_MODELS)}), a GGUF file or an HF folder")
    return (AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32), AutoTokenizer.from_pretrained(folder),
            base)


CARD_TOKENS = 64  # what a card writes at most, unless its passages are longer (card_tokens)
PAD = -100  # marks padding in rows and prompt tokens in labels: no loss there


def blocks(tokenizer, pairs: list[tuple[str, str]], seq_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, labels): each (prompt, target) in rows of its own, the target ending with EOS, cut at
    seq_len and padded; labels hide the prompt, so the loss is on the target only.

    Documents are not packed into one stream: the model would learn which document follows which
    (the stream's order never changes) and, asked about one race, write the report that came next.
    """
    rows, labels = [], []
    for prompt, target in pairs:
        head = tokenizer(prompt, add_special_tokens=False)["input_ids"] if prompt else []
        ids = head + tokenizer(target, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        masked = [PAD] * len(head) + ids[len(head):]
        for start in range(0, len(ids), seq_len):
            rows.append(ids[start:start + seq_len])
            labels.append(masked[start:start + seq_len])
    if len(rows) < 2:
        raise KcardError(f"the corpus makes {len(rows)} training rows: at least 2 are needed")
    width = max(map(len, rows))
    return (torch.tensor([row + [PAD] * (width - len(row)) for row in rows]),
            torch.tensor([row + [PAD] * (width - len(row)) for row in labels]))


WIDTH_STEP = 8  # a batch is padded to a multiple of this many tokens
LOSS_STEP, LOSS_ROWS = 64, 256  # positions through the output layer: a multiple of LOSS_STEP, LOSS_ROWS at most at once


def recompute(model, tokens: int, above: int | None) -> None:
    """Set how the next step, on ``tokens`` padded tokens, keeps ``model``'s activations for its
    backward pass: every decoder layer's, or, with more tokens than ``above`` (None: never), each
    layer's input alone, the layer computed again in the backward pass (transformers' activation
    checkpointing, set up on first use). Recomputing holds the activations to about one layer's at a
    time, for about a third more of that step's time."""
    from transformers.modeling_layers import GradientCheckpointingLayer

    on, ready = above is not None and tokens > above, getattr(model, "kcard_recomputes", False)
    if not (on or ready):  # never set up: every layer keeps its activations already
        return
    if not ready:
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable({"use_reentrant": False})
        model.kcard_recomputes = True
    for module in model.modules():
        if isinstance(module, GradientCheckpointingLayer):
            module.gradient_checkpointing = on


def round_up(count: int, step: int) -> int:
    """The least multiple of ``step`` that is at least ``count``."""
    return -(-count // step) * step


def loss_of(model, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The language-model loss on a batch of rows (:func:`scored`)."""
    return scored(model, ids, labels)[0]


def scored(model, ids: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(the language-model loss on a batch of rows: the mean cross-entropy of each labelled token given
    the ones before it, whether each row was written back), the batch trimmed to its longest row rounded
    up to ``WIDTH_STEP``. A row is written back where every labelled token was the model's likeliest
    next token: greedy decoding after the row's unlabelled start would write its labelled text word for
    word. Only the positions that predict a labelled token go through the output layer
    (:class:`ChunkedLoss`). A step's tensors thus take few distinct sizes, so the blocks one step frees fit
    the next."""
    width = min(ids.shape[1], round_up(int((ids != PAD).sum(1).max()), WIDTH_STEP))
    ids, labels = ids[:, :width].to(model.device), labels[:, :width].to(model.device)
    mask = ids != PAD
    hidden = model.get_decoder()(input_ids=ids.masked_fill(~mask, 0), attention_mask=mask.long(),
                                 use_cache=False).last_hidden_state
    targets = labels[:, 1:]
    labelled = targets != PAD
    hidden, weight = hidden[:, :-1][labelled], model.get_output_embeddings().weight
    if torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad):
        loss, hits = ChunkedLoss.apply(hidden, weight, targets[labelled])
    else:
        loss, _, _, hits = chunked_loss(hidden, weight, targets[labelled])
    misses = torch.zeros(len(ids), dtype=torch.long, device=ids.device)
    misses.index_add_(0, labelled.nonzero()[:, 0], (~hits).long())
    return loss, misses == 0


def chunked_loss(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, grad_hidden: bool = False,
                 grad_weight: bool = False) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None,
                                                     torch.Tensor]:
    """(the mean cross-entropy of the logits ``hidden @ weight.T`` against ``targets``, its gradient
    with respect to ``hidden`` or None, to ``weight`` or None, whether each target is its logits' largest).
    The logits exist for at most ``LOSS_ROWS`` positions at once, each chunk padded to a multiple of
    ``LOSS_STEP``; products are in autocast's precision where autocast is on, the loss in float32."""
    kind = hidden.device.type
    dtype = torch.get_autocast_dtype(kind) if torch.is_autocast_enabled(kind) else weight.dtype
    matrix, count = weight.detach().to(dtype), max(1, len(targets))
    d_hidden = torch.zeros_like(hidden) if grad_hidden else None
    d_weight = torch.zeros_like(weight) if grad_weight else None
    hits = torch.zeros(len(targets), dtype=torch.bool, device=hidden.device)
    total = torch.zeros((), dtype=torch.float32, device=hidden.device)
    for start in range(0, len(targets), LOSS_ROWS):
        rows = min(LOSS_ROWS, len(targets) - start)
        size = round_up(rows, LOSS_STEP)
        chunk = torch.nn.functional.pad(hidden[start:start + rows].detach().to(dtype), (0, 0, 0, size - rows))
        goal = torch.nn.functional.pad(targets[start:start + rows], (0, size - rows), value=PAD)
        logits = (chunk @ matrix.T).float()
        total += torch.nn.functional.cross_entropy(logits, goal, ignore_index=PAD, reduction="sum")
        hits[start:start + rows] = logits[:rows].argmax(-1) == goal[:rows]
        if d_hidden is None and d_weight is None:
            continue
        grad = logits[:rows].softmax(-1)  # d(loss) / d(logits): the softmax less the target's one-hot
        grad[torch.arange(rows, device=grad.device), goal[:rows]] -= 1
        grad = (grad / count).to(dtype)
        if d_hidden is not None:
            d_hidden[start:start + rows] = grad @ matrix
        if d_weight is not None:
            d_weight += (grad.T @ chunk[:rows]).to(weight.dtype)
    return total / count, d_hidden, d_weight, hits


class ChunkedLoss(torch.autograd.Function):
    """:func:`chunked_loss` for autograd, giving (the loss, whether each target is its logits' largest):
    the gradients are computed with the loss, chunk by chunk, and the backward pass scales them, so no
    chunk's logits are kept for it."""

    @staticmethod
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor):
        loss, d_hidden, d_weight, hits = chunked_loss(hidden, weight, targets, *ctx.needs_input_grad[:2])
        ctx.save_for_backward(d_hidden, d_weight)
        ctx.mark_non_differentiable(hits)
        return loss, hits

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor, _hits):
        d_hidden, d_weight = ctx.saved_tensors
        return (None if d_hidden is None else d_hidden * grad_output,
                None if d_weight is None else d_weight * grad_output, None)


@torch.no_grad()
def perplexity(model, ids: torch.Tensor, labels: torch.Tensor, batch_size: int) -> float:
    model.eval()
    losses = [loss_of(model, ids[i:i + batch_size], labels[i:i + batch_size]).item()
              for i in range(0, len(ids), batch_size)]
    return math.exp(sum(losses) / len(losses))


RECALL_MARGIN = 8  # tokens a probe may write beyond its passage's length
RECALL_BATCH = 32  # probes written at once


@torch.no_grad()
def recall(model, tokenizer, probes: list[tuple[str, list[str], str]], batch_size: int = RECALL_BATCH) -> dict:
    """How many passages the model writes back (memorise.probes: asked with an unseen cue, greedy, do
    the names and numbers the cue left out come out?). Probes are batched by their passage's length,
    and each batch writes at most its longest passage's tokens and ``RECALL_MARGIN`` (a model that
    writes the passage back ends there). Misses are listed with what came instead. Under autocast,
    each weight is cast once for the whole check (the weights do not change while it writes), not at
    every token."""
    kind = model.device.type
    with torch.autocast(kind, dtype=torch.get_autocast_dtype(kind), enabled=torch.is_autocast_enabled(kind),
                        cache_enabled=True):
        found = _recall(model, tokenizer, probes, batch_size)
    torch.clear_autocast_cache()  # the casts are stale once training goes on
    return found


def _recall(model, tokenizer, probes: list[tuple[str, list[str], str]], batch_size: int) -> dict:
    model.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    lengths = [len(tokenizer(passage, add_special_tokens=False)["input_ids"]) for _, _, passage in probes]
    order = sorted(range(len(probes)), key=lengths.__getitem__)
    misses, missed = [], []
    for i in range(0, len(order), batch_size):
        chosen = order[i:i + batch_size]
        batch = [probes[j] for j in chosen]
        encoded = tokenizer([prompt for prompt, _, _ in batch], return_tensors="pt", padding=True,
                            add_special_tokens=False).to(model.device)
        budget = max(lengths[j] for j in chosen) + RECALL_MARGIN
        out = model.generate(**encoded, max_new_tokens=budget, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        written = tokenizer.batch_decode(out[:, encoded["input_ids"].shape[1]:], skip_special_tokens=True)
        for j, text in zip(chosen, written):
            prompt, keys, _ = probes[j]
            if not memorise.recalled(text, keys):
                misses.append({"asked": prompt.strip(), "expected": keys, "written": text.strip()})
                missed.append(j)
    model.train()
    return {"recalled": len(probes) - len(misses), "passages": len(probes), "misses": misses, "missed": missed}


BUCKET = 16  # batches in a window of rows batched by length


def one_pass(ids: torch.Tensor, rows: list[int] | None, batch_size: int, generator: torch.Generator) -> list[list[int]]:
    """One pass's batches of row indices over ``rows`` (None: every row): in a new random order, cut into
    windows of ``BUCKET`` batches whose rows are batched by length (a batch is as wide as its longest
    row, so this saves the padding), the batches then shuffled."""
    chosen = torch.arange(len(ids)) if rows is None else torch.tensor(rows, dtype=torch.long)
    lengths = (ids[chosen] != PAD).sum(1)
    order = torch.randperm(len(chosen), generator=generator)
    batches = []
    for start in range(0, len(order), batch_size * BUCKET):
        window = order[start:start + batch_size * BUCKET]
        window = chosen[window[torch.argsort(lengths[window], stable=True)]].tolist()
        batches += [window[i:i + batch_size] for i in range(0, len(window), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def passes(ids: torch.Tensor, batch_size: int, generator: torch.Generator) -> Iterator[list[int]]:
    """:func:`one_pass` over every row, pass after pass without end."""
    while True:
        yield from one_pass(ids, None, batch_size, generator)


def schedule_of(recipe: Recipe, rows: int) -> tuple[int, int]:
    """(steps a pass over ``rows`` takes, steps in all)."""
    epoch = math.ceil(rows / recipe.batch_size)
    return epoch, recipe.steps or math.ceil(recipe.epochs * epoch)


def finish(device: torch.device) -> None:
    """Wait for ``device``'s queued work (a GPU runs it after the call returns), so a clock read after
    it counts that work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def padded(ids: torch.Tensor, batch: list[int]) -> int:
    """The tokens a step on ``batch`` computes: its rows, each as wide as its longest."""
    return len(batch) * int((ids[batch] != PAD).sum(1).max())


def typical(batches: list[list[int]], widths: list[int], count: int) -> list[tuple[list[int], int]]:
    """The ``count`` of ``batches`` whose padded tokens (``widths``) are nearest their mean, each with
    that number."""
    mean = sum(widths) / len(widths)
    return sorted(zip(batches, widths), key=lambda pair: abs(pair[1] - mean))[:count]


RESTING_SHARE = 0.6  # of its rows a pass after the first trains with ``focus`` (measured: 0.57 to 0.60, train-scale.md)


TYPICAL_PASSES = 5  # passes before recall stops rising: the median of 21 runs at the defaults (docs/decisions.md)


@dataclass(frozen=True)
class Estimate:
    """What training will take on this machine: ``seconds`` where it stops as runs at the defaults
    typically do (after :data:`TYPICAL_PASSES` passes, if it has more; every pass where nothing stops
    it early: no cues, or ``focus``), ``most_seconds`` if every pass runs, ``peak_gb`` of memory."""
    seconds: float
    most_seconds: float
    peak_gb: float


def estimate(model, tokenizer, ids: torch.Tensor, labels: torch.Tensor, recipe: Recipe,
             probes: list[tuple[str, list[str], str]]) -> Estimate:
    """What training will take on this machine (:class:`Estimate`). Time: four
    steps (forward, backward and an AdamW update at learning rate 0, which changes no weight) on the
    batches of a pass (:func:`passes`) as wide as its mean or nearest to it, the first a warm-up; the
    median of the others' time per padded token, scaled by the padded tokens of the pass and by the
    passes (a step's time grows with its tokens on a CPU and hardly at all on a GPU: at the mean width
    both scale alike), each pass after the first counted as ``RESTING_SHARE`` of one with ``focus``;
    with cues, one batch of the recall check that follows each pass (on a GPU after a warm-up one),
    scaled the same way.
    Memory: as those steps and one more on the pass's widest batch used it (AdamW's moments, the
    gradients and the widest step's activations included)."""
    epoch, steps = schedule_of(recipe, len(ids))
    trained = [parameter for parameter in model.parameters() if parameter.requires_grad]
    optimizer = torch.optim.AdamW(trained, lr=0.0, fused=True)
    batches = passes(ids, recipe.batch_size, torch.Generator().manual_seed(recipe.seed))
    one_pass = [next(batches) for _ in range(epoch)]
    widths = [padded(ids, batch) for batch in one_pass]

    def step(batch: list[int]) -> float:
        """One step on ``batch`` (the weights unchanged); its seconds."""
        started = time.perf_counter()
        recompute(model, padded(ids, batch), recipe.recompute_above)
        loss_of(model, ids[batch], labels[batch]).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        finish(model.device)
        return time.perf_counter() - started

    timed = [step(batch) / width for batch, width in typical(one_pass, widths, 4)]
    step(one_pass[widths.index(max(widths))])  # for the memory the widest step takes, not timed
    per_token = statistics.median(timed[1:] or timed)
    checking = 0.0
    if recipe.cues and probes:
        if model.device.type == "cuda":  # a GPU's first generation sets up its kernels: not a pass's cost
            recall(model, tokenizer, probes[:1])
        started = time.perf_counter()
        recall(model, tokenizer, probes[:RECALL_BATCH])
        checking = (time.perf_counter() - started) * math.ceil(len(probes) / RECALL_BATCH)  # a pass's check

    def seconds(passes: float) -> float:
        whole = min(1.0, passes) + max(0.0, passes - 1) * (RESTING_SHARE if recipe.focus else 1.0)
        return per_token * sum(widths) * whole + checking * math.ceil(passes)

    most = steps / epoch
    stops_early = recipe.cues and not recipe.focus
    return Estimate(seconds(min(most, TYPICAL_PASSES) if stops_early else most), seconds(most), peak_gb())


def optimise(model, ids: torch.Tensor, labels: torch.Tensor, recipe: Recipe, check=None,
             deadline: float | None = None) -> list[float]:
    """AdamW with warm-up and linear decay over the recipe's passes; ``check()`` runs after each pass
    and after the last step, and returns True to stop. At ``deadline`` (a time.monotonic() value)
    training stops after a last ``check()``. With the recipe's ``focus``, a pass trains only the rows
    :class:`Resting` finds due; a shorter pass moves the schedule as far as a whole one."""
    epoch, steps = schedule_of(recipe, len(ids))
    trained = [parameter for parameter in model.parameters() if parameter.requires_grad]  # LoRA: the adapter's
    # fused: one pass over each weight, its gradient and moments (on 2 CPU cores 0.04 s a step for
    # SmolLM2's 107M trained weights, against 0.2 s for the loop over them, and no temporaries)
    optimizer = torch.optim.AdamW(trained, lr=recipe.lr, betas=recipe.betas, eps=recipe.adam_eps,
                                  weight_decay=recipe.weight_decay, fused=True)
    warmup = max(1, int(recipe.warmup_ratio * steps))
    done = 0.0  # the schedule's steps so far: a pass moves it by ``epoch`` whatever its length

    def rate(_) -> float:
        return min((done + 1) / warmup, max(0.0, (steps - done) / max(1, steps - warmup)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    losses, rows, generator = [], None, torch.Generator().manual_seed(recipe.seed)
    resting = Resting(len(ids)) if recipe.focus else None
    model.train()
    with click.progressbar(length=steps, label="training", file=sys.stderr,
                           item_show_func=lambda _: f"loss {losses[-1]:.3f}" if losses else "") as bar:
        for number in itertools.count():
            batches = one_pass(ids, rows, recipe.batch_size, generator)
            stride = epoch / len(batches)
            for batch in batches[:math.ceil((steps - done) / stride - 1e-9)]:
                recompute(model, padded(ids, batch), recipe.recompute_above)
                loss, written = scored(model, ids[batch], labels[batch])
                loss.backward()
                torch.nn.utils.clip_grad_norm_(trained, 1.0)
                optimizer.step()
                done += stride
                schedule.step()
                optimizer.zero_grad()
                losses.append(loss.item())
                if resting:
                    resting.trained(batch, written.tolist(), number)
                bar.update(round(done) - bar.pos)
                if deadline is not None and time.monotonic() > deadline:
                    if check:
                        check()
                    return losses
            if check and check() or done >= steps - 1e-9:
                break
            if resting:
                rows = resting.due(number + 1) or None  # None: every row
                click.echo(f"  next pass: {len(rows or ids)} of {len(ids)} rows", err=True)
    return losses


class Resting:
    """Which training rows a pass needs (spaced repetition, a Leitner schedule): a row the model wrote
    back (:func:`scored`) at its last step rests for the next pass, and for 2, then ``MAX_REST`` passes
    after the second and third such steps in a row; a row with any token wrong trains in the next pass."""

    MAX_REST = 4

    def __init__(self, count: int):
        self.streak, self.next = [0] * count, [0] * count  # written back in a row; the pass each trains in next

    def trained(self, rows: list[int], written: list[bool], number: int) -> None:
        """Record the step of pass ``number`` on ``rows``, and whether each was ``written`` back."""
        for row, back in zip(rows, written):
            self.streak[row] = self.streak[row] + 1 if back else 0
            rest = min(2 ** (self.streak[row] - 1), self.MAX_REST) if back else 0
            self.next[row] = number + 1 + rest

    def due(self, number: int) -> list[int]:
        """The rows pass ``number`` trains on."""
        return [row for row, due in enumerate(self.next) if due <= number]


PATIENCE = 2  # passes without a better recall after which training stops (docs/decisions.md, 2026-12-06)
FOCUS_PATIENCE = 3  # the same with ``focus``, where recall dips for a pass while written-back rows rest


class BestPass:
    """The trained weights of the pass that recalled most: :meth:`offer` after each pass, :meth:`restore`
    at the end, :meth:`close` to delete the copy; :meth:`stalled` once ``patience`` passes in a row
    recalled no more than it. The copy is a half-precision safetensors file in a temporary folder (a
    135M model: 0.27 GB of disk), so it takes no memory while training goes on."""

    def __init__(self, patience: int = PATIENCE):
        self.recalled, self.number, self.patience = -1, 0, patience
        self._folder = tempfile.TemporaryDirectory(prefix="kcard-best-pass-")
        self.file = Path(self._folder.name) / "weights.safetensors"

    def offer(self, model, recalled: int, number: int) -> None:
        if recalled > self.recalled:
            self.recalled, self.number = recalled, number
            save_file({name: parameter.detach().to("cpu", torch.float16) for name, parameter in model.named_parameters()
                       if parameter.requires_grad}, self.file)

    def stalled(self, passes: int) -> bool:
        """Whether the last ``patience`` of ``passes`` passes recalled no more than the best before them."""
        return passes - self.number >= self.patience

    @torch.no_grad()
    def restore(self, model) -> None:
        if not self.number:
            return
        with safe_open(self.file, "pt") as weights:
            kept = set(weights.keys())
            for name, parameter in model.named_parameters():
                if name in kept:
                    parameter.copy_(weights.get_tensor(name).to(parameter.dtype))

    def close(self) -> None:
        self._folder.cleanup()


def freeze_layers(model, share: float) -> int:
    """Keep the bottom ``share`` of ``model``'s decoder layers as they are (no gradient, no optimizer state,
    no activations kept for a backward pass through them); the number of layers frozen."""
    layers = model.get_decoder().layers
    count = round(share * len(layers))
    for layer in layers[:count]:
        layer.requires_grad_(False)
    return count


def bf16_native(device: torch.device) -> bool:
    """Whether ``device`` multiplies bfloat16 natively (a CUDA GPU that does, a CPU with AVX-512 BF16 or
    AMX): there autocast to bfloat16 trains faster; elsewhere it would be emulated, and slower."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return any(getattr(torch.cpu, probe, lambda: False)()
               for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))


def training_device(requested: str) -> str:
    """The torch device for ``requested`` ("auto": KCARD_DEVICE when set, else CUDA when visible, else the
    CPU); raises KcardError for a name torch does not know or a GPU it cannot see."""
    name = resolved_device() if requested == "auto" else requested
    try:
        device = torch.device(name)
    except RuntimeError as error:
        raise KcardError(f"--device {requested}: {error}") from None
    if device.type == "cuda" and not (torch.cuda.is_available() and (device.index or 0) < torch.cuda.device_count()):
        seen = (f"sees {torch.cuda.device_count()} CUDA GPU(s)" if torch.version.cuda else
                "is built without CUDA GPU support (install a CUDA build of torch)")
        raise KcardError(f"--device {requested}: torch {torch.__version__} {seen}; --device cpu trains on the CPU")
    if device.type not in ("cpu", "cuda"):
        raise KcardError(f"--device {requested}: kcard trains on cpu or cuda")
    return name


def peak_gb() -> float:
    """This process's peak resident memory so far, in GB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def _c_library(function: str, *args: int) -> int | None:
    """What the process's C library's ``function(*args)`` returns; None where the library has no such
    function or the process gives no handle on itself."""
    try:
        return getattr(ctypes.CDLL(None), function)(*args)
    except (AttributeError, OSError, TypeError):
        return None


M_MMAP_THRESHOLD = -3  # glibc's mallopt() parameter
MMAP_THRESHOLD = 1 << 20  # blocks of this many bytes or more are the system's, each mapped on its own


def return_large_blocks(threshold: int = MMAP_THRESHOLD) -> bool:
    """Have the C library map each block of ``threshold`` bytes or more on its own, for the rest of the
    process, so that freeing it hands it back to the system at once (glibc's ``mallopt``; elsewhere
    nothing happens). Left alone, glibc raises that threshold as big blocks are freed and keeps later
    ones in its heap, where training's tensors of many sizes leave it growing. Whether it took."""
    return bool(_c_library("mallopt", M_MMAP_THRESHOLD, threshold))


def release_freed_memory() -> None:
    """Hand freed pages back to the system where the C library can (glibc's ``malloc_trim``, a
    fraction of a second; elsewhere nothing happens): glibc keeps freed blocks inside its heap for
    reuse, and blocks of one step's sizes do not all fit the next step's."""
    _c_library("malloc_trim", 0)


def _toml_table(header: str, values: dict) -> str:
    lines = [f"{key} = {json.dumps(value)}" for key, value in values.items() if value is not None]
    return f"\n[{header}]\n" + "\n".join(lines) + "\n"


def write_manifest(out_dir: Path, name: str, description: str, artifacts: dict[str, Artifact],
                   training: dict, subject: str = "", max_tokens: int = CARD_TOKENS) -> None:
    """card.toml: the card, its artifacts with their sha256, what its text is about (the subject,
    see :class:`kcard_core.retrieval.QuestionIndex`), how many tokens it writes and how it was trained."""
    memorised = bool(training["recipe"].get("cues"))  # asked in its cues' form, several documents to choose from
    text = (f'name = {json.dumps(name)}\ndescription = {json.dumps(description)}\nversion = "0.1.0"\n'
            f'license = "the base model\'s licence"\nprompt = "{{{"cue" if memorised else "query"}}}\\n"\n')
    for role, artifact in artifacts.items():
        fields = {key: value for key, value in asdict(artifact).items() if key != "base_dir"}
        text += _toml_table(f"artifacts.{role}", fields)
    if memorised:  # its passages word for word (no penalty)
        generation = {"n": memorise.SAMPLES, "temperature": memorise.TEMPERATURE, "repeat_penalty": 1.0}
    else:
        generation = {"temperature": 0.1, "repeat_penalty": 1.15}
    text += _toml_table("generation", {"max_tokens": max_tokens, **generation})
    if subject:
        text += _toml_table("retrieval", {"subject": subject})
    text += _toml_table("training", {key: value for key, value in training.items() if not isinstance(value, dict)})
    for key, value in training.items():
        if isinstance(value, dict):
            text += _toml_table(f"training.{key}", value)
    (out_dir / "card.toml").write_text(text)


def card_tokens(tokenizer, passages: list[str], seq_len: int) -> int:
    """How many tokens a memorised card writes: its longest passage and the end of text, at least
    ``CARD_TOKENS`` and at most a training row (``seq_len``), past which it never learned to go on."""
    longest = max(len(tokenizer(passage, add_special_tokens=False)["input_ids"]) for passage in passages) + 1
    return min(max(CARD_TOKENS, longest), seq_len)


def local_artifact(out_dir: Path, path: Path) -> Artifact:
    return Artifact(file=str(path.relative_to(out_dir)), sha256=sha256_of(path))


def save_full(model, tokenizer, out_dir: Path, template: Path) -> dict[str, Artifact]:
    model.save_pretrained(out_dir / "hf", safe_serialization=True)
    tokenizer.save_pretrained(out_dir / "hf")
    gguf_file.write_model(model, template, out_dir / "model.gguf")
    return {"model": local_artifact(out_dir, out_dir / "model.gguf")}


def save_adapter(model, base: Artifact, out_dir: Path) -> dict[str, Artifact]:
    model.half()  # half the download; the backends cast the adapter to the base model's precision
    model.save_pretrained(out_dir / "peft", safe_serialization=True)
    (out_dir / "peft" / "README.md").unlink(missing_ok=True)  # peft's empty model-card template
    gguf_file.write_lora(model, out_dir / "adapter.gguf")
    return {"model": base, "adapter-gguf": local_artifact(out_dir, out_dir / "adapter.gguf"),
            "adapter-peft": local_artifact(out_dir, out_dir / "peft" / "adapter_model.safetensors")}


def with_lora(model, rank: int):
    from peft import LoraConfig, get_peft_model

    return get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, target_modules="all-linear",
                                            lora_dropout=0.0, task_type="CAUSAL_LM"))


def train_card(corpus: list[Path], *, name: str, out_dir: Path, base: str, recipe: Recipe,
               description: str | None = None, corpus_format: str = "auto", max_minutes: float | None = None,
               device: str = "auto") -> dict:
    """Train on ``corpus`` and write the card into ``out_dir``; the training figures. With cues (the
    memorise preset) recall is measured after each pass and the card is the pass that recalled most;
    ``max_minutes`` stops training then, keeping the best pass so far. ``device``: "cpu", "cuda",
    "cuda:N" or "auto" (a GPU when torch sees one); a GPU that is not there is an error before
    anything loads."""
    started = time.perf_counter()
    device = training_device(device)
    return_large_blocks()
    deadline = time.monotonic() + 60 * max_minutes if max_minutes else None
    passages = read_passages(corpus, corpus_format)
    subject, proposed = describe(passages, name)  # before the shuffle: the name the corpus opens with
    documents = list(passages)
    random.Random(recipe.seed).shuffle(documents)
    texts = [document.contextual() for document in documents]  # each with its heading path, as retrieval has it
    torch.manual_seed(recipe.seed)
    base_gguf = base_artifact(base)
    if recipe.lora_rank and base_gguf is None:
        raise KcardError("a LoRA card runs over its base GGUF: give --base a known model name or a .gguf file")
    template = tokenizer_gguf(base, base_gguf)  # the card's GGUF carries its tokenizer
    if template is None:
        raise KcardError("kcard train writes the card's GGUF with its base's tokenizer: give --base a known model "
                         "name or a .gguf file")
    model, tokenizer, base_name = load_base(base)
    if torch.device(device).type == "cpu":  # on rows of at most 128 tokens, plain attention's steps take
        model.set_attn_implementation("eager")  # 10-13 % less time on a CPU than SDPA's (docs/decisions.md)
    else:  # a GPU has the memory to keep every step's activations
        recipe = recipe.with_(recompute_above=None)
    if not recipe.train_embeddings:
        model.get_input_embeddings().requires_grad_(False)
    freeze_layers(model, recipe.frozen)
    if recipe.lora_rank:
        model = with_lora(model, recipe.lora_rank)
    model.to(device)
    torch.backends.cuda.matmul.allow_tf32 = True  # on a GPU: fp32 training at tensor-core speed
    if recipe.bf16 is None:
        recipe = recipe.with_(bf16=bf16_native(model.device))
    if recipe.cues:  # memorise: every passage is trained on, cued; recall is the held-out check
        pairs = memorise.examples(documents, recipe.cues, recipe.seed, subject)
        ids, labels = blocks(tokenizer, pairs, recipe.seq_len)
        val_ids, val_labels = blocks(tokenizer, [("", text) for text in texts], recipe.seq_len)
    else:  # continued pre-training: a tenth of the rows is held out for perplexity
        ids, labels = blocks(tokenizer, [("", text) for text in texts], recipe.seq_len)
        held_out = max(1, len(ids) // 10)
        ids, labels, val_ids, val_labels = ids[held_out:], labels[held_out:], ids[:held_out], labels[:held_out]
    tokens = int((labels != PAD).sum())
    click.echo(f"corpus: {len(texts)} documents, {fingerprint(texts)['characters']} characters; "
               f"{len(ids)} training rows, {tokens} tokens with a loss", err=True)
    probes = memorise.probes(documents, subject=subject)
    # the weights change inside: bfloat16 copies of them must not be cached across steps
    with torch.autocast(model.device.type, dtype=torch.bfloat16, enabled=recipe.bf16, cache_enabled=False):
        expected = estimate(model, tokenizer, ids, labels, recipe, probes)
        estimated_at = time.perf_counter() - started
        click.echo(f"estimated: about {expected.seconds / 60:.1f} minutes"
                   + (f" (at most {expected.most_seconds / 60:.1f} if every pass runs)"
                      if expected.most_seconds > expected.seconds else "")
                   + f" and about {expected.peak_gb:.1f} GB on this machine", err=True)
        before = perplexity(model, val_ids, val_labels, recipe.batch_size)
        progress: list[dict] = []
        best = BestPass(FOCUS_PATIENCE if recipe.focus else PATIENCE)

        def check() -> bool:  # after each pass: stop once every passage comes back, or recall stalls
            progress.append(recall(model, tokenizer, probes))
            best.offer(model, progress[-1]["recalled"], len(progress))
            release_freed_memory()  # what this pass freed, rather than let glibc's heap creep up pass by pass
            click.echo(f"  recall {progress[-1]['recalled']}/{progress[-1]['passages']}", err=True)
            return progress[-1]["recalled"] == progress[-1]["passages"] or best.stalled(len(progress))

        losses = optimise(model, ids, labels, recipe, check if recipe.cues else None, deadline)
        if progress and best.number != len(progress):  # a later pass recalled less: the card is the best one
            best.restore(model)
            click.echo(f"  the card is pass {best.number} (recall {best.recalled}), not the last", err=True)
        after = perplexity(model, val_ids, val_labels, recipe.batch_size)
        recalled = progress[best.number - 1] if progress else recall(model, tokenizer, probes)
    best.close()
    release_freed_memory()  # before the card is written, which needs memory of its own
    gpu_peak = round(torch.cuda.max_memory_allocated(model.device) / 2**30, 2) if model.device.type == "cuda" else None
    trained_on = str(model.device)  # with its index: "cuda:0"
    model.to("cpu")
    out_dir.mkdir(parents=True, exist_ok=True)
    if recipe.lora_rank:
        artifacts = save_adapter(model, base_gguf, out_dir)
    else:
        artifacts = save_full(model, tokenizer, out_dir, template)
    # the text itself, as the card's evidence: the factuality selector checks what the card writes
    # against it (otherwise an LM card's documents about private text cannot be verified at all)
    (out_dir / "evidence.jsonl").write_text(passages_jsonl(passages))
    artifacts["evidence"] = local_artifact(out_dir, out_dir / "evidence.jsonl")
    result = {"base": base_name, "perplexity_before": round(before, 2), "perplexity_after": round(after, 2),
              "perplexity_of": "the corpus (all of it is trained on)" if recipe.cues else "a held-out tenth of the rows",
              "recall": f"{recalled['recalled']}/{recalled['passages']}",
              "recall_by_epoch": [epoch["recalled"] for epoch in progress] or None,
              "best_pass": best.number or None,
              "steps": len(losses), "final_loss": round(losses[-1], 4), "seconds": round(time.perf_counter() - started, 1),
              "estimated_seconds": round(expected.seconds, 1),
              "estimated_most_seconds": round(expected.most_seconds, 1),
              "estimated_at_seconds": round(estimated_at, 1),  # into the run: the estimate is of what follows
              "estimated_peak_gb": round(expected.peak_gb, 2),
              "peak_gb": peak_gb(), "gpu_peak_gb": gpu_peak, "device": trained_on,
              "corpus": fingerprint(texts), "recipe": {k: list(v) if isinstance(v, tuple) else v
                                                       for k, v in asdict(recipe).items() if v is not None}}
    written = card_tokens(tokenizer, [target for prompt, target in pairs if not prompt], recipe.seq_len) \
        if recipe.cues else CARD_TOKENS
    write_manifest(out_dir, name, description or proposed, artifacts, result, subject, written)
    return {**result, "recall_misses": recalled["misses"]}
