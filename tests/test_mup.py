"""μP (minigpt/models/mup.py, its optimizer groups, minigpt/training/transfer.py) and the z-loss:
the options reach the model, μP at its base width is SP's model, the coordinate check is flat
under μP and grows under SP, and the sweep's optimum moves less under μP (soak: real runs)."""

from __future__ import annotations

import math

import pytest
import torch

from minigpt.data import IGNORE
from minigpt.errors import ConfigError
from minigpt.models.build import build_model
from minigpt.models.config import GPTConfig
from minigpt.models.loss import z_loss
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import _mup_groups
from minigpt.training.transfer import best_lr, coordinate_check, growth, optimum_spread
from tests.helpers.floats import MODEL_OUTPUT

MUP = dict(parametrization="mup", optimizer="adamw")


def model_for(d_model: int, **kw):
    torch.manual_seed(0)
    return build_model("gpt", TrainConfig(d_model=d_model, **kw).model_config(27, 16))


def test_the_options_reach_the_model_and_impossible_ones_are_refused():
    mc = TrainConfig(**MUP, z_loss=1e-4).model_config(27, 16)
    assert (mc.parametrization, mc.z_loss, mc.mup_base_width) == ("mup", 1e-4, 64)
    for kw, field in ((dict(parametrization="ntk"), "parametrization"), (dict(z_loss=-1.0), "z_loss"),
                      (dict(z_loss=2.0), "z_loss"), (dict(parametrization="mup"), "parametrization"),
                      (dict(MUP, tie_weights=True), "parametrization")):
        with pytest.raises(ConfigError) as e:
            TrainConfig(**kw)  # mup alone keeps the default Muon: refused, μP's rules are Adam's
        assert e.value.field == field, kw
    with pytest.raises(ConfigError, match="untie"):
        GPTConfig(parametrization="mup", tie_weights=True)


def test_at_the_base_width_mup_builds_the_sp_model_with_a_zero_head():
    sp, mup = model_for(64, optimizer="adamw"), model_for(64, **MUP)
    for (name, a), (_, b) in zip(sp.named_parameters(), mup.named_parameters()):
        if name == "head.weight":
            assert not b.any() and a.any()
        else:
            assert torch.equal(a, b), name  # the same seed, the same init: exactly the same
    assert sp.blocks[0].attn.scale == mup.blocks[0].attn.scale == 1 / 4  # 1/√16 at head width 16


def test_mup_scales_init_lr_logits_and_attention_with_the_width():
    wide = model_for(128, n_layers=1, **MUP)  # m = 2
    assert wide.output_mult == 0.5
    assert math.isclose(wide.blocks[0].attn.scale, 4 / 32, rel_tol=1e-6)  # √(base head width 16) / 32: ∝ 1/d
    std = wide.blocks[0].attn.qkv.weight.std().item()
    assert 0.0134 < std < 0.0149  # 0.02 / √2 (128 × 384 draws: within 5%)
    groups = _mup_groups(wide, TrainConfig(d_model=128, n_layers=1, lr=0.01, **MUP))  # make_optimizer's
    hidden = {id(p) for n, p in wide.named_parameters() if n.startswith("blocks.") and p.dim() == 2}
    for g in groups:
        is_hidden = {id(p) in hidden for p in g["params"]}
        assert len(is_hidden) == 1  # a group is all hidden matrices or none
        assert g["lr_mult"] == (0.5 if is_hidden.pop() else 1.0) and math.isclose(g["lr"], 0.01 * g["lr_mult"], rel_tol=1e-6)


def test_the_coordinate_check_is_flat_under_mup_and_grows_under_sp():
    """Three Adam steps at one lr on one batch, widths 32 to 256: under SP the logits' and the
    residual stream's change grows with the width (eightfold width: ≥ 3× and ≥ 10×), under μP
    each stays within 30% of the narrowest model's."""
    sp, mup = coordinate_check("sp"), coordinate_check("mup")
    for key in ("logits", "logits_change", "stream_change"):
        assert 0.7 < growth(mup, key) < 1.3, (key, mup)
    assert growth(sp, "logits_change") > 3 and growth(sp, "stream_change") > 10, sp
    assert coordinate_check("mup", widths=(32, 64)) == {w: mup[w] for w in (32, 64)}  # deterministic


