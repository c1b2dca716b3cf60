"""kcard plugin: the card type "kg", knowledge-graph cards (after KnowGPT, Zhang et al. 2024): a
triple store, question grounding, subgraph extraction (bounded BFS, or a path policy trained with REINFORCE), three prompt formats,
and a LinUCB bandit that learns which extractor × format suits which question.

Everything here is numpy and the standard library: embeddings are hashed bags of words (cheap,
deterministic, no model to load), which is enough to compare a path with a question.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from kcard_core.backends import Sampling
from kcard_core.cards import Card
from kcard_core.errors import KcardError
from kcard_core.hookspecs import hookimpl
from kcard_core.loading import load_object
from kcard_core.text import one_line, split_options

Triple = tuple[str, str, str]  # (head, relation, tail)
EXTRACTORS = ("bfs", "policy")
FORMATS = ("triples", "sentences", "description")
ARMS = tuple(f"{e}/{f}" for e in EXTRACTORS for f in FORMATS)


def embed(text: str, dim: int = 128):
    """A hashed bag of words, L2-normalised."""
    import numpy as np

    vector = np.zeros(dim)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % dim] += 1.0
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


def cosine(a, b) -> float:
    return float(a @ b)


class KnowledgeGraph:
    """Triples with an index of each entity's edges (both directions) and of its name's words."""

    def __init__(self, triples: Iterable[Triple]):
        self.triples = list(dict.fromkeys(triples))
        self.edges: dict[str, list[Triple]] = defaultdict(list)  # entity -> edges touching it
        for head, relation, tail in self.triples:
            self.edges[head].append((head, relation, tail))
            self.edges[tail].append((head, relation, tail))
        self.by_lower = {entity.lower(): entity for entity in self.edges}
        self.max_words = max((len(e.split()) for e in self.edges), default=1)

    @classmethod
    def from_file(cls, path: Path) -> "KnowledgeGraph":
        """A .tsv (head, relation, tail per line) or .jsonl ({"head", "relation", "tail"}) file."""
        lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
        if Path(path).suffix == ".jsonl":
            rows = [json.loads(line) for line in lines]
            return cls((r["head"], r["relation"], r["tail"]) for r in rows)
        return cls(tuple(line.split("\t")[:3]) for line in lines)

    def ground(self, text: str) -> list[str]:
        """Entities named in ``text``, longest first, without overlaps (n-gram match, any case)."""
        words = re.findall(r"[\w'.-]+", text)
        found, used = [], set()
        for size in range(min(self.max_words, len(words)), 0, -1):
            for start in range(len(words) - size + 1):
                span = set(range(start, start + size))
                candidate = " ".join(words[start:start + size]).strip(".,'").lower()
                if candidate in self.by_lower and not span & used:
                    found.append(self.by_lower[candidate])
                    used |= span
        return found

    def neighbours(self, entity: str) -> list[tuple[Triple, str]]:
        """(edge, the entity at its other end)."""
        return [(edge, edge[2] if edge[0] == entity else edge[0]) for edge in self.edges.get(entity, [])]


# -- extraction ----------------------------------------------------------------------------------

def bfs_paths(kg: KnowledgeGraph, sources: list[str], targets: list[str], hops: int = 2,
              limit: int = 12) -> list[list[Triple]]:
    """P_sub: paths of at most ``hops`` edges from a question entity to a target (answer choice);
    without targets, the sources' own edges."""
    if not targets:
        return [[edge] for source in sources for edge, _ in kg.neighbours(source)][:limit]
    wanted, paths = set(targets), []
    for source in sources:
        queue = deque([(source, [])])
        seen = {source}
        while queue and len(paths) < limit:
            entity, path = queue.popleft()
            for edge, other in kg.neighbours(entity):
                if other in wanted:
                    paths.append(path + [edge])
                elif len(path) + 1 < hops and other not in seen:
                    seen.add(other)
                    queue.append((other, path + [edge]))
    return paths[:limit]


@dataclass
class RewardWeights:
    reach: float = 1.0  # the path ends at a target
    relatedness: float = 0.5  # cosine of the path's words with the question
    brevity: float = 0.2  # minus this per edge


