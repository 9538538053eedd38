"""The stepper on a trained model: its stages are what that model computes (minigpt.teaching.trained_stepper)."""

from __future__ import annotations

import pytest
import torch

from minigpt.checkpoint import load_checkpoint, save_checkpoint
from minigpt.data import Vocab
from minigpt.errors import CheckpointError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.teaching.trained_stepper import trained_state
from tests.helpers.floats import MODEL_OUTPUT

VOCAB = Vocab(tuple(".abcdefghijklmnopqrstuvwxyz"))


def saved(tmp_path, **config):
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=8, n_heads=2, n_layers=2, **config))
    for p in model.parameters():  # a trained-looking model: biases and norms away from 0 and 1
        p.data += 0.2 * torch.randn_like(p)
    return model, load_checkpoint(save_checkpoint(tmp_path / "ckpt", model, VOCAB))


@pytest.mark.parametrize("config", [{}, {"n_kv_heads": 1}, {"bias": False, "pos_encoding": "sinusoidal"}],
                         ids=["bias", "grouped-query", "no bias"])
def test_every_head_is_the_models_own(tmp_path, config):
    model, ckpt = saved(tmp_path, **config)
    ids = torch.tensor([[0, 5, 13, 13, 1]])  # . e m m a
    want = model.attention_maps(ids)
    for layer in (0, 1):
        state = trained_state(ckpt, "Emma", layer)
        assert state.tokens == [".", "e", "m", "m", "a"] and state.causal
        mh = state.compute()
        for head in range(2):
            assert torch.allclose(mh.heads[head].weights, want[layer, head].double(), **MODEL_OUTPUT)  # float64 steps vs sdpa
        # the layer's output before its bias: concat · W_O = proj(y) − b_O
        x = {}

        def capture(module, args, out, x=x) -> None:
            x.setdefault("y", out[0])

        hook = model.blocks[layer].attn.register_forward_hook(capture)
        model.eval()
        model(ids)
        hook.remove()
        bias = model.blocks[layer].attn.proj.bias
        expected = x["y"][0].double() - (bias.double() if bias is not None else 0)
        assert torch.allclose(mh.output, expected, **MODEL_OUTPUT)
    assert state.dim_labels[-1] == ("1" if config.get("bias", True) else "d7")


def test_models_the_stepper_cannot_show_are_refused_by_name(tmp_path):
    _, ckpt = saved(tmp_path, pos_encoding="rope")
    with pytest.raises(CheckpointError, match="RoPE"):
        trained_state(ckpt, "emma", 0)
    _, ckpt = saved(tmp_path / "q", qk_norm=True)
    with pytest.raises(CheckpointError, match="QK-norm"):
        trained_state(ckpt, "emma", 0)
    _, ckpt = saved(tmp_path / "n")
    with pytest.raises(ValueError, match="layers 1 to 2"):
        trained_state(ckpt, "emma", 2)
    with pytest.raises(ValueError, match="at most 7 characters"):
        trained_state(ckpt, "maximilian", 0)
