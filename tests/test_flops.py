"""The FLOP count behind MFU, worked by hand, and the GPU options that can be checked without a GPU."""

from __future__ import annotations

import pytest
import torch

from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.training import flops
from minigpt.training.devices import autocast_dtype, autocast_for


def test_six_n_plus_attention_by_hand():
    # N = 1,000,000 counted parameters, 2 layers, d = 128, T = 64:
    # 6 × 1e6 + 12 × 2 × 128 × 64 = 6,000,000 + 196,608
    c = flops.gpt_step_cost(1_100_000, 100_000, n_layers=2, d_model=128, context=64)
    assert c.params_counted == 1_000_000
    assert c.flops_per_token == 6_196_608
    assert c.model_flops(1000.0) == 6_196_608_000


def test_mfu_against_a_known_peak():
    c = flops.gpt_step_cost(10_000_000, 0, 6, 384, 256)  # 6e7 + 12·6·384·256 = 67,077,888
    peak = flops.peak_flops("NVIDIA H200", "bfloat16")
    assert peak == 989e12
    # 1e6 tokens/s × 67,077,888 FLOPs = 6.7077888e13 FLOP/s → 6.78% of 989 TFLOP/s
    assert flops.mfu(1e6, c, peak) == pytest.approx(6.7077888e13 / 989e12)
    assert flops.peak_flops("Some CPU", "float32") is None and flops.mfu(1e6, c, None) is None


def test_cost_of_a_real_minigpt_leaves_the_embeddings_out():
    m = MiniGPT(GPTConfig(vocab_size=27, block_size=16, d_model=32, n_heads=4, n_layers=2))
    c = flops.cost_of(m)
    total = sum(p.numel() for p in m.parameters())
    assert c.params_counted == total - 27 * 32 - 16 * 32
    assert c.flops_per_token == 6 * c.params_counted + 12 * 2 * 32 * 16


def test_autocast_selection():
    assert autocast_dtype("cpu", "auto") is None  # CPU stays float32 unless asked
    assert autocast_dtype("cpu", "bfloat16") is torch.bfloat16
    assert autocast_dtype("cuda", "auto") is torch.bfloat16
    assert autocast_dtype("cuda", "float32") is None
    assert not autocast_for(torch.device("cpu"), "auto")._enabled
    assert autocast_for(torch.device("cpu"), "bfloat16")._enabled


def test_compile_flag_reaches_the_training_step(tmp_path, monkeypatch):
    from minigpt.training import loop
    from minigpt.training.options import TrainConfig

    compiled = []

    def fake_compile(model, **kwargs):
        compiled.append(type(model).__name__)
        return model

    monkeypatch.setattr(torch, "compile", fake_compile)
    names = tmp_path / "n.txt"
    names.write_text("\n".join(["anna", "bob", "cara", "dan", "eve", "finn"] * 5))
    cfg = TrainConfig(data=str(names), d_model=8, n_heads=2, n_layers=1, steps=3, eval_interval=3,
                      device="cpu", compile=True)
    loop.train(cfg, tmp_path / "run")
    assert compiled == ["MiniGPT"]
    import json
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    first = next(r for r in records if "step" in r)  # after the file's header
    assert first["tokens_per_s"] is None and "compile_s" in first  # warm-up left out of tok/s


def test_compile_is_turned_off_with_its_reason_where_it_cannot_run(tmp_path, monkeypatch):
    import json

    from torch._inductor import cpp_builder

    from minigpt.training import devices, loop
    from minigpt.training.options import TrainConfig

    def no_compiler(*args, **kwargs):
        raise RuntimeError("no compiler")

    monkeypatch.setattr(cpp_builder, "get_cpp_compiler", no_compiler)
    reason = devices.compile_unsupported(torch.device("cpu"))
    assert reason is not None and "C++ compiler" in reason
    monkeypatch.setattr(torch, "compile", lambda *a, **k: pytest.fail("compiled where it cannot run"))
    names = tmp_path / "n.txt"
    names.write_text("\n".join(["anna", "bob", "cara", "dan", "eve", "finn"] * 5))
    cfg = TrainConfig(data=str(names), d_model=8, n_heads=2, n_layers=1, steps=3, eval_interval=3,
                      device="cpu", compile=True)
    loop.train(cfg, tmp_path / "run")
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    first = next(r for r in records if "step" in r)
    assert first["compile_off"] == reason and first["tokens_per_s"]  # trained eager, throughput kept


def test_the_cli_progress_line_survives_a_compiled_runs_first_record(capsys):
    """The first record of a compiled run has tokens_per_s None (it was compiling): the CLI's
    progress line said 'None / 1000' and the command died with a TypeError."""
    from minigpt.cli.train import _progress_printer
    from minigpt.training.options import TrainConfig

    on_log = _progress_printer(TrainConfig(steps=30, compile=True), quiet=False)
    on_log({"step": 1, "train_loss": 3.3, "lr": 0.001, "tokens_per_s": None, "compile_s": 37.3, "elapsed_s": 37.3})
    on_log({"step": 10, "train_loss": 3.1, "lr": 0.001, "tokens_per_s": 1883.7, "elapsed_s": 40.0, "val_loss": 3.0})
    err = capsys.readouterr().err
    assert "compiled in 37 s" in err and "1.9k tok/s" in err
