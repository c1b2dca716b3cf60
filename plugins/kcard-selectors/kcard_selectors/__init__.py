"""kcard plugin: the three selectors of the Knowledge Card paper, and the "rules" reader.

Registration must stay cheap (``kcard selectors list`` loads every plugin), so each factory
imports its selector class only when a selector is built.
"""

from kcard_core.hookspecs import hookimpl
from kcard_core.loading import lazy

SELECTORS = {
    "relevance": ("kcard_selectors.relevance:RelevanceSelector",
                  "Relevance: MiniLM cosine between question and document; keeps the top n2."),
    "pruning": ("kcard_selectors.pruning:PruningSelector",
                "Pruning: keeps the sentences closest to the question within a token budget (or an LLM summary)."),
    "factuality": ("kcard_selectors.factuality:FactualitySelector",
                   "Factuality: summary faithfulness + fact-check against evidence; top-k factuality sampling of n3."),
}


@hookimpl
def register_selectors(register):
    for name, (target, doc) in SELECTORS.items():
        register(lazy(target, doc), name=name)


@hookimpl
def register_readers(register):
    register(lazy("kcard_selectors.reader:RulesReader",
                  "The answer steered by English rules on what the question asks for (a year, a count, a name)."),
             name="rules")
