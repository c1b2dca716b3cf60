"""Retrieval indexes are built once: saved into a card package by kcard new card, else into kcard's cache."""

import itertools
import logging
import random

import pytest
from click.testing import CliRunner

from kcard_core.cards import Card
from kcard_core.cli import cli
from kcard_core.documents import Passage, PassageFile, closest_sentences, passages_jsonl
from kcard_core.retrieval import BM25, Postings, QuestionIndex, closest

TEXTS = ["The Quillan lighthouse was built in 1887 by Mara Velt.", "The Quillan ferry sails to Osk twice a day.",
         "Release 2.1 removed the Osk timetable.", ""]


def no_building(monkeypatch):
    def refuse(terms):
        raise AssertionError("the index was built again")

    monkeypatch.setattr(Postings, "build", classmethod(lambda cls, terms: refuse(terms)))


def test_a_saved_index_answers_as_the_built_one(tmp_path, monkeypatch):
    built = QuestionIndex(TEXTS, "Quillan lighthouse")
    built.save(tmp_path / "index.npz")
    no_building(monkeypatch)
    loaded = QuestionIndex.load(tmp_path / "index.npz", TEXTS, subject="Quillan lighthouse")
    for question in ("Who built the lighthouse?", "When was release 2.1?", "How often does the ferry sail?"):
        assert loaded.found(question, 3, 0.3) == built.found(question, 3, 0.3)
    assert loaded.holds("mara velt") and not loaded.holds("velt mara") and loaded.names_subject("Quillan lighthouse?")
    assert (tmp_path / "index.npz").read_bytes() == built.to_bytes()


def test_a_saved_index_of_other_texts_or_words_is_refused(tmp_path, monkeypatch):
    QuestionIndex(TEXTS).save(tmp_path / "index.npz")
    with pytest.raises(ValueError, match="other texts"):
        QuestionIndex.load(tmp_path / "index.npz", TEXTS[:2])
    with pytest.raises(ValueError, match="other texts"):  # unstemmed words: not the index a question needs
        BM25.load(tmp_path / "index.npz", TEXTS)


def test_an_index_is_built_once_per_machine(monkeypatch):
    first = QuestionIndex.cached(TEXTS, subject="Quillan lighthouse")
    no_building(monkeypatch)
    again = QuestionIndex.cached(TEXTS, subject="Quillan lighthouse")  # another process: from kcard's cache
    assert again.found("Who built the lighthouse?") == first.found("Who built the lighthouse?") != []
    with pytest.raises(AssertionError, match="built again"):
        QuestionIndex.cached(TEXTS[:2])  # other texts: another index


def test_an_empty_corpus_finds_nothing():
    assert QuestionIndex([]).scored("anything") == [] and BM25(["", "the"]).scored("the") == []


def test_a_new_card_opens_its_packaged_index_and_reads_passages_when_found(tmp_path, monkeypatch, caplog):
    (tmp_path / "NEWS").write_text("* Release 2.1\n\nThe Osk timetable was removed. Fares rose.\n\n"
                                   "* Release 2.0\n\nThe ferry sails twice a day.\n")
    made = CliRunner().invoke(cli, ["new", "card", "quillan", "--corpus", str(tmp_path / "NEWS"), "--output-dir",
                                    str(tmp_path), "--no-input"])
    assert made.exit_code == 0, made.output
    manifest = tmp_path / "kcard-card-quillan" / "kcard_card_quillan" / "card.toml"
    with monkeypatch.context() as patched:
        no_building(patched)
        card = Card.from_manifest(manifest)
        (text, extra), = card.written("In which release was the Osk timetable removed?", 1, None)
    assert text == "Release 2.1: The Osk timetable was removed."
    assert extra == {"sources": ["NEWS › Release 2.1"], "headed": True}
    assert isinstance(card._built["corpus"], PassageFile)
    monkeypatch.setattr(QuestionIndex, "TOKENS", "stems-0")  # an index an older kcard made: built again, once
    with caplog.at_level(logging.INFO):
        assert Card.from_manifest(manifest).find("ferry") == ["Release 2.0: The ferry sails twice a day."]
    assert "made by another version of kcard; building its index" in caplog.text


