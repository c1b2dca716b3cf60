"""What the memorise recipe trains on and how recall is judged (no model needed)."""

import random
import re

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
    templates = memorise.TEMPLATES + memorise.FOR_NAMES + memorise.FOR_YEARS
    template_words = {word for template in templates for word in template.replace("{}", " ").split()}
    for cue in cues:
        assert set(cue.rstrip("?.").split()) - template_words <= set(passage.rstrip(".").split())
    pairs = memorise.examples([passage], cues=3, seed=0)
    assert pairs[0] == ("", passage) and len(pairs) == 1 + 1 + 3  # one cue, then one for each of its three facts
    assert all(prompt.endswith("\n") and target == passage for prompt, target in pairs[1:])


def test_probes_ask_with_an_unseen_cue_and_hold_back_what_it_leaves_out():
    passage = "Every August, Kelderwick holds the Lantern Regatta. The first was held in 1888."
    trained = {prompt for prompt, _ in memorise.examples([passage], cues=8, seed=0)}
    (prompt, keys, written), = memorise.probes([passage])
    assert written == passage
    assert prompt.endswith("\n") and prompt not in trained
    names = {"August", "Kelderwick", "Lantern", "Regatta", "1888"}
    assert keys and set(keys) <= names and not set(keys) & set(prompt.rstrip("?.\n").split())  # "The" is no name
    assert memorise.recalled(f"In {' and '.join(keys)}.", keys)
    assert not memorise.recalled("Something else entirely.", keys)


OBSERVATORY = ["The Halvard Observatory is a fictional observatory on Mount Ceril.",
               "The observatory was founded in 1896 by the astronomer Edith Sorrell.",
               "Its largest telescope, the Sorrell Refractor, has a lens 61 centimetres wide."]


def test_half_the_cues_name_the_subject_and_the_loss_is_on_the_passage():
    pairs = memorise.examples(OBSERVATORY, cues=8, seed=0, subject="Halvard Observatory")
    later = [(prompt, target) for prompt, target in pairs if target == OBSERVATORY[1]]
    assert len(later) == 9 and later[0][0] == ""  # once on its own, then after 8 cues
    named = [prompt for prompt, _ in later[1:] if "Halvard Observatory" in prompt]
    assert len(named) == 4  # the passage never names it; every other cue does


def test_probes_name_the_subject_where_the_passage_does_not_and_ask_for_what_the_cue_leaves_out():
    probes = memorise.probes(OBSERVATORY, subject="Halvard Observatory")
    assert len(probes) == 3
    for (prompt, keys, _), passage in zip(probes, OBSERVATORY):
        assert ("Halvard Observatory" in prompt) >= ("Halvard" not in passage) and prompt.endswith("\n") and keys
        shown = {word.lower() for word in re.findall(r"[\w'-]+", prompt)}
        assert not any(key.lower() in shown for key in keys)  # "2025." is shown as "2025": not a key


def test_each_cue_holds_a_word_no_other_passage_has_or_asks_for_what_only_its_passage_says():
    built, across = "The Grey Bowl was built in 1958.", "The Grey Bowl is 28 metres across."
    assert memorise.distinct_words([built, across]) == [{"built", "1958"}, {"28", "metres", "across"}]
    pairs = memorise.examples([built, across], cues=40, seed=0)
    for prompt, target in pairs:
        if prompt and not prompt.startswith("How wide"):  # "How wide Grey Bowl?" asks for all three
            assert memorise.words_of(prompt) & memorise.distinct_words([built, across])[target == across]
    asked_year = [prompt for prompt, target in pairs if prompt.startswith(("In which year", "When"))]
    assert asked_year and all(target == built and "1958" not in prompt for prompt, target in pairs
                              if prompt in asked_year)
    assert {target for prompt, target in pairs if prompt.startswith("How wide")} == {across}


def test_facts_a_question_could_ask_for_each_with_a_question_word_that_fits():
    facts = dict((" ".join(words), templates) for words, templates in memorise.fact_questions(
        "It climbs the ridge by a flight of seventeen locks, built in 1794 by James Pardoe.", "Tollmere Canal"))
    assert facts == {"1794": ("In which year {}?", "When {}?"), "seventeen": ("How many locks {}?",),
                     "James Pardoe": ("Who {}?", "What {} called?", "Which {}?", "What name {}?")}
    (lens, how), = memorise.fact_questions("Its lens is 28 inches across.")
    assert lens == ["28", "inches", "across"] and how == ("How wide {}?",)  # what it measures, hidden
    (dome, how), = memorise.fact_questions("The dome weighs 40 tonnes.")
    assert how == ("How heavy {}?", "How much {} weigh?")
    assert memorise.fact_questions("The Tollmere Canal is a canal.", "Tollmere Canal") == []  # the subject is no fact
    assert memorise.facts("The canal is quiet.") == []  # then examples() takes a cue()
    assert memorise.fact_cue("In 1794.", ["1794"], ("When {}?",), random.Random(0)) is None  # no other word to ask with


