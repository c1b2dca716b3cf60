"""Every setting a chain takes, in one place: its default, its allowed values and its help.

``build_chain`` reads a :class:`ChainSpec`; ``kcard ask`` and ``kcard eval`` generate their options
from its fields (:func:`spec_options`), so a setting is declared once, and every value is checked
when the spec is made: before any model loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable

from kcard_core import defaults
from kcard_core.errors import KcardError
from kcard_core.models import DEFAULT_MODEL


def setting(default: Any, help: str, *, choices: tuple[str, ...] | None = None, low: int | None = None,
            high: int | None = None, option: str | None = None) -> Any:
    """A field of ChainSpec with what the CLI shows and what a value must be."""
    return field(default=default, metadata={"help": help, "choices": choices, "low": low, "high": high,
                                            "option": option})


@dataclass(frozen=True)
class ChainSpec:
    mode: str | None = setting(None, "How knowledge reaches the base LLM (vanilla: none; genread: the base LLM "
                                     "writes its own) [default: bottom-up, or 'mode' in config.toml].",
                               choices=defaults.MODES + defaults.BASELINES)
    cards: tuple[str, ...] | None = setting(None, "Use only this card (repeatable) [default: all].", option="--card")
    model: str | None = setting(None, f"Base LLM: a GGUF path or a known name [default: {DEFAULT_MODEL}].")
    backend: str | None = setting(None, "Backend for cards and base LLM [default: per card in config.toml, "
                                        "else llama-cpp].")
    n1: int | None = setting(defaults.N1, "Documents each LM card samples (retrieval and KG cards return one "
                                          "document of their best passages) [default: the card's own, its "
                                          "manifest's [generation] n, 1 unless it says].", low=1, high=20)
    n2: int = setting(defaults.N2, "Documents the relevance selector keeps.", low=1, high=100)
    n3: int = setting(defaults.N3, "Documents the factuality selector keeps.", low=1, high=100)
    selectors: tuple[str, ...] = setting(defaults.SELECTORS, "Bottom-up: the selectors to run, in order "
                                                             "(comma-separated).")
    prune: str = setting("extractive", "Pruning: keep the sentences closest to the question, or ask the base LLM "
                                       "for a summary.", choices=("extractive", "llm"))
    judge: str = setting(defaults.JUDGE, "Factuality: judge support by agreement of what a document adds beyond "
                                         "the question with the evidence, by MiniLM similarity, by the base LLM's "
                                         "yes/no probabilities, or by both of those.", choices=defaults.JUDGES)
    reader: str | None = setting(None, "The answer step: an installed reader (kcard readers list) [default: "
                                       f"{defaults.READER} where installed, else plain].")
    copy_bias: float = setting(defaults.COPY_BIAS, "The answer: added to the base LLM's logits for the words of "
                                                   "the knowledge that the question lacks (0: off; a kcard "
                                                   "backend's model only).", low=0, high=10)
    type_bias: float = setting(defaults.TYPE_BIAS, "The rules reader: an answer that names no count, measure, year, "
                                                   "time, name or title of the knowledge, where the question asks "
                                                   "for one, is asked again with this added to their words' logits "
                                                   "(0: off; a kcard backend's model only).", low=0, high=20)
    max_iterations: int = setting(1, "Top-down: rounds of asking for knowledge.", low=1, high=20)
    decide: str = setting("reply", "Top-down: read Yes/No from the reply, or from P(yes) calibrated against a "
                                   "content-free question.", choices=("reply", "calibrated"))
    ensemble: bool = setting(False, "Top-down: ask three wordings of the yes/no question; follow the majority.")
    revise: str | None = setting(None, "Verify the answer against the knowledge (knowledge-f1 or self-critique) "
                                       "and revise it when it fails.")
    revise_rounds: int = setting(2, "With --revise: answers after the first, at most.", low=0, high=10)
    seed: int | None = setting(0, "Sampling seed (repeatable runs).")
    cache: bool = setting(True, "Generate again instead of reusing cached documents.", option="--no-cache")

    def __post_init__(self) -> None:
        for spec in fields(self):
            value, meta = getattr(self, spec.name), spec.metadata
            if meta["choices"] and value is not None and value not in meta["choices"]:
                raise KcardError(f"unknown {spec.name} {value!r}; choose one of {', '.join(meta['choices'])}")
            if meta["low"] is not None and value is not None and not meta["low"] <= value <= meta["high"]:
                raise KcardError(f"{spec.name} must be between {meta['low']} and {meta['high']}, not {value}")
        if self.cards is not None:  # any sequence of names; none named means every card
            object.__setattr__(self, "cards", tuple(self.cards) or None)
        if isinstance(self.selectors, str):  # "relevance,factuality", as the CLI takes it
            object.__setattr__(self, "selectors", tuple(s.strip() for s in self.selectors.split(",") if s.strip()))


def spec_options(*names: str) -> Callable:
    """Click options for these ChainSpec fields, with the spec's defaults, choices, ranges and help."""
    import click

    def decorate(command: Callable) -> Callable:
        for spec in reversed([spec for spec in fields(ChainSpec) if spec.name in names]):
            meta = spec.metadata
            flag = meta["option"] or "--" + spec.name.replace("_", "-")
            if spec.name == "cards":
                option = click.option(flag, spec.name, multiple=True, help=meta["help"])
            elif spec.type == "bool":  # --ensemble turns on, --no-cache turns off
                option = click.option(flag, spec.name, flag_value=not spec.default, default=spec.default,
                                      help=meta["help"])
            else:
                ranged = click.FloatRange if spec.type == "float" else click.IntRange
                kind = (click.Choice(meta["choices"]) if meta["choices"] else
                        ranged(meta["low"], meta["high"]) if meta["low"] is not None else None)
                default = ",".join(spec.default) if spec.name == "selectors" else spec.default
                option = click.option(flag, spec.name, type=kind, default=default,
                                      show_default=default is not None, help=meta["help"])
            command = option(command)
        return command

    return decorate
