"""The three selectors on the real MiniLM encoder, and top-k factuality sampling."""

import random
from collections import Counter

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListLLM

from kcard_core.selectors import SelectorPipeline
from kcard_core.retrieval import BM25
from kcard_core.backends import yes_probability
from kcard_core.readers import PlainReader
from kcard_selectors.factuality import FactualitySelector, agreement, margin_greedy, top_k_sample
from kcard_selectors.pruning import PruningSelector
from kcard_selectors.reader import RulesReader
from kcard_selectors.relevance import RelevanceSelector


def docs(*texts, cards=None, sources=None):
    cards = cards or ["c"] * len(texts)
    sources = sources or ["lm"] * len(texts)
    return [Document(page_content=t, metadata={"id": f"d{i}", "card": card, "source": source})
            for i, (t, card, source) in enumerate(zip(texts, cards, sources))]


QUESTION = "What is the capital of France?"
ON_TOPIC = "Paris is the capital and largest city of France. It lies on the Seine."
OFF_TOPIC = "Photosynthesis converts light energy into chemical energy in plants."


def test_top_k_sampling_draws_without_replacement_from_the_k_best():
    scores = [0.9, 0.1, 0.8, 0.0, 0.7, 0.2]
    for seed in range(50):
        picks = top_k_sample(scores, n=3, k=4, rng=random.Random(seed))
        assert len(set(picks)) == 3 and set(picks) <= {0, 2, 4, 5}
    assert top_k_sample([0.0, 0.0], n=3, k=5, rng=random.Random(0)) in ([0, 1], [1, 0])  # all zero: no crash


def test_top_k_sampling_prefers_higher_scores():
    counts = Counter(top_k_sample([1.0, 0.0], n=1, k=2, rng=random.Random(seed))[0] for seed in range(2000))
    assert counts[0] / 2000 == pytest.approx(2.718 / 3.718, abs=0.04)  # the paper's p ∝ exp(score)
    # kcard's default temperature 0.1: a 0.96-scored document is ~13 times as likely as a 0.7-scored one
    sharp = Counter(top_k_sample([0.96, 0.7], n=1, k=2, rng=random.Random(seed), temperature=0.1)[0]
                    for seed in range(2000))
    assert sharp[0] / 2000 == pytest.approx(13.46 / 14.46, abs=0.02)


def test_yes_probability_reads_yes_and_no_tokens():
    assert yes_probability({" Yes": -0.1, "No": -2.4, "yes": -3.0}) > 0.9
    assert yes_probability({"maybe": -0.1}) == 0.5


def test_bm25_finds_the_matching_evidence():
    index = BM25(["Paris is the capital of France.", "Berlin is in Germany.", "Plants need light."])
    assert index.search("capital of France", k=1) == ["Paris is the capital of France."]
    assert index.search("zebra", k=2) == []


def test_relevance_keeps_the_on_topic_document():
    selector = RelevanceSelector(top_n=1)
    kept = selector.compress_documents(docs(OFF_TOPIC, ON_TOPIC), QUESTION)
    assert [d.page_content for d in kept] == [ON_TOPIC]
    assert kept[0].metadata["scores"]["relevance"] > 0.5


def test_relevance_drops_a_document_far_below_the_best_even_within_n2():
    off = "girl: Graph Information Retrieval Language. A language for handling directed graphs."
    kept = RelevanceSelector(top_n=5).compress_documents(docs(off, ON_TOPIC), QUESTION)
    assert [d.page_content for d in kept] == [ON_TOPIC]
    assert len(RelevanceSelector(top_n=5, floor=0).compress_documents(docs(off, ON_TOPIC), QUESTION)) == 2


def test_pruning_keeps_the_closest_sentences_within_budget():
    text = OFF_TOPIC + " " + ON_TOPIC + " The Seine flows into the English Channel at Le Havre."
    pruned = PruningSelector(max_tokens=12).compress_documents(docs(text), QUESTION)[0]
    assert pruned.page_content == "Paris is the capital and largest city of France."
    assert pruned.metadata["original"] == text
    assert 0 < pruned.metadata["scores"]["pruning"] < 0.5


