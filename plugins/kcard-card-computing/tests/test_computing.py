"""FOLDOC read from its dictd files, and the computing card's retrieval."""

from kcard_card_computing import clean, dictd_number, foldoc_passages
from kcard_core.plugins import load_registry


def test_dictd_numbers_and_cleaning():
    assert dictd_number("B") == 1 and dictd_number("BA") == 64
    assert clean("<programming, tool> A program that converts {source language} (1995-01-01)") == \
        "A program that converts source language"


def test_every_entry_is_a_passage():
    passages = foldoc_passages()
    assert len(passages) > 10000
    compiler = next(p for p in passages if p.startswith("compiler: "))
    assert "converts another program" in compiler and "{" not in compiler


def test_card_retrieves_a_definition():
    card = load_registry(only=["kcard-card-computing"]).card("computing")
    docs = card.generate("What does a compiler do?", n=2)
    assert any(doc.page_content.startswith("compiler") for doc in docs)
