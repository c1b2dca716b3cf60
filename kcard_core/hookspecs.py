"""The hooks a kcard plugin can implement. The hooks a plugin implements say what it is.

How they are called (kcard_core.plugins.Registry): through pluggy's ``pm.hook``, one plugin at a
time (a subset hook caller per plugin), so that a plugin whose implementation raises is reported
with its error and skipped while every other plugin's implementation still runs
(``KCARD_STRICT_PLUGINS=1`` re-raises instead). kcard's own built-ins are a plugin too
(kcard_core.default_plugins, registered first), so a plugin may override nothing silently: a name
registered twice keeps the first and warns. The registration hooks run once per process, in this
order: backends, selectors, readers, evidence, utilities, popularity, card types, cards; ``register_commands``
runs when the command line starts. Each receives ``register`` and returns nothing.
``KCARD_TRACE_PLUGINS=1`` logs every hook call and its result on stderr (pluggy's hook-call tracing).
"""

import pluggy

hookspec = pluggy.HookspecMarker("kcard")
hookimpl = pluggy.HookimplMarker("kcard")


@hookspec
def register_backends(register):
    """Call ``register(backend)`` for each :class:`kcard_core.backends.Backend`."""


@hookspec
def register_selectors(register):
    """Call ``register(factory, name=...)``: ``factory(**options)`` returns a selector."""


@hookspec
def register_readers(register):
    """Call ``register(factory, name=...)``: ``factory(llm, **options)`` returns a
    :class:`kcard_core.readers.Reader` (the answer step); a factory with ``from_spec(spec, llm)`` is
    built from the chain's settings instead."""


@hookspec
def register_evidence(register):
    """Call ``register(name, load)``: ``load()`` returns evidence texts for fact-checking."""


@hookspec
def register_utilities(register):
    """Call ``register(factory, name=...)``: ``factory(**options)`` returns a verify-and-revise utility
    (``score(query, knowledge, response) -> (score, feedback)`` and a ``threshold``; see kcard_core.revise)."""


@hookspec
def register_popularity(register):
    """Call ``register(name, lookup)``: ``lookup(question)`` returns a
    :class:`kcard_core.popularity.Popularity` (the question's subject and its monthly page views) or None."""


@hookspec
def register_card_types(register):
    """Call ``register(name, card_class)`` for each kind of card a manifest may name as its ``type``:
    a :class:`kcard_core.cards.Card` subclass built from the manifest (``card_class(manifest)``).
    Called before ``register_cards``, so a plugin's cards may use another plugin's type."""


@hookspec
def register_cards(register):
    """Call ``register(card)`` for each :class:`kcard_core.cards.Card` this plugin provides."""


@hookspec
def register_commands(cli):
    """Add click commands or groups to the ``kcard`` command-line group ``cli``."""
