import pytest
import torch

from minigpt.data import IGNORE
from minigpt.models.build import build_model, count_parameters, on_meta_device
from minigpt.models.config import BigramConfig, GPTConfig, MLPConfig
from minigpt.models.gpt import CausalSelfAttention, MiniGPT
from minigpt.teaching import attention, params
from tests.helpers.floats import GRADIENT, MODEL_OUTPUT


def make(kind, **kw):
    cfg = {"gpt": GPTConfig, "mlp": MLPConfig, "bigram": BigramConfig}[kind](vocab_size=11, block_size=8, **kw)
    torch.manual_seed(0)
    return build_model(kind, cfg)


@pytest.mark.parametrize("kind", ["gpt", "mlp", "bigram"])
def test_forward_shapes_and_loss(kind):
    m = make(kind)
    idx = torch.randint(0, 11, (3, 6))
    logits, loss = m(idx)
    assert logits.shape == (3, 6, 11) and loss is None
    logits, loss = m(idx, idx)
    assert loss.ndim == 0 and torch.isfinite(loss)
    last, _ = m(idx, last_only=True)
    assert last.shape == (3, 1, 11)
    assert torch.allclose(last[:, 0], logits[:, -1], **MODEL_OUTPUT)  # last row alone vs all rows


@pytest.mark.parametrize("kind", ["gpt", "mlp", "bigram"])
def test_loss_ignores_padding(kind):
    m = make(kind).eval()
    x = torch.randint(1, 11, (2, 5))
    y = torch.randint(0, 11, (2, 5))
    _, short = m(x[:, :3], y[:, :3])
    y_pad = y.clone()
    y_pad[:, 3:] = IGNORE
    _, padded = m(x, y_pad)
    assert torch.allclose(short, padded, **MODEL_OUTPUT)  # 3 columns vs 5, two reductions


@pytest.mark.parametrize("pos, variant", [
    ("learned", {}), ("sinusoidal", {}), ("rope", {}), ("none", {}),
    ("rope", dict(norm="rmsnorm", ffn="swiglu", qk_norm=True, bias=False)), ("learned", dict(ffn="relu2")),
])
def test_kv_cache_equals_full_forward(pos, variant):
    m = make("gpt", d_model=16, n_heads=2, n_layers=2, pos_encoding=pos, **variant).eval()
    idx = torch.randint(0, 11, (2, 7))
    full, _ = m(idx)
    cache = m.new_cache()
    first, _ = m(idx[:, :3], cache=cache, start=0)
    steps = [first]
    for t in range(3, 7):
        out, _ = m(idx[:, t : t + 1], cache=cache, start=t)
        steps.append(out)
    assert torch.allclose(torch.cat(steps, dim=1), full, **MODEL_OUTPUT)  # cached steps vs one pass


def test_teaching_attention_equals_sdpa_path():
    cfg = GPTConfig(vocab_size=5, block_size=8, d_model=6, n_heads=1, n_layers=1, bias=False)
    torch.manual_seed(3)
    layer = CausalSelfAttention(cfg).eval()
    x = torch.randn(1, 5, 6)
    with torch.no_grad():
        ours, _, _ = layer(x)
        W = layer.qkv.weight  # (3d, d), rows: W_Q | W_K | W_V, applied as x @ Wᵀ
        W_q, W_k, W_v = (W[i * 6 : (i + 1) * 6].T.double() for i in range(3))
        tr = attention.self_attention(x[0].double(), W_q, W_k, W_v, causal=True)
        teach = tr.output @ layer.proj.weight.T.double()
    assert torch.allclose(ours[0].double(), teach, **MODEL_OUTPUT)  # float32 sdpa vs float64 by hand


def test_gpt2_small_on_meta_device():
    with torch.device("meta"):
        m = MiniGPT(params.GPT2_SMALL)
    n = sum(p.numel() for p in m.parameters())
    assert n == 124_439_808
    assert params.gpt_total(params.GPT2_SMALL) == n
    L, d = 12, 768
    blocks = sum(p.numel() for p in m.blocks.parameters())
    assert blocks == L * params.block_params(d)
    assert params.rule_of_thumb(L, d) == 12 * L * d * d == 84_934_656
    assert 0 < blocks - params.rule_of_thumb(L, d) < 0.002 * blocks  # only biases and norms differ


@pytest.mark.parametrize("d, heads, layers, pos, tie, bias", [
    (8, 1, 1, "learned", False, True), (16, 4, 2, "sinusoidal", True, True),
    (32, 2, 3, "rope", False, False), (64, 4, 4, "learned", True, False), (24, 3, 2, "rope", True, True),
])
def test_param_formula_matches_model(d, heads, layers, pos, tie, bias):
    cfg = GPTConfig(vocab_size=27, block_size=16, d_model=d, n_heads=heads, n_layers=layers,
                    pos_encoding=pos, tie_weights=tie, bias=bias)
    m = MiniGPT(cfg)
    assert params.gpt_total(cfg) == sum(p.numel() for p in m.parameters()) == count_parameters(m)


