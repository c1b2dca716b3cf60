"""Sentences cut where sentences end (not at abbreviations, initials, decimals, quotes, names with dots);
loops told; the part of an answer that answers."""

import pytest

from kcard_core.text import (answering_part, complete_sentences, copied, labels, looped, repeats, sentences,
                             shares_a_word, unlabelled)


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
    ("If loads() receives invalid UTF-8, orjson.JSONDecodeError is raised. Set option=orjson.OPT_UTC_Z.",
     ["If loads() receives invalid UTF-8, orjson.JSONDecodeError is raised.", "Set option=orjson.OPT_UTC_Z."]),
    ("版本很好。我们走。", ["版本很好。", "我们走。"]),
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


@pytest.mark.parametrize("text, loops", [
    ("2" + "0" * 46, True),
    ("Profiles › Overrides: " * 6 + "Profiles › Over", True),
    ("ffffffff", False),  # short: an answer, not a loop
    ("the limit rose from 63 to 1000000 jobs", False),
    ("3.1.0 (2024-10-24): 3.1.0 (2024-10-24)", False),  # said twice, not over and over
])
def test_looped_tells_a_reply_that_could_not_end(text, loops):
    assert looped(text) is loops


@pytest.mark.parametrize("reply, copies", [
    ("Changes from 3.1 to 4.0: API change: applications that call mp_set_memory_functions must", True),
    ("changes FROM 3.1 to 4.0:  API change: applications that call\nmp_set_memory_functions must", True),
    ("4.0: applications that call mp_set_memory_functions must first call the new function", True),  # words left out
    ("Release 4.0: API change: applications that call mp_set_memory_functions must first", True),  # a word before
    ("mpfr_mp_memory_cleanup", False),  # a span: what an answer is
    ("Applications must first call the new function mpfr_mp_memory_cleanup in every thread", False),  # not word for word
])
def test_copied_tells_a_reply_that_copies_the_knowledge_out(reply, copies):
    knowledge = ("Changes from 3.1 to 4.0: API change: applications that call mp_set_memory_functions must first "
                 "call the new function mpfr_mp_memory_cleanup in all threads.")
    assert copied(reply, knowledge) is copies


@pytest.mark.parametrize("answer, question, part", [
    ("3.4.0 (2024-10-08)", "In which release was the CLI added?", "3.4.0"),  # a closing aside goes
    ("bison (closes: #943648).", "Which build dependency was added?", "bison"),
    ("FTP (File Transfer Protocol)", "What does FTP stand for?", "File Transfer Protocol"),  # all the rest asked
    ("1: An error occurred.", "Which exit status means that an error occurred?", "1"),  # "A: B", B asked
    ("1.20: Changes in 1.20: TLS 1.3.", "Which TLS version does 1.20 support?", "Changes in 1.20: TLS 1.3"),
    ("2.27.1 (2017-12-05)", "When was 2.27.1 released?", "2017-12-05"),
    ("Bill Clinton", "Who won the 1992 U.S. presidential election?", "Bill Clinton"),  # nothing to drop
    ("xargs(1)", "Which program reads the list?", "xargs(1)"),  # brackets on a word are no aside
    ("Paris (France) (capital)", "What is the capital?", "Paris (France)"),
    ("(2017)", "When?", "(2017)"),  # an aside alone stays
    ("Москва (столица)", "Какой город?", "Москва"),  # any language that writes the marks
    ("“Wolverine distrusts my printer”", "What was the codename of D-Bus 1.8.0?", "Wolverine distrusts my printer"),
    ("`--with-ssl'", "Which configure option enables SSL?", "--with-ssl"),  # quoted whole: what it quotes
    ("„Faust“", "Welches Werk?", "Faust"),
    ("\"a\" and \"b\"", "Which two?", "\"a\" and \"b\""),  # two quotations: kept
    ("it's", "What?", "it's"),  # an apostrophe inside a word
])
def test_the_answering_part_drops_what_the_question_already_says_and_a_closing_aside(answer, question, part):
    assert answering_part(answer, question) == part


