"""The trainer's inside measurements (minigpt.training.insight) against hand computations on a
tiny model, and a real run writing them into its folder, read back by minigpt.runs.insight."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from minigpt.checkpoint import load_checkpoint
from minigpt.data import IGNORE, EncodedSplit, Vocab
from minigpt.runs.insight import read_head_spread, read_layer_health, read_surprise
from minigpt.runs.schema import read_status
from minigpt.training.insight import LayerProbe, SurpriseProbe, head_stats, per_char_nll, reference_losses
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig, load_data_for

REPO = Path(__file__).resolve().parents[1]


class Table(torch.nn.Module):
    """A bigram table as a model: logits[b, t] = W[x[b, t]] (one weight matrix, easy by hand)."""

    kind = "table"

    def __init__(self, weights):
        super().__init__()
        self.W = torch.nn.Parameter(torch.tensor(weights, dtype=torch.float32))

    def forward(self, x, targets=None, **_):
        logits = self.W[x]
        loss = None
        if targets is not None:
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                                                     ignore_index=IGNORE)
        return logits, loss


def test_per_char_nll_is_minus_log_softmax_at_the_target():
    model = Table([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [0.0, 0.0, math.log(2.0)]])
    x, y = torch.tensor([[0, 1, 2]]), torch.tensor([[2, 0, IGNORE]])
    nll = per_char_nll(model, x, y)[0]
    # row 0: softmax(0, 1, 2)[2] = e²/(1 + e + e²); row 1: uniform 1/3; row 2: padding
    assert nll[0].item() == pytest.approx(-math.log(math.e**2 / (1 + math.e + math.e**2)), abs=1e-6)
    assert nll[1].item() == pytest.approx(math.log(3), abs=1e-6)
    assert math.isnan(nll[2].item())


def test_surprise_probe_writes_each_items_characters_and_their_surprise(tmp_path):
    vocab = Vocab(tuple(".ab"))
    split = EncodedSplit(["ab", "b"], vocab, block_size=4)
    model = Table([[0.0] * 3, [0.0] * 3, [0.0] * 3])  # uniform: every character costs ln 3
    probe = SurpriseProbe(tmp_path, split, vocab, torch.device("cpu"))
    probe.record(model, 20)
    probe.close()
    got = read_surprise(tmp_path)
    assert got.items == ["ab", "b"] and got.chars == [["a", "b", "."], ["b", "."]]
    assert got.steps == [20]
    assert got.nll[0] == [[round(math.log(3), 3)] * 3, [round(math.log(3), 3)] * 2]
    assert got.at(10) is None and got.at(25)[0] == 20


class TwoHeads(Table):
    """A table whose one layer has two heads: head 0 averages the past evenly, head 1 reads only the
    first position."""

    def attention_maps(self, idx):
        T = idx.shape[1]
        even = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).unsqueeze(1)
        first = torch.zeros(T, T)
        first[:, 0] = 1.0
        return torch.stack([even, first]).unsqueeze(0)  # (layers, heads, T, T)


def test_head_stats_by_hand_and_what_the_surprise_probe_writes(tmp_path):
    vocab = Vocab(tuple(".ab"))
    split = EncodedSplit(["abab", "ab"], vocab, block_size=8)  # the second item is too short to count
    probe = SurpriseProbe(tmp_path, split, vocab, torch.device("cpu"))
    probe.record(TwoHeads([[0.0] * 3] * 3), 20)
    probe.close()
    # "abab" and its end: 5 queries, of which t = 3, 4 see at least 4 positions
    first_even = (1 / 4 + 1 / 5) / 2
    assert head_stats(TwoHeads([[0.0] * 3] * 3), *split.batch(torch.arange(2))) == {
        "spread": [[1.0, 0.0]], "first": [[round(first_even, 3), 1.0]]}
    heads = read_head_spread(tmp_path)
    assert heads.steps == [20] and heads.spread == [[[1.0, 0.0]]] and heads.first == [[[round(first_even, 3), 1.0]]]
    assert head_stats(Table([[0.0] * 3] * 3), *split.batch(torch.arange(2))) is None  # no attention: nothing


def test_layer_probe_measures_the_update_and_the_gradient_by_hand(tmp_path):
    model = Table([[3.0, 4.0], [0.0, 0.0]])  # ‖W‖ = 5
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    probe = LayerProbe(tmp_path, model, opt, every=2)
    assert probe.wants(2) and not probe.wants(3)
    model.W.grad = torch.tensor([[0.0, 0.0], [6.0, 8.0]])  # ‖g‖ = 10; ΔW = −0.1 g: ‖ΔW‖ = 1
    probe.before_update()
    opt.step()
    probe.after_update(2)
    probe.close()
    health = read_layer_health(tmp_path)
    assert health.names == ["W"] and health.optimizers == ["adamw"] and health.every == 2
    assert health.steps == [2]
    assert health.grad[0] == [pytest.approx(10.0)]
    assert health.ratio[0] == [pytest.approx(math.log10(1 / 5), abs=1e-3)]


def test_reference_losses_uniform_and_bigram_by_hand():
    vocab = Vocab(tuple(".ab"))
    # train "ab": pairs .→a, a→b, b→. ; add-one counts: row . = (1, 2, 1), row a = (1, 1, 2), row b = (2, 1, 1)
    train_split = EncodedSplit(["ab"], vocab, block_size=4)
    val_split = EncodedSplit(["a"], vocab, block_size=4)  # pairs .→a (2/4), a→. (1/4)
    ref = reference_losses(train_split, val_split, vocab.size)
    assert ref["uniform_loss"] == pytest.approx(math.log(3), abs=1e-5)
    assert ref["bigram_loss"] == pytest.approx((-math.log(2 / 4) - math.log(1 / 4)) / 2, abs=1e-5)


def test_a_run_writes_surprise_layers_and_references(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:400]) + "\n")
    cfg = TrainConfig(d_model=16, n_heads=2, n_layers=1, batch_size=32, steps=40, eval_interval=20,
                      log_interval=5, layer_every=10, data=str(names))
    run = tmp_path / "run"
    train(cfg, run)
    status = read_status(run / "status.json")
    assert status.uniform_loss == pytest.approx(math.log(27), abs=1e-4)  # 26 letters and the end
    assert status.uniform_loss > status.bigram_loss > 0
    surprise = read_surprise(run)
    assert surprise.steps == [20, 40] and len(surprise.items) == 4
    # the last evaluation's surprise is what the saved model (the average at step 40) gives
    last = load_checkpoint(run / "last")
    assert [len(row) for row in surprise.nll[-1]] == [len(c) for c in surprise.chars]
    data = load_data_for(cfg)
    x, y = data.val.batch(torch.arange(4))
    nll = per_char_nll(last.model, x, y)
    expected = [[round(float(v), 3) for v in row if not math.isnan(v)] for row in nll]
    flat = [v for row in surprise.nll[-1] for v in row]
    assert flat == pytest.approx([v for row in expected for v in row], abs=2e-3)
    heads = read_head_spread(run)  # the saved model's heads, on the same items
    assert heads.steps == [20, 40] and heads.spread[-1] == head_stats(last.model, x, y)["spread"]
    health = read_layer_health(run)
    assert health.steps == [10, 20, 30, 40]
    assert "blocks.0.attn.qkv.weight" in health.names
    assert set(health.optimizers) == {"muon", "adamw"}
    assert all(r is not None and -6 < r < 0 for r in health.ratio[-1])