def test_factuality_scores_against_registered_evidence():
    evidence = {"facts": lambda: ["Paris is the capital of France.", "The Moon orbits the Earth."]}
    selector = FactualitySelector(top_n=1, evidence=evidence)
    scored = selector.score_documents(docs("Paris is the capital of France.", "Lyon is the capital of France."),
                                      QUESTION)
    true, false = (d.metadata["scores"]["factuality"] for d in scored)
    assert true > false and scored[0].metadata["factuality"]["evidence"] == "Paris is the capital of France."


def test_the_passages_of_a_cards_own_text_that_the_question_finds_are_evidence():
    text = ["The Wrenhold Observatory stands on Scarrow Fell above the village of Wrenhold.",
            "The Wrenhold Observatory was founded in 1891.", "The observatory cat is buried under the dome.",
            "Its dome turns on eighteen iron wheels and weighs 40 tonnes.", "Its museum opened in 1978."]
    question, written = "How much does the dome of the Wrenhold Observatory weigh?", docs(text[3], text[2])
    # BM25 over sentences, its words unstemmed ("weigh", "weighs"), finds three others: the cat's wins
    alone = FactualitySelector(top_n=1, evidence={"wrenhold": lambda: text}).score_documents(written, question)
    dome, cat = (d.metadata["scores"]["factuality"] for d in alone)
    assert dome == 0 < cat
    found = FactualitySelector(top_n=1, evidence={"wrenhold": lambda: text},  # as the card's question index finds it
                               passages_for={"wrenhold": lambda query: text[3:4]}).score_documents(written, question)
    assert [d.metadata["scores"]["factuality"] for d in found] == [1, cat]


def test_an_evidence_sentence_keeps_the_one_before_it():
    # "It opened in 1868" holds no word of the question: alone, BM25 never found it for one
    evidence = {"rail": lambda: ["The Brackenmoor Railway runs from Hallowsea to Dunric. It opened in 1868."]}
    scored = FactualitySelector(top_n=1, evidence=evidence).score_documents(
        docs("The railway was opened in 1868.", "The railway was opened in 1902."),
        "In which year did the Brackenmoor Railway open?")
    right, wrong = (d.metadata["scores"]["factuality"] for d in scored)
    assert right > 0.5 and wrong == 0
    assert scored[0].metadata["factuality"]["evidence"].endswith("It opened in 1868.")
    # nothing supports 1902: the trace shows the evidence BM25 ranked first (not the alphabetically last)
    assert scored[1].metadata["factuality"]["evidence"] == "The Brackenmoor Railway runs from Hallowsea to Dunric."


def test_other_lm_cards_do_not_vouch_for_each_other_but_quoted_passages_are_evidence():
    invention, truth = "Lyon is the capital of France.", "Paris is the capital of France."
    scored = FactualitySelector(top_n=2).score_documents(
        docs(invention, invention, truth, truth, cards=["a", "b", "news", "c"],
             sources=["lm", "lm", "retrieval", "lm"]), QUESTION)
    scores = [d.metadata["scores"]["factuality"] for d in scored]
    assert scores[0] == scores[1] == 0  # two LM cards agreeing on an invention prove nothing
    assert scores[2] == 1 and scored[2].metadata["factuality"]["evidence"] == "quoted from the card's corpus"
    assert scores[3] == 1 and scored[3].metadata["factuality"]["evidence"] == truth


def test_agreement_knows_who_beat_whom_and_that_an_echo_says_nothing():
    question = "Who won the Idaho senate race in the 2022 U.S. midterm elections?"
    evidence = "The Idaho senate race in the 2022 U.S. midterm elections was won by Mike Crapo, who defeated David Roth."
    right = agreement("In the Idaho senate race, Mike Crapo defeated David Roth.", evidence, question)
    swapped = agreement("In the Idaho senate race, David Roth defeated Mike Crapo.", evidence, question)
    invented = agreement("In the Idaho senate race, Jim Risch defeated Paulette Jordan.", evidence, question)
    assert right == 1 and invented < 0.3 < swapped < right
    assert agreement("The Idaho senate race took place in the 2022 U.S. midterm elections.", evidence, question) == 0


