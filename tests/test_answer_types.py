"""The type of answer a question asks for, and the knowledge's spans of that type."""

import pytest

from kcard_selectors.answer_types import answer_type, of_type, runs_on, settled, typed_spans, whole


@pytest.mark.parametrize("question, kind", [
    ("How many bells are in the tower of Tarnby Abbey?", "count"),
    ("For how many years did the cat live there?", "count"),
    ("How long is the Brackenmoor Railway?", "measure"),
    ("How much does the dome weigh?", "measure"),
    ("How thick is the curtain wall?", "measure"),
    ("For how much did the trust buy the pier?", "price"),
    ("How much did the new organ cost?", "price"),
    ("In which year was the abbey founded?", "year"),
    ("When did passenger trains begin?", "year"),
    ("Who built the locomotive Puffin?", "name"),
    ("To whom were the lands sold?", "name"),
    ("What is the night train with lanterns called?", "title"),
    ("Which port does the railway start from?", "title"),
    ("What was the name of the ship of Kelderwick's founder?", "title"),
    ("At what time did the mill bell ring?", "time"),
    ("In which month does the museum hold the Plough Supper?", "month"),
    ("Where was the dugout canoe found?", "place"),
    ("When is the night train run?", None),  # a season as likely as a year
    ("What did the flood sweep away?", None),
])
def test_the_type_comes_from_the_question_words(question, kind):
    assert answer_type(question) == kind


def test_the_spans_of_the_type_in_the_knowledge():
    tower = "The abbey church was finished in 1187. Its tower is 41 metres tall and holds six bells."
    assert typed_spans("How many bells are in the tower?", tower) == ["six"]
    assert typed_spans("How tall is the tower?", tower) == ["41 metres"]
    # a word may qualify the unit; of several measures, those followed by the question's sense
    light = "The tower is 38 metres tall. Its light can be seen from twenty-two nautical miles away."
    assert typed_spans("From how far away can the light be seen?", light) == ["twenty-two nautical miles"]
    assert typed_spans("How tall is the tower?", light) == ["38 metres"]
    assert typed_spans("How much does the bell weigh?", light) == []  # a length is no weight
    dome = "Its telescope has a lens 28 inches across; the dome weighs 40 tonnes."
    assert typed_spans("How much does the dome weigh?", dome) == typed_spans("How heavy is it?", dome) == ["40 tonnes"]
    assert typed_spans("How wide is the lens?", dome) == ["28 inches"]
    wall = "The keep is 30 metres tall and its curtain wall nine feet thick."
    assert typed_spans("How thick is the curtain wall?", wall) == ["nine feet"]
    # a sum of money in figures or words, never a year beside it
    sold = "The pier was bought in 2004 for a single pound; its repair in 2011 cost £3 million and twelve guineas."
    assert typed_spans("For how much was the pier bought?", sold) == ["a single pound", "£3 million", "twelve guineas"]
    bell = "The mill bell, cast in 1802, rang at half past five every morning; the last shift ended at 9 pm."
    assert typed_spans("At what time did the mill bell ring?", bell) == ["half past five", "9 pm"]
    assert typed_spans("In which year was the church finished?", tower) == ["1187"]
    # a count of a unit is the number before it; without the counted word, numbers that are not years or measures
    assert typed_spans("For how many years did it live?", "It lived there for nineteen years.") == ["nineteen"]
    assert typed_spans("How many arches are there?", "Built in 1868, it has nine, 30 metres high.") == ["nine"]
    # names the question does not hold, without the words that start a sentence
    puffin = "The railway's oldest locomotive, named Puffin, was built in 1867 at the works of Corran and Sons."
    assert typed_spans("Who built the locomotive Puffin?", puffin) == ["Corran and Sons"]
    assert typed_spans("What is the locomotive called?", puffin) == ["Puffin"]


def test_months_and_places():
    supper = "Each February the museum holds the Plough Supper, at which a loaf called the Ulverby Wheel is shared."
    assert typed_spans("In which month does the museum hold the Plough Supper?", supper) == ["February"]
    # the places of the sentence closest to the question, those right after its words first
    flood = ("The museum opened in 1902 in the old corn exchange. During the flood of 1947 the water in the lower "
             "hall rose to four feet, and the staff carried the ledgers to the clock loft.")
    assert typed_spans("Where did the staff carry the ledgers during the flood?", flood) == ["the clock loft"]
    assert typed_spans("Where did the water rise?", flood) == ["the lower hall rose"]  # a phrase ends at a preposition
    assert typed_spans("Where did the museum open?", flood) == ["the old corn exchange"]
    war = "During the war the traders moved to the open ground of Tanner's Field, and back in 1946."
    assert typed_spans("Where did the traders move during the war?", war) == ["the open ground of Tanner's Field"]
    assert typed_spans("Where did the choir sing?", flood) == []  # no sentence says anything of it


def test_who_did_it_as_well_where_the_closest_sentence_names_nobody():
    tweed = ("Jonah Pell built the mill in 1790. Its famous tweed, Tenley Grey, was first woven in 1824 and worn by "
             "the county's postmen for a century.")
    assert typed_spans("Who wore the Tenley Grey tweed for a century?", tweed) == [
        "Jonah Pell", "the county's postmen"]
    assert typed_spans("Who wore the Tenley Grey tweed?", tweed.split(". ")[1]) == ["the county's postmen"]
    assert typed_spans("Who built the mill?", tweed) == ["Jonah Pell", "Tenley Grey"]  # every name, as before
    # where the closest sentence names someone the question does not, every such name, as before
    assert typed_spans("Who wore the tweed?", "Jonah Pell built the mill. The tweed was worn by Ann Roe.") == [
        "Jonah Pell", "Ann Roe"]


