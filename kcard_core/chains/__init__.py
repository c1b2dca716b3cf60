"""The integration chains, and ``build_chain``: one call that wires a chain from installed plugins."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseLanguageModel

from kcard_core.backends import Sampling, yes_probability
from kcard_core.cache import GenerationCache
from kcard_core.chains.base import KnowledgeChain
from kcard_core.chains.baselines import GenRead, Vanilla
from kcard_core.chains.bottom_up import BottomUp
from kcard_core.chains.top_down import Combined, TopDown
from kcard_core.config import load_settings
from kcard_core.defaults import BASELINES, MODES
from kcard_core.errors import KcardError
from kcard_core.models import model_artifact
from kcard_core.plugins import NO_CARDS_MESSAGE, Registry, get_registry
from kcard_core.readers import ANSWER_TOKENS
from kcard_core.spec import ChainSpec


__all__ = ["BottomUp", "Combined", "GenRead", "KnowledgeChain", "TopDown", "Vanilla", "build_chain"]


def build_chain(spec: ChainSpec | str | None = None, *, examples: list[dict] | None = None,
                llm: BaseLanguageModel | None = None, settings: dict[str, Any] | None = None,
                registry: Registry | None = None, **changes: Any) -> KnowledgeChain:
    """A ready chain: the base LLM, the named (default: all) cards and the selectors, all from plugins.

    ``spec``: a :class:`~kcard_core.spec.ChainSpec` (every setting, documented there), or just its
    mode; ``changes`` set any of its fields (``build_chain("bottom-up", cards=["countries"], n1=2)``).
    ``llm``: any LangChain LLM or chat model as the base LLM (a ``ChatOpenAI``, say) instead of
    ``model`` on a kcard backend. It sees kcard's prompts as text; what needs the base LLM's
    next-token log-probabilities (``judge`` "llm" or "both", ``decide`` "calibrated", the
    "self-critique" utility) needs a kcard backend's model instead. ``examples``: in-context
    examples in the chain's format (default: its own).

    What the spec leaves out comes from ``settings`` (default: the user's config.toml): ``mode``,
    ``model`` and ``backend`` at the top level, ``[backends.NAME]`` for a backend (an endpoint, a
    device) and ``[cards.NAME]`` for one card (its ``backend`` and that backend's settings).
    """
    spec = replace(spec if isinstance(spec, ChainSpec) else ChainSpec(mode=spec), **changes)
    settings = load_settings() if settings is None else settings
    mode = spec.mode or settings.get("mode", "bottom-up")
    if mode not in MODES + BASELINES:
        raise KcardError(f"unknown mode {mode!r} in config.toml; choose one of {', '.join(MODES + BASELINES)}")
    registry = registry or get_registry()
    chosen = [registry.card(name) for name in spec.cards] if spec.cards else list(registry.cards.values())
    if not chosen and mode not in BASELINES:
        raise KcardError(NO_CARDS_MESSAGE)
    reader = registry.reader(spec.reader)
    backend_settings = settings.get("backends", {})
    if llm is None:
        model_name, artifact = model_artifact(spec.model or settings.get("model"))
        engine = registry.backend(spec.backend or settings.get("backend"))
        model_ref = engine.locate(artifact, backend_settings.get(engine.name, {}))
        llm = engine.language_model(model_ref, Sampling(max_tokens=ANSWER_TOKENS, temperature=0.0,
                                                         seed=spec.seed, favour_bias=spec.copy_bias))
        # yes/no judgements (factuality, calibrated top-down, self-critique) use the base LLM: it is loaded
        logprobs = lambda prompt: engine.next_token_logprobs(model_ref, prompt)  # noqa: E731
    else:
        if spec.judge in ("llm", "both") or spec.decide == "calibrated" or spec.revise == "self-critique":
            raise KcardError("judge llm/both, decide calibrated and self-critique read the base LLM's "
                             "next-token log-probabilities: pass model= (a kcard backend's model), not llm=")
        model_name, logprobs = getattr(llm, "model_name", None) or llm.get_name(), None
    common = dict(model_name=model_name, seed=spec.seed, examples=examples, reader=reader.from_spec(spec, llm))
    if mode in BASELINES:
        chain = (Vanilla if mode == "vanilla" else GenRead)(llm, **common)
        return with_revision(chain, spec.revise, spec.revise_rounds, logprobs, registry)
    generation_cache = GenerationCache() if spec.cache else None

    def bind(card):  # per call > per card > default
        own = settings.get("cards", {}).get(card.name, {})
        card_engine = registry.backend(spec.backend or own.get("backend") or settings.get("backend"))
        return card.with_backend(card_engine, {**backend_settings.get(card_engine.name, {}), **own}, generation_cache)

    chosen = [bind(card) for card in chosen]
    # evidence: the corpora plugins register, and the text each card carries as its own evidence,
    # whose passages a question finds (passages_for) are evidence too
    own = [card for card in registry.cards.values() if card.evidence]
    evidence = {**registry.evidence, **{f"card {card.name}": card.evidence for card in own}}
    context = dict(llm=llm, logprobs=logprobs, evidence=evidence,  # each selector reads its settings from spec
                   passages_for={card.name: card.find for card in own}, holds_answer=common["reader"].holds_answer)
    common["n1"] = spec.n1
    if mode == "bottom-up":
        chain = BottomUp(llm, chosen, [registry.selector(name, spec, **context) for name in spec.selectors], **common)
    else:
        factuality = registry.selector("factuality", spec, **context)
        relevance = registry.selector("relevance") if "relevance" in registry.selectors else None
        calibrated = (lambda prompt: yes_probability(logprobs(prompt))) if spec.decide == "calibrated" else None
        top_down = dict(similarity=getattr(relevance, "similarities", None), yes_probability=calibrated,
                        ensemble=spec.ensemble, max_iterations=spec.max_iterations, **common)
        if mode == "combined":
            stages = [factuality if name == "factuality" else registry.selector(name, spec, **context)
                      for name in spec.selectors]
            chain = Combined(llm, chosen, factuality, selectors=stages, **top_down)
        else:
            chain = TopDown(llm, chosen, factuality, explicit=mode == "top-down-exp", **top_down)
    return with_revision(chain, spec.revise, spec.revise_rounds, logprobs, registry)


def with_revision(chain: KnowledgeChain, utility: str | None, rounds: int, logprobs, registry: Registry):
    """``chain`` as is, or wrapped in verify-and-revise with the named utility."""
    if not utility:
        return chain
    from kcard_core.revise import VerifyAndRevise

    if utility not in registry.utilities:
        raise KcardError(f"unknown utility {utility!r}; choose one of {', '.join(registry.utilities)}")
    return VerifyAndRevise(chain, registry.utilities[utility](logprobs=logprobs), max_rounds=rounds)
