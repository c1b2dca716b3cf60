"""Adaptive activation by popularity: lookup, thresholds fitted by brute force, the gate, the CLI."""

import json
import random

from click.testing import CliRunner

from kcard_core.chains.gate import PopularityGate
from kcard_core.cli import cli
from kcard_core.config import data_dir
from kcard_core.plugins import load_registry
from kcard_core.popularity import ALWAYS, NEVER, Popularity, PopularityTable, best_threshold, calibrate, use_cards
from kcard_core.trace import Trace


def test_lookup_finds_the_longest_subject_and_the_relation():
    table = PopularityTable({"York": 10, "New York": 900, "Utah": 50},
                            {"What is the capital of {}?": "capital"})
    assert table("What is the capital of New York?") == Popularity("New York", 900, "capital")
    assert table("Who lives in York?") == Popularity("York", 10, None)
    assert table("Who wrote Hamlet?") is None


def test_popqa_table_from_the_real_file():
    table = PopularityTable.from_popqa(data_dir() / "popqa" / "dev.jsonl")
    assert table("What is the capital of Utah?") == Popularity("Utah", 238255, "capital")
    assert "popqa" in load_registry(only=["kcard-popularity-popqa"]).popularity


def test_unknown_subjects_consult_cards():
    assert use_cards(None, {"default": NEVER})
    assert not use_cards(Popularity("x", 10, "capital"), {"capital": 5, "default": ALWAYS})
    assert use_cards(Popularity("x", 10, "genre"), {"capital": 5, "default": ALWAYS})


def synthetic_rows(count=400, seed=1):
    """Cards help below 1,000 views (the LLM alone is right only above): the gate should find that."""
    generator = random.Random(seed)
    rows = []
    for _ in range(count):
        views = int(10 ** generator.uniform(0, 6))
        rows.append({"relation": generator.choice(["capital", "genre"]), "views": views,
                     "with": float(generator.random() < 0.6), "without": float(views > 1000)})
    return rows


def test_brute_force_threshold_separates_rare_from_popular():
    threshold = best_threshold(synthetic_rows())
    assert 300 < threshold < 3000


def test_calibrated_gate_beats_never_and_always_at_lower_cost():
    result = calibrate(synthetic_rows(), splits=20)
    held_out = result["held_out"]
    assert held_out["gated"] > max(held_out["never"], held_out["always"])
    assert 20 < held_out["gated_card_share"] < 80
    assert set(result["thresholds"]) == {"capital", "genre", "default"}


class Answers:
    def __init__(self, answer):
        self.answer = answer

    def invoke(self, question, config=None):
        return {"question": question, "answer": self.answer, "trace": Trace(mode=self.answer, question=question)}


def test_gate_routes_by_popularity_and_says_why():
    table = PopularityTable({"Utah": 238255, "Muyinga Province": 205})
    gate = PopularityGate(Answers("with cards"), Answers("alone"), table, {"default": 1000})
    rare = gate.invoke("What is the capital of Muyinga Province?")
    assert rare["answer"] == "with cards" and rare["trace"].turns[0].details["cards"] is True
    popular = gate.invoke("What is the capital of Utah?")
    assert popular["answer"] == "alone" and "238255 views a month: answer alone" in popular["trace"].turns[0].reply


def test_calibrate_command_reads_eval_predictions(tmp_path):
    runs = tmp_path / "runs"
    rows = synthetic_rows(60)
    for method, key in (("bottom-up", "with"), ("vanilla", "without")):
        folder = runs / "popqa" / method
        folder.mkdir(parents=True)
        folder.joinpath("predictions.jsonl").write_text("".join(
            json.dumps({"id": str(i), "scores": {"accuracy": row[key]},
                        "meta": {"relation": row["relation"], "s_pop": row["views"]}}) + "\n"
            for i, row in enumerate(rows)))
    out = tmp_path / "thresholds.json"
    result = CliRunner().invoke(cli, ["calibrate", "popqa", "--runs", str(runs), "--splits", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "gated" in result.output and json.loads(out.read_text())["thresholds"]["default"] > 0
    missing = CliRunner().invoke(cli, ["calibrate", "popqa", "--runs", str(runs), "--with", "top-down-auto"])
    assert missing.exit_code == 1 and "run kcard eval popqa --mode top-down-auto" in missing.output


def test_ask_with_a_gate_answers_popular_subjects_alone(install_fake_plugin, tmp_path):
    from test_properties import PLUGIN

    install_fake_plugin("kcard-fake-world", PLUGIN)
    thresholds = tmp_path / "thresholds.json"
    thresholds.write_text(json.dumps({"thresholds": {"capital": 10000, "default": 10000}}))
    env = {"KCARD_LOAD_PLUGINS": "kcard-fake-world,kcard-popularity-popqa"}
    runner = CliRunner()
    for question, consulted in (("What is the capital of Utah?", False), ("What is the capital of Muyinga Province?", True)):
        result = runner.invoke(cli, ["ask", question, "--gate", str(thresholds), "--json"], env=env)
        assert result.exit_code == 0, result.output
        trace = json.loads(result.output[result.output.index("{"):])["trace"]
        assert trace["turns"][0]["cards"] is consulted
        assert trace["mode"] == ("bottom-up" if consulted else "vanilla")
    bad = runner.invoke(cli, ["ask", "Q?", "--gate", str(thresholds), "--popularity", "nope"], env=env)
    assert bad.exit_code == 1 and "unknown popularity table 'nope'" in bad.output
