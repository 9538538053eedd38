"""The shipped MiniGPT quantized and adapted, for the lesson on making a trained model smaller and
cheaper to specialise: test loss and bytes per quantization setting, LoRA's parameter counts and
a merge check on a random adapter (the fine-tune itself is a lab job: minigpt.control.lab_jobs)."""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import torch

from minigpt.models.lora import add_lora, lora_parameter_count, merge_lora
from minigpt.models.quantize import ModelBytes, QuantConfig, quantize_model

# The quantized models are scored on the first test names only: the lesson computes its table when
# it opens, and seven passes over all 3,200 test names held the screen for seconds on a busy laptop.
QUANT_TEST_NAMES = 1000
SETTINGS = (QuantConfig(8, "tensor"), QuantConfig(8, "channel"), QuantConfig(4, "tensor"),
            QuantConfig(4, "channel"), QuantConfig(4, "group", 32), QuantConfig(4, "group", 8))


@functools.lru_cache(maxsize=1)
def shipped():
    """The shipped checkpoint and its test split, loaded once per process."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import load_dataset
    from minigpt.paths import default_checkpoint, default_dataset

    ck = load_checkpoint(default_checkpoint())
    ck.model.eval()
    data = load_dataset(default_dataset(), seed=int(ck.train_config.get("split_seed", 42)), vocab=ck.vocab,
                        block_size=ck.model_config.block_size)
    return ck, data.test


@dataclass
class QuantRow:
    config: QuantConfig | None  # None: the float32 model itself
    bytes: ModelBytes | None
    test_loss: float


@functools.lru_cache(maxsize=4)
def quantization_table(settings=SETTINGS) -> list[QuantRow]:
    """The float32 model's test loss, then each setting's bytes and test loss (cached: the lesson
    and its tests ask more than once)."""
    from minigpt.data import EncodedSplit
    from minigpt.training.cpu_policy import one_thread
    from minigpt.training.schedule import evaluate

    ck, test = shipped()
    names = EncodedSplit(list(test.words)[:QUANT_TEST_NAMES], ck.vocab, ck.model_config.block_size)
    with one_thread():
        rows = [QuantRow(None, None, evaluate(ck.model, names))]
        for cfg in settings:
            model, counted = quantize_model(ck.model, cfg)
            rows.append(QuantRow(cfg, counted, evaluate(model, names)))
    return rows


def lora_counts(ranks=(1, 4, 16)) -> tuple[int, dict[int, int]]:
    """(every parameter of the shipped model, LoRA's trainable parameters per rank)."""
    ck, _ = shipped()
    return (sum(p.numel() for p in ck.model.parameters()),
            {r: lora_parameter_count(ck.model, r) for r in ranks})


def merge_check(rank: int = 4, alpha: float = 8.0, seed: int = 0) -> tuple[float, float]:
    """A random adapter (B drawn instead of zero, as after training) on the shipped model: the
    largest |logit| change it makes, and the largest |logit difference| after merging it."""
    from minigpt.training.cpu_policy import one_thread

    ck, test = shipped()
    with one_thread():
        return _merge_check(ck.model, test, rank, alpha, seed)


def _merge_check(model, test, rank: int, alpha: float, seed: int) -> tuple[float, float]:
    torch.manual_seed(seed)
    adapted = copy.deepcopy(model)
    add_lora(adapted, rank, alpha)
    with torch.no_grad():
        for module in adapted.modules():
            if hasattr(module, "B") and isinstance(module.B, torch.nn.Parameter):
                module.B.normal_(0.0, 0.02)
    merged = merge_lora(copy.deepcopy(adapted))
    x, _ = test.batch(torch.arange(256))
    with torch.no_grad():
        base, out, after = model(x)[0], adapted(x)[0], merged(x)[0]
    return (out - base).abs().max().item(), (out - after).abs().max().item()
