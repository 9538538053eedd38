import pytest

from minigpt.models.config import BigramConfig, ConfigError, GPTConfig, MLPConfig, config_from_dict, config_to_dict
from minigpt.training.options import TrainConfig


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


@pytest.mark.parametrize("kwargs, words", [
    (dict(steps=None), "exactly one budget"),
    (dict(steps=10, time_s=5), "exactly one budget"),
    (dict(steps=0), "steps"),
    (dict(steps=None, time_s=-1.0), "time budget"),
    (dict(batch_size=0), "batch size"),
    (dict(lr=0), "learning rate"),
    (dict(device="tpu"), "device"),
    (dict(model="rnn"), "model"),
    (dict(warmup=2.5), "warmup"),
    (dict(d_model=10, n_heads=3), "divisible"),
    (dict(dtype="float8"), "dtype"),
])
def test_train_config_rejects(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        TrainConfig(**kwargs)


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
