"""kcard's own built-ins, registered as a plugin like any other (first, so that they win a name
clash): the two verify-and-revise utilities. The core card types ("lm", "retrieval") are
kcard_core.cards.CARD_TYPES itself; plugins add more through ``register_card_types``."""

from kcard_core.hookspecs import hookimpl


@hookimpl
def register_utilities(register):
    from kcard_core.revise import KnowledgeF1, SelfCritique

    register(KnowledgeF1, name=KnowledgeF1.name)
    register(SelfCritique, name=SelfCritique.name)
