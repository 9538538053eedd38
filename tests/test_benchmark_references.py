"""The benchmark's reference trainers see the same data and model size as ours, so ratios are fair."""

from __future__ import annotations

import torch

from benchmarks.references import MakemoreStyleGPT, NamesOneAtATime, RefGPT, steady_tokens_per_s
from minigpt.data import EncodedSplit, Vocab
from minigpt.models.gpt import MiniGPT
from minigpt.training.options import TrainConfig

WORDS = ["emma", "olivia", "x", "abcdefg"]


def test_makemore_style_rows_equal_our_encoded_rows():
    vocab = Vocab.from_words(WORDS)
    ours = EncodedSplit(WORDS, vocab, 8)
    theirs = NamesOneAtATime(WORDS, vocab.stoi, 8)
    for i in range(len(WORDS)):
        x, y = theirs[i]
        assert torch.equal(x, ours.x[i]) and torch.equal(y, ours.y[i])


def test_references_have_our_default_model_size():
    vocab = Vocab.from_words(WORDS)
    ours = sum(p.numel() for p in MiniGPT(TrainConfig().model_config(vocab.size, 16)).parameters())
    for reference in (RefGPT(vocab.size, 16), MakemoreStyleGPT(vocab.size, 16)):
        n = sum(p.numel() for p in reference.parameters())
        assert abs(n - ours) / ours < 0.02, (type(reference).__name__, n, ours)


def test_makemore_style_loss_starts_near_uniform_and_steady_rate_counts_tokens():
    vocab = Vocab.from_words(WORDS)
    torch.manual_seed(0)
    model = MakemoreStyleGPT(vocab.size, 8)
    x, y = (torch.stack(t) for t in zip(*(NamesOneAtATime(WORDS, vocab.stoi, 8)[i] for i in range(4))))
    _, loss = model(x, y)
    assert abs(loss.item() - torch.log(torch.tensor(float(vocab.size))).item()) < 0.5
    calls = []
    rate = steady_tokens_per_s(lambda: calls.append(1) or 7, seconds=0.0)
    assert len(calls) == 3 + 10 and rate > 0  # 3 untimed warm-up steps, then at least 10 timed


def test_makemore_loop_trains_in_slices_and_counts_only_its_steps():
    from benchmarks.references import MakemoreLoop

    vocab = Vocab.from_words(WORDS)
    loop = MakemoreLoop(WORDS * 10, vocab.stoi, 8)
    before = [p.detach().clone() for p in loop.model.parameters()]
    loop.train_for(0.05)
    first = loop.steps
    loop.train_for(0.05)  # a second slice continues the same model and optimizer
    assert 0 < first < loop.steps and loop.seconds >= 0.1
    assert any(not torch.equal(a, b) for a, b in zip(before, loop.model.parameters()))
    logits, loss = loop.model(torch.zeros(2, 5, dtype=torch.long))  # scored by our evaluate(): no targets
    assert logits.shape == (2, 5, vocab.size) and loss is None


def test_gpu_benchmark_says_plainly_when_there_is_no_cuda(monkeypatch, capsys):
    import sys

    from benchmarks import bench_gpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(sys, "argv", ["bench_gpu.py"])
    assert bench_gpu.main() == 2
    err = capsys.readouterr().err
    assert "no CUDA device" in err and "--smoke" in err and err.count("\n") == 1