class PathPolicy:
    """P_RL: walks from a question entity, choosing each edge by softmax(w · features).

    Features of an edge: its relation's and its far end's similarity to the question, whether the
    far end is a target, and a bias. Trained with REINFORCE on reach + relatedness − brevity.
    """

    def __init__(self, weights: list[float] | None = None, max_hops: int = 2, rewards: RewardWeights | None = None):
        self.weights = list(weights or [0.0, 0.0, 0.0, 0.0])
        self.max_hops = max_hops
        self.rewards = rewards or RewardWeights()

    def features(self, edge: Triple, other: str, question_vector, targets: set[str]) -> list[float]:
        return [cosine(embed(edge[1]), question_vector), cosine(embed(other), question_vector),
                1.0 if other in targets else 0.0, 1.0]

    def _choices(self, kg, entity, question_vector, targets, visited):
        options = [(edge, other) for edge, other in kg.neighbours(entity) if other not in visited]
        feats = [self.features(edge, other, question_vector, targets) for edge, other in options]
        logits = [sum(w * f for w, f in zip(self.weights, x)) for x in feats]
        top = max(logits, default=0.0)
        probs = [math.exp(z - top) for z in logits]
        total = sum(probs)
        return options, feats, [p / total for p in probs]

    def walk(self, kg: KnowledgeGraph, source: str, question: str, targets: Iterable[str],
             rng: random.Random | None = None) -> tuple[list[Triple], list[tuple[list[float], list[list[float]], int]]]:
        """One path (sampled with ``rng``, greedy without) and the steps taken, for training."""
        question_vector, targets = embed(question), set(targets)
        path, steps, entity, visited = [], [], source, {source}
        for _ in range(self.max_hops):
            options, feats, probs = self._choices(kg, entity, question_vector, targets, visited)
            if not options:
                break
            pick = rng.choices(range(len(options)), weights=probs)[0] if rng else max(range(len(probs)), key=probs.__getitem__)
            steps.append((probs, feats, pick))
            edge, entity = options[pick]
            path.append(edge)
            visited.add(entity)
            if entity in targets:
                break
        return path, steps

    def reward(self, path: list[Triple], question: str, targets: Iterable[str]) -> float:
        if not path:
            return 0.0
        reached = bool({path[-1][0], path[-1][2]} & set(targets))  # a walk stops at the first target
        words = " ".join(" ".join(edge) for edge in path)
        return (self.rewards.reach * reached + self.rewards.relatedness * cosine(embed(words), embed(question))
                - self.rewards.brevity * len(path))

    def train(self, kg: KnowledgeGraph, examples: list[tuple[str, list[str], list[str]]], episodes: int = 2000,
              lr: float = 0.1, seed: int = 0) -> list[float]:
        """REINFORCE over (question, sources, targets) examples; returns the running mean reward."""
        rng, baseline, history = random.Random(seed), 0.0, []
        for episode in range(episodes):
            question, sources, targets = examples[episode % len(examples)]
            if not sources:
                continue
            path, steps = self.walk(kg, rng.choice(sources), question, targets, rng)
            reward = self.reward(path, question, targets)
            baseline += 0.05 * (reward - baseline)
            for probs, feats, pick in steps:  # ∇ log softmax = x_pick − E[x]
                expected = [sum(p * x[i] for p, x in zip(probs, feats)) for i in range(len(self.weights))]
                for i in range(len(self.weights)):
                    self.weights[i] += lr * (reward - baseline) * (feats[pick][i] - expected[i])
            history.append(baseline)
        return history

    def paths(self, kg: KnowledgeGraph, sources: list[str], question: str, targets: list[str]) -> list[list[Triple]]:
        return [path for source in sources if (path := self.walk(kg, source, question, targets)[0])]

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"weights": self.weights, "max_hops": self.max_hops,
                                          "rewards": vars(self.rewards)}, indent=1))

    @classmethod
    def load(cls, path: Path) -> "PathPolicy":
        data = json.loads(Path(path).read_text())
        return cls(data["weights"], data["max_hops"], RewardWeights(**data["rewards"]))


# -- prompt formats ------------------------------------------------------------------------------

def as_triples(paths: list[list[Triple]]) -> str:
    return " ".join(f"({h}, {r}, {t})" for h, r, t in unique_edges(paths))


def as_sentences(paths: list[list[Triple]]) -> str:
    return " ".join(f"{h} {r.replace('_', ' ')} {t}." for h, r, t in unique_edges(paths))


def unique_edges(paths: list[list[Triple]]) -> list[Triple]:
    return list(dict.fromkeys(edge for path in paths for edge in path))


DESCRIBE = "Facts: {facts}\nDescribe these facts in two plain sentences.\nDescription:"


# -- the bandit ----------------------------------------------------------------------------------