@pytest.mark.parametrize("text, question, only_repeats", [
    ("14.0", "Which option did PulseAudio 14.0 add?", True),
    ("PulseAudio 14.0", "Which option did pulseaudio 14.0 add?", True),  # in any case
    ("dereverb", "Which option did PulseAudio 14.0 add?", False),
    ("$$", "What does $$ write?", False),  # no words: it says something
    ("", "Which option?", False),
    ("Москва", "Москва — столица?", True),
])
def test_an_answer_repeats_the_question_when_all_its_words_are_the_questions(text, question, only_repeats):
    assert repeats(text, question) is only_repeats


def test_symbols_are_not_the_questions_words():
    assert answering_part("$$: a literal $", "Which escape writes a literal dollar sign?") == "$$"
    assert answering_part("$$: a literal $", "In Ninja, which escape writes a literal $?") == "$$"
    assert answering_part("$$: a dollar", "What does $$ write?") == "$$: a dollar"  # "$$" says something


RELEASES = ["Version 4.3 (19 Jan 2020)", "D-Bus 1.8.4 (2014-06-10) › Security fix", "ENVIRONMENT › GREP_COLORS",
            "NOTES FOR PATCH SENDERS", "CLI › kcard cache clear", "NOTES › Embedded .xz decompressors"]


@pytest.mark.parametrize("answer, question, kept", [
    ("Version 4.3", "Which make version added the variable?", "4.3"),  # a numbered heading: its number
    ("D-Bus 1.8.4", "Which D-Bus release fixed it?", "1.8.4"),
    ("ENVIRONMENT › GREP_COLORS", "Which environment variable sets the colours?", "GREP_COLORS"),  # a level
    ("ENVIRONMENT › GREP_COLORS:", "Which variable sets the colours?", "ENVIRONMENT › GREP_COLORS"),
    ("CLI › kcard cache clear", "Which kcard command of the CLI clears the cache?", "kcard cache clear"),  # a name
    ("NOTES › Embedded .xz decompressors", "Which NOTES part is about embedded .xz decompressors?",
     "Embedded .xz decompressors"),  # never the last level
    ("NOTES FOR PATCH SENDERS", "Under which section of the patch man page is -Np1 recommended?",
     "NOTES FOR PATCH SENDERS"),
    ("Version 4.3", "Which option did 4.3 add?", "Version 4.3"),  # only words without a digit go
    ("Arbroch Haven 2", "In which village is the Arbroch station?", "Arbroch Haven 2"),  # prose: in no heading
])
def test_an_answer_standing_in_a_heading_loses_the_label_words_the_question_says(answer, question, kept):
    assert unlabelled(answer, question, RELEASES) == kept


def test_an_answer_is_unlabelled_only_under_headings():
    assert unlabelled(" Version 4.3 ", "Which version?", []) == "Version 4.3"
    assert unlabelled("Версия 4.3", "Какая версия?", ["Версия 4.3 (2020)"]) == "4.3"  # any language


def test_labels_are_a_paths_first_level_and_its_numbered_levels_numbers():
    assert labels(["pic-21.html › 21. PIC Reference › 21.2. Semi-Formal Grammar", "pic-21.html › 21. PIC Reference",
                   "5.1 Functions › 'a (X)'"]) == (
        "pic-21.html", "5.1 Functions", "21", "21.", "21.2", "21.2.", "5.1", "5.1.")
    assert labels(["Release 2.1 (May 2020)"]) == ("Release 2.1 (May 2020)",)  # a number inside a title is no label
    assert labels(["NEWS › 1.2.1 - 2025-10-26", "1 Intro"], titles=False) == ("1", "1.")  # nor a release's number


def test_shares_a_word_tells_an_answer_with_any_word_of_the_knowledge():
    knowledge = "Changes from versions 4.1.* to version 4.2.0:"
    assert shares_a_word("4.1.0 to 4.2.0.", knowledge)  # "to" stands in it
    assert not shares_a_word("2.1.0", knowledge) and not shares_a_word("", knowledge)
    assert shares_a_word("CHANGES", knowledge)  # case aside
