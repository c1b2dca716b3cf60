"""kcard plugin: the `kcard train` command. Torch and transformers load only when it runs."""

from pathlib import Path

import click

from kcard_core.hookspecs import hookimpl
from kcard_core.documents import FORMATS
from kcard_core.models import TRAINING_BASE


@click.command()
@click.argument("corpus", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--name", required=True, help="The card's name.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the card into (created).")
@click.option("--description", default=None, help="What the card knows, in one line.")
@click.option("--format", "corpus_format", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="How CORPUS holds its passages; auto: by extension (.md, .rst, .html, .pdf, .info, .jsonl), else "
                   "by content (a man page's roff source; plain text with outline headings; one passage a line "
                   "without a blank line). A .gz, .bz2 or .xz file is read as the file inside.")
@click.option("--base", default=TRAINING_BASE, show_default=True,
              help="Base model: a known name, a GGUF file, an HF folder, or 'tiny-random' (for tests).")
@click.option("--preset", type=click.Choice(["memorise", "cpu", "paper"]), default="memorise", show_default=True,
              help="memorise: a small corpus (notes, a few pages) learned until the card writes it back; "
                   "cpu: continued pre-training on a large corpus; paper: the paper's recipe, for a GPU.")
@click.option("--lora/--full", default=False, show_default=True,
              help="Train a small LoRA adapter over the unchanged base (a few MB to share) or every weight.")
@click.option("--lora-rank", type=int, default=16, show_default=True)
@click.option("--epochs", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Passes over the corpus [memorise: 8, stopping early at full recall].")
@click.option("--cues", type=click.IntRange(min=0), default=None,
              help="Question-like cues each passage is also trained after, per pass [memorise: 8; 0: the text alone].")
@click.option("--train-embeddings/--keep-embeddings", default=None,
              help="Train the token embeddings (and an output layer tied to them) or keep the base's "
                   "[memorise: keep; cpu, paper: train].")
@click.option("--frozen", type=click.FloatRange(0, 1), default=None,
              help="The bottom share of the base's layers kept as they are (0.5: half): faster steps and "
                   "less memory, but less recall [0: every layer trains].")
@click.option("--focus/--no-focus", default=None,
              help="After each pass, rest each training row the card already writes back word for word (for "
                   "1, then 2, then 4 passes while it keeps doing so): a third fewer steps, fewer right "
                   "answers on short texts [memorise: no].")
@click.option("--steps", type=click.IntRange(min=1), default=None, help="Optimizer steps instead of epochs [cpu: 200].")
@click.option("--seq-len", type=click.IntRange(min=8), default=None)
@click.option("--batch-size", type=click.IntRange(min=1), default=None)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Learning rate [the preset's; LoRA: 1e-3].")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-minutes", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop training after this long, keeping the pass that recalled most so far.")
@click.option("--device", default="auto", show_default=True,
              help="Where to train: cpu, cuda, cuda:N, or auto (a CUDA GPU when torch sees one, else the CPU).")
def train(corpus, name, out_dir, description, corpus_format, base, preset, lora, lora_rank, epochs, cues,
          train_embeddings, frozen, focus, steps, seq_len, batch_size, lr, seed, max_minutes, device):
    """Train a small causal LM on CORPUS (files or folders, read as `kcard new card --corpus` reads them) and
    write a card.

    Full: writes OUT/model.gguf (both backends run it) and OUT/hf/ (safetensors, to train further).
    LoRA: writes OUT/adapter.gguf (llama.cpp) and OUT/peft/ (transformers) over the base model.
    Either way OUT/card.toml names every file with its sha256 and the recall: of the corpus's
    passages, how many the card writes back when asked with a question-like cue it never saw.
    """
    from kcard_train.trainer import LORA_LR, PRESETS, train_card

    if lora and lr is None:
        lr = LORA_LR
    overrides = {key: value for key, value in dict(epochs=epochs, cues=cues, train_embeddings=train_embeddings,
                                                   frozen=frozen, focus=focus, seq_len=seq_len, batch_size=batch_size,
                                                   lr=lr, seed=seed, lora_rank=lora_rank if lora else None).items()
                 if value is not None}
    if steps is not None:
        overrides.update(steps=steps, epochs=None)
    elif epochs is not None:
        overrides.update(steps=None)
    result = train_card(list(corpus), name=name, out_dir=out_dir, base=base, description=description,
                        recipe=PRESETS[preset].with_(**overrides), corpus_format=corpus_format,
                        max_minutes=max_minutes, device=device)
    recalled, passages = map(int, result["recall"].split("/"))
    curve = result.get("recall_by_epoch")
    after_each = f" (after each pass: {', '.join(map(str, curve))})" if curve else ""
    click.echo(f"recall {recalled}/{passages} passages{after_each}; perplexity of {result['perplexity_of']} "
               f"{result['perplexity_before']:.1f} → {result['perplexity_after']:.1f}; {result['steps']} steps in "
               f"{result['seconds']:.0f} s on {result['device']}, peak memory {result['peak_gb']:.1f} GB"
               + (f" ({result['gpu_peak_gb']:.1f} GB on the GPU)" if result.get("gpu_peak_gb") is not None else ""))
    for miss in result["recall_misses"][:5]:
        click.echo(f"  not recalled: asked {miss['asked']!r}, expected {', '.join(miss['expected'])}, "
                   f"wrote {miss['written'][:60]!r}")
    if recalled < passages:
        click.echo("  (train longer with --epochs, or make a retrieval card: kcard new card NAME --corpus FILE)")
    click.echo(f"card written to {out_dir} (make it a pip package: kcard new card {name} --from {out_dir})")


@hookimpl
def register_commands(cli):
    cli.add_command(train)
