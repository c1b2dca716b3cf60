"""Knowledge cards: a manifest says what a card knows and which weights it runs on."""

from __future__ import annotations

import logging
import re
import time
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from kcard_core.artifacts import Artifact
from kcard_core.backends import Adapted, Backend, Sampling
from kcard_core.cache import GenerationCache
from kcard_core.config import limit
from kcard_core.documents import (ContextualTexts, Passage, PassageFile, closest_sentences, read_corpus,
                                  read_passages)
from kcard_core.errors import KcardError
from kcard_core.loading import load_object
from kcard_core.text import SEPARATOR, complete_sentences, cue_form

if TYPE_CHECKING:  # langchain_core costs ~1 s to import: listing cards must not pay it
    from langchain_core.documents import Document
    from langchain_core.runnables import Runnable

    from kcard_core.retrieval import QuestionIndex

logger = logging.getLogger(__name__)
QUESTION_SLOT = re.compile(r"\{(?:query|cue)\}")  # where a prompt takes the question


@dataclass(frozen=True)
class GenerationDefaults:
    n: int = 1  # an LM card's documents per question when the chain names no n1
    max_tokens: int = 64
    temperature: float = 0.1
    repeat_penalty: float = 1.0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetrievalDefaults:
    """What a retrieval or KG card returns, whatever n1 a chain asks for: one document of its best passages, at most
    ``passages``, each scoring at least ``floor`` times the best one and holding at least ``coverage``
    of the question's words, weighted by rarity (n1 is a number of samples, which only a language
    model has: at n1 = 3 the news card added two reports of other races; without a coverage floor
    the computing card answered a midterm question with the University of Pennsylvania)."""
    passages: int = 3
    floor: float = 0.75
    coverage: float = 0.3
    sentences: int = 1  # of passages under a heading path, the reader gets this many sentences (0: whole)
    subject: str = ""  # what the card's whole text is about (any card with a text, an LM card's too): every
    # passage covers it, and a question that names it is for this card even in other words (QuestionIndex)


@dataclass(frozen=True)
class CardManifest:
    name: str
    description: str  # what the card knows, in one line: top-down AUTO matches needs against it
    version: str
    license: str
    artifacts: dict[str, Artifact] = field(default_factory=dict)  # "model" is the weights an LM card runs
    prompt: str = "{query}"  # the card's prompt: {query} is the question, {cue} it in cue form
    chat: bool = False  # send the prompt through the model's chat template (instruct models)
    generation: GenerationDefaults = GenerationDefaults()
    type: str = "lm"  # "lm": a language model writes; "retrieval": BM25 over a corpus; or a plugin's (CARD_TYPES)
    corpus: str | None = None  # retrieval / kg: "module:function" returning passages / triples
    retrieval: RetrievalDefaults = RetrievalDefaults()

    REQUIRED = ("name", "description", "version", "license")

    @classmethod
    def from_dict(cls, data: dict[str, Any], base_dir: Path | None = None) -> "CardManifest":
        """Validate a manifest; every problem becomes a ValueError naming the field."""
        missing = [key for key in cls.REQUIRED if not data.get(key)]
        if missing:
            raise ValueError(f"card manifest is missing {', '.join(missing)}")
        for key in (*cls.REQUIRED, "prompt", "corpus"):
            if key in data and not isinstance(data[key], str):
                raise ValueError(f"card manifest field {key!r} must be a string")
        if not QUESTION_SLOT.search(data.get("prompt", "{query}")):
            raise ValueError("card manifest 'prompt' must contain {query} or {cue}")
        if not isinstance(data.get("type", "lm"), str):
            raise ValueError("card manifest field 'type' must be a string")
        artifacts = {role: Artifact.from_dict(spec, base_dir) for role, spec in data.get("artifacts", {}).items()}
        try:
            generation = dict(data.get("generation", {}))
            generation = GenerationDefaults(**{**generation, "stop": tuple(generation.get("stop", ()))})
        except (TypeError, ValueError) as error:
            raise ValueError(f"card manifest [generation]: {error}") from None
        try:
            retrieval = RetrievalDefaults(**data.get("retrieval", {}))
        except TypeError as error:
            raise ValueError(f"card manifest [retrieval]: {error}") from None
        if not (retrieval.passages >= 1 and retrieval.sentences >= 0 and 0 <= retrieval.floor <= 1
                and 0 <= retrieval.coverage <= 1):
            raise ValueError("card manifest [retrieval]: passages must be at least 1, sentences at least 0, "
                             "floor and coverage within [0, 1]")
        return cls(name=data["name"], description=data["description"], version=data["version"],
                   license=data["license"], artifacts=artifacts, prompt=data.get("prompt", "{query}"),
                   chat=bool(data.get("chat", False)), generation=generation, type=data.get("type", "lm"),
                   corpus=data.get("corpus"), retrieval=retrieval)

    @classmethod
    def from_file(cls, path: str | Path) -> "CardManifest":
        path = Path(path)
        return cls.from_dict(tomllib.loads(path.read_text()), base_dir=path.parent)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for spec in data["artifacts"].values():
            spec.pop("base_dir")
        return data