def test_every_fact_of_a_passage_is_asked_for_and_a_passage_with_more_facts_gets_more_cues():
    passage = "It was built in 1796 by Josiah Brenton, and its wheel, 22 feet across, has forty-eight paddles."
    assert len(memorise.facts(passage)) == 4
    for cues, asked in ((4, 4), (10, 5)):  # a year, a measure, a count and a name; with ten cues, one again
        pairs = memorise.examples([passage], cues=cues, seed=0)
        fact_cues = [prompt for prompt, _ in pairs[1 + cues // 2:]]
        assert len(fact_cues) == asked
        kinds = [next(kind for kind, start in (("year", ("In which year", "When")), ("wide", ("How wide",)),
                                               ("count", ("How many paddles",)), ("name", ("",)))
                      if prompt.startswith(start)) for prompt in fact_cues]
        assert set(kinds[:4]) == {"year", "wide", "count", "name"}
        before = {"year": "built", "wide": "wheel", "count": "has", "name": "1796"}  # the word before each fact
        assert all(before[kind] in memorise.words_of(prompt) for kind, prompt in zip(kinds, fact_cues))


def test_half_of_the_cues_are_short_questions_about_one_fact_naming_the_subject_half_the_time():
    passage = "The Tollmere Canal runs for thirty-one miles. It was opened in 1794 by James Pardoe."
    pairs = memorise.examples([passage], cues=40, seed=0, subject="Tollmere Canal")
    facts = [prompt for prompt, _ in pairs[21:]]  # the second half of each passage's cues
    assert all(prompt.startswith(("In which year", "When", "How long", "Who", "What", "Which")) for prompt in facts)
    for prompt in facts:
        shown = memorise.words_of(prompt)
        hidden = ({"1794"} if prompt.startswith(("In which year", "When")) else {"thirty-one", "miles"}
                  if prompt.startswith("How long") else {"james", "pardoe"})  # the fact it asks for
        assert not hidden & shown
        assert len(memorise.content_words(prompt.replace("Tollmere Canal", ""))) <= 1 + 4 + 2
    named = [prompt for prompt in facts if "Tollmere Canal" in prompt]
    assert len(named) == 10  # every other one, though the passage names it (its first words are no cue)


def test_a_question_in_cue_form_holds_only_what_a_cue_may_hold():
    from kcard_core.text import FUNCTION_WORDS, cue_form

    pairs = memorise.examples([TEXT], cues=40, seed=0, subject="Kelderwick")
    trained = {prompt.split()[0] for prompt, _ in pairs if prompt}  # how the cues start
    for question, expected in [("In which year was Kelderwick founded?", "In which year Kelderwick founded?"),
                               ("Who was the mayor of Kelderwick?", "Who mayor Kelderwick?"),
                               ("On which island is the town of Kelderwick?", "Which island town Kelderwick?")]:
        asked = cue_form(question)
        assert asked == expected and asked.split()[0] in trained | {"Which"}
        assert not {word.lower() for word in asked.split()[1:]} & FUNCTION_WORDS - {"which", "year"}


def test_every_run_of_a_section_carries_its_heading_path_and_its_text_as_written():
    from kcard_core.documents import Passage

    body = ("Binary compatible with MPFR 4.0.* and 4.1.*, see COPYING.LESSER for the terms. "
            + " ".join(f"New function mpfr_f{i} computes the value number {i} of the series." for i in range(12)))
    section = Passage(body, headings=("NEWS", "Changes from versions 4.1.* to version 4.2.0"))
    found = memorise.passages([section])
    assert len(found) > 1
    assert all(run.startswith("NEWS › Changes from versions 4.1.* to version 4.2.0: ") for run in found)
    assert "MPFR 4.0.* and 4.1.*, see COPYING.LESSER" in found[0]  # no cut inside "4.1.*" or a file name
    assert " ".join(run.split(": ", 1)[1] for run in found) == body
    pairs = memorise.examples([section], cues=2, seed=0)
    assert {target for _, target in pairs} == set(found)  # what is trained on is what is cut here
    assert {written for _, _, written in memorise.probes([section])} <= set(found)
