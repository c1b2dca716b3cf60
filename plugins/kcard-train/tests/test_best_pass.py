"""The card is the training pass that recalled most, and --max-minutes stops training with it."""

import platform
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
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
    best.patience = PATIENCE + 1  # as with --focus
    assert not best.stalled(2 + PATIENCE) and best.stalled(3 + PATIENCE)
    assert best.file.is_file()  # the copy waits on disk, not in memory
    best.close()
    assert not best.file.parent.exists()


def test_no_pass_offered_restores_nothing():
    model = torch.nn.Linear(4, 2)
    before = model.weight.clone()
    best = BestPass()
    best.restore(model)
    assert torch.equal(model.weight, before)
    best.close()


class Tiny(torch.nn.Module):
    """The two parts of a causal LM that loss_of uses: a decoder giving hidden states, an output layer."""
    device = torch.device("cpu")

    def __init__(self):
        super().__init__()
        self.embed, self.out = torch.nn.Embedding(10, 8), torch.nn.Linear(8, 10)

    def get_decoder(self):
        return lambda input_ids, **_: SimpleNamespace(last_hidden_state=self.embed(input_ids))

    def get_output_embeddings(self):
        return self.out


def test_a_deadline_stops_training_after_one_last_check():
    ids = torch.randint(0, 10, (16, 6))
    checks = []
    losses = optimise(Tiny(), ids, ids.clone(), Recipe(steps=50, batch_size=4), check=lambda: checks.append(1),
                      deadline=time.monotonic() - 1)
    assert len(losses) == 1 and checks == [1]
    checks.clear()
    assert len(optimise(Tiny(), ids, ids.clone(), Recipe(steps=8, batch_size=4), check=lambda: checks.append(1))) == 8
    assert checks == [1, 1]  # after each pass of four steps


def test_a_resting_pass_trains_the_rows_due_and_moves_the_schedule_as_a_whole_one(monkeypatch):
    from kcard_train import trainer

    trained, checks, rates = [], [], []
    plain = trainer.scored

    def scored(model, ids, labels):
        rows = ids[:, 0]  # each row's first token is its number here
        trained.append(sorted(rows.tolist()))
        return plain(model, ids, labels)[0], rows < 6  # rows 0 to 5 written back, 6 and 7 not

    monkeypatch.setattr(trainer, "scored", scored)
    monkeypatch.setattr(torch.optim.AdamW, "step", lambda self, *_: rates.append(self.param_groups[0]["lr"]))
    ids = torch.arange(8).unsqueeze(1).repeat(1, 5)
    losses = optimise(Tiny(), ids, ids.clone(), Recipe(steps=None, epochs=3, batch_size=2, lr=1.0, warmup_ratio=0,
                                                       focus=True), check=lambda: checks.append(1))
    assert len(losses) == 9 and checks == [1, 1, 1]  # every row, rows 6 and 7 (0 to 5 rest), every row again
    assert sorted(row for batch in trained[:4] for row in batch) == list(range(8)) and trained[4] == [6, 7]
    assert sorted(row for batch in trained[5:] for row in batch) == list(range(8))
    # a short pass moves the schedule as far as a whole one
    assert rates == pytest.approx([n / 11 for n in (11, 11, 10, 9, 8, 4, 3, 2, 1)])


def test_a_row_written_back_rests_longer_each_time_in_a_row_and_a_miss_brings_it_back():
    from kcard_train.trainer import Resting

    resting = Resting(3)
    assert resting.due(0) == [0, 1, 2]
    resting.trained([0, 1, 2], [True, False, True], 0)
    assert resting.due(1) == [1] and resting.due(2) == [0, 1, 2]
    for number, due in [(2, 5), (5, 10), (10, 10 + 1 + Resting.MAX_REST)]:  # rests of 1, 2, 4, then at most 4
        resting.trained([0], [True], number)
        assert 0 not in resting.due(due - 1) and 0 in resting.due(due)
    resting.trained([0], [False], 15)
    assert 0 in resting.due(16)


def test_a_row_is_written_back_exactly_when_greedy_decoding_writes_its_text():
    from transformers import LlamaConfig, LlamaForCausalLM

    from kcard_train.trainer import PAD, scored

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=1)).eval()
    prompt = torch.randint(1, 50, (1, 4))
    greedy = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=5, do_sample=False,
                            pad_token_id=0)
    other = greedy.clone()
    other[0, -2] = (other[0, -2] % 49) + 1  # one written token changed
    ids = torch.cat([greedy, other])
    labels = ids.clone()
    labels[:, :4] = PAD  # the prompt: no loss there
    with torch.no_grad():
        _, written = scored(model, ids, labels)
    assert written.tolist() == [True, False]


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


def test_the_loss_is_the_models_own_over_the_labelled_tokens_only():
    from transformers import LlamaConfig, LlamaForCausalLM

    from kcard_train.trainer import PAD, loss_of

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=1)).eval()
    ids = torch.randint(1, 50, (3, 9))
    ids[1, 6:] = PAD  # a shorter row
    labels = ids.clone()
    labels[:, :4] = PAD  # a prompt: no loss there
    mask = ids != PAD
    expected = model(input_ids=ids.masked_fill(~mask, 0), attention_mask=mask.long(), labels=labels).loss
    assert torch.allclose(loss_of(model, ids, labels), expected, atol=1e-6)


