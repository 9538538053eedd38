"""The speedrun's tricks (minigpt/models/speedrun.py and their wiring in gpt.py, schedule.py)."""

import math
import os
import signal
from pathlib import Path

import pytest
import torch

from minigpt.checkpoint import load_checkpoint
from minigpt.data import IGNORE, EncodedSplit, Vocab
from minigpt.errors import ConfigError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.models.speedrun import after_next_targets, previous_tokens, softcap
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import batch_size_at, make_optimizer, muon_momentum_at
from tests.helpers.floats import GRADIENT, MODEL_OUTPUT

ALL_ON = dict(bigram="residual", smear=True, value_residual=True, x0_shortcut=True, softcap=15.0, mtp_weight=0.3)
TRICKS = [dict(bigram="residual"), dict(bigram="logits"), dict(smear=True), dict(value_residual=True),
          dict(x0_shortcut=True), dict(softcap=15.0), dict(zero_init=True), dict(mtp_weight=0.5), ALL_ON,
          dict(ALL_ON, n_kv_heads=1, pos_encoding="rope")]


def make(**kw) -> MiniGPT:
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=11, block_size=10, d_model=16, n_heads=2, n_layers=2, **kw))
    with torch.no_grad():  # the tricks start switched off (λ = 0, tables at 0): switch them on
        for name, p in model.named_parameters():
            if p.dim() == 0 or name.endswith("lambdas") or "bigram" in name or p.abs().sum() == 0:
                p.normal_(0, 0.5)
    return model


@pytest.mark.parametrize("kw", TRICKS)
def test_kv_cache_equals_full_forward_with_the_trick_on(kw):
    m = make(**kw).eval()
    idx = torch.randint(0, 11, (3, 9), generator=torch.Generator().manual_seed(1))
    full, _ = m(idx)
    cache = m.new_cache()
    steps = [m(idx[:, :3], cache=cache, start=0)[0]]
    steps += [m(idx[:, t : t + 1], cache=cache, start=t)[0] for t in range(3, 9)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **MODEL_OUTPUT)  # cached steps vs one pass
    last, _ = m(idx, last_only=True)
    torch.testing.assert_close(last[:, 0], full[:, -1], **MODEL_OUTPUT)  # last row alone vs all rows


@pytest.mark.parametrize("kw", [dict(bigram="residual"), dict(smear=True), dict(mtp_weight=0.5), ALL_ON])
def test_packed_rows_keep_words_apart_with_the_trick_on(kw):
    """Packed words must not see the word before them: no smear, no pair, no after-next target across."""
    words = ["emma", "olivia", "ava", "isabella", "mia", "zoe", "al", "christopher", "jo", "bo"]
    enc = EncodedSplit(words, Vocab.from_words(words), block_size=12)
    index = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2])
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=int(enc.x.max()) + 1, block_size=12, d_model=16, n_heads=2, n_layers=2,
                              **kw))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 0 or name.endswith("lambdas") or "bigram" in name:
                p.normal_(0, 0.5)
    x, y = enc.batch(index)
    _, plain = model(x, y)
    plain.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    b = enc.packed_batch(index)
    assert b.x.shape[0] < len(index)
    _, packed = model(b.x, b.y, positions=b.positions, segments=b.segments)
    packed.backward()
    torch.testing.assert_close(packed, plain, **MODEL_OUTPUT)  # packed rows vs one name a row
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(p.grad, g, **GRADIENT)


def test_previous_tokens_by_hand():
    idx = torch.tensor([[0, 5, 6, 0, 7]])
    positions = torch.tensor([[0, 1, 2, 0, 1]])  # two packed words
    assert previous_tokens(idx, positions, None, none=27).tolist() == [[27, 0, 5, 27, 0]]
    assert previous_tokens(idx, torch.arange(5), None, none=27).tolist() == [[27, 0, 5, 6, 0]]


def test_after_next_targets_by_hand():
    y = torch.tensor([[5, 6, 0, 7, 0, IGNORE]])
    segments = torch.tensor([[0, 0, 0, 1, 1, -1]])
    assert after_next_targets(y, segments).tolist() == [[6, 0, IGNORE, 0, IGNORE, IGNORE]]
    assert after_next_targets(y, None).tolist() == [[6, 0, 7, 0, IGNORE, IGNORE]]


