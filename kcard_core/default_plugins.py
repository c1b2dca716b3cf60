"""kcard's own built-ins, registered as a plugin like any other (first, so that they win a name
clash): the "plain" reader and the two verify-and-revise utilities. The core card types ("lm", "retrieval") are
kcard_core.cards.CARD_TYPES itself; plugins add more through ``register_card_types``."""

from kcard_core.hookspecs import hookimpl
from kcard_core.loading import lazy


@hookimpl
def register_utilities(register):  # imported when used: kcard_core.revise imports LangChain (~1 s)
    register(lazy("kcard_core.revise:KnowledgeF1", "Unigram F1 between the answer and the knowledge."),
             name="knowledge-f1")
    register(lazy("kcard_core.revise:SelfCritique", "The base LLM judges whether its answer is supported."),
             name="self-critique")


@hookimpl
def register_readers(register):
    register(lazy("kcard_core.readers:PlainReader", "The base LLM's reply as it writes it."), name="plain")
    register(lazy("kcard_core.readers:SpanReader", "A span of the knowledge, the one the base LLM finds likeliest as "
                                                  "the whole answer."), name="span")
