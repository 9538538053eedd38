"""Activation checkpointing: the same gradients with and without, the option's path from the
training options to the model, old run configs migrated, and the memory benchmark's figures."""

from __future__ import annotations

from dataclasses import replace

import torch

from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.runs.schema import CONFIG_VERSION, config_from_file
from minigpt.training.memory_bench import BenchConfig, gradients, measure
from minigpt.training.options import TrainConfig
from tests.helpers.floats import GRADIENT, MODEL_OUTPUT


def _pair(**extra) -> tuple[MiniGPT, MiniGPT]:
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=27, block_size=12, d_model=32, n_heads=4, n_layers=3, **extra)
    plain = MiniGPT(cfg)
    checkpointed = MiniGPT(replace(cfg, checkpoint_activations=True))
    checkpointed.load_state_dict(plain.state_dict())
    return plain, checkpointed


def test_gradients_are_equal_with_and_without():
    plain, checkpointed = _pair(pos_encoding="rope")
    x, y = torch.randint(0, 27, (4, 12)), torch.randint(0, 27, (4, 12))
    g_plain, g_check = gradients(plain, x, y), gradients(checkpointed, x, y)
    assert g_plain.keys() == g_check.keys() and len(g_plain) > 10
    for name in g_plain:
        assert torch.allclose(g_plain[name], g_check[name], **GRADIENT), name  # recomputed forward


def test_dropout_is_replayed_in_the_recomputation():
    plain, checkpointed = _pair(dropout=0.3)
    x, y = torch.randint(0, 27, (4, 12)), torch.randint(0, 27, (4, 12))
    torch.manual_seed(5)
    g_plain = gradients(plain, x, y)
    torch.manual_seed(5)
    g_check = gradients(checkpointed, x, y)
    for name in g_plain:
        assert torch.allclose(g_plain[name], g_check[name], **GRADIENT), name  # recomputed forward


def test_packed_rows_and_generation_are_unchanged():
    plain, checkpointed = _pair()
    plain.eval(), checkpointed.eval()
    x = torch.randint(0, 27, (2, 8))
    segments = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1]] * 2)
    positions = torch.tensor([[0, 1, 2, 0, 1, 2, 3, 4]] * 2)
    with torch.enable_grad():
        a = plain(x, positions=positions, segments=segments)[0]
        b = checkpointed(x, positions=positions, segments=segments)[0]
    assert torch.allclose(a, b, **MODEL_OUTPUT)
    cache = checkpointed.new_cache()
    with torch.no_grad():
        step = checkpointed(x[:, :3], cache=cache)[0]
    assert torch.allclose(step, plain(x[:, :3])[0], **MODEL_OUTPUT)  # cached vs full pass
    assert torch.allclose(checkpointed.attention_maps(x[:1]), plain.attention_maps(x[:1]))


def test_the_training_option_reaches_the_model():
    assert TrainConfig().model_config(27, 16).checkpoint_activations is False
    cfg = TrainConfig(checkpoint_activations=True, steps=5)
    assert cfg.model_config(27, 16).checkpoint_activations is True
    assert TrainConfig.from_dict(cfg.to_dict()).checkpoint_activations is True


def test_older_run_configs_read_as_not_checkpointed():
    assert CONFIG_VERSION >= 5  # the step to 5 stays in every later migration
    old = {"format": "minigpt-run-config", "format_version": 3, "model": "gpt", "optimizer": "muon"}
    values = config_from_file(old)
    assert values["checkpoint_activations"] is False
    assert TrainConfig.from_dict(values).checkpoint_activations is False


def test_the_benchmark_measures_less_memory_with_checkpointing():
    result = measure(BenchConfig(d_model=16, n_heads=2, n_layers=6, block_size=16, batch_size=8, repeats=1),
                     progress=lambda line: None)
    peak = result["peak_bytes"]
    assert 0 < peak["on"] < peak["off"]
    assert result["max_gradient_difference"] < 1e-6
    assert 0 < result["fastest_seconds"]["on"] <= result["median_seconds"]["on"]
    assert 0 < result["fastest_seconds"]["off"] <= result["median_seconds"]["off"]
