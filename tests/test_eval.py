"""`kcard eval`: metrics, data set parsing, the loop on a fake chain, and a real run on three questions."""

import json
import subprocess
import sys

import pytest

from kcard_core.errors import KcardError
from kcard_core.evaluation.datasets import load_dataset
from kcard_core.evaluation.metrics import contains_answer, exact_match
from kcard_core.evaluation.run import evaluate, summarise
from kcard_core.text import choose_option, f1, named_option, normalize, parse_options, split_options
from kcard_core.trace import Trace


def test_squad_normalisation_exact_match_and_f1():
    assert normalize("The  Beatles!") == "beatles"
    assert exact_match("the Mike D. Rogers", ["Mike D. Rogers"]) == 1.0
    assert exact_match("Mike Rogers", ["Mike D. Rogers"]) == 0.0
    assert f1("Mike Rogers", ["Mike D. Rogers"]) == pytest.approx(2 * (1.0 * 2 / 3) / (1.0 + 2 / 3))
    assert f1("", ["x"]) == 0.0 and f1("anything", ["Paris", "anything"]) == 1.0


def test_popqa_accuracy_is_alias_substring():
    assert contains_answer("It is Salt Lake City, of course", ["SLC", "salt lake city"]) == 1.0
    assert contains_answer("Provo", ["Salt Lake City"]) == 0.0


@pytest.mark.parametrize("prediction, chosen", [
    ("B", "B"), ("B. David Trone", "B"), ("(A)", "A"), ("David Trone won the race.", "B"),
    ("Neil", "A"),  # a part of a name still picks its option
    ("Mike D. Rogers", "C"),  # an initial is not an option label
    ("I do not know", None), ("", None),
])
def test_choose_option(prediction, chosen):
    options = {"A": "Neil Parrott", "B": "David Trone", "C": "Mike D. Rogers", "D": "N/A"}
    assert choose_option(prediction, options) == chosen


def test_options_with_initials_repeats_and_na():
    assert parse_options("A. Mike D. Rogers B. Kathy Warner-Stanton", 2) == {
        "A": "Mike D. Rogers", "B": "Kathy Warner-Stanton"}
    assert parse_options("A. Tom Sherman B. Chris Sununu C. N/A D. Tom Sherman", 4)["D"] == "Tom Sherman"


def test_the_real_data_sets_parse():
    for name, count in (("midterm-openbook", 505), ("midterm-2way", 505), ("midterm-4way", 505)):
        dataset = load_dataset(name)
        assert len(dataset.examples) == count and len(dataset.demos) == 5
    four = load_dataset("midterm-4way")
    assert all(len(e.options) == 4 and e.label in e.options for e in four.examples)
    popqa = load_dataset("popqa")
    assert len(popqa.demos) == 16 and len(popqa.examples) == 1000 - 16  # one demo per relation, held out
    assert {e.meta["relation"] for e in popqa.demos} == {e.meta["relation"] for e in popqa.examples}


def test_own_jsonl_file_and_clear_errors(tmp_path):
    own = tmp_path / "mine.jsonl"
    own.write_text('{"question": "Capital of France?", "answers": ["Paris"]}\n{"question": "2+2?", "answers": 4}\n')
    dataset = load_dataset(str(own))
    assert [e.answers for e in dataset.examples] == [["Paris"], ["4"]]
    (tmp_path / "bad.jsonl").write_text('{"question": "no answers"}\n')
    with pytest.raises(KcardError, match="bad.jsonl:1: need a JSON object"):
        load_dataset(str(tmp_path / "bad.jsonl"))
    with pytest.raises(KcardError, match="unknown data set"):
        load_dataset("squad")
    with pytest.raises(KcardError, match="pass --data"):
        load_dataset("popqa", tmp_path)


class ScriptedChain:
    """Answers from a dict; the loop needs only invoke()."""

    def __init__(self, answers):
        self.answers = answers

    def invoke(self, question):
        answer = self.answers.get(question.split(" Options:")[0], "")
        return {"question": question, "answer": answer, "trace": Trace(mode="scripted", question=question)}