def test_a_few_texts_are_ranked_as_an_index_of_them_ranks_them():
    rng = random.Random(7)
    vocabulary = "ferry osk timetable lighthouse quillan release removed sails built 1887 2.1 mara".split()
    texts = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 12))) for _ in range(30)] + [""]
    indexes = (QuestionIndex(texts), QuestionIndex(texts, subject="Quillan ferry"))  # a subject's words weigh less
    for index, _ in itertools.product(indexes, range(40)):
        query = " ".join(rng.sample(vocabulary, rng.randint(1, 4)))
        found = index.found(query, k=len(texts))
        score = {position: value for value, position in found}
        ranked = closest(query, texts, len(texts), index.subject)
        assert [score[position] for position in ranked[:len(found)]] == [value for value, _ in found] != []
        assert ranked[len(found):] == [position for position in range(len(texts)) if position not in score]


def test_passages_under_headings_give_their_closest_sentences_under_the_heading(tmp_path):
    release = Passage("The ferry sails twice a day. The Osk timetable was removed. Fares rose.", "NEWS",
                      ("Release 2.1",))
    older = Passage("The lighthouse opened to visitors.", "NEWS", ("Release 2.0",))
    question = "In which release was the Osk timetable removed?"
    assert closest_sentences(question, [release, older], 1) == [
        Passage("The Osk timetable was removed.", "NEWS", ("Release 2.1",))]
    two = closest_sentences("When did the lighthouse open and the Osk timetable go?", [older, release], 2)
    assert sorted(p.contextual() for p in two) == ["Release 2.0: The lighthouse opened to visitors.",
                                                   "Release 2.1: The Osk timetable was removed."]
    assert closest_sentences(question, [release, older], 0) == [release, older]
    prose = [Passage(release.text), Passage(older.text)]  # no heading path: a sentence may need the one before
    assert closest_sentences(question, prose, 1) == prose

    (tmp_path / "NEWS").write_text("* Release 2.1\n\nThe ferry sails twice a day. The Osk timetable was removed.\n")
    made = CliRunner().invoke(cli, ["new", "card", "quillan", "--corpus", str(tmp_path / "NEWS"), "--output-dir",
                                    str(tmp_path), "--no-input"])
    assert made.exit_code == 0, made.output
    card = Card.from_manifest(tmp_path / "kcard-card-quillan" / "kcard_card_quillan" / "card.toml")
    assert card.manifest.retrieval.sentences == 1
    assert card.written(question, 1, None) == [("Release 2.1: The Osk timetable was removed.",
                                                 {"sources": ["NEWS › Release 2.1"], "headed": True})]


@pytest.mark.parametrize("text, headed", [
    ("* Release 2.1\n\nThe ferry sails twice a day. The Osk timetable was removed.\n", True),
    ("The ferry sails twice a day. The Osk timetable was removed in release 2.1.\n", False),
])
def test_passages_under_headings_are_read_with_the_document_demonstrations(tmp_path, text, headed):
    from langchain_core.language_models.fake import FakeListLLM

    from kcard_core.chains import BottomUp, TopDown
    from kcard_core.chains.prompts import DOCUMENT_EXAMPLES
    from conftest import Tie

    (tmp_path / "NEWS").write_text(text)
    made = CliRunner().invoke(cli, ["new", "card", "quillan", "--corpus", str(tmp_path / "NEWS"), "--output-dir",
                                    str(tmp_path), "--no-input"])
    assert made.exit_code == 0, made.output
    card = Card.from_manifest(tmp_path / "kcard-card-quillan" / "kcard_card_quillan" / "card.toml")
    question = "In which release was the Osk timetable removed?"
    for chain in (BottomUp(FakeListLLM(responses=["2.1"]), [card], [], n1=1),
                  TopDown(FakeListLLM(responses=["Yes", "a timetable", "2.1"]), [card], Tie(), n1=1)):
        trace = chain.invoke(question)["trace"]
        assert trace.headed() is headed and trace.knowledge()
        assert trace.headings() == (["Release 2.1"] if headed else [])
        assert all((example["question"] in trace.prompt) is headed for example in DOCUMENT_EXAMPLES)
        assert trace.prompt.endswith(f"Question: {question}\nAnswer:")


def test_a_passage_file_reads_each_line_when_asked(tmp_path):
    passages = [Passage("Érable — 1887.", "NEWS", ("Release 2", "Notes")), Passage("Plain.")]
    (tmp_path / "p.jsonl").write_text(passages_jsonl(passages).rstrip("\n"), encoding="utf-8")  # no last newline
    read = PassageFile(tmp_path / "p.jsonl")
    assert len(read) == 2 and [read[0], read[1], read[-1]] == [*passages, passages[1]]
    (tmp_path / "empty.jsonl").write_text("")
    assert len(PassageFile(tmp_path / "empty.jsonl")) == 0