def test_softcap_bounds_the_logits_and_leaves_small_ones():
    z = torch.tensor([-1000.0, -1.0, 0.0, 0.5, 1000.0])
    capped = softcap(z, 15.0)
    assert capped.abs().max() <= 15.0
    assert math.isclose(float(capped[3]), 15 * math.tanh(0.5 / 15), rel_tol=1e-6)
    assert abs(float(capped[3]) - 0.5) < 1e-3
    assert softcap(z, None) is z
    m = make(softcap=2.0).eval()
    with torch.no_grad():
        m.head.weight.mul_(100)  # huge logits without the cap
    logits, _ = m(torch.randint(0, 11, (2, 5)))
    assert logits.abs().max() <= 2.0


def test_zero_init_starts_uniform_with_identity_blocks():
    torch.manual_seed(0)
    m = MiniGPT(GPTConfig(vocab_size=11, block_size=10, d_model=16, n_heads=2, n_layers=2, zero_init=True))
    for name, p in m.named_parameters():
        if name.endswith(("attn.proj.weight", "ffn.down.weight", "head.weight")):
            assert not p.any(), name
    idx = torch.randint(0, 11, (2, 6))
    logits, loss = m(idx, idx)
    assert not logits.any() and math.isclose(float(loss), math.log(11), rel_tol=1e-6)
    tied = MiniGPT(GPTConfig(vocab_size=11, block_size=10, d_model=16, n_heads=2, n_layers=1, zero_init=True,
                             tie_weights=True))
    assert tied.tok_emb.weight.any() and tied.head.weight is tied.tok_emb.weight  # the embedding is kept


def test_the_tricks_start_as_the_plain_model():
    """Tables at zero, λ at zero (x0, smear): the first forward is the plain model's."""
    kw = dict(vocab_size=11, block_size=10, d_model=16, n_heads=2, n_layers=2)
    torch.manual_seed(0)
    plain = MiniGPT(GPTConfig(**kw)).eval()
    torch.manual_seed(0)
    tricks = MiniGPT(GPTConfig(**kw, bigram="residual", smear=True, x0_shortcut=True)).eval()
    tricks.load_state_dict(plain.state_dict(), strict=False)
    idx = torch.randint(0, 11, (2, 7))
    torch.testing.assert_close(tricks(idx)[0], plain(idx)[0])


def test_bigram_logits_add_the_current_characters_row():
    m = make(bigram="logits").eval()
    idx = torch.randint(0, 11, (2, 6))
    with_table, _ = m(idx)
    table = m.bigram_logits.weight.detach().clone()
    with torch.no_grad():
        m.bigram_logits.weight.zero_()
    without, _ = m(idx)
    torch.testing.assert_close(with_table - without, table[idx])


def test_value_residual_mixes_the_first_layers_values():
    m = make(value_residual=True).eval()
    idx = torch.randint(0, 11, (2, 6))
    with torch.no_grad():
        m.value_lambdas.fill_(0.0)  # λ = 0: each layer keeps its own values, the plain model
        mixed_off, _ = m(idx)
        m.value_lambdas.fill_(0.7)
        mixed_on, _ = m(idx)
    torch.manual_seed(0)
    plain = MiniGPT(GPTConfig(vocab_size=11, block_size=10, d_model=16, n_heads=2, n_layers=2)).eval()
    plain.load_state_dict(m.state_dict(), strict=False)
    torch.testing.assert_close(mixed_off, plain(idx)[0])
    assert not torch.allclose(mixed_on, mixed_off)


def test_multi_token_prediction_only_adds_to_the_training_loss():
    m = make(mtp_weight=0.5)
    idx = torch.randint(1, 11, (3, 7))
    m.eval()
    logits, eval_loss = m(idx, idx)
    flat = torch.nn.functional.cross_entropy(logits.reshape(-1, 11), idx.reshape(-1))
    torch.testing.assert_close(eval_loss, flat)
    m.train()
    _, train_loss = m(idx, idx)
    assert float(train_loss) > float(eval_loss)
    train_loss.backward()
    assert m.mtp_head.weight.grad.abs().sum() > 0


