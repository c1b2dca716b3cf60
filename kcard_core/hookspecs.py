"""The hooks a kcard plugin can implement. The hooks a plugin implements say what it is."""

import pluggy

hookspec = pluggy.HookspecMarker("kcard")
hookimpl = pluggy.HookimplMarker("kcard")


@hookspec
def register_cards(register):
    """Call ``register(card)`` for each :class:`kcard_core.cards.Card` this plugin provides."""


@hookspec
def register_selectors(register):
    """Call ``register(factory, name=...)``: ``factory(**options)`` returns a selector."""


@hookspec
def register_backends(register):
    """Call ``register(backend)`` for each :class:`kcard_core.backends.Backend`."""


@hookspec
def register_evidence(register):
    """Call ``register(name, load)``: ``load()`` returns evidence texts for fact-checking."""


@hookspec
def register_popularity(register):
    """Call ``register(name, lookup)``: ``lookup(question)`` returns a
    :class:`kcard_core.popularity.Popularity` (the question's subject and its monthly page views) or None."""


@hookspec
def register_utilities(register):
    """Call ``register(factory, name=...)``: ``factory(**options)`` returns a verify-and-revise utility
    (``score(query, knowledge, response) -> (score, feedback)`` and a ``threshold``; see kcard_core.revise)."""


@hookspec
def register_commands(cli):
    """Add click commands or groups to the ``kcard`` command-line group ``cli``."""
