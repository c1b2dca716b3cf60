"""kcard plugin: facts about countries from the countryinfo package (MIT), as a retrieval card and as
evidence for the factuality selector."""

from pathlib import Path

from kcard_core.cards import Card
from kcard_core.hookspecs import hookimpl


def _get(country, attribute):
    try:
        return getattr(country, attribute)()
    except Exception:  # countryinfo lacks some fields for some territories
        return None


def country_facts() -> list[str]:
    """One short passage per country."""
    from countryinfo import all_countries

    countries = all_countries()
    names = {(_get(c, "iso") or {}).get("alpha3"): _get(c, "name") for c in countries}
    passages = []
    for country in countries:
        name = (_get(country, "name") or "").title()
        if not name:
            continue
        facts = [f"{name} is a country in {_get(country, 'subregion') or _get(country, 'region') or 'the world'}."]
        if _get(country, "capital"):
            facts.append(f"The capital of {name} is {_get(country, 'capital')}.")
        if _get(country, "population"):
            facts.append(f"{name} has a population of about {_get(country, 'population'):,}.")
        if _get(country, "languages"):
            facts.append(f"Language codes spoken in {name}: {', '.join(_get(country, 'languages'))}.")
        borders = [names.get(code, code).title() for code in _get(country, "borders") or [] if names.get(code, code)]
        if borders:
            facts.append(f"{name} borders {', '.join(borders)}.")
        if _get(country, "demonym"):
            facts.append(f"People from {name} are called {_get(country, 'demonym')}.")
        passages.append(" ".join(facts))
    return passages


def country_triples() -> list[tuple[str, str, str]]:
    """(country, relation, value) for capitals, regions, borders, languages and demonyms: the
    knowledge graph of the `countries-kg` card."""
    from countryinfo import all_countries

    countries = all_countries()
    names = {(_get(c, "iso") or {}).get("alpha3"): (_get(c, "name") or "").title() for c in countries}
    triples = []
    for country in countries:
        name = (_get(country, "name") or "").title()
        if not name:
            continue
        for relation, attribute in (("has_capital", "capital"), ("is_in", "subregion"),
                                    ("is_in_region", "region"), ("has_demonym", "demonym")):
            value = _get(country, attribute)
            if isinstance(value, str) and value.strip():  # a few territories hold lists or nothing
                triples.append((name, relation, value.strip()))
        triples += [(name, "borders", names[code]) for code in _get(country, "borders") or [] if names.get(code)]
    return triples


@hookimpl
def register_cards(register):
    register(Card.from_manifest(Path(__file__).with_name("card.toml")))
    register(Card.from_manifest(Path(__file__).with_name("kg.toml")))


@hookimpl
def register_evidence(register):
    register("countries", country_facts)
