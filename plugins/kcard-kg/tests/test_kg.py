"""Knowledge-graph cards: grounding, BFS and REINFORCE path extraction, formats, the LinUCB bandit."""

import random

from kcard_core.cards import Card, CardManifest
from kcard_kg import ARMS, KGCard, KnowledgeGraph, LinUCB, PathPolicy, as_sentences, as_triples, bfs_paths
from kcard_core.plugins import load_registry
from kcard_core.text import split_options

TRIPLES = [("Germany", "borders", "Austria"), ("Austria", "has_capital", "Vienna"), ("Germany", "has_capital", "Berlin"),
           ("Peru", "has_capital", "Lima"), ("Germany", "is_in", "Western Europe"), ("Austria", "is_in", "Central Europe"),
           ("Germany", "borders", "France"), ("France", "has_capital", "Paris"), ("Germany", "has_demonym", "German")]
QUESTION = "Which of these cities is the capital of a country that borders Germany?"


def test_grounding_takes_the_longest_names_in_any_case():
    kg = KnowledgeGraph(TRIPLES)
    assert kg.ground("is western europe near germany?") == ["Western Europe", "Germany"]
    assert split_options(f"{QUESTION} Options: A. Vienna; B. Lima.") == (QUESTION, {"A": "Vienna", "B": "Lima"})


def test_bfs_finds_two_hop_paths_to_the_choices():
    kg = KnowledgeGraph(TRIPLES)
    paths = bfs_paths(kg, ["Germany"], ["Vienna", "Lima"])
    assert paths == [[("Germany", "borders", "Austria"), ("Austria", "has_capital", "Vienna")]]
    assert as_sentences(paths) == "Germany borders Austria. Austria has capital Vienna."
    assert as_triples(paths) == "(Germany, borders, Austria) (Austria, has_capital, Vienna)"


def test_reinforce_learns_to_reach_the_targets(tmp_path):
    kg = KnowledgeGraph(TRIPLES)
    examples = [(QUESTION, ["Germany"], ["Vienna", "Lima"]), ("Capital of a neighbour of Germany?", ["Germany"], ["Paris"])]
    policy = PathPolicy()
    rng = random.Random(1)

    def reach_rate(p):
        return sum(bool(set(p.walk(kg, "Germany", q, t, rng)[0][-1][::2]) & set(t)) for q, _, t in examples * 50) / 100

    before = reach_rate(policy)
    policy.train(kg, examples, episodes=600, lr=0.2)
    assert reach_rate(policy) > before and policy.weights[2] > 0  # it learned to head for targets
    policy.save(tmp_path / "policy.json")
    assert PathPolicy.load(tmp_path / "policy.json").weights == policy.weights


def test_linucb_learns_which_arm_pays(tmp_path):
    bandit = LinUCB(dim=16, alpha=0.3)
    questions = [f"which country borders number {i}?" for i in range(60)]
    for question in questions:
        arm = bandit.choose(question)
        bandit.update(question, arm, 1.0 if arm == "bfs/triples" else 0.0)
    assert bandit.choose("which country borders number 7?", explore=False) == "bfs/triples"
    bandit.save(tmp_path / "bandit.json")
    assert LinUCB.load(tmp_path / "bandit.json").choose(questions[3], explore=False) == "bfs/triples"
    assert len(ARMS) == 6


def test_kg_card_from_a_manifest(tmp_path):
    (tmp_path / "kg.tsv").write_text("\n".join("\t".join(t) for t in TRIPLES))
    manifest = CardManifest.from_dict({"name": "geo", "description": "countries", "version": "1", "license": "MIT",
                                       "type": "kg", "artifacts": {"triples": {"file": "kg.tsv"}}}, base_dir=tmp_path)
    (tmp_path / "card.toml").write_text('name = "geo"\ndescription = "countries"\nversion = "1"\nlicense = "MIT"\n'
                                        'type = "kg"\n[artifacts.triples]\nfile = "kg.tsv"\n')
    load_registry(only=["kcard-kg"])  # the plugin registers the card type "kg"
    card = Card.from_manifest(tmp_path / "card.toml")
    assert isinstance(card, KGCard) and card.manifest == manifest
    docs = card.generate(f"{QUESTION} Options: A. Vienna; B. Lima.")
    assert docs[0].page_content == "Germany borders Austria. Austria has capital Vienna."
    card.arm = "bfs/triples"
    assert card.generate("Tell me about Peru.")[0].page_content == "(Peru, has_capital, Lima)"


def test_countries_kg_card_is_installed_and_answers():
    card = load_registry(only=["kcard-kg", "kcard-card-countries"]).card("countries-kg")
    text = card.generate(f"{QUESTION} Options: A. Vienna; B. Lima; C. Tokyo; D. Nairobi.")[0].page_content
    assert "Austria borders Germany" in text and "Vienna" in text
