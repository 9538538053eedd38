"""The explorers on a trained model (minigpt.teaching.model_views): every number equals what the
checkpoint's own tensors give, read here straight from its safetensors file; other kinds of
checkpoint are refused with one line."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from minigpt import paths
from minigpt.checkpoint import WEIGHTS, save_checkpoint
from minigpt.data import Vocab
from minigpt.errors import CheckpointError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT, sinusoidal_table
from minigpt.teaching import model_views
from minigpt.teaching.model_views import PROBE_NAMES, load_explorable

VOCAB = Vocab(tuple(".abcdefghijklmnopqrstuvwxyz"))


def snapshot(tmp_path, **config):
    """A trained-looking MiniGPT saved as step 200's snapshot of run r; (folder, its tensors)."""
    torch.manual_seed(0)
    cfg = dict(vocab_size=27, block_size=16, d_model=8, n_heads=2, n_layers=1) | config
    model = MiniGPT(GPTConfig(**cfg))
    for p in model.parameters():  # gains and biases away from 1 and 0
        p.data += 0.3 * torch.randn_like(p)
    path = save_checkpoint(tmp_path / "runs" / "r" / "snapshots" / "step-00000200", model, VOCAB)
    return path, {k: v.double() for k, v in load_file(path / WEIGHTS).items()}


def cos(a, b) -> float:
    return float(a @ b / (a.norm() * b.norm()))


def probe_batches():
    return [[0] + VOCAB.encode(n) for n in PROBE_NAMES]


def test_the_position_table_and_its_similarities_are_the_files(tmp_path):
    path, t = snapshot(tmp_path)
    view = model_views.position_view(load_explorable(path))
    wpe = t["pos_emb.weight"]
    assert view.label == "r · step 200" and view.learned
    assert torch.allclose(torch.tensor(view.table, dtype=torch.float64), wpe)
    assert view.similarity[3][7] == pytest.approx(cos(wpe[3], wpe[7]))
    assert view.similarity[5][5] == pytest.approx(1.0)
    assert view.norms[2] == pytest.approx(float(wpe[2].norm()))
    one_apart = sum(cos(wpe[i], wpe[i + 1]) for i in range(15)) / 15
    assert dict(view.by_distance)[1] == pytest.approx(one_apart)
    assert [k for k, _ in view.by_distance] == [1, 2, 4, 8]  # 16 positions: nothing 16 apart


def test_a_sinusoidal_model_shows_its_fixed_table(tmp_path):
    path, _ = snapshot(tmp_path, pos_encoding="sinusoidal")
    view = model_views.position_view(load_explorable(path))
    assert not view.learned
    assert torch.allclose(torch.tensor(view.table, dtype=torch.float64), sinusoidal_table(16, 8).double(), atol=1e-6)


def test_the_norm_gains_and_the_first_norms_spreads_are_the_files(tmp_path):
    path, t = snapshot(tmp_path)
    view = model_views.norm_view(load_explorable(path))
    assert view.rows == ["1.ln1", "1.ln2", "ln_f"] and view.kind == "layernorm" and view.names == len(PROBE_NAMES)
    for row, prefix in zip(view.values, ("blocks.0.ln1", "blocks.0.ln2", "ln_f")):
        g, b = t[f"{prefix}.weight"], t[f"{prefix}.bias"]
        assert row[:4] == pytest.approx([g.mean(), g.min(), g.max(), b.mean()])
    # b1.ln1 reads the embeddings: token row + position row, spread = each token's std
    ins, outs = [], []
    for ids in probe_batches():
        x = t["tok_emb.weight"][ids] + t["pos_emb.weight"][: len(ids)]
        y = F.layer_norm(x, (8,), t["blocks.0.ln1.weight"], t["blocks.0.ln1.bias"])
        ins += x.std(-1, unbiased=False).tolist()
        outs += y.std(-1, unbiased=False).tolist()
    assert view.values[0][4:] == pytest.approx([sum(ins) / len(ins), sum(outs) / len(outs)], rel=1e-5)


def test_an_rmsnorm_model_has_no_shift_and_spreads_by_rms(tmp_path):
    path, t = snapshot(tmp_path, norm="rmsnorm")
    view = model_views.norm_view(load_explorable(path))
    assert view.kind == "rmsnorm" and all(row[3] == 0.0 for row in view.values)
    ins = []
    for ids in probe_batches():
        x = t["tok_emb.weight"][ids] + t["pos_emb.weight"][: len(ids)]
        ins += x.pow(2).mean(-1).sqrt().tolist()  # RMSNorm's spread: no mean taken off
    assert view.values[0][4] == pytest.approx(sum(ins) / len(ins), rel=1e-5)
    assert math.isfinite(view.values[0][5])


def test_nearest_characters_are_the_embeddings_cosines(tmp_path):
    path, t = snapshot(tmp_path)
    view = model_views.token_view(load_explorable(path))
    wte = t["tok_emb.weight"]
    a = VOCAB.chars.index("a")
    want = sorted(((cos(wte[a], wte[j]), VOCAB.chars[j]) for j in range(27) if j != a), reverse=True)[:3]
    assert [(c, pytest.approx(v)) for v, c in want] == view.neighbours["a"]
    assert model_views.encode_known(view, "Ab!") == [("a", 1), ("b", 2), ("!", None)]


def test_the_measured_scores_are_the_models_own_q_and_k(tmp_path):
    path, t = snapshot(tmp_path)
    view = model_views.scaling_view(load_explorable(path))
    scores, tops = [], []
    for ids in probe_batches():
        x = t["tok_emb.weight"][ids] + t["pos_emb.weight"][: len(ids)]
        x = F.layer_norm(x, (8,), t["blocks.0.ln1.weight"], t["blocks.0.ln1.bias"])
        qkv = x @ t["blocks.0.attn.qkv.weight"].T + t["blocks.0.attn.qkv.bias"]
        for h in range(2):
            q, k = qkv[:, 4 * h: 4 * h + 4], qkv[:, 8 + 4 * h: 8 + 4 * h + 4]
            s = q @ k.T
            for i in range(len(ids)):
                scores += s[i, : i + 1].tolist()
                if i:
                    tops.append(float((s[i, : i + 1] / 2).softmax(-1).max()))
    assert view.d_k == 4 and view.scores == len(scores)
    assert view.std_raw == pytest.approx(float(torch.tensor(scores, dtype=torch.float64).std()), rel=1e-5)
    assert view.std_scaled == pytest.approx(view.std_raw / 2)
    assert view.max_weight_scaled == pytest.approx(sum(tops) / len(tops), rel=1e-5)


def test_rope_qk_norm_and_grouped_query_models_are_measured(tmp_path):
    path, _ = snapshot(tmp_path, pos_encoding="rope", qk_norm=True, n_kv_heads=1)
    ckpt = load_explorable(path)
    view = model_views.scaling_view(ckpt)
    assert view.scores > 0 and 0 < view.max_weight_scaled <= 1
    with pytest.raises(CheckpointError, match="RoPE: it has no position table"):
        model_views.position_view(ckpt)


def test_other_kinds_and_damaged_folders_are_refused_in_one_line(tmp_path):
    with pytest.raises(CheckpointError, match="bigram model") as e:
        load_explorable(paths.checkpoints_dir() / "bigram")
    assert "\n" not in str(e.value)
    with pytest.raises(CheckpointError, match="mlp model"):
        load_explorable(paths.checkpoints_dir() / "mlp")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError):
        load_explorable(broken)
    path, _ = snapshot(tmp_path, pos_encoding="none")
    with pytest.raises(CheckpointError, match="no position encoding"):
        model_views.position_view(load_explorable(path))
