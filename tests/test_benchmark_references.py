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
