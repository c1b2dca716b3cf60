"""The ``kcard`` command. Listing commands load plugins but never a model or a heavy library."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from kcard_core import __version__, defaults
from kcard_core.errors import KcardError
from kcard_core.evaluation.run import METHODS
from kcard_core.models import DEFAULT_MODEL
from kcard_core.plugins import get_registry
from kcard_core.spec import ChainSpec, spec_options
from kcard_core.text import CORPUS_FORMATS


class KcardGroup(click.Group):
    """Turns known errors into one line on stderr and a non-zero exit, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KcardError as error:
            raise click.ClickException(str(error)) from None
        except Exception as error:
            if os.environ.get("KCARD_DEBUG"):
                raise
            raise click.ClickException(f"{type(error).__name__}: {error} (KCARD_DEBUG=1 shows the traceback)") from None


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


@click.group(cls=KcardGroup)
@click.version_option(__version__, prog_name="kcard")
@click.option("-v", "--verbose", is_flag=True, help="Log progress to stderr.")
@click.option("--allow-pickle", is_flag=True, help="Load pickle-based weights (.bin, .pt, .pkl), which can run code.")
def cli(verbose: bool, allow_pickle: bool) -> None:
    """kcard: knowledge cards that fill a language model's knowledge gaps."""
    if allow_pickle:
        os.environ["KCARD_ALLOW_PICKLE"] = "1"
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="kcard: %(message)s")


@cli.command()
@click.argument("question")
@spec_options("mode", "cards", "model", "backend", "n1", "n2", "n3", "selectors", "prune", "judge", "max_iterations",
              "decide", "ensemble", "revise", "revise_rounds", "seed", "cache")
@click.option("--gate", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Thresholds from `kcard calibrate`: consult cards only when the subject is unpopular.")
@click.option("--popularity", "popularity_name", default=None, help="The popularity table for --gate [default: the first installed].")
@click.option("--json", "as_json", is_flag=True, help="Print the answer and its trace as JSON.")
@click.option("--trace", "show_trace", is_flag=True, help="Print how the answer was made.")
def ask(question: str, gate: str | None, popularity_name: str | None, as_json: bool, show_trace: bool,
        **options: Any) -> None:
    """Answer QUESTION with knowledge from the installed cards."""
    from kcard_core.chains import build_chain
    from kcard_core.chains.base import question_of
    from kcard_core.chains.gate import gated
    from kcard_core.trace import format_trace

    question = question_of(question)  # checked before any model loads, as the spec's settings are
    spec = ChainSpec(**options)
    chain = build_chain(spec)
    click.echo(f"kcard: {chain.mode} with {', '.join(c.name for c in chain.cards) or 'no cards'}…", err=True)
    if gate:
        chain = gated(chain, gate, popularity_name, spec)
    if as_json:
        result = chain.invoke(question)
        emit_json({"question": result["question"], "answer": result["answer"], "trace": result["trace"].to_dict()})
        trace = result["trace"]
    else:
        trace = None
        for chunk in chain.stream(question):
            if "answer" in chunk:
                click.echo(chunk["answer"], nl=False)
            trace = chunk.get("trace", trace)
        click.echo()
        if show_trace:
            click.echo(format_trace(trace.to_dict()))
    for problem in trace.problems():
        click.echo(f"kcard: {problem}", err=True)


@cli.command("eval")
@click.argument("dataset")
@click.option("--mode", "methods", multiple=True, type=click.Choice([*METHODS, *(f"{m}+revise" for m in METHODS)]),
              help="Method to evaluate (repeatable) [default: vanilla and bottom-up]. retrieval: bottom-up "
                   "over the retrieval cards only.")
@click.option("--card", "cards", multiple=True, help="Use only this card (repeatable) [default: all].")
@click.option("--limit", type=int, default=None, help="Only the first N questions.")
@click.option("--data", type=click.Path(exists=True, file_okay=False), default=None,
              help="The folder holding midtermqa/ and popqa/ [default: $KCARD_DATA, else the user data folder].")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="kcard-eval", show_default=True,
              help="Results go to OUT/DATASET/METHOD/ (results.json, predictions.jsonl with traces).")
