"""The countries evidence corpus, and the factuality selector using it through the plugin system."""

from langchain_core.documents import Document

from kcard_core.plugins import load_registry
from kcard_card_countries import country_facts


def test_corpus_has_a_passage_per_country():
    passages = country_facts()
    assert len(passages) > 200
    australia = next(p for p in passages if p.startswith("Australia "))
    assert "The capital of Australia is Canberra." in australia


def test_factuality_prefers_the_document_the_evidence_supports():
    registry = load_registry(only=["kcard-card-countries", "kcard-selectors"])
    assert "countries" in registry.evidence
    selector = registry.selector("factuality", evidence=registry.evidence)
    docs = [Document(page_content=text, metadata={"id": str(i)}) for i, text in enumerate(
        ["The capital of Australia is Canberra.", "The capital of Australia is Sydney, its largest city."])]
    right, wrong = selector.score_documents(docs, "What is the capital of Australia?")
    # the evidence is the supporting sentence with the one before it (kcard_core.retrieval.windows)
    assert right.metadata["factuality"]["evidence"].endswith("The capital of Australia is Canberra.")
    assert right.metadata["scores"]["factuality"] > wrong.metadata["scores"]["factuality"]


def test_countries_card_retrieves_facts():
    card = load_registry(only=["kcard-card-countries"]).card("countries")
    docs = card.generate("What is the capital of Australia?", n=1)
    assert "The capital of Australia is Canberra." in docs[0].page_content
