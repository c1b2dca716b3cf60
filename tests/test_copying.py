"""Answers as spans of a text (kcard_core.copying) and the span reader that asks for them."""

import numpy as np
import pytest

from kcard_core.copying import GAP, CopyMask, Source, copy_source, copy_span, says, within
from kcard_core.readers import SpanReader
from kcard_core.testing import ReaderTests

END = 0
SOURCE = [5, 6, 7, 8, 6, 9]  # a text's tokens; 6 occurs twice


class Table:
    """A stand-in model over 10 tokens: the logits after the tokens written so far, from a table."""

    def __init__(self, table: dict[tuple[int, ...], dict[int, float]]):
        self.table = table

    def logits(self, written: list[int]) -> np.ndarray:
        logits = np.full(10, -5.0)
        for token, value in self.table.get(tuple(written), {}).items():
            logits[token] = value
        return logits

    def decode(self, mask: CopyMask, max_tokens: int = 8) -> list[int]:
        written: list[int] = []
        while len(written) < max_tokens:
            token = int(np.argmax(mask(written, self.logits(written))))
            if token == END:
                break
            written.append(token)
        return written


def test_the_mask_lets_only_a_continuation_of_the_text_or_an_end_through():
    mask = CopyMask(SOURCE, [END], first=6)
    assert np.isfinite(mask([], np.zeros(10))).nonzero()[0].tolist() == [6]
    assert np.isfinite(mask([6], np.zeros(10))).nonzero()[0].tolist() == [END, 7, 9]  # both 6s continue
    assert np.isfinite(mask([6, 9], np.zeros(10))).nonzero()[0].tolist() == [END]  # the text ends there


def test_the_span_is_the_prefix_likeliest_as_a_whole_answer_of_any_start():
    model = Table({(): {5: 2.0, 8: 1.5, 3: 4.0},  # 3, the likeliest, is not in the text
                   (5,): {6: 3.0, END: 0.0}, (5, 6): {7: 3.0, END: 1.0}, (5, 6, 7): {8: 3.0, END: 0.0},
                   (8,): {END: 4.0, 6: 0.0}})
    span = copy_span(model.logits([]), model.decode, Source(SOURCE), [END], starts=2)
    assert span == [8]  # "8" then an end outscores every prefix of "5 6 7 8 …", which greedy would copy on


def test_an_empty_text_gives_no_span():
    assert copy_span(np.zeros(10), lambda mask: [], Source([]), [END]) == []


class TestSpan(ReaderTests):
    @pytest.fixture
    def factory(self):
        return SpanReader


def test_a_model_that_gives_no_logits_gets_the_prompt_and_the_trace_says_why():
    suite = ReaderTests()
    answer, _, trace = suite.answer(SpanReader, suite.llm())
    assert answer == "the Sabre" and trace.turns[-1].details["why"].endswith("gives no logits to copy with")


def test_a_span_of_white_space_alone_is_no_answer():
    blank = 4  # the space some tokenizers write before a number: " 4" is [blank, 4]
    model = Table({(): {blank: 3.0}, (blank,): {END: 1.0, 5: 2.0}})  # after " 4" nothing is likely
    assert copy_span(model.logits([]), model.decode, Source([blank, 5], blank=frozenset({blank})), [END],
                     starts=1) == [blank, 5]
    assert copy_span(model.logits([]), model.decode, Source([blank, 5]), [END], starts=1) == [blank]


def test_a_span_made_of_the_question_s_own_tokens_is_no_answer():
    vocabulary = {" the": 5, " river": 6, " Sabre": 7, " Which": 8, " river?": 9, " which": 1, " River?": 2,
                  " River": 3, " WHICH": 10, " RIVER": 11, " RIVER?": 12}  # one token a word

    def tokenize(text: str) -> list[int]:
        return [vocabulary[" " + word] for word in text.split()]

    names = {token: word for word, token in vocabulary.items()}

    def text_of(tokens: list[int]) -> str:
        return "".join(names[token] for token in tokens)

    source = copy_source("the river Sabre", tokenize, text_of, "Which river?")
    assert source.tokens == [5, 6, 7] and source.blank == source.said == {8, 9, 1, 2, 10, 12}
    said = copy_source("the river Sabre", tokenize, text_of, "Which river").blank
    assert said == {8, 6, 1, 3, 10, 11}  # the question's words as written, in lower case, with a capital, in capitals
    model = Table({(): {6: 3.0, 7: 2.0}, (6,): {END: 2.0, 7: 0.0}, (7,): {END: 1.0}})  # "river" is likeliest
    assert copy_span(model.logits([]), model.decode, Source(source.tokens), [END], starts=2) == [6]
    assert copy_span(model.logits([]), model.decode, Source(source.tokens, blank=said), [END], starts=2) == [7]