def test_frozen_layers_keep_the_base_weights_while_the_layers_above_learn():
    from transformers import LlamaConfig, LlamaForCausalLM

    from kcard_train.trainer import freeze_layers

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=4,
                                         num_attention_heads=2, num_key_value_heads=1))
    assert freeze_layers(model, 0.5) == 2
    before = {name: parameter.detach().clone() for name, parameter in model.named_parameters()}
    ids = torch.randint(1, 50, (8, 6))
    optimise(model, ids, ids.clone(), Recipe(steps=3, batch_size=4, lr=1e-2))
    changed = {name for name, parameter in model.named_parameters() if not torch.equal(parameter, before[name])}
    assert not any(name.startswith(("model.layers.0.", "model.layers.1.")) for name in changed)
    assert {name.split(".")[2] for name in changed if name.startswith("model.layers.")} == {"2", "3"}


def test_a_wide_step_recomputes_its_activations_with_the_same_loss_and_gradients():
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.modeling_layers import GradientCheckpointingLayer

    from kcard_train.trainer import PAD, padded, recompute, scored

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=3,
                                         num_attention_heads=2, num_key_value_heads=1)).train()
    layers = [module for module in model.modules() if isinstance(module, GradientCheckpointingLayer)]
    ids = torch.randint(1, 50, (4, 9))
    ids[2, 5:] = PAD
    labels = ids.clone()
    labels[:, :3] = PAD
    tokens = padded(ids, [0, 1, 2, 3])
    runs = []
    for above in (None, tokens, tokens - 1):  # never; not this step; this step
        recompute(model, tokens, above)
        saved = []  # the elements autograd keeps for the backward pass
        with torch.autograd.graph.saved_tensors_hooks(lambda tensor: saved.append(tensor.numel()) or tensor,
                                                      lambda tensor: tensor):
            loss, _ = scored(model, ids, labels)
        loss.backward()
        runs.append((loss.detach(), sum(saved), {name: p.grad.clone() for name, p in model.named_parameters()}))
        model.zero_grad()
    assert len(layers) == 3 and all(layer.gradient_checkpointing for layer in layers)
    (loss, kept, grads), (_, again, _), (recomputed_loss, recomputed, recomputed_grads) = runs
    assert again == kept and recomputed < kept / 2
    assert torch.allclose(recomputed_loss, loss)
    assert all(torch.allclose(recomputed_grads[name], grads[name], atol=1e-6) for name in grads)
    recompute(model, 8, 512)
    assert not any(layer.gradient_checkpointing for layer in layers)


def test_the_estimate_times_the_batches_as_wide_as_a_pass_on_average():
    from kcard_train.trainer import PAD, padded, typical

    ids = torch.tensor([[1] * n + [PAD] * (10 - n) for n in (2, 2, 10, 10, 5, 6, 4, 4)])
    batches = [[0, 1], [2, 3], [4, 5], [6, 7]]  # 4, 20, 12 and 8 padded tokens: a mean of 11
    assert [padded(ids, batch) for batch in batches] == [4, 20, 12, 8]
    assert typical(batches, [padded(ids, batch) for batch in batches], 2) == [([4, 5], 12), ([6, 7], 8)]


def test_the_recall_check_writes_probes_by_passage_length_each_batch_at_most_its_longest():
    from transformers import BatchEncoding

    from kcard_train.trainer import RECALL_MARGIN, recall

    class Words:  # a tokenizer with a token a word; every probe writes nothing back
        pad_token, padding_side = "<pad>", "right"
        pad_token_id = 0

        def __call__(self, texts, return_tensors=None, padding=False, add_special_tokens=False):
            if isinstance(texts, str):
                return {"input_ids": texts.split()}
            return BatchEncoding({"input_ids": torch.zeros(len(texts), 2, dtype=torch.long)})

        def batch_decode(self, rows, skip_special_tokens=True):
            return [""] * len(rows)

    class Writer(torch.nn.Module):
        device = torch.device("cpu")
        budgets = []

        def generate(self, input_ids, max_new_tokens, **_):
            self.budgets.append((len(input_ids), max_new_tokens))
            return torch.zeros(len(input_ids), input_ids.shape[1] + 1, dtype=torch.long)

    probes = [("a?\n", ["A"], "one two three four five"), ("b?\n", ["B"], "one"), ("c?\n", ["C"], "one two three")]
    found = recall(Writer(), Words(), probes, batch_size=2)
    assert Writer.budgets == [(2, 3 + RECALL_MARGIN), (1, 5 + RECALL_MARGIN)]  # b and c, then a
    assert found["recalled"] == 0 and [miss["asked"] for miss in found["misses"]] == ["b?", "c?", "a?"]


