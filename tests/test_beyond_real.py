"""The extensions beyond the paper (yes/no ensemble, combined mode, verify-and-revise, the popularity
gate) on the real default base LLM and real first-party cards."""

import json
import subprocess
import sys

import pytest

from kcard_core.chains import build_chain
from kcard_core.chains.prompts import NEED_MORE_TEMPLATES

pytestmark = pytest.mark.slow
QUESTION = "What is the capital of Australia?"


def test_yes_no_ensemble_asks_three_wordings_and_records_the_vote():
    result = build_chain("top-down-auto", cards=["countries", "textbook"], n1=1, ensemble=True).invoke(QUESTION)
    turns = result["trace"].turns
    assert [turn.question for turn in turns[:3]] == list(NEED_MORE_TEMPLATES)
    vote = turns[3]
    assert vote.needs_more == (sum(turn.needs_more is not False for turn in turns[:3]) >= 2)
    assert vote.details["unanimous"] == (len({turn.needs_more is not False for turn in turns[:3]}) == 1)
    assert result["answer"]


def test_combined_mode_pools_the_two_cards_matching_the_need():
    result = build_chain("combined", cards=["countries", "textbook", "computing"], n1=1).invoke(QUESTION)
    trace = result["trace"]
    if trace.turns[0].needs_more is not False:
        pool = trace.turns[1].details["cards"]
        assert len(pool) == 2 and {doc.card for doc in trace.documents.values()} <= set(pool)
        assert any(doc.used for doc in trace.documents.values())
    assert result["answer"]


def test_self_critique_revision_keeps_a_scored_answer():
    result = build_chain("bottom-up", cards=["countries"], n1=1, revise="self-critique").invoke(QUESTION)
    revisions = result["trace"].revisions
    assert 1 <= len(revisions) <= 3 and all(0 <= r.score <= 1 for r in revisions)
    assert result["answer"] == max(revisions, key=lambda r: r.score).response
    assert "Canberra" in result["answer"]  # what the countries card knows


def test_popularity_gate_sends_only_the_rare_subject_to_the_cards(tmp_path):
    thresholds = tmp_path / "thresholds.json"
    thresholds.write_text(json.dumps({"thresholds": {"capital": 10000, "default": 10000}}))
    for question, consulted in (("What is the capital of Utah?", False),
                                ("What is the capital of Muyinga Province?", True)):
        done = subprocess.run([sys.executable, "-m", "kcard_core", "ask", question, "--gate", str(thresholds),
                               "--card", "countries", "--n1", "1", "--json"], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert data["answer"] and data["trace"]["turns"][0]["cards"] is consulted
        assert data["trace"]["mode"] == ("bottom-up" if consulted else "vanilla")
