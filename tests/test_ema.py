"""The weight average: its maths by hand, and that a stopped run resumes the same average."""

import os
import signal
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from minigpt.checkpoint import TRAINING_WEIGHTS, WEIGHTS, load_checkpoint, load_training_weights
from minigpt.models.config import ConfigError, GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.training.ema import WeightAverage, ema_rate
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig

REPO = Path(__file__).resolve().parents[1]


def test_rate_warms_up_then_holds_the_decay():
    assert ema_rate(0.999, 0) == pytest.approx(1 / 10)
    assert ema_rate(0.999, 90) == pytest.approx(91 / 100)
    assert ema_rate(0.999, 10**6) == 0.999


def test_update_is_the_weighted_mean_worked_by_hand():
    live = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        live.weight.fill_(2.0)
    avg = WeightAverage(live, 0.5)
    with torch.no_grad():
        live.weight.fill_(4.0)
    avg.update(live, updates=100)  # rate min(0.5, 101/110) = 0.5: 0.5·2 + 0.5·4
    assert avg.model.weight.item() == pytest.approx(3.0)
    with torch.no_grad():
        live.weight.fill_(10.0)
    avg.update(live, updates=0)  # rate 0.1: 0.1·3 + 0.9·10
    assert avg.model.weight.item() == pytest.approx(9.3)
    assert not avg.model.weight.requires_grad


def test_tied_weights_stay_tied_in_the_average():
    model = MiniGPT(GPTConfig(vocab_size=7, block_size=5, d_model=8, n_heads=2, n_layers=1, tie_weights=True))
    avg = WeightAverage(model, 0.9)
    assert avg.model.head.weight is avg.model.tok_emb.weight


def test_decay_is_validated():
    with pytest.raises(ConfigError, match="EMA"):
        TrainConfig(ema=1.0)
    with pytest.raises(ValueError):
        WeightAverage(torch.nn.Linear(1, 1), 0.0)


def tiny(names, **kw):
    return TrainConfig(**{**dict(d_model=16, n_heads=2, n_layers=1, batch_size=32, steps=60, eval_interval=20,
                                 log_interval=5, data=str(names)), **kw})


def _stop_at(step):
    def hook(rec):
        if rec["step"] == step:
            os.kill(os.getpid(), signal.SIGTERM)
    return hook


def test_resume_continues_the_same_average(tmp_path, names):
    run = tmp_path / "run"
    assert train(tiny(names, ema=0.999), run, on_log=_stop_at(30))["step"] == 30
    last = run / "last"
    before_avg = load_file(last / WEIGHTS)
    assert (last / TRAINING_WEIGHTS).exists()
    before_raw = load_file(last / TRAINING_WEIGHTS)
    assert not torch.equal(before_avg["head.weight"], before_raw["head.weight"])

    assert train(None, run, resume=True, on_log=_stop_at(31))["step"] == 31
    after_avg, after_raw = load_file(last / WEIGHTS), load_file(last / TRAINING_WEIGHTS)
    rate = ema_rate(0.999, 30)  # the 31st update
    for name, value in after_avg.items():
        expected = rate * before_avg[name] + (1 - rate) * after_raw[name]
        torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-6)
    # The checkpoint loads as the average; the raw weights come back on request.
    ckpt = load_checkpoint(last)
    torch.testing.assert_close(ckpt.model.head.weight, after_avg["head.weight"])
    assert load_training_weights(last, ckpt.model)
    torch.testing.assert_close(ckpt.model.head.weight, after_raw["head.weight"])


def test_no_average_keeps_the_raw_weights_only(tmp_path, names):
    run = tmp_path / "run"
    st = train(tiny(names, ema=0.0, steps=20, eval_interval=10), run)
    assert st["state"] == "finished"
    assert not (run / "last" / TRAINING_WEIGHTS).exists()
    assert not load_training_weights(run / "last", load_checkpoint(run / "last").model)