def test_the_default_model_has_none_of_the_tricks():
    m = MiniGPT(GPTConfig())
    assert all(getattr(m, part) is None for part in ("bigram_table", "bigram_logits", "smear", "x0_lambdas",
                                                     "value_lambdas", "mtp_head"))
    assert sum(p.numel() for p in m.parameters()) == 204_544


@pytest.mark.parametrize("kw, field", [
    (dict(bigram="hash"), "bigram"), (dict(softcap=0.0), "softcap"), (dict(softcap=True), "softcap"),
    (dict(mtp_weight=-1.0), "mtp_weight"),
])
def test_model_config_refuses_impossible_tricks(kw, field):
    with pytest.raises(ConfigError) as e:
        GPTConfig(**kw)
    assert e.value.field == field


@pytest.mark.parametrize("kw, field", [
    (dict(softcap=0.5), "softcap"), (dict(momentum_warmup=-1), "momentum_warmup"),
    (dict(batch_ramp=1.5), "batch_ramp"), (dict(bigram="pairs"), "bigram"), (dict(mtp_weight=11.0), "mtp_weight"),
])
def test_training_options_refuse_values_out_of_bounds(kw, field):
    with pytest.raises(ConfigError) as e:
        TrainConfig(**kw)
    assert e.value.field == field


def test_training_options_reach_the_model():
    cfg = TrainConfig(bigram="logits", smear=True, value_residual=True, x0_shortcut=True, softcap=20.0,
                      zero_init=True, mtp_weight=0.2)
    mc = cfg.model_config(27, 16)
    assert (mc.bigram, mc.smear, mc.value_residual, mc.x0_shortcut, mc.softcap, mc.zero_init, mc.mtp_weight) == (
        "logits", True, True, True, 20.0, True, 0.2)


def test_muon_momentum_warms_up_linearly():
    cfg = TrainConfig(momentum_warmup=300)
    assert [round(muon_momentum_at(cfg, s), 6) for s in (0, 150, 300, 3000)] == [0.85, 0.9, 0.95, 0.95]
    assert muon_momentum_at(TrainConfig(), 0) == 0.95
    opt = make_optimizer(MiniGPT(GPTConfig()), cfg, torch.device("cpu"))
    assert [g["momentum"] for g in opt.param_groups if g["muon"]] == [0.85]


def test_batch_ramp_grows_from_a_quarter():
    cfg = TrainConfig(batch_size=128, batch_ramp=0.5)
    assert [batch_size_at(cfg, p) for p in (0.0, 0.25, 0.5, 0.9)] == [32, 80, 128, 128]
    assert batch_size_at(TrainConfig(batch_size=128), 0.0) == 128


def test_a_run_with_every_trick_stops_resumes_and_keeps_them(tmp_path):
    """A real training run with every trick on (Muon's warm-up and the batch ramp too), stopped at
    step 20 and resumed to 40: the tricks survive config.json and the checkpoint."""
    repo = Path(__file__).resolve().parents[1]
    names = tmp_path / "names.txt"
    names.write_text("\n".join((repo / "data" / "names.txt").read_text().split()[:300]) + "\n")
    cfg = dict(d_model=16, n_heads=2, n_layers=2, batch_size=16, steps=40, eval_interval=20, log_interval=5,
               data=str(names), device="cpu", momentum_warmup=30, batch_ramp=0.5, zero_init=True, **ALL_ON)

    def stop_at_20(rec):
        if rec["step"] == 20:
            os.kill(os.getpid(), signal.SIGTERM)

    first = train(TrainConfig(**cfg), tmp_path / "run", on_log=stop_at_20)
    assert first["state"] == "stopped" and first["step"] == 20
    resumed = train(None, tmp_path / "run", resume=True)
    assert resumed["state"] == "finished" and resumed["step"] == 40
    assert resumed["val_loss"] < first["val_loss"]
    mc = load_checkpoint(tmp_path / "run" / "checkpoint").model_config
    assert (mc.bigram, mc.smear, mc.value_residual, mc.x0_shortcut, mc.softcap, mc.zero_init, mc.mtp_weight) == (
        "residual", True, True, True, 15.0, True, 0.3)