def test_the_chunked_loss_and_its_gradients_are_the_plain_ones(monkeypatch):
    from kcard_train import trainer

    monkeypatch.setattr(trainer, "LOSS_STEP", 4)
    monkeypatch.setattr(trainer, "LOSS_ROWS", 8)  # 21 positions: chunks of 8, 8 and 5 padded to 8
    torch.manual_seed(0)
    hidden = torch.randn(21, 6, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(11, 6, dtype=torch.float64, requires_grad=True)
    targets = torch.randint(0, 11, (21,))
    expected = torch.nn.functional.cross_entropy(hidden @ weight.T, targets)
    expected.backward()
    plain = hidden.grad.clone(), weight.grad.clone()
    hidden.grad = weight.grad = None
    loss, hits = trainer.ChunkedLoss.apply(hidden, weight, targets)
    (2 * loss).backward()
    assert torch.allclose(loss, expected.float())
    assert torch.equal(hits, (hidden @ weight.T).argmax(-1) == targets)
    assert torch.allclose(hidden.grad, 2 * plain[0]) and torch.allclose(weight.grad, 2 * plain[1])
    with torch.no_grad():
        assert torch.allclose(trainer.chunked_loss(hidden, weight, targets)[0], expected.float())


def test_freed_memory_is_handed_back_where_the_c_library_can(monkeypatch):
    import ctypes

    from kcard_train import trainer

    calls = []
    monkeypatch.setattr(ctypes, "CDLL", lambda _: SimpleNamespace(malloc_trim=calls.append))
    trainer.release_freed_memory()
    assert calls == [0]
    for library in (lambda _: SimpleNamespace(), lambda _: (_ for _ in ()).throw(TypeError("no handle"))):
        monkeypatch.setattr(ctypes, "CDLL", library)  # a C library without malloc_trim; no process handle
        trainer.release_freed_memory()  # nothing happens, nothing is raised


FREED = """
import ctypes, sys
from kcard_train import trainer
if sys.argv[1] == "return":
    assert trainer.return_large_blocks()
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_void_p]

def resident():
    return int(open("/proc/self/statm").read().split()[1]) * 4096

libc.free(libc.malloc(16 << 20))  # glibc raises its mapping threshold to a freed mapped block's size
block = libc.malloc(8 << 20)
ctypes.memset(block, 1, 8 << 20)
before = resident()
libc.free(block)
print(before - resident())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_a_freed_large_block_goes_back_to_the_system():
    freed = {how: int(subprocess.run([sys.executable, "-c", FREED, how], capture_output=True, text=True,
                                     check=True).stdout) for how in ("keep", "return")}
    assert freed["keep"] < 4 << 20 < freed["return"]  # glibc's heap kept the 8 MB block; mapped, it went back


def test_the_estimate_takes_its_memory_from_the_widest_batch_too(monkeypatch):
    from kcard_train import trainer

    ids = torch.tensor([[1] * n + [trainer.PAD] * (10 - n) for n in (2, 3, 3, 4, 4, 5, 5, 10)])
    stepped = []
    loss_of = trainer.loss_of

    def counted(model, ids, labels):
        stepped.append(int((ids != trainer.PAD).sum(1).max()))
        return loss_of(model, ids, labels)

    monkeypatch.setattr(trainer, "loss_of", counted)
    expected = trainer.estimate(Tiny(), None, ids, ids.clone(), Recipe(steps=4, batch_size=2), [])
    assert len(stepped) == 5 and stepped[-1] == 10  # four timed steps, then the widest batch's
    assert expected.seconds > 0 and expected.peak_gb >= trainer.peak_gb()


def test_the_estimate_counts_a_resting_pass_after_the_first_as_its_share_of_a_whole_one(monkeypatch):
    from kcard_train import trainer

    monkeypatch.setattr(trainer.time, "perf_counter", iter(range(0, 1000, 5)).__next__)  # every step: 5 s
    ids = torch.tensor([[1] * 4] * 8)
    whole = trainer.estimate(Tiny(), None, ids, ids.clone(), Recipe(steps=None, epochs=5, batch_size=2), [])
    resting = trainer.estimate(Tiny(), None, ids, ids.clone(), Recipe(steps=None, epochs=5, batch_size=2,
                                                                      focus=True), [])
    assert resting.seconds == resting.most_seconds == pytest.approx(
        whole.most_seconds * (1 + 4 * trainer.RESTING_SHARE) / 5)


def test_the_estimate_expects_a_run_with_cues_to_stop_after_the_typical_passes(monkeypatch):
    from kcard_train import trainer

    monkeypatch.setattr(trainer.time, "perf_counter", iter(range(0, 1000, 5)).__next__)  # every step: 5 s
    ids = torch.tensor([[1] * 4] * 8)  # four batches of two a pass
    cued = trainer.estimate(Tiny(), None, ids, ids.clone(), Recipe(steps=None, epochs=8, batch_size=2, cues=2), [])
    assert cued.most_seconds == pytest.approx(8 * 4 * 5)  # no probes: the steps alone
    assert cued.seconds == pytest.approx(trainer.TYPICAL_PASSES * 4 * 5)
    plain = trainer.estimate(Tiny(), None, ids, ids.clone(), Recipe(steps=None, epochs=8, batch_size=2), [])
    assert plain.seconds == plain.most_seconds == pytest.approx(8 * 4 * 5)  # nothing stops it early
