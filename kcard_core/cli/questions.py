"""Asking and measuring: ``kcard ask``, ``kcard eval``, ``kcard calibrate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kcard_core.cli.base import cli, emit_json
from kcard_core.evaluation.run import METHODS
from kcard_core.spec import ChainSpec, spec_options


@cli.command()
@click.argument("question")
@spec_options("mode", "cards", "model", "backend", "n1", "n2", "n3", "selectors", "prune", "judge", "reader",
              "copy_bias", "type_bias", "max_iterations", "decide", "ensemble", "revise", "revise_rounds", "seed", "cache")
@click.option("--gate", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Thresholds from `kcard calibrate`: consult cards only when the subject is unpopular.")
@click.option("--popularity", "popularity_name", default=None, help="The popularity table for --gate [default: the first installed].")
@click.option("--json", "as_json", is_flag=True, help="Print the answer and its trace as JSON.")
@click.option("--trace", "show_trace", is_flag=True, help="Print how the answer was made.")
@click.option("--server", envvar="KCARD_SERVER", default=None,
              help="Ask a running `kcard serve` at this URL (its models are warm) [env: KCARD_SERVER]; --mode "
                   "and --card go with the question, the other settings are the server's.")
def ask(question: str, gate: str | None, popularity_name: str | None, as_json: bool, show_trace: bool,
        server: str | None, **options: Any) -> None:
    """Answer QUESTION with knowledge from the installed cards."""
    from kcard_core.chains import build_chain
    from kcard_core.chains.base import question_of
    from kcard_core.chains.gate import gated
    from kcard_core.trace import format_trace, problems

    question = question_of(question)  # checked before any model loads, as the spec's settings are
    spec = ChainSpec(**options)
    if server:  # the answer and the trace's JSON form from a running kcard serve
        from kcard_core.client import ask_server

        answer, trace = ask_server(server, question, spec.mode or "bottom-up", spec.cards)
        if not as_json:
            click.echo(answer)
    else:
        chain = build_chain(spec)
        click.echo(f"kcard: {chain.mode} with {', '.join(c.name for c in chain.cards) or 'no cards'}…", err=True)
        if gate:
            chain = gated(chain, gate, popularity_name, spec)
        trace = None
        for chunk in [chain.invoke(question)] if as_json else chain.stream(question):  # streamed: the answer as written
            if "answer" in chunk and not as_json:
                click.echo(chunk["answer"], nl=False)
            trace = chunk.get("trace", trace)
        if not as_json:
            click.echo()
        answer, trace = trace.answer, trace.to_dict()
    if as_json:
        emit_json({"question": question, "answer": answer, "trace": trace})
    elif show_trace:
        click.echo(format_trace(trace))
    for problem in problems(trace):
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
@spec_options("model", "backend", "n1", "n2", "n3", "selectors", "reader", "copy_bias", "type_bias", "decide",
              "revise", "ensemble", "seed")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def eval_command(dataset: str, methods: tuple[str, ...], cards: tuple[str, ...], limit: int | None,
                 data: str | None, out_dir: str, as_json: bool, **options: Any) -> None:
    """Evaluate methods on DATASET (midterm-openbook, midterm-2way, midterm-4way, popqa, or a .jsonl
    file of {"question", "answers"} lines): scores, timings, and every answer's trace."""
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
    from kcard_core.popularity import calibrate as fit_thresholds, paired_runs

    rows = paired_runs(runs, dataset, with_method, without_method)
    result = {"dataset": dataset, "with": with_method, "without": without_method, **fit_thresholds(rows, splits)}
    Path(out_file).write_text(json.dumps(result, indent=2) + "\n")
    held_out = result["held_out"]
    click.echo(f"held-out accuracy over {splits} splits: never {held_out['never']}, always {held_out['always']}, "
               f"gated {held_out['gated']} (cards for {held_out['gated_card_share']}% of questions); "
               f"thresholds written to {out_file}")