@spec_options("model", "backend", "n1", "n2", "n3", "selectors", "decide", "revise", "ensemble", "seed")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def eval_command(dataset: str, methods: tuple[str, ...], cards: tuple[str, ...], limit: int | None,
                 data: str | None, out_dir: str, as_json: bool, **options: Any) -> None:
    """Evaluate methods on DATASET (midterm-openbook, midterm-2way, midterm-4way, popqa, or a .jsonl
    file of {"question", "answers"} lines): scores, timings, and every answer's trace."""
    from pathlib import Path

    from kcard_core.evaluation.datasets import load_dataset
    from kcard_core.evaluation.run import chain_for, evaluate

    options["selectors"] = ChainSpec(**options).selectors  # every setting checked before data or models load
    loaded = load_dataset(dataset, data)
    results = []
    for method in methods or ("vanilla", "bottom-up"):
        chain = chain_for(method, loaded, list(cards), **options)
        label = method + "".join(f"+{flag}" for flag in ("revise", "ensemble")
                                 if options[flag] and f"+{flag}" not in method)
        config = {**options, "method": label, "mode": chain.mode, "limit": limit,
                  "cards": [card.name for card in getattr(chain, "cards", [])]}
        result = evaluate(loaded, chain, label, limit=limit, out_dir=Path(out_dir) / loaded.name / label,
                          config=config, progress=not as_json)
        results.append(result)
        if not as_json:
            metrics = {k: v for k, v in result["metrics"].items() if not k.startswith("by_")}
            click.echo(f"{loaded.name} · {label}: {metrics}  ({result['seconds']['per_question']} s/question)")
    if as_json:
        emit_json(results)


@cli.command()
@click.argument("dataset")
@click.option("--with", "with_method", default="bottom-up", show_default=True, help="The method that consults cards.")
@click.option("--without", "without_method", default="vanilla", show_default=True, help="The method that does not.")
@click.option("--runs", type=click.Path(exists=True, file_okay=False), default="kcard-eval", show_default=True,
              help="Where `kcard eval --out` wrote both methods' predictions.")