def test_margin_greedy_is_deterministic_and_breaks_near_ties_by_the_earlier_ranking():
    assert margin_greedy([0.50, 0.52, 0.48, 0.9], n=2, margin=0.05) == [3, 0]
    assert margin_greedy([0.50, 0.52, 0.48, 0.9], n=2, margin=0.0) == [3, 1]
    assert margin_greedy([0.2, 0.2], n=5, margin=0.05) == [0, 1]
    # a preferred document wins a near-tie, not a clear loss
    preferred = [False, True, False, False]
    assert margin_greedy([0.50, 0.52, 0.48, 0.9], n=2, margin=0.05, preferred=preferred) == [3, 1]
    assert margin_greedy([0.9, 0.5], n=1, margin=0.05, preferred=[False, True]) == [0]


def test_factuality_near_ties_go_to_a_document_that_holds_an_answer_of_the_kind_asked():
    # two samples of a memorised card, both all in its text; the first is closer to the question
    text = "Kelderwick was founded by Ada Morrane. Her ship, the Grey Heron, was wrecked below Tollan Head."
    mixed, right = "The ship of the town's founder, Ada Morrane.", "Her ship, the Grey Heron, was wrecked."
    rules = RulesReader(FakeListLLM(responses=["x"]))  # the reader tells which holds a name
    selector = FactualitySelector(top_n=1, evidence={"text": lambda: [text]}, holds_answer=rules.holds_answer)
    question = "What was the name of the ship of Kelderwick's founder?"
    scored = selector.score_documents(docs(mixed, right), question)
    assert [d.metadata["factuality"]["holds_answer"] for d in scored] == [False, True]
    assert scored[0].metadata["scores"]["factuality"] == scored[1].metadata["scores"]["factuality"] == 1
    assert [d.page_content for d in selector.choose(scored)] == [right]
    # a question of no type leaves the tie to the earlier ranking
    scored = selector.score_documents(docs(mixed, right), "Tell me about the founder's ship.")
    assert "holds_answer" not in scored[0].metadata["factuality"]
    assert [d.page_content for d in selector.choose(scored)] == [mixed]
    # a reader that cannot tell (kcard's own) leaves the tie to the earlier ranking too
    plain = FactualitySelector(top_n=1, evidence={"text": lambda: [text]},
                               holds_answer=PlainReader(FakeListLLM(responses=["x"])).holds_answer)
    assert [d.page_content for d in plain.choose(plain.score_documents(docs(mixed, right), question))] == [mixed]
    selector = FactualitySelector(top_n=1)
    scored = [selector.record(doc, score) for doc, score in zip(docs("a", "b", "c"), [0.50, 0.50, 0.48])]
    assert [selector.choose(scored)[0].page_content for _ in range(20)] == ["a"] * 20
    paper = FactualitySelector(top_n=1, sampling="paper", temperature=1.0)
    picked = {paper.model_copy(update={"seed": seed}).choose(scored)[0].page_content for seed in range(40)}
    assert picked == {"a", "b", "c"}  # the paper's sampling, still available, is a draw


def test_llm_judge_uses_the_given_logprobs():
    prompts = []

    def logprobs(prompt):
        prompts.append(prompt)
        return {"Yes": -0.05, "No": -3.0}

    selector = FactualitySelector(judge="llm", logprobs=logprobs)
    scored = selector.score_documents(docs("A claim.", "Another claim.", cards=["a", "b"],
                                           sources=["lm", "retrieval"]), QUESTION)
    assert scored[0].metadata["scores"]["factuality"] > 0.9
    assert prompts[0].startswith("Evidence: Another claim.\nClaim: A claim.")


def test_pipeline_in_any_order_records_every_stage():
    pipeline = SelectorPipeline(selectors=[PruningSelector(max_tokens=16), RelevanceSelector(top_n=2),
                                           FactualitySelector(top_n=1)])
    kept, stages = pipeline.run(docs(OFF_TOPIC, ON_TOPIC, "France's capital is Paris."), QUESTION)
    assert [s.selector for s in stages] == ["pruning", "relevance", "factuality"]
    assert len(stages[0].scores) == 3 and len(stages[1].kept) == 2 and len(kept) == 1
    assert "d0" not in stages[1].kept
