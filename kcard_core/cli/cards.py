"""Cards and their packages: ``kcard cards``, ``kcard new card``, ``kcard install`` / ``uninstall``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kcard_core.cli.base import cli, emit_json
from kcard_core.documents import FORMATS
from kcard_core.errors import KcardError
from kcard_core.plugins import get_registry


@cli.group()
def cards() -> None:
    """Knowledge cards from installed plugins."""


def card_summary(name: str, card) -> dict:
    registry = get_registry()
    manifest = card.manifest
    return {"name": name, "description": manifest.description, "version": manifest.version,
            "license": manifest.license, "plugin": registry.card_plugins.get(name),
            "artifacts": {role: a.describe() for role, a in manifest.artifacts.items()}}


@cards.command("list")
@click.option("--json", "as_json", is_flag=True)
def cards_list(as_json: bool) -> None:
    """List installed cards."""
    rows = [card_summary(name, card) for name, card in get_registry().cards.items()]
    if as_json:
        return emit_json(rows)
    if not rows:
        from kcard_core.plugins import NO_CARDS_MESSAGE

        click.echo(NO_CARDS_MESSAGE, err=True)
    for row in rows:
        click.echo(f"{row['name']}: {row['description']} ({row['plugin']} {row['version']})")


@cards.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
def cards_show(name: str, as_json: bool) -> None:
    """Show one card's manifest."""
    card = get_registry().card(name)
    data = {**card.manifest.to_dict(), "plugin": get_registry().card_plugins.get(card.name)}
    if as_json:
        return emit_json(data)
    for key, value in data.items():
        click.echo(f"{key}: {value}")


@cli.group()
def new() -> None:
    """Start a new plugin from a template."""


@new.command("card")
@click.argument("name")
@click.option("--description", default=None, help="What the card knows, in one line.")
@click.option("--model", "model_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="An LM card: a GGUF file to copy into the card (its sha256 goes into the manifest).")
@click.option("--from", "trained", type=click.Path(exists=True, file_okay=False), default=None,
              help="An LM card: a folder written by `kcard train`; its manifest and weights go into the package.")
@click.option("--corpus", type=click.Path(exists=True), multiple=True,
              help="A retrieval card: BM25 over these files or folders (repeatable), stored in the package as "
                   "passages that keep their source and heading path (exact facts, no training).")
@click.option("--format", "corpus_format", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="How --corpus is written; auto: by extension (.md, .rst, .html, .pdf, .info, .jsonl), else by content "
                   "(a man page's roff source; plain text with outline headings; one passage a line without a "
                   "blank line). A .gz, .bz2 or .xz file is read as the file inside.")
@click.option("--subject", default=None,
              help="What the whole text is about (a name its questions use); proposed from the text when not given.")
@click.option("--chat/--no-chat", default=False, help="Prompt the model through its chat template.")
@click.option("--output-dir", type=click.Path(file_okay=False), default=".", show_default=True)
@click.option("--no-input", is_flag=True, help="Do not prompt for the template's other values.")
def new_card(name: str, description: str | None, model_path: str | None, trained: str | None,
             corpus: tuple[str, ...], corpus_format: str, subject: str | None, chat: bool, output_dir: str,
             no_input: bool) -> None:
    """Render the card template into a pip-installable kcard-card-NAME package: an LM card (--model,
    --from) or a retrieval card (--corpus)."""
    from kcard_core.cards import CardManifest
    from kcard_core.scaffold import render_card

    folder = render_card(name, description=description, model=model_path, chat=chat, trained=trained,
                         corpus=list(corpus), corpus_format=corpus_format, subject=subject, output_dir=output_dir,
                         no_input=no_input)
    manifest = CardManifest.from_file(next(folder.glob("kcard_card_*/card.toml")))
    click.echo(f"description: {manifest.description}")
    if corpus or trained:
        click.echo(f"subject: {manifest.retrieval.subject}" if manifest.retrieval.subject else
                   "subject: none found (questions must match the text's own words; set one with --subject)",
                   err=not manifest.retrieval.subject)
    click.echo(f"created {folder}; next: kcard install {install_path(folder)} && kcard cards list")


def install_path(folder: Path) -> str:
    """How pip is told that a folder is a path, not a package name."""
    return str(folder) if folder.is_absolute() or str(folder).startswith(".") else f"./{folder}"


def pip(*args: str) -> None:
    """pip in kcard's own environment (wherever `kcard` was installed), its output passed through;
    `uv pip` when that environment has no pip (a venv made by uv)."""
    import importlib.util
    import shutil
    import subprocess

    if importlib.util.find_spec("pip") is not None:
        command = [sys.executable, "-m", "pip", *args]
    elif shutil.which("uv"):
        command = ["uv", "pip", *[arg for arg in args if arg != "-y"], "--python", sys.executable]  # uv never asks
    else:
        raise KcardError(f"kcard's environment ({sys.prefix}) has neither pip nor uv: python -m ensurepip")
    if subprocess.run(command).returncode != 0:
        raise KcardError(f"{'uv pip' if command[0] == 'uv' else 'pip'} {args[0]} failed (its message is above)")


def card_names() -> set[str]:
    """The cards installed now, read in a fresh process (this one has already loaded its plugins)."""
    import subprocess

    out = subprocess.run([sys.executable, "-m", "kcard_core", "cards", "list", "--json"], capture_output=True,
                         text=True)
    return {row["name"] for row in json.loads(out.stdout or "[]")}


@cli.command()
@click.argument("packages", nargs=-1, required=True)
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade packages already installed.")
@click.option("-e", "--editable", is_flag=True, help="Install PACKAGES (source folders) in editable mode.")
@click.option("--index-url", default=None, help="The package index to install from (instead of PyPI).")
@click.option("--extra-index-url", multiple=True, help="Another index to look in as well (repeatable).")
def install(packages: tuple[str, ...], upgrade: bool, editable: bool, index_url: str | None,
            extra_index_url: tuple[str, ...]) -> None:
    """Install plugin PACKAGES (names, paths or URLs, as pip takes them) into kcard's environment."""
    before = card_names()
    indexes = (["--index-url", index_url] if index_url else []) + [
        arg for url in extra_index_url for arg in ("--extra-index-url", url)]
    targets = [arg for package in packages for arg in (["-e", package] if editable else [package])]
    pip("install", *(["--upgrade"] if upgrade else []), *indexes, *targets)
    added = sorted(card_names() - before)
    click.echo(f"new cards: {', '.join(added)}" if added else "no new cards")


@cli.command()
@click.argument("packages", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def uninstall(packages: tuple[str, ...], yes: bool) -> None:
    """Uninstall plugin PACKAGES from kcard's environment."""
    pip("uninstall", *(["-y"] if yes else []), *packages)
