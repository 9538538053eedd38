"""One fixed batch shape for a compiled step: padding changes neither the loss nor the gradients."""

from __future__ import annotations

import json

import pytest
import torch

from minigpt.data import IGNORE, EncodedSplit, Vocab
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.training.shapes import FixedShape, fixed_rows
from tests.helpers.floats import GRADIENT, MODEL_OUTPUT

WORDS = ["emma", "olivia", "ava", "isabella", "mia", "zoe", "al", "christopher", "jo", "bo"]
BLOCK = 16


def loss_and_grads(model, x, y, **extra):
    model.zero_grad()
    _, loss = model(x, y, **extra)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


@pytest.fixture
def split_and_model():
    enc = EncodedSplit(WORDS, Vocab.from_words(WORDS), block_size=BLOCK)
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=enc.vocab.size, block_size=BLOCK, d_model=16, n_heads=2, n_layers=2))
    return enc, model


def test_row_counts_round_up_to_a_few_shapes():
    assert [fixed_rows(n) for n in (1, 8, 9, 64, 65, 72)] == [8, 8, 16, 64, 72, 72]


def test_one_shape_for_a_run_unless_a_batch_needs_more_rows():
    shape = FixedShape(width=16)

    def rows_for(n: int) -> int:
        x = torch.zeros(n, 15, dtype=torch.long)
        return shape(x, x, {"segments": x})[0].shape[0]

    assert [rows_for(n) for n in (64, 65, 63, 64)] == [72] * 4  # 128 names: 64 or 65 rows, one shape
    assert rows_for(73) == 80 and rows_for(64) == 80  # raised once, never lowered


def test_padded_packed_batch_gives_the_same_loss_and_gradients_as_unpacked(split_and_model):
    enc, model = split_and_model
    index = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2])
    plain, plain_grads = loss_and_grads(model, *enc.batch(index))
    b = enc.packed_batch(index)
    x, y, extra = FixedShape(BLOCK)(b.x, b.y, {"positions": b.positions, "segments": b.segments})
    assert x.shape == (8, BLOCK) and b.x.shape[0] < 8 and b.x.shape[1] < BLOCK  # rows and columns were added
    assert (y[b.x.shape[0]:] == IGNORE).all() and (extra["segments"][b.x.shape[0]:] == -1).all()
    padded, padded_grads = loss_and_grads(model, x, y, **extra)
    torch.testing.assert_close(padded, plain, **MODEL_OUTPUT)  # padded to the fixed shape vs not
    for g, p in zip(padded_grads, plain_grads):
        torch.testing.assert_close(g, p, **GRADIENT)


def test_padded_trimmed_batch_gives_the_same_loss(split_and_model):
    enc, model = split_and_model
    x, y = enc.batch(torch.tensor([2, 4, 6, 8, 9]))  # short names: trimmed to 4 columns
    plain, plain_grads = loss_and_grads(model, x, y)
    px, py, extra = FixedShape(BLOCK)(x, y, {})
    assert px.shape == (8, BLOCK) and extra == {}
    padded, padded_grads = loss_and_grads(model, px, py)
    torch.testing.assert_close(padded, plain, **MODEL_OUTPUT)  # padded to the fixed shape vs not
    for g, p in zip(padded_grads, plain_grads):
        torch.testing.assert_close(g, p, **GRADIENT)


def train_losses(tmp_path, name: str, compile_on: bool) -> list[float]:
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig

    names = tmp_path / "n.txt"
    names.write_text("\n".join(WORDS * 6))
    cfg = TrainConfig(data=str(names), d_model=16, n_heads=2, n_layers=1, batch_size=16, steps=4, log_interval=1,
                      eval_interval=4, device="cpu", compile=compile_on, ema=0.0, layer_every=0)
    train(cfg, tmp_path / name)
    records = [json.loads(line) for line in (tmp_path / name / "metrics.jsonl").read_text().splitlines()[1:]]
    return [r["train_loss"] for r in records if "train_loss" in r]


def test_compiled_training_sees_only_fixed_shapes(tmp_path, monkeypatch):
    seen = []

    def shape_recorder(model, **kwargs):
        def run(x, y, **extra):
            seen.append((tuple(x.shape), {k: tuple(v.shape) for k, v in extra.items()}))
            return model(x, y, **extra)
        return run

    monkeypatch.setattr(torch, "compile", shape_recorder)
    train_losses(tmp_path, "run", compile_on=True)
    assert len(seen) == 4
    block = len(max(WORDS, key=len)) + 1  # the run's block size: its longest name and the start
    assert len({x_shape for x_shape, _ in seen}) == 1  # one shape, one compile
    for x_shape, extra in seen:
        assert x_shape[0] % 8 == 0 and x_shape[1] == block
        assert all(s == x_shape for s in extra.values())


def test_compile_on_and_off_give_the_same_losses(tmp_path, monkeypatch):
    """torch.compile on a tiny model gives the same four losses as eager. By default through the
    aot_eager backend (Dynamo's graph and AOTAutograd's backward, run by eager kernels: seconds);
    MINIGPT_TEST_INDUCTOR=1 uses the real inductor backend, which compiles C++ (minutes under load)."""
    import os

    if os.environ.get("MINIGPT_TEST_INDUCTOR") != "1":
        real_compile = torch.compile
        monkeypatch.setattr(torch, "compile", lambda model, **kw: real_compile(model, backend="aot_eager", **kw))
    eager = train_losses(tmp_path, "eager", compile_on=False)
    compiled = train_losses(tmp_path, "compiled", compile_on=True)
    assert len(eager) == len(compiled) == 4
    assert compiled == pytest.approx(eager, abs=2e-4)


def test_padding_gives_the_mlp_the_same_loss(split_and_model):
    """compile=True pads the MLP's batches too: its window over padded columns changes no target."""
    from minigpt.models.config import MLPConfig
    from minigpt.models.mlp import MLP

    enc, _ = split_and_model
    torch.manual_seed(0)
    mlp = MLP(MLPConfig(vocab_size=enc.vocab.size, block_size=BLOCK))
    x, y = enc.batch(torch.tensor([0, 2, 4, 6, 7]))
    plain, plain_grads = loss_and_grads(mlp, x, y)
    padded, padded_grads = loss_and_grads(mlp, *FixedShape(BLOCK)(x, y, {})[:2])
    torch.testing.assert_close(padded, plain, **MODEL_OUTPUT)  # padded to the fixed shape vs not
    for g, p in zip(padded_grads, plain_grads):
        torch.testing.assert_close(g, p, **GRADIENT)
