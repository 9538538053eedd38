"""minigpt.training.muon: the Newton–Schulz orthogonalization, and Muon as a training option
(trains, stops and resumes to exactly the run that was never interrupted)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import torch

from minigpt.checkpoint import load_checkpoint
from minigpt.models.gpt import MiniGPT
from minigpt.training.loop import train
from minigpt.training.muon import Muon, orthogonalize
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import make_optimizer

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("shape", [(64, 256), (256, 64), (3, 48, 48)])
def test_orthogonalize_flattens_the_singular_values(shape):
    g = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    s = torch.linalg.svdvals(orthogonalize(g))
    # Muon's quintic trades exactness for speed: every singular value lands in about [0.68, 1.2]
    assert s.min() > 0.6 and s.max() < 1.25
    assert torch.linalg.svdvals(g).max() / torch.linalg.svdvals(g).min() > 2  # unlike g's own


def test_orthogonalize_keeps_the_directions():
    """U·Vᵀ of g: its product with g's right singular vectors points along g's left ones."""
    g = torch.randn(32, 48, generator=torch.Generator().manual_seed(1))
    u, _, vh = torch.linalg.svd(g, full_matrices=False)
    o = orthogonalize(g, steps=10)
    cosines = torch.nn.functional.cosine_similarity((o @ vh.T).T, u.T, dim=1)
    assert cosines.min() > 0.99


def test_muon_takes_only_the_block_matrices():
    cfg = TrainConfig(optimizer="muon")
    model = MiniGPT(cfg.model_config(27, 16))
    opt = make_optimizer(model, cfg, torch.device("cpu"))
    assert isinstance(opt, Muon)
    names = {id(p): n for n, p in model.named_parameters()}
    muon = [names[id(p)] for g in opt.param_groups if g["muon"] for p in g["params"]]
    assert muon and all(n.startswith("blocks.") and n.endswith(".weight") for n in muon)
    assert not any("ln" in n or "emb" in n or "head" in n for n in muon)
    total = sum(len(g["params"]) for g in opt.param_groups)
    assert total == len(list(model.parameters()))  # every parameter in exactly one group
    assert opt.param_groups[0]["lr_scale"] == pytest.approx(0.02 / 5e-3)


def test_muon_state_survives_a_checkpoint(tmp_path):
    """Momentum buffers and the AdamW moments of the other groups come back exactly, so a resumed
    run continues the same optimizer."""
    from minigpt.checkpoint import load_optimizer_state, save_checkpoint
    from minigpt.data import Vocab

    cfg = TrainConfig(d_model=16, n_heads=2, n_layers=1)
    torch.manual_seed(0)
    model = MiniGPT(cfg.model_config(27, 16))
    opt = make_optimizer(model, cfg, torch.device("cpu"))
    x = torch.randint(0, 27, (8, 16))
    for _ in range(3):
        _, loss = model(x, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    save_checkpoint(tmp_path / "ck", model, Vocab.from_words(["abcdefghijklmnopqrstuvwxyz"]), train_config=cfg.to_dict(), optimizer=opt)
    fresh = make_optimizer(model, cfg, torch.device("cpu"))
    assert load_optimizer_state(tmp_path / "ck", fresh)
    for p in model.parameters():
        a, b = opt.state[p], fresh.state[p]
        assert a.keys() == b.keys() and all(torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in a)
    assert [g["muon"] for g in fresh.param_groups] == [True, False, False]


def test_a_muon_run_of_the_recipe_variants_stops_and_resumes(tmp_path, names):
    cfg = dict(d_model=16, n_heads=2, n_layers=1, batch_size=16, steps=40, eval_interval=20, log_interval=5,
               data=str(names), optimizer="muon", norm="rmsnorm", ffn="swiglu", schedule="wsd", device="cpu")

    def stop_at_20(rec):
        if rec["step"] == 20:
            os.kill(os.getpid(), signal.SIGTERM)

    first = train(TrainConfig(**cfg), tmp_path / "split", on_log=stop_at_20)
    assert first["state"] == "stopped" and first["step"] == 20
    resumed = train(None, tmp_path / "split", resume=True)
    assert resumed["state"] == "finished" and resumed["step"] == 40
    assert resumed["val_loss"] < first["val_loss"]
    assert load_checkpoint(tmp_path / "split" / "checkpoint").model_config.ffn == "swiglu"
