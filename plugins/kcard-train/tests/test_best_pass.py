"""The card is the training pass that recalled most, and --max-minutes stops training with it."""

import time
from types import SimpleNamespace

import torch

from kcard_train.trainer import PATIENCE, BestPass, Recipe, optimise


def test_the_best_pass_is_kept_and_restored():
    model = torch.nn.Linear(4, 2)
    best = BestPass()
    for number, (value, recalled) in enumerate([(1.0, 3), (2.0, 5), (3.0, 4)], start=1):
        with torch.no_grad():
            model.weight.fill_(value)
        best.offer(model, recalled, number)
    assert (best.number, best.recalled) == (2, 5)
    best.restore(model)
    assert torch.equal(model.weight, torch.full((2, 4), 2.0))
    assert not best.stalled(2 + PATIENCE - 1) and best.stalled(2 + PATIENCE)  # no better pass since the second


class Tiny(torch.nn.Module):
    device = torch.device("cpu")

    def __init__(self):
        super().__init__()
        self.embed, self.out = torch.nn.Embedding(10, 8), torch.nn.Linear(8, 10)

    def forward(self, input_ids, labels, **_):
        logits = self.out(self.embed(input_ids))
        return SimpleNamespace(loss=torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()))


def test_a_deadline_stops_training_after_one_last_check():
    ids = torch.randint(0, 10, (16, 6))
    checks = []
    losses = optimise(Tiny(), ids, ids.clone(), Recipe(steps=50, batch_size=4), check=lambda: checks.append(1),
                      deadline=time.monotonic() - 1)
    assert len(losses) == 1 and checks == [1]
    checks.clear()
    assert len(optimise(Tiny(), ids, ids.clone(), Recipe(steps=8, batch_size=4), check=lambda: checks.append(1))) == 8
    assert checks == [1, 1]  # after each pass of four steps


def test_each_pass_batches_every_row_once_by_length_within_windows():
    from kcard_train.trainer import PAD, passes

    lengths = torch.randint(1, 40, (200,))
    ids = torch.tensor([[1] * n + [PAD] * (40 - n) for n in lengths.tolist()])
    batches = passes(ids, 4, torch.Generator().manual_seed(0))
    first = [next(batches) for _ in range(50)]
    assert sorted(row for batch in first for row in batch) == list(range(200))  # one pass: every row once
    padded = sum(4 * max(lengths[batch]) for batch in first)
    assert padded < 1.1 * lengths.sum()  # rows of a batch are about as long as each other
    second = [next(batches) for _ in range(50)]
    assert sorted(row for batch in second for row in batch) == list(range(200)) and second != first