def test_evaluate_scores_writes_and_groups(tmp_path):
    popqa = load_dataset("popqa")
    first, second = popqa.examples[:2]
    chain = ScriptedChain({first.question: f"surely {first.answers[0]}", second.question: "no idea"})
    result = evaluate(popqa, chain, "scripted", limit=2, out_dir=tmp_path, progress=False)
    assert result["metrics"]["accuracy"] == 50.0 and result["metrics"]["count"] == 2
    assert sum(group["count"] for group in result["metrics"]["by_relation"].values()) == 2
    rows = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert [row["scores"]["accuracy"] for row in rows] == [1.0, 0.0] and rows[0]["trace"]["mode"] == "scripted"
    assert json.loads((tmp_path / "results.json").read_text())["method"] == "scripted"

    four = load_dataset("midterm-4way")
    item = four.examples[0]
    result = evaluate(four, ScriptedChain({item.question: item.answers[0]}), "scripted", limit=1, progress=False)
    assert result["metrics"]["accuracy"] == 100.0


def test_summarise_means_are_percentages():
    records = [{"scores": {"em": 1.0, "f1": 0.5, "chosen": "A"}, "meta": {}},
               {"scores": {"em": 0.0, "f1": 0.25, "chosen": None}, "meta": {}}]
    assert summarise(records) == {"em": 50.0, "f1": 37.5, "count": 2}


def test_method_suffixes_switch_on_revise_and_ensemble(monkeypatch):
    import kcard_core.chains
    from kcard_core.evaluation.run import chain_for

    monkeypatch.setattr(kcard_core.chains, "build_chain", lambda mode, **options: (mode, options))
    dataset = load_dataset("midterm-openbook")
    mode, options = chain_for("top-down-auto+ensemble+revise", dataset)
    assert mode == "top-down-auto" and options["ensemble"] and options["revise"] == "knowledge-f1"
    mode, options = chain_for("top-down-exp", dataset)
    assert mode == "top-down-exp" and not options["ensemble"] and options["revise"] is None


@pytest.mark.slow
def test_kcard_eval_for_real_on_three_questions(tmp_path):
    """The base LLM alone and bottom-up with the midterm retrieval card, on the default base LLM, three questions."""
    done = subprocess.run([sys.executable, "-m", "kcard_core", "eval", "midterm-2way", "--mode", "vanilla",
                           "--mode", "bottom-up", "--card", "midterm2022-news", "--limit", "3", "--out",
                           str(tmp_path), "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = {r["method"]: r for r in json.loads(done.stdout)}
    assert set(results) == {"vanilla", "bottom-up"}
    for method, result in results.items():
        assert result["metrics"]["count"] == 3 and 0 <= result["metrics"]["accuracy"] <= 100
        rows = [json.loads(line) for line in (tmp_path / "midterm-2way" / method / "predictions.jsonl").open()]
        assert len(rows) == 3 and all(row["prediction"] is not None for row in rows)
    used = [doc for doc in rows[0]["trace"]["documents"] if doc["used"]]
    assert used and all(doc["card"] == "midterm2022-news" for doc in used)


def test_a_named_option_outweighs_a_misplaced_letter():
    options = {"A": "Jan McDowell", "B": "Beth Van Duyne"}
    assert choose_option("A. Beth Van Duyne", options) == "B"  # small models write "A." by habit
    assert choose_option("A. Jan McDowell; B. Beth Van Duyne.", options) == "A"  # both named: the letter
    assert choose_option("John Smith Jr.", {"A": "John Smith", "B": "John Smith Jr."}) == "B"


def test_named_option_reads_names_not_letters():
    options = {"A": "Mike D. Rogers", "B": "Lin Veasey"}
    assert named_option("Mike Rogers", options) == "A"  # the middle initial left out
    assert named_option("Lin Veasey won the seat.", options) == "B"
    assert named_option("A", options) is None and named_option("Nobody", options) is None


def test_split_options_reads_kcards_own_format_only():
    assert split_options("Who won? Options: A. J. D. Vance; B. Bob Healey Jr..") == (
        "Who won?", {"A": "J. D. Vance", "B": "Bob Healey Jr."})
    assert split_options("Who won? Options: see below") == ("Who won? Options: see below", {})
    assert split_options("Who won?") == ("Who won?", {})
