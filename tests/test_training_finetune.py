"""Fine-tuning on one letter's names: the subset, and a short run's rows and merge check."""

from __future__ import annotations

import pytest
import torch

from minigpt.data import load_dataset
from minigpt.errors import ConfigError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.paths import default_dataset
from minigpt.training.finetune import FinetuneConfig, letter_data, run_finetune


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(default_dataset(), seed=42, block_size=16)


def test_the_letter_list_keeps_each_split_apart(dataset):
    data = letter_data(dataset, "K")
    train, test = list(data.train.words), list(data.test.words)
    assert train and test and all(w.startswith("k") for w in train + test)
    assert set(test) <= set(dataset.test.words) and not set(test) & set(dataset.train.words)
    assert len(data.all_test) == len(dataset.test)
    with pytest.raises(ConfigError, match="one letter"):
        FinetuneConfig(letter="ka")


def test_a_short_fine_tune_counts_and_merges(dataset):
    torch.manual_seed(0)
    model = MiniGPT(GPTConfig(vocab_size=dataset.vocab.size, block_size=16, d_model=16, n_heads=2, n_layers=2))
    result = run_finetune(model, dataset, FinetuneConfig(letter="q", ranks=(2,), steps=3, batch_size=8),
                          progress=lambda line: None)
    rows = {r["method"]: r for r in result["rows"]}
    total = sum(p.numel() for p in model.parameters())
    assert rows["full fine-tune"]["trainable"] == total == result["total_parameters"]
    # per block: qkv 16→48, proj 16→16, up 16→64, down 64→16: (64+32+80+80)·2 = 512, two blocks
    assert rows["LoRA r=2"]["trainable"] == 2 * 512
    assert rows["base model"]["all_loss"] > 0
    assert result["merge"]["max_logit_difference"] < 1e-4
    assert result["merge"]["merged_loss"] == pytest.approx(result["merge"]["adapted_loss"], abs=1e-5)
    assert all(p.requires_grad for p in model.parameters())  # the model passed in is left as it was