@pytest.mark.parametrize("question, knowledge, spans", [
    # after the thing asked which of, a few small words between; not the name that qualifies it
    ("Which firm made the telescope?", "It was made in 1889 by the Glasgow firm of Ardrie and Vane.", ["Ardrie and Vane"]),
    ("Which market town is near the abbey?", "It lies north of the market town of Selbridge, by the river Lowen.",
     ["Selbridge"]),
    ("Which charity runs it?", "In 2015 it passed to a charity, the Tavel Valley Heritage Trust.",
     ["Tavel Valley Heritage Trust"]),
    # before ", the thing"; holding the thing's word; after "called", "named" or "known as"
    ("What was the name of the ship of Kelderwick's founder?",
     "The museum holds the figurehead of the Grey Heron, the ship of the town's founder, Ada Morrane.", ["Grey Heron"]),
    ("In which hills does the river rise?", "The Sabre rises in the Ellow Hills.", ["Ellow Hills"]),
    ("What is the night train with lanterns called?",
     "Every August the railway runs a night train with lanterns, known as the Glowworm Express.", ["Glowworm Express"]),
    ("What is the largest pond in the garden called?",
     "The largest pond is the Mirror Pond, home to two swans named Hollis and Wren.", ["Mirror Pond"]),
    # one that holds the thing's own word wins over one after "called"
    ("Which brewery brews the ale?", "The bar is called the Green Room and serves an ale brewed by the Hartsmere "
     "Brewery.", ["Hartsmere Brewery"]),
    # beside a word of the thing's kind: a fell is a hill, a schooner a ship, a firm a company
    ("On which hill does the observatory stand?", "It stands on the summit of Scarrow Fell.", ["Scarrow Fell"]),
    ("Which ship was wrecked?", "In 1881 Ellen Reive saved nine sailors from the wrecked schooner Kittiwake.",
     ["Kittiwake"]),
    ("Which company made the engine?", "A steam engine from the Leeds firm of Hattersley and Crane took over.",
     ["Hattersley and Crane"]),
    # no title beside the thing: nothing to ask again for
    ("On which hill does the observatory stand?", "It stands on the summit of the highest fell.", []),
])
def test_the_title_of_the_thing_asked_for(question, knowledge, spans):
    assert typed_spans(question, knowledge) == spans


def test_a_title_whose_words_the_question_holds_apart():
    day = "Each May the society holds Mill Day, when visitors may climb to the cap."
    assert typed_spans("What is the day the Saltholme Mill Society holds each May called?", day) == ["Mill Day"]
    # a name the question holds as it stands is no answer
    assert typed_spans("What is Mill Day called?", day) == []


def test_a_part_of_a_name_becomes_the_whole_name_when_the_question_holds_the_rest():
    bought = "In 1971 the mill was bought by the Saltholme Mill Society, which spent seven years restoring it."
    question = "Which society bought Saltholme Windmill in 1971?"
    assert whole("The Mill Society", question, bought) == "Saltholme Mill Society"
    assert whole("Saltholme Mill Society", question, bought) == "Saltholme Mill Society"
    assert whole("The Mill Society", "Who bought the windmill?", bought) == "The Mill Society"  # "Saltholme" not asked
    assert whole("Ron", "Who won Ron's race?", "Ron Wyden defeated Ron Jones.") == "Ron"  # two names fit
    assert whole("1971", question, bought) == "1971"


def test_an_answer_is_of_the_type_when_it_names_one_of_the_spans():
    assert of_type("Penlowe", ["Harriet Penlowe"]) and of_type("the merchant Walter Greaves", ["Walter Greaves"])
    assert not of_type("1539", ["Walter Greaves"])
    assert not of_type("30 metres above the water", ["nine"]) and not of_type("30 metres", ["412 metres"])
    # a measure is named by its number, not by a word that qualifies its unit
    assert not of_type("38 nautical miles", ["twenty-two nautical miles"])
    assert of_type("twenty-two nautical miles away", ["twenty-two nautical miles"])
    assert of_type("6", ["6"]) and not of_type("60", ["6"])
    assert not of_type("12 thousand", ["eight thousand"]) and of_type("eight thousand books", ["eight thousand"])
    assert of_type("a thousand", ["a thousand"])  # a scale word alone is the number


def test_an_answer_that_says_the_same_words_again_and_again_runs_on():
    assert runs_on("MIS Director MIS Director MIS Director") and runs_on("American American American American")
    assert not runs_on("Ardrie and Vane") and not runs_on("Corran and Sons and Corran and Sons")


def test_an_answer_asked_again_settles_on_a_span_or_on_nothing():
    spans = ["Leeds", "Hattersley and Crane"]
    assert settled("Hattersley and Crane", spans) == "Hattersley and Crane"
    assert settled("General Motors", spans) is None  # names no span: the first answer stands
    assert settled("1887", ["two"]) == "two"  # … unless the knowledge holds one span of the type only
    assert settled("1887", ["two", "two"]) == "two" and settled("1887", ["two", "six"]) is None
    # one that runs on is cut to the span it says most often
    assert settled("The Leeds and Crane and Hattersley and Crane and Hattersley and Crane and Hattersley", spans) == (
        "Hattersley and Crane")
    assert settled("MIS Director MIS Director MIS Director", spans) is None
