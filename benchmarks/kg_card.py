"""The countries knowledge-graph card: multiple-choice accuracy per extractor × format arm, and with
the LinUCB bandit choosing the arm per question (KnowGPT's recipe, on this machine's small models).

Questions are built from the graph itself (seeded): which country borders X; which city is the
capital of a country bordering X (two hops); in which subregion is the country whose capital is C
(two hops). Four options each. The path policy (REINFORCE) and the bandit train on the training
split and are saved next to the card (kcard_card_countries/kg/), where the card loads them; the
test split is scored for every arm, the bandit's frozen choice, and no knowledge at all.

    python benchmarks/kg_card.py [--questions 150] [--train 100]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter, defaultdict
from pathlib import Path

from common import write_result

import kcard_card_countries
from kcard_core.artifacts import sha256_of
from kcard_core.backends import Sampling
from kcard_core.chains.prompts import bottom_up_prompt
from kcard_core.text import choose_option, split_options
from kcard_kg import ARMS, LinUCB, PathPolicy
from kcard_core.models import resolve_model
from kcard_core.plugins import load_registry

OUT = Path(kcard_card_countries.__file__).parent / "kg"


def build_questions(kg, count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    relation = defaultdict(dict)
    neighbours = defaultdict(set)
    for head, rel, tail in kg.triples:
        if rel == "borders":
            neighbours[head].add(tail)
            neighbours[tail].add(head)
        else:
            relation[rel][head] = tail
    capital, region = relation["has_capital"], relation["is_in"]
    countries = sorted(c for c in capital if neighbours[c])
    regions = sorted(set(region.values()))
    questions = []
    while len(questions) < count:
        kind = len(questions) % 3
        country = rng.choice(countries)
        others = [c for c in sorted(capital) if c not in neighbours[country] and c != country]
        if kind == 0:
            text, answer = f"Which of these countries borders {country}?", rng.choice(sorted(neighbours[country]))
            distractors = rng.sample(others, 3)
        elif kind == 1:
            answer = capital.get(rng.choice(sorted(neighbours[country])))
            text = f"Which of these cities is the capital of a country that borders {country}?"
            distractors = [capital[c] for c in rng.sample(others, 3)]
        else:
            if country not in region:
                continue
            text, answer = f"In which region is the country whose capital is {capital[country]}?", region[country]
            distractors = rng.sample([r for r in regions if r != answer], 3)
        if not answer or answer in distractors:
            continue
        choices = distractors + [answer]
        rng.shuffle(choices)
        options = dict(zip("ABCD", choices))
        label = next(k for k, v in options.items() if v == answer)
        query = f"{text} Options: " + "; ".join(f"{k}. {v}" for k, v in options.items()) + "."
        questions.append({"query": query, "options": options, "label": label, "kind": kind})
    return questions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--train", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    registry = load_registry(only=["kcard-kg", "kcard-card-countries", "kcard-llama-cpp"])
    backend = registry.backend("llama-cpp")
    card = registry.card("countries-kg").with_backend(backend)
    kg = card.graph()
    questions = build_questions(kg, args.questions, args.seed)
    train, test = questions[: args.train], questions[args.train:]
    base = resolve_model(None)[1]
    greedy = Sampling(max_tokens=16, temperature=0.0, stop=("\n",))
    started = time.perf_counter()

    def correct(question: dict, knowledge: str) -> float:
        prompt = bottom_up_prompt(question["query"], [knowledge] if knowledge else [])
        answer = backend.generate(base, prompt, n=1, sampling=greedy)[0].strip()
        return float(choose_option(answer, question["options"]) == question["label"])

    # P_RL: REINFORCE on the training questions (targets: the entities of the four choices)
    examples = []
    for q in train:
        text, options = split_options(q["query"])
        choices = list(options.values())
        targets = [e for c in choices for e in kg.ground(c)]
        examples.append((text, [e for e in kg.ground(text) if e not in targets], targets))
    policy = PathPolicy()
    history = policy.train(kg, examples, episodes=3000, lr=0.1, seed=args.seed)
    OUT.mkdir(exist_ok=True)
    policy.save(OUT / "policy.json")
    card.__dict__["_policy"] = policy

    # the bandit learns online on the training questions, then is frozen
    bandit = LinUCB(alpha=0.5)
    for q in train:
        arm = bandit.choose(q["query"])
        bandit.update(q["query"], arm, correct(q, card.knowledge(q["query"], arm)))
    bandit.save(OUT / "bandit.json")

    # the test questions: no knowledge, every arm, the frozen bandit's pick
    scores = {"no knowledge": [correct(q, "") for q in test]}
    for arm in ARMS:
        scores[arm] = [correct(q, card.knowledge(q["query"], arm)) for q in test]
    picks = [bandit.choose(q["query"], explore=False) for q in test]
    scores["bandit"] = [scores[arm][i] for i, arm in enumerate(picks)]
    accuracy = {name: round(100 * sum(v) / len(v), 1) for name, v in scores.items()}
    by_kind = {name: [round(100 * sum(v[i] for i, q in enumerate(test) if q["kind"] == k) /
                            max(1, sum(q["kind"] == k for q in test)), 1) for k in range(3)]
               for name, v in scores.items()}
    rows = "\n".join(f"| {name} | {accuracy[name]} | {' | '.join(map(str, by_kind[name]))} |" for name in scores)
    report = f"""# Knowledge-graph card (countries-kg): accuracy per arm and with the bandit

{len(test)} four-option test questions built from the card's own graph ({len(kg.triples)} triples from
countryinfo), a third each of: borders X (1 hop), capital of a country bordering X (2 hops), subregion of
the country whose capital is C (2 hops). Base LLM SmolLM2-135M-Instruct (llama.cpp, greedy). The path
policy (REINFORCE, 3,000 episodes; mean reward {history[0]:.2f} → {history[-1]:.2f}) and the LinUCB bandit
trained on {len(train)} other questions. Chance is 25 %.

| knowledge | accuracy % | borders | capital of neighbour | region of capital |
|---|---|---|---|---|
{rows}

Bandit's picks on the test set: {dict(Counter(picks))}. Wall time {time.perf_counter() - started:.0f} s.

Reproduce: `python benchmarks/kg_card.py --questions {args.questions} --train {args.train}`
"""
    write_result("kg-card", {"questions": len(questions), "train": len(train), "test": len(test),
                             "accuracy": accuracy, "by_kind": by_kind, "bandit_picks": dict(Counter(picks)),
                             "policy_weights": policy.weights,
                             "artifacts": {p.name: sha256_of(p) for p in (OUT / "policy.json", OUT / "bandit.json")}},
                 report)


if __name__ == "__main__":
    main()