@pytest.mark.parametrize("norm, ffn, qk_norm, bias", [
    ("rmsnorm", "gelu", False, True), ("layernorm", "swiglu", False, True), ("rmsnorm", "swiglu", True, False),
    ("layernorm", "relu2", True, True),
])
def test_param_formula_matches_the_recipe_variants(norm, ffn, qk_norm, bias):
    cfg = GPTConfig(vocab_size=27, block_size=16, d_model=48, n_heads=4, n_layers=2, norm=norm, ffn=ffn,
                    qk_norm=qk_norm, bias=bias, pos_encoding="none")
    assert params.gpt_total(cfg) == count_parameters(MiniGPT(cfg))


def test_default_model_size():
    m = MiniGPT(GPTConfig())
    assert count_parameters(m) == 204_544  # makemore's transformer at 64 wide, 4 layers


@pytest.mark.parametrize("pos, variant", [
    ("learned", {}), ("sinusoidal", {}), ("rope", {}), ("none", {}),
    ("rope", dict(norm="rmsnorm", ffn="swiglu", qk_norm=True, bias=False)),
])
def test_packed_rows_give_the_same_loss_and_gradients(pos, variant):
    from minigpt.data import EncodedSplit, Vocab

    words = ["emma", "olivia", "ava", "isabella", "mia", "zoe", "al", "christopher", "jo", "bo"]
    enc = EncodedSplit(words, Vocab.from_words(words), block_size=12)
    index = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2])  # a repeat, as random batches have
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=enc.x.max().item() + 1, block_size=12, d_model=16, n_heads=2,
                              n_layers=2, pos_encoding=pos, **variant))
    x, y = enc.batch(index)
    _, plain = model(x, y)
    plain.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    b = enc.packed_batch(index)
    assert b.x.shape[0] < len(index)  # it did pack
    _, packed = model(b.x, b.y, positions=b.positions, segments=b.segments)
    packed.backward()
    torch.testing.assert_close(packed, plain, **MODEL_OUTPUT)  # packed rows vs one name a row
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(p.grad, g, **GRADIENT)


def test_forward_has_one_return_shape_whatever_its_options():
    import torch

    from minigpt.models.config import GPTConfig
    from minigpt.models.gpt import MiniGPT

    torch.manual_seed(0)
    m = MiniGPT(GPTConfig(vocab_size=7, block_size=8, d_model=8, n_heads=2, n_layers=1)).eval()
    idx = torch.randint(0, 7, (2, 5))
    variants = [
        {}, {"last_only": True}, {"cache": m.new_cache()},
        {"positions": torch.arange(5).repeat(2, 1), "segments": torch.zeros(2, 5, dtype=torch.long)},
    ]
    for kw in variants:
        out = m(idx, None if kw.get("last_only") else idx, **kw)
        assert isinstance(out, tuple) and len(out) == 2, kw
        assert out[0].shape[-1] == 7
        assert out[1] is None if kw.get("last_only") else out[1].dim() == 0
    assert m(idx)[1] is None
    maps = m.attention_maps(idx[:1])
    assert maps.shape == (1, 2, 5, 5)
    assert torch.allclose(maps.sum(-1), torch.ones(1, 2, 5))


def test_a_model_built_on_the_meta_device_has_its_shapes_and_costs_no_compiler_import():
    # torch's normal_ has no meta kernel: without on_meta_device its first call imports
    # torch._dynamo, seconds of every CLI command that loads a checkpoint.
    import subprocess
    import sys

    code = ("import sys; from minigpt.checkpoint import load_checkpoint; load_checkpoint('checkpoints/default'); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=__import__("pathlib").Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"
    cfg = GPTConfig(vocab_size=27, block_size=16, d_model=32, n_heads=2, n_layers=2)
    with on_meta_device():
        shapes = {k: v.shape for k, v in MiniGPT(cfg).state_dict().items()}
    assert shapes == {k: v.shape for k, v in MiniGPT(cfg).state_dict().items()}


def test_skipping_initialisation_on_the_meta_device_leaves_other_threads_alone():
    import threading

    built = {}
    with on_meta_device():
        worker = threading.Thread(target=lambda: built.setdefault("emb", torch.nn.Embedding(500, 64)))
        worker.start()
        worker.join()
        assert torch.nn.Embedding(3, 4).weight.is_meta
    assert 0.9 < built["emb"].weight.std().item() < 1.1  # initialised: N(0, 1)