class Card:
    """A knowledge card: ``generate(question)`` returns background documents.

    This class runs a language model from the manifest's ``model`` artifact; cards built on other
    knowledge sources (an index, a graph) subclass it and override :meth:`write`.
    """

    def __init__(self, manifest: CardManifest, backend: Backend | None = None):
        self.manifest = manifest
        # bound by build_chain: a card names what it knows, not how it is run
        self.backend = backend
        self.settings: dict[str, Any] = {}  # the user's settings for this card's backend
        self.cache: GenerationCache | None = None
        self._built: dict[str, Any] = {}  # built once and shared with the copies with_backend makes (held, not copied)

    @staticmethod
    def from_manifest(path: str | Path) -> "Card":
        """The card a manifest file describes, of the class its ``type`` names (:data:`CARD_TYPES`)."""
        manifest = CardManifest.from_file(path)
        if manifest.type not in CARD_TYPES:
            raise KcardError(f"card {manifest.name!r} is of type {manifest.type!r}, which no loaded plugin provides "
                             f"(known: {', '.join(CARD_TYPES)}): install the plugin that provides it")
        return CARD_TYPES[manifest.type](manifest)

    def runs_on(self) -> str | None:
        """What writes this card's documents (shown in their metadata)."""
        return self.backend.name if self.backend else None

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def description(self) -> str:
        return self.manifest.description

    @property
    def evidence(self) -> Callable[[], list[str]] | None:
        """The loader of the card's own evidence text (its ``evidence`` artifact, e.g. the text an LM
        card was trained on), which the factuality selector checks documents against; None without one."""
        artifact = self.manifest.artifacts.get("evidence")
        return None if artifact is None else lambda: read_corpus(artifact.resolve())

    def index(self) -> QuestionIndex | None:
        """The text this card holds, searchable (an LM card's evidence; a retrieval card's passages), or None:
        top-down-auto lets a card claim a question that names a word no other card's text holds, and
        bottom-up asks only the card whose subject a question names. Loaded from the card's ``index``
        artifact when it has one made by this kcard; else built once per machine (kcard's cache)."""
        if "index" not in self._built:  # the chain's bound copies and the factuality selector's find share it
            from kcard_core.retrieval import QuestionIndex

            texts, subject, saved = self.passages(), self.manifest.retrieval.subject, self.manifest.artifacts.get("index")
            index = None
            if texts is not None and saved is not None:
                try:
                    index = QuestionIndex.load(saved.resolve(), texts, subject=subject)
                except ValueError as error:
                    logger.info("card %s: %s; building its index", self.name, error)
            if texts is not None and index is None:
                index = QuestionIndex.cached(texts, subject=subject)
            self._built["index"] = index
        return self._built["index"]

    def passages(self) -> Sequence[str] | None:
        """The text :meth:`index` searches: an LM card's evidence, or None without one."""
        return self.evidence() if self.evidence else None

    def find(self, query: str) -> list[str]:
        """The passages of the card's text that ``query`` finds, best first (none without a text): a
        retrieval card's document; for an LM card, evidence that its documents are checked against."""
        index = self.index()
        return [index.texts[position] for position in self.found(query)] if index else []

    def found(self, query: str) -> list[int]:
        """:meth:`find`'s passages, as their positions in :meth:`passages`."""
        settings, index = self.manifest.retrieval, self.index()
        if index is None:
            return []
        found = index.found(query, k=settings.passages, coverage=settings.coverage)
        if not found and index.names_subject(query):  # for this text, in other words than the text's
            found = index.found(query, k=settings.passages)
        return [position for score, position in found if score >= settings.floor * found[0][0]]

    def with_backend(self, backend: Backend, settings: dict[str, Any] | None = None,
                     cache: GenerationCache | None = None) -> "Card":
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__, backend=backend, settings=settings or {}, cache=cache)
        return clone

    def renamed(self, name: str) -> "Card":
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__, manifest=replace(self.manifest, name=name))
        return clone

    def generate(self, query: str, n: int | None = None, *, seed: int | None = 0,
                 max_tokens: int | None = None, temperature: float | None = None) -> list["Document"]:
        """Knowledge documents for ``query``: ``n`` samples of an LM card (default: the manifest's
        ``[generation] n``); a retrieval or KG card's one document of its best passages whatever ``n`` is."""
        from langchain_core.documents import Document

        defaults = self.manifest.generation
        n = n or defaults.n
        sampling = Sampling(max_tokens=max_tokens or defaults.max_tokens,
                            temperature=defaults.temperature if temperature is None else temperature, seed=seed,
                            stop=defaults.stop, repeat_penalty=defaults.repeat_penalty)
        started = time.perf_counter()
        written = self.written(query, n, sampling)
        seconds = round(time.perf_counter() - started, 3)
        return [Document(page_content=text[: limit("KCARD_MAX_DOCUMENT_CHARS")], metadata={
            "id": f"{self.name}#{index}", "card": self.name, "source": self.manifest.type,
            "backend": self.runs_on(),
            "generation": {"n": n, "max_tokens": sampling.max_tokens, "temperature": sampling.temperature,
                           "seed": None if seed is None else seed + index - 1},
            "seconds": seconds, **extra}) for index, (text, extra) in enumerate(written, start=1)]

    def written(self, query: str, n: int, sampling: Sampling) -> list[tuple[str, dict[str, Any]]]:
        """:meth:`write`'s texts, each with what the card adds to its document's metadata (``sources``,
        the file and heading path of each passage it quotes). A text that opens with one of its
        evidence's heading paths is read as a passage under it, as a retrieval card's is (:meth:`quoted`)."""
        headings, found = self.headings(), []
        for text in self.write(query, n, sampling):
            under = max((head for head in headings if text.startswith(head)), key=len, default="")
            body = text[len(under):]
            found.append(self.quoted(query, [replace(headings[under], text=body)]) if under and body.strip()
                         else (text, {}))
        return found

    def headings(self) -> dict[str, Passage]:
        """The heading paths of the card's evidence as a passage's text opens with them ("A › B: "),
        each with the first passage under it (its source and headings); empty without any."""
        if "headings" not in self._built:
            artifact, found = self.manifest.artifacts.get("evidence"), {}
            for passage in read_passages(artifact.resolve()) if artifact is not None else []:
                if passage.headings:
                    found.setdefault(replace(passage, text="").contextual(), passage)
            self._built["headings"] = found
        return self._built["headings"]

    def quoted(self, query: str, found: list[Passage]) -> tuple[str, dict[str, Any]]:
        """One document of ``found`` passages as the reader is given them (of passages under a heading
        path, the sentences closest to ``query``: :func:`~kcard_core.documents.closest_sentences`),
        with their ``sources`` and whether they are ``headed``."""
        index = self.index()
        found = closest_sentences(query, found, self.manifest.retrieval.sentences,
                                  index.subject if index is not None else frozenset())
        sources = [SEPARATOR.join(filter(None, (p.source, *p.headings))) for p in found]
        meta: dict[str, Any] = {"sources": sources} if any(sources) else {}
        if any(p.headings for p in found):
            meta["headed"] = True
        return " ".join(p.contextual() for p in found), meta

    def write(self, query: str, n: int, sampling: Sampling) -> list[str]:
        """The card's texts for ``query``: here, ``n`` samples of its language model."""
        if self.backend is None:
            raise KcardError(f"card {self.name!r} has no backend: pip install kcard-llama-cpp")
        if "model" not in self.manifest.artifacts:
            raise KcardError(f"card {self.name!r} names no 'model' artifact in its manifest")
        model, model_id = self.model()
        question = query.strip()
        prompt = self.manifest.prompt.replace("{query}", question).replace("{cue}", cue_form(question))  # not format()
        key, texts = None, None
        if self.cache is not None and sampling.seed is not None:  # the model's own words are cached
            key = self.cache.key(model=model_id, backend=self.backend.name, prompt=prompt,
                                 chat=self.manifest.chat, n=n, sampling=sampling, raw=True)
            texts = self.cache.get(key)
        if texts is None:
            texts = self.backend.generate(model, prompt, n=n, sampling=sampling, chat=self.manifest.chat)
            if key:
                self.cache.put(key, texts)
        lead = QUESTION_SLOT.split(self.manifest.prompt)[-1].lstrip()  # words that start the document stay in it
        return [complete_sentences(lead + text) for text in texts]

    def model(self) -> tuple[Any, str]:
        """(what the backend runs, an id of those exact weights): the model artifact, with the LoRA
        adapter in the backend's format when the card has one."""
        artifact = self.manifest.artifacts["model"]
        model = self.backend.locate(artifact, self.settings)
        model_id = artifact.sha256 or str(model)
        adapter = self.manifest.artifacts.get(self.backend.adapter_role or "")
        if adapter is not None:
            model, model_id = Adapted(model, adapter.resolve()), f"{model_id}+{adapter.sha256 or adapter.file}"
        elif any(role.startswith("adapter-") for role in self.manifest.artifacts) and self.backend.adapter_role:
            raise KcardError(f"card {self.name!r} has no {self.backend.adapter_role} artifact, which the "
                             f"{self.backend.name} backend needs: run it on another backend")
        return model, model_id

    def as_runnable(self) -> "Runnable[str, list[Document]]":
        """The card as a LangChain runnable: question in, documents out."""
        from langchain_core.runnables import RunnableLambda

        return RunnableLambda(self.generate, name=self.name)

    def __repr__(self) -> str:
        return f"<Card {self.name}>"


