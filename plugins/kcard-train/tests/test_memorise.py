"""What the memorise recipe trains on and how recall is judged (no model needed)."""

import random

from kcard_train import memorise

TEXT = ("Kelderwick was founded in 1742 by the shipwright Ada Morrane. The mayor is Oskar Fenn. "
        + " ".join(f"Filler sentence number {i} adds words to the paragraph." for i in range(8)))


def test_passages_are_whole_sentences_of_bounded_length():
    found = memorise.passages([TEXT, "One line fact about the Grey Heron."])
    assert found[0].startswith("Kelderwick was founded in 1742") and found[-1] == "One line fact about the Grey Heron."
    assert all(len(p.split()) <= memorise.PASSAGE_WORDS for p in found)
    assert " ".join(found[:-1]) == TEXT  # nothing lost, nothing cut mid-sentence


def test_cues_are_question_like_parts_of_the_passage():
    passage = "Ada Morrane founded Kelderwick in 1742 after her ship was wrecked."
    rng = random.Random(0)
    cues = {memorise.cue(passage, rng) for _ in range(20)}
    assert len(cues) > 10  # each pass sees a different cue
    template_words = {word for template in memorise.TEMPLATES for word in template.replace("{}", " ").split()}
    for cue in cues:
        assert set(cue.rstrip("?.").split()) - template_words <= set(passage.rstrip(".").split())
    pairs = memorise.examples([passage], cues=3, seed=0)
    assert pairs[0] == ("", passage) and len(pairs) == 4
    assert all(prompt.endswith("\n") and target == passage for prompt, target in pairs[1:])


def test_probes_ask_with_an_unseen_cue_and_hold_back_what_it_leaves_out():
    passage = "Every August, Kelderwick holds the Lantern Regatta. The first was held in 1888."
    trained = {prompt for prompt, _ in memorise.examples([passage], cues=8, seed=0)}
    (prompt, keys), = memorise.probes([passage])
    assert prompt.endswith("\n") and prompt not in trained
    names = {"August", "Kelderwick", "Lantern", "Regatta", "1888"}
    assert keys and set(keys) <= names and not set(keys) & set(prompt.rstrip("?.\n").split())  # "The" is no name
    assert memorise.recalled(f"In {' and '.join(keys)}.", keys)
    assert not memorise.recalled("Something else entirely.", keys)
