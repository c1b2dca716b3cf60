"""The midterm news corpus and the retrieval card over it."""

from kcard_card_midterm2022.corpus import news_corpus, races, training_corpus
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


def test_retrieval_card_finds_the_race():
    card = load_registry(only=["kcard-card-midterm2022"]).card("midterm2022-news")
    docs = card.generate("Who won the senate race of Georgia in the 2022 U.S. midterm elections?", n=1)
    assert "Raphael Warnock" in docs[0].page_content