class RetrievalCard(Card):
    """A card that retrieves passages with BM25 instead of writing them (the paper's Appendix A).

    Its corpus is the manifest's ``corpus`` callable ("module:function" returning passages) or its
    ``corpus`` artifact: a file in one of the formats of :mod:`kcard_core.documents` (a package's
    passages.jsonl records each passage's source file and heading path; the trace shows them).
    """

    def runs_on(self) -> str:
        return "bm25"

    def write(self, query: str, n: int, sampling: Sampling) -> list[str]:
        return [text for text, _ in self.written(query, n, sampling)]

    def written(self, query: str, n: int, sampling: Sampling) -> list[tuple[str, dict[str, Any]]]:
        # One document, best passage first, as a KG card writes one: the relevance selector does not
        # reorder BM25's passages; of passages under a heading path the reader sees the closest sentences.
        kept = self.found(query)
        if not kept:
            return []
        texts, corpus = self.index().texts, self._built.get("corpus")
        return [self.quoted(query, [corpus[i] if corpus is not None else Passage(texts[i]) for i in kept])]

    def passages(self) -> Sequence[str]:
        if self.manifest.corpus:
            return list(load_object(self.manifest.corpus)())
        if "corpus" not in self.manifest.artifacts:
            raise KcardError(f"retrieval card {self.name!r} names no corpus")
        path = self.manifest.artifacts["corpus"].resolve()
        # where each passage comes from (file › heading path), for the trace; the passages.jsonl that
        # kcard new card writes beside an index is read a line at a time, when a question finds it
        indexed = "index" in self.manifest.artifacts and path.suffix == ".jsonl"
        corpus = PassageFile(path) if indexed else read_passages(path)
        self._built["corpus"] = corpus
        return ContextualTexts(corpus)


# a manifest's ``type`` -> the class that runs it: the core two, and those plugins add through the
# register_card_types hook (kcard-kg adds "kg"), for the whole process
CARD_TYPES: dict[str, type[Card]] = {"lm": Card, "retrieval": RetrievalCard}