def test_a_refused_span_is_no_answer_but_its_parts_are():
    vocabulary = {" Quillan": 5, " 2.1": 6, " ›": 7, " Osk": 8}  # one token a word

    def text_of(tokens: list[int]) -> str:
        return "".join({token: word for word, token in vocabulary.items()}[token] for token in tokens)

    source = copy_source("Quillan 2.1 › Osk", lambda text: [vocabulary[" " + w] for w in text.split()], text_of,
                         refused=("Quillan 2.1", "  Osk "))
    assert source.refused == {(5, 6), (8,)}  # tokenized as an answer's first word is, white space aside
    model = Table({(): {5: 3.0, 8: 2.0}, (5,): {6: 3.0}, (5, 6): {END: 3.0, 7: 0.0}, (8,): {END: 1.0}})
    assert copy_span(model.logits([]), model.decode, Source(source.tokens), [END], starts=2) == [5, 6]
    assert copy_span(model.logits([]), model.decode, Source(source.tokens, refused=frozenset({(5, 6)})), [END],
                     starts=2) == [8]  # the next likeliest
    assert copy_span(model.logits([]), model.decode, Source(source.tokens, refused=source.refused), [END],
                     starts=2) == [5]


def test_the_question_s_words_with_a_mark_beside_them_say_nothing_new():
    words, blank, marks = 1, frozenset({1}), frozenset({2, 3})  # 1: a word of the question; 2, 3: marks
    assert not says([words, 2], blank, marks)  # "REGULAR EXPRESSIONS ›" for "… REGULAR EXPRESSIONS section …?"
    assert not says([words], blank, marks) and not says([], blank, marks)
    assert says([2, 3], blank, marks)  # marks alone are an answer: "$$", "&:"
    assert says([words, 4], blank, marks) and says([4, 2], blank, marks)  # a word the question lacks


class Pieces:
    """A stand-in tokenizer: each piece of a fixed list one token, in order of first sight."""

    def __init__(self, *pieces: str):
        self.pieces = sorted(pieces, key=len, reverse=True)
        self.ids: dict[str, int] = {}

    def tokenize(self, text: str) -> list[int]:
        tokens = []
        while text:
            piece = next(piece for piece in self.pieces if text.startswith(piece))
            tokens.append(self.ids.setdefault(piece, len(self.ids) + 1))
            text = text[len(piece):]
        return tokens

    def text_of(self, tokens: list[int]) -> str:
        names = {token: piece for piece, token in self.ids.items()}
        return "".join(names[token] for token in tokens)


def test_a_word_after_a_mark_is_also_copied_as_written_after_a_space():
    vocabulary = Pieces(" Version", " 4", ".", "2", " 2", " (", "10", " 10", " Jun", " 2016", "):", " urgency", "=", "high",
                        " high", " 東京", "は")
    source = copy_source("Version 4.2 (10 Jun 2016): urgency=high 東京は", vocabulary.tokenize, vocabulary.text_of)
    parts = [vocabulary.text_of(part) for part in _parts(source.tokens)]
    # an answer's first word follows a space (" 10 Jun 2016", not "10 …" as it stands after the bracket),
    # so each word after a mark is there again as written after one; not after a space, nor in Japanese
    assert parts[0] == " Version 4.2 (10 Jun 2016): urgency=high 東京は"
    assert [part.split()[0] for part in parts[1:]] == ["2", "10", "high"]
    assert all(part.startswith(" ") for part in parts)


def _parts(tokens: list[int]) -> list[list[int]]:
    parts: list[list[int]] = [[]]
    for token in tokens:
        if token == GAP:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def test_a_span_starts_and_ends_between_words():
    vocabulary = Pieces(" Ev", "geny", " Ver", "esh", " wrote", " it")
    source = copy_source("Evgeny Veresh wrote it", vocabulary.tokenize, vocabulary.text_of)
    ev, geny, ver, esh = (vocabulary.ids[piece] for piece in (" Ev", "geny", " Ver", "esh"))
    assert source.cuts == frozenset({0, 2, 4, 5, 6})  # the ends, and before each space
    model = Table({(): {geny: 3.0, ev: 1.0}, (geny,): {ver: 3.0}, (geny, ver): {esh: 3.0}, (geny, ver, esh): {END: 3.0},
                   (ev,): {geny: 3.0}, (ev, geny): {ver: 1.0, END: 0.5}})
    # "geny Veresh" is likelier, but starts inside a word; and " Ev" alone would end inside one
    assert copy_span(model.logits([]), model.decode, Source(source.tokens, cuts=source.cuts), [END]) == [ev, geny]
    assert copy_span(model.logits([]), model.decode, Source(source.tokens), [END]) == [geny, ver, esh]


def test_a_span_longer_than_the_words_asked_for_is_no_answer():
    words = {5: " the", 6: " river", 7: " Sabre", 8: " flows"}  # one token a word

    def text_of(tokens: list[int]) -> str:
        return "".join(words[token] for token in tokens)

    model = Table({(): {5: 3.0}, (5,): {6: 3.0}, (5, 6): {7: 3.0, END: 2.0}, (5, 6, 7): {8: 3.0}, (5, 6, 7, 8): {END: 3.0}})
    source = [5, 6, 7, 8]
    # the whole text is likeliest
    assert copy_span(model.logits([]), model.decode, Source(source), [END], starts=1) == source
    assert copy_span(model.logits([]), model.decode, Source(source), [END], starts=1, fits=within(2, text_of)) == [5, 6]
    assert within(0, text_of)(source)  # 0: any length


