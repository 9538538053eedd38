"""Grouped-query attention in MiniGPT: n_kv_heads = n_heads is today's attention, bit for bit,
and fewer key/value heads shrink the KV cache by n_heads / n_kv_heads."""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from minigpt.errors import ConfigError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT, apply_rope
from minigpt.teaching import params
from tests.helpers.floats import MODEL_OUTPUT


def multi_head_reference(layer, x, rope=None):
    """The attention layer as it was before the grouped-query option: one K/V head per head."""
    B, T, C = x.shape
    q, k, v = layer.qkv(x).split(C, dim=2)
    q, k, v = (t.view(B, T, layer.n_heads, layer.head_dim).transpose(1, 2) for t in (q, k, v))
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return layer.proj(y.transpose(1, 2).contiguous().view(B, T, C))


@pytest.mark.parametrize("pos", ["learned", "rope"])
def test_n_kv_heads_equal_to_n_heads_is_plain_attention_bit_for_bit(pos):
    torch.manual_seed(5)
    old_style = MiniGPT(GPTConfig(vocab_size=11, block_size=8, d_model=16, n_heads=4, n_layers=2,
                                  pos_encoding=pos)).eval()
    torch.manual_seed(5)
    explicit = MiniGPT(GPTConfig(vocab_size=11, block_size=8, d_model=16, n_heads=4, n_layers=2,
                                 pos_encoding=pos, n_kv_heads=4)).eval()
    # same seed → the same weights, tensor for tensor
    for (name, a), (_, b) in zip(old_style.state_dict().items(), explicit.state_dict().items()):
        assert torch.equal(a, b), name
    idx = torch.randint(0, 11, (3, 7))
    with torch.no_grad():
        assert torch.equal(old_style(idx)[0], explicit(idx)[0])
        x = torch.randn(3, 7, 16)
        layer = explicit.blocks[0].attn
        rope = (explicit.rope_cos[:7], explicit.rope_sin[:7]) if pos == "rope" else None
        assert torch.equal(layer(x, rope)[0], multi_head_reference(layer, x, rope))


def test_default_size_unchanged():
    assert GPTConfig().n_kv_heads == 4
    assert sum(p.numel() for p in MiniGPT(GPTConfig()).parameters()) == 204_544


@pytest.mark.parametrize("n_kv", [1, 2, 4])
def test_cache_shrinks_by_the_group_factor(n_kv):
    torch.manual_seed(0)
    m = MiniGPT(GPTConfig(vocab_size=11, block_size=8, d_model=16, n_heads=4, n_layers=2,
                          n_kv_heads=n_kv)).eval()
    cache = m.new_cache()
    with torch.no_grad():
        m(torch.randint(0, 11, (2, 5)), cache=cache, start=0)
    k, v = cache[0]
    assert k.shape == v.shape == (2, n_kv, 5, 4)
    stored = sum(t.numel() for layer in cache for t in layer)
    full = 2 * 2 * 4 * 5 * 4 * 2  # K and V · layers · heads · tokens · head_dim · batch
    assert full / stored == 4 / n_kv


@pytest.mark.parametrize("n_kv", [1, 2])
def test_grouped_cache_equals_full_forward(n_kv):
    torch.manual_seed(1)
    m = MiniGPT(GPTConfig(vocab_size=11, block_size=8, d_model=16, n_heads=4, n_layers=2,
                          n_kv_heads=n_kv, pos_encoding="rope")).eval()
    idx = torch.randint(0, 11, (2, 7))
    with torch.no_grad():
        full, _ = m(idx)
        cache = m.new_cache()
        steps = [m(idx[:, t:t + 1], cache=cache, start=t)[0] for t in range(7)]
    assert torch.allclose(torch.cat(steps, dim=1), full, **MODEL_OUTPUT)  # cached steps vs one pass


def test_grouped_heads_share_keys_by_hand():
    # Two query heads, one key/value head: both heads must score against the same keys.
    torch.manual_seed(2)
    m = MiniGPT(GPTConfig(vocab_size=5, block_size=4, d_model=4, n_heads=2, n_layers=1,
                          n_kv_heads=1)).eval()
    assert m.blocks[0].attn.qkv.weight.shape == (4 + 2 * 2, 4)
    weights = m.attention_maps(torch.tensor([[1, 2, 3]]))[0]  # (heads, T, T)
    x = m.blocks[0].ln1(m.tok_emb(torch.tensor([[1, 2, 3]])) + m.pos_emb(torch.arange(3)))
    q, k, _ = m.blocks[0].attn.qkv(x)[0].split((4, 2, 2), dim=-1)
    for h in range(2):
        scores = q[:, 2 * h:2 * h + 2] @ k.T / math.sqrt(2)
        scores = scores.masked_fill(torch.ones(3, 3).triu(1).bool(), float("-inf"))
        assert torch.allclose(weights[h], scores.softmax(-1), **MODEL_OUTPUT)  # sdpa vs by hand


def test_parameter_count_formula_with_groups():
    cfg = GPTConfig(d_model=64, n_heads=4, n_layers=4, n_kv_heads=1)
    # per layer: W_Q, W_O 64·64 each; W_K, W_V 64·16 each; biases 64 + 16 + 16 + 64
    assert params.gpt_total(cfg) == sum(p.numel() for p in MiniGPT(cfg).parameters())
    assert params.gpt_total(GPTConfig()) - params.gpt_total(cfg) == 4 * (2 * 64 * 48 + 2 * 48)


@pytest.mark.parametrize("bad", [0, 3, -1])
def test_bad_group_count_is_a_clear_error(bad):
    with pytest.raises(ConfigError, match="n_kv_heads"):
        GPTConfig(n_heads=4, n_kv_heads=bad)


def test_grouped_packed_rows_give_the_same_loss_as_separate_rows():
    from minigpt.data import EncodedSplit, Vocab

    words = ["emma", "olivia", "ava", "isabella", "mia", "zoe", "al", "jo"]
    enc = EncodedSplit(words, Vocab.from_words(words), block_size=10)
    index = torch.arange(len(words))
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=enc.x.max().item() + 1, block_size=10, d_model=16,
                              n_heads=4, n_layers=2, n_kv_heads=2, pos_encoding="rope"))
    x, y = enc.batch(index)
    plain = model(x, y)[1]
    b = enc.packed_batch(index)
    assert b.x.shape[0] < len(words)
    packed = model(b.x, b.y, positions=b.positions, segments=b.segments)[1]
    torch.testing.assert_close(packed, plain, **MODEL_OUTPUT)  # packed rows vs one name a row
