"""Sentences are cut where sentences end: not at abbreviations, initials, decimals or inside quotes."""

import pytest

from kcard_core.errors import KcardError
from kcard_core.text import complete_sentences, read_corpus, sentences


@pytest.mark.parametrize("text, expected", [
    ("In the Idaho senate race in the 2022 U.S. midterm elections, Mike Crapo defeated David Roth. He won.",
     ["In the Idaho senate race in the 2022 U.S. midterm elections, Mike Crapo defeated David Roth.", "He won."]),
    ("Mike D. Rogers won the race. He was re-elected.", ["Mike D. Rogers won the race.", "He was re-elected."]),
    ("Dr. Smith lives on St. James St. in London. He is a doctor.",
     ["Dr. Smith lives on St. James St. in London.", "He is a doctor."]),
    ("The population grew by 3.5 percent. It was 4.2 million.",
     ["The population grew by 3.5 percent.", "It was 4.2 million."]),
    ('He said "It is over." Then he left.', ['He said "It is over."', "Then he left."]),
    ("Sen. Raphael Warnock defeated Herschel Walker. Gov. Brian Kemp won too.",
     ["Sen. Raphael Warnock defeated Herschel Walker.", "Gov. Brian Kemp won too."]),
])
def test_sentences_end_only_where_sentences_end(text, expected):
    assert sentences(text) == expected


def test_a_cut_document_drops_only_its_unfinished_last_sentence():
    assert complete_sentences("Crapo won in the U.S. Senate race.  He beat David Roth by a") == \
        "Crapo won in the U.S. Senate race."
    assert complete_sentences("Done.\nAll done!") == "Done. All done!"


def test_a_document_that_is_one_unfinished_sentence_keeps_the_name_at_its_end():
    cut = "In the Idaho senate race in the 2022 U.S. midterm elections, Mike Crapo defeated"
    assert complete_sentences(cut) == cut


@pytest.mark.parametrize("format, text, expected", [
    ("auto", "One fact.\nTwo fact.\n", ["One fact.", "Two fact."]),
    ("auto", "A para\nwrapped.\n\n  \nB para.", ["A para wrapped.", "B para."]),
    ("paragraphs", "One fact.\nTwo fact.\n", ["One fact. Two fact."]),
    ("lines", "A\n\nB\n", ["A", "B"]),
])
def test_read_corpus_formats(tmp_path, format, text, expected):
    path = tmp_path / "corpus.txt"
    path.write_text(text)
    assert read_corpus(path, format) == expected


def test_read_corpus_jsonl_and_its_errors(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"text": "a"}\n\n{"text": "b  c"}\n')
    assert read_corpus(path) == ["a", "b c"]
    path.write_text('{"text": "a"}\n{"body": "b"}\n')
    with pytest.raises(KcardError, match="line 2: expected a JSON object"):
        read_corpus(path)
    (tmp_path / "empty.txt").write_text("\n \n")
    with pytest.raises(KcardError, match="holds no text"):
        read_corpus(tmp_path / "empty.txt")
    with pytest.raises(KcardError, match="corpus format 'xml'"):
        read_corpus(path, "xml")


def test_corpus_jsonl_reads_back_as_written(tmp_path):
    from kcard_core.text import corpus_jsonl

    path = tmp_path / "c.jsonl"
    path.write_text(corpus_jsonl(['Café "Dark Sky"', "a\\b"]))
    assert read_corpus(path) == ['Café "Dark Sky"', "a\\b"]
