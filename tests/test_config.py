import json
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from minigpt.models.config import BigramConfig, ConfigError, GPTConfig, MLPConfig, config_from_dict, config_to_dict
from minigpt.training.options import (
    MODEL_KINDS,
    OPTIONS,
    OPTIONS_BY_NAME,
    TrainConfig,
    load_config_file,
    load_run_config,
)


@pytest.mark.parametrize("kwargs, words", [
    (dict(d_model=10, n_heads=3), "divisible"),
    (dict(d_model=0), "d_model"),
    (dict(n_layers=-1), "n_layers"),
    (dict(n_heads=2.5), "n_heads"),
    (dict(dropout=1.0), "dropout"),
    (dict(dropout=-0.1), "dropout"),
    (dict(pos_encoding="alibi"), "pos_encoding"),
    (dict(d_model=12, n_heads=4, pos_encoding="rope"), "RoPE"),
    (dict(d_model=9, n_heads=1, pos_encoding="sinusoidal"), "sinusoidal"),
])
def test_gpt_config_rejects_with_reason(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        GPTConfig(**kwargs)


def test_valid_configs_and_head_dim():
    c = GPTConfig(d_model=64, n_heads=4)
    assert c.head_dim == 16
    MLPConfig()
    BigramConfig(smoothing=0)
    with pytest.raises(ConfigError):
        MLPConfig(context=0)
    with pytest.raises(ConfigError):
        BigramConfig(smoothing=-1)


def test_config_round_trip_and_unknown_fields():
    c = GPTConfig(d_model=32, n_heads=2, tie_weights=True)
    assert config_from_dict("gpt", config_to_dict(c)) == c
    with pytest.raises(ConfigError, match="unknown gpt config fields: colour"):
        config_from_dict("gpt", {"colour": 1})
    with pytest.raises(ConfigError, match="unknown model kind"):
        config_from_dict("lstm", {})


@pytest.mark.parametrize("kwargs, field, words", [
    (dict(steps=None), "steps", "exactly one budget"),
    (dict(steps=10, time_s=5), "steps", "exactly one budget"),
    (dict(steps=0), "steps", "budget in steps must be in [1, 10000000], got 0"),
    (dict(steps=None, time_s=-1.0), "time_s", "budget in seconds must be in (0, 604800]"),
    (dict(steps=None, time_s=float("inf")), "time_s", "budget in seconds must be a number"),
    (dict(batch_size=0), "batch_size", "batch size"),
    (dict(lr=0), "lr", "learning rate must be in (0, 10]"),
    (dict(device="tpu"), "device", "device must be one of auto, cpu, cuda, mps"),
    (dict(model="rnn"), "model", "model"),
    (dict(warmup=2.5), "warmup", "warmup"),
    (dict(d_model=10, n_heads=3), "d_model", "divisible"),
    (dict(d_model=12, n_heads=4, pos_encoding="rope"), "pos_encoding", "RoPE"),
    (dict(dtype="float8"), "dtype", "dtype"),
    (dict(n_heads=2.5), "n_heads", "heads must be a whole number"),
    (dict(beta1=1.0), "beta1", "beta1 must be in [0, 1)"),
    (dict(min_lr_ratio=1.5), "min_lr_ratio", "in [0, 1]"),
    (dict(ema=float("nan")), "ema", "EMA decay"),
    (dict(grad_clip=0.0), "grad_clip", "grad clip must be in (0, 1000000]"),
    (dict(pack="yes"), "pack", "on or off"),
    (dict(tie_weights=1), "tie_weights", "on or off"),
    (dict(seed=-1), "seed", "seed"),
    (dict(mlp_context=0), "mlp_context", "context"),
    (dict(smoothing=-1.0), "smoothing", "smoothing"),
    (dict(data=3), "data", "text"),
])
def test_train_config_rejects_naming_the_field(kwargs, field, words):
    """Every refusal carries the option it is about (the form marks it, the CLI names its flag)."""
    with pytest.raises(ConfigError, match=re.escape(words)) as err:
        TrainConfig(**kwargs)
    assert err.value.field == field


def test_every_config_field_is_a_declared_option():
    assert [o.name for o in OPTIONS] == [f.name for f in fields(TrainConfig)]
    for opt in OPTIONS:
        assert opt.help and opt.label and set(opt.models) <= set(MODEL_KINDS)
        assert opt.check(opt.default) is None  # every default passes its own checks
        assert opt.kind in (int, float, str, bool)
    assert OPTIONS_BY_NAME["block_size"].optional and not OPTIONS_BY_NAME["d_model"].optional
    assert OPTIONS_BY_NAME["lr"].bounds_text() == " in (0, 10]" and OPTIONS_BY_NAME["beta1"].bounds_text() == " in [0, 1)"
    # The options the form used to lack are declared, under "advanced".
    assert all(OPTIONS_BY_NAME[n].advanced for n in ("pos_encoding", "tie_weights", "ema", "pack"))


def test_whole_numbers_for_float_options_keep_one_type():
    cfg = TrainConfig(warmup=20, smoothing=2, lr=1)
    assert (cfg.warmup, cfg.smoothing, cfg.lr) == (20.0, 2.0, 1.0)
    assert all(type(v) is float for v in (cfg.warmup, cfg.smoothing, cfg.lr))


def test_train_config_dropout_auto_and_round_trip():
    assert TrainConfig(steps=1000).effective_dropout == 0.0
    assert TrainConfig(steps=None, time_s=600).effective_dropout == 0.1
    assert TrainConfig(dropout=0.2).effective_dropout == 0.2
    cfg = TrainConfig(steps=None, time_s=30, data=None)
    d = cfg.to_dict()
    assert d["data"] == "embedded"
    assert TrainConfig.from_dict(d) == cfg
    with pytest.raises(ConfigError, match="unknown training options"):
        TrainConfig.from_dict({**d, "bogus": 1})
    with pytest.raises(ConfigError, match="JSON object"):
        TrainConfig.from_dict([1, 2])


def test_config_files_load_from_a_file_or_a_run_folder(tmp_path):
    cfg = TrainConfig(d_model=32, n_heads=2, pos_encoding="rope", tie_weights=True, ema=0.0, pack=False)
    (tmp_path / "config.json").write_text(json.dumps(cfg.to_dict()), encoding="utf-8")
    assert load_config_file(tmp_path / "config.json") == cfg
    assert load_config_file(tmp_path) == cfg == load_run_config(tmp_path)
    with pytest.raises(ConfigError, match="no such config file"):
        load_config_file(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="unreadable"):
        load_config_file(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="not a run folder"):
        load_run_config(tmp_path / "elsewhere")


def test_the_options_module_does_not_load_torch():
    """The CLI builds its flags from OPTIONS before torch loads (and before its OpenMP setting)."""
    code = "import sys, minigpt.training.options, minigpt.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert out.stdout.strip() == "False"
