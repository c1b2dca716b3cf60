"""The memorise recipe's training pairs and recall probes (kcard_train/memorise.py), without a model."""

import re

import pytest

pytest.importorskip("kcard_train")
from kcard_train import memorise  # noqa: E402

OBSERVATORY = ["The Halvard Observatory is a fictional observatory on Mount Ceril.",
               "The observatory was founded in 1896 by the astronomer Edith Sorrell.",
               "Its largest telescope, the Sorrell Refractor, has a lens 61 centimetres wide."]


@pytest.mark.parametrize("first, subject", [
    ("The Halvard Observatory is a fictional observatory on Mount Ceril.", "Halvard Observatory"),
    ("Kelderwick is a fictional harbour town. It was founded in 1742.", "Kelderwick"),
    ("the notes of a meeting held on Monday.", ""),
])
def test_the_subject_is_the_name_the_corpus_opens_with(first, subject):
    assert memorise.topic([first, "More text."]) == subject


def test_half_the_cues_name_the_subject_and_the_loss_is_on_the_passage():
    pairs = memorise.examples(OBSERVATORY, cues=8, seed=0, subject="Halvard Observatory")
    later = [(prompt, target) for prompt, target in pairs if target == OBSERVATORY[1]]
    assert len(later) == 9 and later[0][0] == ""  # once on its own, then after 8 cues
    named = [prompt for prompt, _ in later[1:] if "Halvard Observatory" in prompt]
    assert len(named) == 4  # the passage never names it; every other cue does


def test_probes_name_the_subject_where_the_passage_does_not_and_ask_for_what_the_cue_leaves_out():
    probes = memorise.probes(OBSERVATORY, subject="Halvard Observatory")
    assert len(probes) == 3
    for (prompt, keys), passage in zip(probes, OBSERVATORY):
        assert ("Halvard Observatory" in prompt) >= ("Halvard" not in passage) and prompt.endswith("\n") and keys
        shown = {word.lower() for word in re.findall(r"[\w'-]+", prompt)}
        assert not any(key.lower() in shown for key in keys)  # "2025." is shown as "2025": not a key