class LinUCB:
    """A contextual bandit (Li et al., 2010): per arm, ridge regression of reward on the context, and
    the arm with the highest upper confidence bound is played."""

    def __init__(self, arms: Iterable[str] = ARMS, dim: int = 32, alpha: float = 0.5):
        import numpy as np

        self.arms, self.dim, self.alpha = list(arms), dim, alpha
        self.A = {arm: np.eye(dim) for arm in self.arms}
        self.b = {arm: np.zeros(dim) for arm in self.arms}

    def context(self, question: str):
        return embed(question, self.dim)

    def choose(self, question: str, explore: bool = True) -> str:
        import numpy as np

        x = self.context(question)

        def bound(arm):
            inverse = np.linalg.inv(self.A[arm])
            mean = float((inverse @ self.b[arm]) @ x)
            return mean + (self.alpha * math.sqrt(float(x @ inverse @ x)) if explore else 0.0)

        return max(self.arms, key=bound)

    def update(self, question: str, arm: str, reward: float) -> None:
        x = self.context(question)
        self.A[arm] += x[:, None] @ x[None, :]
        self.b[arm] += reward * x

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps({"arms": self.arms, "dim": self.dim, "alpha": self.alpha,
                                          "A": {a: m.tolist() for a, m in self.A.items()},
                                          "b": {a: v.tolist() for a, v in self.b.items()}}))

    @classmethod
    def load(cls, path: Path) -> "LinUCB":
        import numpy as np

        data = json.loads(Path(path).read_text())
        bandit = cls(data["arms"], data["dim"], data["alpha"])
        bandit.A = {a: np.array(m) for a, m in data["A"].items()}
        bandit.b = {a: np.array(v) for a, v in data["b"].items()}
        return bandit


# -- the card ------------------------------------------------------------------------------------

class KGCard(Card):
    """A card that answers from a knowledge graph instead of writing.

    Manifest: ``type = "kg"``; ``corpus = "module:function"`` returning triples (or a ``triples``
    artifact: .tsv or .jsonl); optional ``policy`` and ``bandit`` artifacts (JSON, from
    ``benchmarks/kg_card.py``). ``arm`` fixes "extractor/format"; otherwise the bandit chooses,
    else "bfs/sentences". The "description" format asks the card's backend model to summarise the
    facts (falling back to sentences without one).
    """

    arm: str | None = None  # set to fix the extractor and format

    def runs_on(self) -> str:
        return "knowledge graph"

    def graph(self) -> KnowledgeGraph:
        if "_graph" not in self.__dict__:
            if self.manifest.corpus:
                triples = load_object(self.manifest.corpus)()
                self.__dict__["_graph"] = KnowledgeGraph(triples)
            elif "triples" in self.manifest.artifacts:
                self.__dict__["_graph"] = KnowledgeGraph.from_file(self.manifest.artifacts["triples"].resolve())
            else:
                raise KcardError(f"knowledge-graph card {self.name!r} names no triples")
        return self.__dict__["_graph"]

    def _loaded(self, role: str, loader: Callable[[Path], Any]) -> Any:
        if role not in self.manifest.artifacts:
            return None
        key = f"_{role}"
        if key not in self.__dict__:
            self.__dict__[key] = loader(self.manifest.artifacts[role].resolve())
        return self.__dict__[key]

    def choose_arm(self, query: str) -> str:
        if self.arm or self.settings.get("arm"):  # fixed in code, or in config.toml [cards.NAME] arm = "..."
            return self.arm or self.settings["arm"]
        bandit = self._loaded("bandit", LinUCB.load)
        return bandit.choose(query, explore=False) if bandit else "bfs/sentences"

    def knowledge(self, query: str, arm: str, sampling: Sampling | None = None) -> str:
        """The facts the ``arm`` ("extractor/format") extracts for ``query``, as text."""
        question, options = split_options(query)
        choices = list(options.values())
        kg = self.graph()
        targets = [entity for choice in choices for entity in kg.ground(choice)]
        sources = [entity for entity in kg.ground(question) if entity not in targets]
        extractor, form = arm.split("/")
        policy = self._loaded("policy", PathPolicy.load) or PathPolicy()
        paths = (policy.paths(kg, sources, question, targets) if extractor == "policy"
                 else bfs_paths(kg, sources, targets))
        if form == "triples":
            return as_triples(paths)
        facts = as_sentences(paths)
        if form == "description" and facts and self.backend is not None and "model" in self.manifest.artifacts:
            model, _ = self.model()
            written = self.backend.generate(model, DESCRIBE.format(facts=facts), n=1,
                                            sampling=sampling or Sampling(max_tokens=64, temperature=0.0))
            return one_line(written[0]) or facts
        return facts

    def write(self, query: str, n: int, sampling: Sampling) -> list[str]:
        text = self.knowledge(query, self.choose_arm(query), sampling)
        return [text] if text else []


@hookimpl
def register_card_types(register):
    register("kg", KGCard)