@click.option("--splits", default=100, show_default=True, help="Random 75/25 dev/test splits to average over.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default="thresholds.json", show_default=True)
def calibrate(dataset: str, with_method: str, without_method: str, runs: str, splits: int, out_file: str) -> None:
    """Fit popularity thresholds per relation: consult cards only below them (Mallen et al., 2023).

    Reads the predictions of `kcard eval DATASET --mode WITH --mode WITHOUT --out RUNS` (PopQA carries
    each subject's popularity) and reports never / always / gated accuracy on held-out splits.
    """
    from pathlib import Path

    from kcard_core.popularity import calibrate as fit_thresholds

    def load(method: str) -> dict[str, dict]:
        path = Path(runs) / dataset / method / "predictions.jsonl"
        if not path.is_file():
            raise KcardError(f"no predictions at {path}: run kcard eval {dataset} --mode {method} --out {runs}")
        return {row["id"]: row for row in map(json.loads, path.open())}

    with_rows, without_rows = load(with_method), load(without_method)
    rows = [{"relation": row["meta"].get("relation"), "views": row["meta"]["s_pop"],
             "with": row["scores"]["accuracy"], "without": without_rows[key]["scores"]["accuracy"]}
            for key, row in with_rows.items() if key in without_rows and "s_pop" in row["meta"]]
    if len(rows) < 8:
        raise KcardError(f"{len(rows)} questions with a popularity in both runs: at least 8 are needed")
    result = {"dataset": dataset, "with": with_method, "without": without_method, **fit_thresholds(rows, splits)}
    Path(out_file).write_text(json.dumps(result, indent=2) + "\n")
    held_out = result["held_out"]
    click.echo(f"held-out accuracy over {splits} splits: never {held_out['never']}, always {held_out['always']}, "
               f"gated {held_out['gated']} (cards for {held_out['gated_card_share']}% of questions); "
               f"thresholds written to {out_file}")


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
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A retrieval card: BM25 over this text, stored in the package (exact facts, no training).")
@click.option("--format", "corpus_format", type=click.Choice(CORPUS_FORMATS), default="auto", show_default=True,
              help="How --corpus holds its passages; auto: JSONL for .jsonl, else blank-line-separated "
                   "paragraphs when there is a blank line, else one per line.")
@click.option("--chat/--no-chat", default=False, help="Prompt the model through its chat template.")
@click.option("--output-dir", type=click.Path(file_okay=False), default=".", show_default=True)
@click.option("--no-input", is_flag=True, help="Do not prompt for the template's other values.")
def new_card(name: str, description: str | None, model_path: str | None, trained: str | None, corpus: str | None,
             corpus_format: str, chat: bool, output_dir: str, no_input: bool) -> None:
    """Render the card template into a pip-installable kcard-card-NAME package: an LM card (--model,
    --from) or a retrieval card (--corpus)."""
    from kcard_core.scaffold import render_card

    folder = render_card(name, description=description, model=model_path, chat=chat, trained=trained,
                         corpus=corpus, corpus_format=corpus_format, output_dir=output_dir, no_input=no_input)
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


@cli.group()
def trust() -> None:
    """Which plugin distributions may load (all installed ones, until you trust some)."""


def _write_trust(names: list[str]) -> None:
    from kcard_core.config import write_atomically
    from kcard_core.plugins import trust_file

    write_atomically(trust_file(), json.dumps({"plugins": sorted(set(names))}, indent=1) + "\n")


@trust.command("add")
@click.argument("distributions", nargs=-1, required=True)
def trust_add(distributions: tuple[str, ...]) -> None:
    """Allow DISTRIBUTIONS to load; once the list exists, plugins not on it are not imported."""
    from kcard_core.plugins import trusted

    _write_trust([*(trusted() or []), *distributions])
    click.echo(f"trusted: {', '.join(trusted())}")


@trust.command("remove")
@click.argument("distributions", nargs=-1, required=True)
def trust_remove(distributions: tuple[str, ...]) -> None:
    """Stop loading DISTRIBUTIONS."""
    from kcard_core.plugins import _normalise, trusted

    _write_trust([name for name in trusted() or [] if name not in {_normalise(d) for d in distributions}])
    click.echo(f"trusted: {', '.join(trusted() or []) or 'nothing (no plugin loads)'}")


@trust.command("reset")
def trust_reset() -> None:
    """Forget the trust list: every installed plugin loads again."""
    from kcard_core.plugins import trust_file

    trust_file().unlink(missing_ok=True)
    click.echo("no trust list: every installed plugin loads")


@trust.command("list")
@click.option("--json", "as_json", is_flag=True)
def trust_list(as_json: bool) -> None:
    """Every installed plugin: trusted or not, where its code lives, where its cards' weights come from."""
    import importlib.metadata

    from kcard_core.plugins import _normalise, trusted

    allowed, registry = trusted(), get_registry()
    rows = []
    for entry_point in importlib.metadata.entry_points(group="kcard"):
        dist = entry_point.dist
        name = dist.name if dist else entry_point.name
        cards = {card: {role: a.describe() for role, a in registry.cards[card].manifest.artifacts.items()}
                 for card, plugin in registry.card_plugins.items() if plugin == entry_point.name}
        rows.append({"distribution": name, "version": dist.version if dist else None, "entry_point": entry_point.value,
                     "code": str(dist.locate_file("")) if dist else None,
                     "trusted": allowed is None or _normalise(name) in allowed, "cards": cards})
    if as_json:
        return emit_json({"trust_list": allowed, "plugins": rows})
    click.echo("trust list: " + (", ".join(allowed) if allowed is not None else "none (every installed plugin loads)"))
    for row in rows:
        click.echo(f"{'✓' if row['trusted'] else '✗'} {row['distribution']} {row['version']}: {row['entry_point']} "
                   f"in {row['code']}")
        for card, artifacts in row["cards"].items():
            click.echo(f"    card {card}: " + "; ".join(f"{role} = {where}" for role, where in artifacts.items()))


@cli.group()
def cache() -> None:
    """The on-disk cache of card generations."""


@cache.command("clear")
def cache_clear() -> None:
    """Delete every cached generation."""
    from kcard_core.cache import GenerationCache

    click.echo(f"removed {GenerationCache().clear()} cached generations")


@cli.group()
def selectors() -> None:
    """Selectors from installed plugins."""


@selectors.command("list")
@click.option("--json", "as_json", is_flag=True)
def selectors_list(as_json: bool) -> None:
    """List installed selectors."""
    rows = [{"name": name, "description": (factory.__doc__ or "").strip().splitlines()[0] if factory.__doc__ else "",
             "factory": f"{factory.__module__}.{factory.__qualname__}"}
            for name, factory in get_registry().selectors.items()]
    if as_json:
        return emit_json(rows)
    for row in rows:
        click.echo(f"{row['name']}: {row['factory']}")


@cli.group()
def backends() -> None:
    """Backends from installed plugins."""


@backends.command("list")
@click.option("--json", "as_json", is_flag=True)
def backends_list(as_json: bool) -> None:
    """List installed backends, whether each can run here, and on which device."""
    rows = []
    for name, backend in get_registry().backends.items():
        status = backend.status()
        rows.append({"name": name, "description": backend.description, "available": status.available,
                     "device": status.device, "detail": status.detail})
    if as_json:
        return emit_json(rows)
    for row in rows:
        state = "available" if row["available"] else f"unavailable ({row['detail']})"
        click.echo(f"{row['name']}: {state} on {row['device']} — {row['description']}")


@cli.command()
@click.option("--json", "as_json", is_flag=True)
def plugins(as_json: bool) -> None:
    """List installed plugins, their hooks, versions and load errors."""
    rows = [vars(info) for info in get_registry().plugins.values()]
    if as_json:
        return emit_json(rows)
    for row in rows:
        status = "; ".join(row["errors"]) if row["errors"] else ", ".join(row["hooks"])
        click.echo(f"{row['name']} ({row['distribution']} {row['version']}): {status}")


def main() -> None:
    """Console entry point: plugins may add commands before the command line is parsed."""
    get_registry().call_hook("register_commands", lambda plugin: cli, argname="cli")
    cli()