def test_a_continuation_ends_once_it_no_longer_fits():
    model = Table({(): {5: 3.0}, (5,): {6: 3.0}, (5, 6): {7: 3.0}, (5, 6, 7): {8: 3.0}})
    mask = CopyMask([5, 6, 7, 8], [END], 5, fits=lambda tokens: len(tokens) <= 2)
    assert model.decode(mask) == [5, 6, 7]  # the third token does not fit: only an end may follow it
    assert [tokens for _, tokens in mask.prefixes()] == [[5], [5, 6]]


def test_words_are_found_where_a_tokenizer_drops_a_leading_space():
    vocabulary = Pieces(" Ev", "geny", " Ver", "esh", " wrote", " it")

    def text_of(tokens: list[int]) -> str:  # as SentencePiece decodes: no space before the first word
        return vocabulary.text_of(tokens).removeprefix(" ")

    spaced = copy_source("Evgeny Veresh wrote it", vocabulary.tokenize, vocabulary.text_of)
    assert copy_source("Evgeny Veresh wrote it", vocabulary.tokenize, text_of).cuts == spaced.cuts


def test_an_answer_narrows_only_between_white_space_words():
    vocabulary = Pieces(" 1", ".", "9", ",", " in", " 2020")
    source = copy_source("1.9, in 2020.", vocabulary.tokenize, vocabulary.text_of, narrow=True)
    assert GAP not in source.tokens  # the answer alone, not its words again after each mark
    ends = sorted(vocabulary.text_of(source.tokens[:cut]) for cut in source.cuts if cut)
    # never inside "1.9"; before the marks that close a word, and after them
    assert ends == [" 1.9", " 1.9,", " 1.9, in", " 1.9, in 2020", " 1.9, in 2020."]
    starts = [vocabulary.text_of(source.tokens[cut:]) for cut in sorted(source.cuts) if cut < len(source.tokens)]
    assert " in 2020." in starts and " 2020." in starts and ".9, in 2020." not in starts


def test_a_narrowed_answer_is_its_run_of_words_likeliest_as_a_whole_answer():
    one, dash, year = 5, 6, 7  # " 1.1.1", " -", " 2025"
    # greedy would go on past "1.1.1" (" -" is likelier than an end), but "1.1.1" and then an end is
    # likelier than the whole answer and then an end
    model = Table({(): {one: 3.0}, (one,): {dash: 2.0, END: 1.5}, (one, dash): {year: 3.0, END: -1.0},
                   (one, dash, year): {END: 0.5, 9: 1.0}})
    source = [one, dash, year]
    assert copy_span(model.logits([]), model.decode, Source(source), [END]) == [one]
    # a run may start after the answer's start where it is likelier as a whole answer
    model.table[()], model.table[(year,)] = {year: 4.0, one: 3.0}, {END: 5.0}
    assert copy_span(model.logits([]), model.decode, Source(source), [END]) == [year]


def test_where_a_span_starts_counts_for_what_the_question_adds_to_it():
    # "5" (a date, say) starts likelier than "7" after the question, but as likely without it; "7" the
    # question makes likely: less its first token's log-probability without the question, "7" wins
    asked = Table({(): {5: 3.0, 7: 2.5}, (5,): {END: 3.0}, (7,): {END: 3.0}})
    alone = Table({(): {5: 3.0, 7: -2.0}})
    source = [5, 6, 7]
    assert copy_span(asked.logits([]), asked.decode, Source(source), [END], starts=2) == [5]
    assert copy_span(asked.logits([]), asked.decode, Source(source), [END], starts=2,
                     unasked_logits=alone.logits([])) == [7]
    # where "7" is one of the question's own tokens, the question making it likelier is no sign it answers
    assert copy_span(asked.logits([]), asked.decode, Source(source, said=frozenset({7})), [END], starts=2,
                     unasked_logits=alone.logits([])) == [5]


def test_a_weighed_request_carries_the_prompt_without_the_question():
    reader = SpanReader(None)
    prompt = "Question: Who built it?\nKnowledge: Corran and Sons built it in 1867.\nQuestion: Who built it?\nAnswer:"
    ask = reader.copying(prompt, "Who built it?", "Corran and Sons built it in 1867.", weighed=True)
    assert ask.hint["unasked"] == "Question: \nKnowledge: Corran and Sons built it in 1867.\nQuestion: \nAnswer:"
    assert "unasked" not in reader.copying(prompt, "Who built it?", "Corran and Sons built it in 1867.").hint
    assert "unasked" not in reader.copying(prompt, "Who made it?", "…", weighed=True).hint  # not in the prompt
