"""LoRA adapters: a zero start, parameter counts, gradients only where they belong, merge equality."""

from __future__ import annotations

import copy

import pytest
import torch

from minigpt.errors import ConfigError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.models.lora import (
    LoRALinear,
    add_lora,
    lora_parameter_count,
    merge_lora,
    trainable_parameters,
)
from tests.helpers.floats import MODEL_OUTPUT


def _model() -> MiniGPT:
    torch.manual_seed(0)
    return MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=64, n_heads=4, n_layers=4))


def test_an_adapter_starts_as_the_base_layer():
    base = torch.nn.Linear(6, 3)
    layer = LoRALinear(copy.deepcopy(base), rank=2, alpha=4)
    x = torch.randn(5, 6)
    assert torch.equal(layer(x), base(x))
    assert layer.scaling == 2.0


@pytest.mark.parametrize("rank", [1, 4, 16])
def test_trainable_parameters_are_rank_times_in_plus_out(rank):
    model = _model()
    full = sum(p.numel() for p in model.parameters())
    expected = lora_parameter_count(model, rank)
    # per block: qkv 64→192, proj 64→64, up 64→256, down 256→64: (256+128+320+320)·r = 1024·r
    assert expected == 4 * 1024 * rank
    assert add_lora(model, rank, alpha=8) == 16
    assert trainable_parameters(model) == expected
    assert sum(p.numel() for p in model.parameters()) == full + expected


def test_only_the_adapters_get_gradients():
    model = _model()
    add_lora(model, 2, 4)
    x = torch.randint(0, 27, (3, 10))
    _, loss = model(x, x)
    loss.backward()
    with_grad = {n for n, p in model.named_parameters() if p.grad is not None}
    assert with_grad and all(n.endswith((".A", ".B")) for n in with_grad)


def test_the_merged_model_gives_the_same_outputs():
    model = _model()
    add_lora(model, 4, 8)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, LoRALinear):
                m.B.normal_(0, 0.05)  # as after training: the adapter changes the outputs
    x = torch.randint(0, 27, (4, 12))
    adapted = model(x)[0]
    assert (adapted - _model()(x)[0]).abs().max() > 0.01
    merged = merge_lora(copy.deepcopy(model))
    assert not any(isinstance(m, LoRALinear) for m in merged.modules())
    assert sum(p.numel() for p in merged.parameters()) == sum(p.numel() for p in _model().parameters())
    assert torch.allclose(merged(x)[0], adapted, **MODEL_OUTPUT)  # W + BA merged vs Wx + BAx
    # and it is an ordinary MiniGPT again: its weights load into a fresh one
    fresh = _model()
    fresh.load_state_dict(merged.state_dict())
    assert torch.allclose(fresh(x)[0], adapted, **MODEL_OUTPUT)


def test_bad_settings_are_refused():
    with pytest.raises(ConfigError, match="rank"):
        LoRALinear(torch.nn.Linear(2, 2), rank=0, alpha=1)
    with pytest.raises(ConfigError, match="alpha"):
        LoRALinear(torch.nn.Linear(2, 2), rank=1, alpha=0)
    with pytest.raises(ConfigError, match="no linear layer"):
        add_lora(torch.nn.Sequential(torch.nn.ReLU()), 1, 1)
