"""kcard plugin: the `kcard train` command. Torch and transformers load only when it runs."""

from pathlib import Path

import click

from kcard_core.hookspecs import hookimpl


@click.command()
@click.argument("corpus", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", required=True, help="The card's name.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the card into (created).")
@click.option("--description", default=None, help="What the card knows, in one line.")
@click.option("--base", default="smollm2-135m-instruct", show_default=True,
              help="Base model: a known name, a GGUF file, an HF folder, or 'tiny-random' (for tests).")
@click.option("--preset", type=click.Choice(["cpu", "paper"]), default="cpu", show_default=True,
              help="cpu: seq 128, batch 4, lr 5e-5; paper: lr 2e-5, 10 epochs, Adam eps 1e-6, betas 0.9/0.98.")
@click.option("--lora/--full", default=False, show_default=True,
              help="Train a small LoRA adapter over the unchanged base (a few MB to share) or every weight.")
@click.option("--lora-rank", type=int, default=16, show_default=True)
@click.option("--steps", type=int, default=None, help="Optimizer steps [cpu preset: 200].")
@click.option("--seq-len", type=int, default=None)
@click.option("--batch-size", type=int, default=None)
@click.option("--lr", type=float, default=None, help="Learning rate [full: the preset's; LoRA: 1e-3].")
@click.option("--seed", type=int, default=0, show_default=True)
def train(corpus, name, out_dir, description, base, preset, lora, lora_rank, steps, seq_len, batch_size, lr, seed):
    """Continue training a small causal LM on CORPUS (text or JSONL files) and write a card.

    Full: writes OUT/model.gguf (both backends run it) and OUT/hf/ (safetensors, to train further).
    LoRA: writes OUT/adapter.gguf (llama.cpp) and OUT/peft/ (transformers) over the base model.
    Either way OUT/card.toml names every file with its sha256; a held-out perplexity is shown.
    """
    from kcard_train.trainer import LORA_LR, PRESETS, train_card

    if lora and lr is None:
        lr = LORA_LR
    overrides = {key: value for key, value in dict(steps=steps, seq_len=seq_len, batch_size=batch_size, lr=lr,
                                                   seed=seed, lora_rank=lora_rank if lora else None).items()
                 if value is not None}
    result = train_card(list(corpus), name=name, out_dir=out_dir, base=base, description=description,
                        recipe=PRESETS[preset].with_(**overrides))
    click.echo(f"perplexity {result['perplexity_before']:.1f} → {result['perplexity_after']:.1f}; "
               f"card written to {out_dir} (make it a pip package: kcard new card {name} --from {out_dir})")


@hookimpl
def register_commands(cli):
    cli.add_command(train)
