"""The midterm news corpus and the retrieval card over it."""

import json

import pytest

from kcard_card_midterm2022.corpus import news_corpus, races, races_from_midtermqa, training_corpus
from kcard_core.config import data_dir
from kcard_core.plugins import load_registry


def test_every_race_becomes_a_report():
    assert len(races()) == 510
    georgia = next(r for r in races() if r["race"] == "senate race of Georgia")
    assert georgia["winner"] == "Raphael Warnock" and georgia["loser"] == "Herschel Walker"
    assert sum("Raphael Warnock" in report for report in news_corpus()) == 1
    # the training text names every race in three phrasings, the race always before its winner
    georgia_reports = [text for text in training_corpus() if "Raphael Warnock" in text]
    assert len(georgia_reports) == 3
    assert all(text.index("Georgia") < text.index("Raphael Warnock") for text in georgia_reports)


def test_the_shipped_races_are_midtermqas():
    """races.jsonl ships in the package (no query reads a data folder); it is what MidtermQA gives."""
    assert races_from_midtermqa(data_dir() / "midtermqa") == races()


def test_retrieval_card_finds_the_race():
    card = load_registry(only=["kcard-card-midterm2022"]).card("midterm2022-news")
    docs = card.generate("Who won the senate race of Georgia in the 2022 U.S. midterm elections?", n=1)
    assert "Raphael Warnock" in docs[0].page_content


def test_every_training_report_has_a_headline_naming_its_race():
    for text in training_corpus()[:30]:
        headline, report = text.split("\n")
        race = next(r["race"] for r in races() if r["winner"] in report)
        assert race in headline and race in report


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["llama-cpp", "transformers"])
def test_the_lm_card_knows_the_winners(backend):
    """The shipped adapter, on either backend: asked the question, its first document names the winner."""
    registry = load_registry(only=["kcard-card-midterm2022", "kcard-llama-cpp", "kcard-transformers"])
    card = registry.card("midterm2022").with_backend(registry.backend(backend))
    items = json.loads((data_dir() / "midtermqa" / "openbook.json").read_text())["testset"][::101]
    named = [item["answer"] in card.generate(item["question"], n=1)[0].page_content for item in items]
    assert sum(named) >= 4, named  # 5 races; the benchmark measures all of them
