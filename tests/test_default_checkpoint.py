"""The shipped checkpoint loads and still measures the losses recorded in its config.json."""

import pytest

from minigpt import paths
from minigpt.checkpoint import load_checkpoint
from minigpt.data import load_dataset
from minigpt.sampling import generate
from minigpt.training.schedule import evaluate

DEFAULT = paths.default_checkpoint()


@pytest.fixture(scope="module")
def ckpt():
    if not (DEFAULT / "config.json").exists():
        pytest.skip(f"no default checkpoint at {DEFAULT}")
    return load_checkpoint(DEFAULT)


def test_trained_with_default_recipe_on_embedded_data(ckpt):
    tc = ckpt.train_config
    assert ckpt.kind == "gpt" and tc["data"] == "embedded" and tc["split_seed"] == 42
    assert (ckpt.model_config.d_model, ckpt.model_config.n_layers, ckpt.model_config.n_heads) == (64, 4, 4)
    assert not (DEFAULT / "optimizer.safetensors").exists()  # shipped small, weights only


def test_recorded_losses_remeasured(ckpt):
    ds = load_dataset(paths.default_dataset(), seed=ckpt.train_config["split_seed"], vocab=ckpt.vocab,
                      block_size=ckpt.model_config.block_size)
    val = evaluate(ckpt.model, ds.val)
    test = evaluate(ckpt.model, ds.test)
    assert val == pytest.approx(ckpt.metrics["val_loss"], abs=1e-3)
    assert test == pytest.approx(ckpt.metrics["test_loss"], abs=1e-3)
    assert val < 2.1 and test < 2.1  # far below the bigram's ~2.45


def test_samples_look_like_names(ckpt):
    samples = generate(ckpt.model, ckpt.vocab, 200, seed=0)
    assert sum(s.finished for s in samples) >= 195
    mean_len = sum(len(s.text) for s in samples) / len(samples)
    assert 4 <= mean_len <= 9


@pytest.mark.parametrize("name, kind, ceiling", [("bigram", "bigram", 2.5), ("mlp", "mlp", 2.2)])
def test_shipped_baselines_remeasure_their_losses(name, kind, ceiling):
    """The bigram and MLP baselines ship too, so the playground's comparison works out of the box."""
    path = paths.checkpoints_dir() / name
    ck = load_checkpoint(path)
    assert ck.kind == kind and ck.train_config["data"] == "embedded"
    ds = load_dataset(paths.default_dataset(), seed=ck.train_config["split_seed"], vocab=ck.vocab,
                      block_size=ck.model_config.block_size)
    assert evaluate(ck.model, ds.val) == pytest.approx(ck.metrics["val_loss"], abs=1e-3)
    assert evaluate(ck.model, ds.test) == pytest.approx(ck.metrics["test_loss"], abs=1e-3)
    assert ck.metrics["test_loss"] < ceiling