def test_best_lr_refines_the_grid_minimum_and_spread_counts_decades():
    lrs = (1e-3, 1e-2, 1e-1)
    assert math.isclose(best_lr(lrs, [3.0, 2.0, 3.0]), 1e-2, rel_tol=1e-6)  # symmetric: the middle
    assert 1e-2 < best_lr(lrs, [3.0, 2.0, 2.5]) < 10 ** -1.5  # leans towards the better neighbour
    assert best_lr(lrs, [2.0, 2.5, None]) == 1e-3 and best_lr(lrs, [None, None, None]) is None
    assert math.isclose(optimum_spread({32: [2.0, 3.0, 4.0], 64: [4.0, 3.0, 2.0]}, lrs), 2.0, rel_tol=1e-6)


def test_z_loss_is_the_mean_square_log_normaliser_and_trains_only():
    logits = torch.tensor([[[0.0, math.log(3.0)], [5.0, 5.0]]])  # Z = 4 and 2·e⁵
    targets = torch.tensor([[1, IGNORE]])  # the second position is padding: left out
    assert math.isclose(float(z_loss(logits, targets)), math.log(4.0) ** 2, rel_tol=1e-6)
    cfg = dict(vocab_size=27, block_size=16, d_model=32, n_heads=2, n_layers=1)
    torch.manual_seed(0)
    plain = build_model("gpt", GPTConfig(**cfg))
    torch.manual_seed(0)
    with_z = build_model("gpt", GPTConfig(**cfg, z_loss=0.5))
    x = torch.randint(0, 27, (2, 8), generator=torch.Generator().manual_seed(1))
    logits, loss = plain(x, x)
    _, trained = with_z(x, x)
    torch.testing.assert_close(trained, loss + 0.5 * z_loss(logits, x), **MODEL_OUTPUT)
    plain.eval(), with_z.eval()
    torch.testing.assert_close(with_z(x, x)[1], plain(x, x)[1], **MODEL_OUTPUT)  # evaluation: next-token only


@pytest.mark.soak
def test_the_mup_optimum_moves_less_across_widths_than_sps():
    """The lab job's claim on a cut-down sweep (widths 32 and 128, the job's steps): the best learning
    rate under SP falls as the model widens; under μP it moves less."""
    from minigpt.training.transfer import lr_sweep

    result = lr_sweep(widths=(32, 128))
    assert result["mup"]["spread_decades"] < result["sp"]["spread_decades"], result
    assert result["sp"]["best_lr"]["128"] < result["sp"]["best_lr"]["32"], result


def test_the_schedule_keeps_mups_hidden_share_of_the_learning_rate():
    """apply_lr (the trainer's and the short runs' per-step lr) keeps μP's 1/m on the hidden matrices."""
    from types import SimpleNamespace

    from minigpt.training.schedule import apply_lr

    groups = _mup_groups(model_for(128, n_layers=1, **MUP), TrainConfig(d_model=128, n_layers=1, lr=0.01, **MUP))
    optimizer = SimpleNamespace(param_groups=groups + [{"params": [], "muon": True, "momentum": 0.9}])
    apply_lr(optimizer, 0.004, momentum=0.95)
    assert sorted(g["lr"] for g in groups) == [0.002, 0.004, 0.004]
    assert optimizer.param_groups[-1] == {"params": [], "muon": True, "momentum": 0.95, "lr": 0.004}


@pytest.mark.soak
def test_the_trainer_keeps_mups_hidden_learning_rate_under_the_schedule(tmp_path):
    """The real trainer (20 s under load: soak) with μP and z-loss: the optimizer saved in last/
    keeps the 1/m share, and the run's config.json names μP."""
    from minigpt.checkpoint_meta import read_checkpoint_meta
    from minigpt.runs.files import LAST_DIR
    from minigpt.training.loop import train
    from minigpt.training.options import load_run_config

    cfg = TrainConfig(d_model=128, n_layers=1, n_heads=4, batch_size=8, steps=2, eval_interval=2, lr=0.01,
                      warmup=0.0, ema=0.0, layer_every=0, z_loss=1e-4, device="cpu", **MUP)
    train(cfg, tmp_path / "run")
    groups = read_checkpoint_meta(tmp_path / "run" / LAST_DIR).optimizer["param_groups"]
    assert sorted(g["lr_mult"] for g in groups) == [0.5, 1.0, 1.0]
    for g in groups:
        assert math.isclose(g["lr"], g["lr_mult"] * groups[-1]["lr"] / groups[-1]["lr_mult"], rel_tol=1e-6)
    saved = load_run_config(tmp_path / "run")
    assert (saved.parametrization, saved.z_loss) == ("mup", 1e-4)
