"""Fine-tuning the shipped MiniGPT on a different names list: every weight, or LoRA adapters.

The new list is built from the project's own data: the names that start with one letter. Each
split is filtered on its own (the letter's training names come from the shipped model's training
split, its test names from the test split), so no test name was ever trained on. The lesson's lab
job compares the base model, a full fine-tune and LoRA at a few ranks on the same steps, then
merges an adapter and checks that the merged model computes the same logits.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field

import torch

from minigpt.data import EncodedSplit
from minigpt.errors import ConfigError
from minigpt.models.lora import add_lora, merge_lora, trainable_parameters
from minigpt.training.schedule import evaluate


@dataclass
class FinetuneConfig:
    letter: str = "k"  # the new list: names starting with this letter
    ranks: tuple[int, ...] = (1, 4, 16)
    alpha: float = 8.0
    steps: int = 300
    batch_size: int = 64
    full_lr: float = 1e-3  # AdamW on every weight
    lora_lr: float = 5e-3  # AdamW on A and B (adapters usually take a larger rate)
    seed: int = 1337
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.letter) != 1 or not self.letter.isalpha():
            raise ConfigError(f"letter must be one letter, got {self.letter!r}")
        if self.steps < 1 or self.batch_size < 1:
            raise ConfigError("steps and batch_size must be positive")


@dataclass
class LetterData:
    letter: str
    train: EncodedSplit
    test: EncodedSplit  # the letter's test names
    all_test: EncodedSplit  # every test name: what the fine-tune costs on the old task


def letter_data(dataset, letter: str) -> LetterData:
    """The names of ``dataset`` that start with ``letter``, split as the dataset was split."""
    letter = letter.lower()

    def only(split) -> EncodedSplit:
        words = [w for w in split.words if w.startswith(letter)]
        if len(words) < 2:
            raise ConfigError(f"too few names start with {letter!r} to fine-tune on")
        return EncodedSplit(words, dataset.vocab, dataset.block_size)

    return LetterData(letter, only(dataset.train), only(dataset.test), dataset.test)


def train_steps(model: torch.nn.Module, split: EncodedSplit, steps: int, lr: float, batch_size: int,
                seed: int) -> float:
    """Plain AdamW on the parameters that require a gradient; returns the last batch's loss."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        index = torch.randint(len(split), (batch_size,), generator=gen)
        x, y = split.batch(index)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    return loss.item()


def merged_difference(adapted: torch.nn.Module, split: EncodedSplit, n: int = 256) -> tuple[torch.nn.Module, float]:
    """A merged copy of an adapted model and the largest |logit difference| between the two."""
    merged = merge_lora(copy.deepcopy(adapted))
    x, _ = split.batch(torch.arange(min(n, len(split))))
    with torch.no_grad():
        diff = (adapted(x)[0] - merged(x)[0]).abs().max().item()
    return merged, diff


def run_finetune(model: torch.nn.Module, dataset, cfg: FinetuneConfig, progress=print) -> dict:
    """Base, full fine-tune and LoRA at each rank: trainable parameters, the loss on the letter's
    test names and on all test names, seconds; plus the merge check of the last rank."""
    data = letter_data(dataset, cfg.letter)
    base = copy.deepcopy(model).eval()
    rows = [dict(method="base model", trainable=0, letter_loss=evaluate(base, data.test),
                 all_loss=evaluate(base, data.all_test), seconds=0.0)]

    def finish(label: str, tuned: torch.nn.Module, trainable: int, lr: float) -> None:
        torch.manual_seed(cfg.seed)
        t = time.perf_counter()
        train_steps(tuned, data.train, cfg.steps, lr, cfg.batch_size, cfg.seed)
        rows.append(dict(method=label, trainable=trainable, letter_loss=evaluate(tuned, data.test),
                         all_loss=evaluate(tuned, data.all_test), seconds=time.perf_counter() - t))
        progress(f"{label}: letter loss {rows[-1]['letter_loss']:.4f} in {rows[-1]['seconds']:.1f} s")

    full = copy.deepcopy(model)
    for p in full.parameters():
        p.requires_grad_(True)
    finish("full fine-tune", full, trainable_parameters(full), cfg.full_lr)
    adapted = None
    for rank in cfg.ranks:
        torch.manual_seed(cfg.seed)
        adapted = copy.deepcopy(model)
        add_lora(adapted, rank, cfg.alpha)
        finish(f"LoRA r={rank}", adapted, trainable_parameters(adapted), cfg.lora_lr)
    merge = None
    if adapted is not None:
        merged, diff = merged_difference(adapted, data.test)
        merge = dict(rank=cfg.ranks[-1], max_logit_difference=diff, merged_loss=evaluate(merged, data.test),
                     adapted_loss=rows[-1]["letter_loss"])
    settings = {k: v for k, v in asdict(cfg).items() if k != "extra"}
    settings["ranks"] = list(cfg.ranks)
    return dict(settings=settings, n_train=len(data.train), n_test=len(data.test),
                total_parameters=sum(p.numel() for p in model.parameters()), rows=rows, merge=merge)
