"""The pieces of a training step that others reuse: the learning-rate schedule, the optimizer,
and evaluation (mean cross-entropy over a split's real targets)."""

from __future__ import annotations

import math

import torch

from minigpt.data import IGNORE, EncodedSplit
from minigpt.models.build import EVAL_LOGITS_BYTES, EVAL_ROWS
from minigpt.training.devices import autocast_for
from minigpt.training.options import TrainConfig


def lr_at(cfg: TrainConfig, progress: float, step: int, total_steps: int | None) -> float:
    """Linear warmup, then cosine decay from ``lr`` to ``min_lr_ratio × lr`` (or, with
    ``schedule = "wsd"``, the peak held until the last ``cooldown`` of the budget, then a linear
    decay to the same floor).

    ``progress`` is the fraction of the budget done (steps or elapsed time). A warmup ≥ 1 counts
    steps; below 1 it is a fraction of the budget.
    """
    if cfg.warmup >= 1:
        if step < cfg.warmup:
            return cfg.lr * (step + 1) / cfg.warmup
        warm_frac = cfg.warmup / total_steps if total_steps else 0.0
    else:
        warm_frac = cfg.warmup
        if progress < warm_frac:
            return cfg.lr * max(progress / warm_frac, 1.0 / max(total_steps or 1000, 1))
    progress = min(max(progress, 0.0), 1.0)
    floor = cfg.min_lr_ratio * cfg.lr
    if cfg.schedule == "wsd":
        start = max(1.0 - cfg.cooldown, warm_frac)
        if progress <= start:
            return cfg.lr
        return cfg.lr - (cfg.lr - floor) * min((progress - start) / max(1.0 - start, 1e-9), 1.0)
    decay = (progress - warm_frac) / max(1.0 - warm_frac, 1e-9)
    decay = min(max(decay, 0.0), 1.0)
    return floor + 0.5 * (cfg.lr - floor) * (1 + math.cos(math.pi * decay))


# Muon's momentum, and where the speedrun's warm-up starts it: a young model's gradients change
# direction fast, so a shorter memory of them helps at first (0.85 → 0.95 over ~300 steps there).
MUON_MOMENTUM, MUON_MOMENTUM_START = 0.95, 0.85


def muon_momentum_at(cfg: TrainConfig, step: int) -> float:
    """Muon's momentum at ``step``: a linear warm-up over ``momentum_warmup`` steps, then 0.95."""
    if cfg.momentum_warmup <= 0:
        return MUON_MOMENTUM
    frac = min(step / cfg.momentum_warmup, 1.0)
    return MUON_MOMENTUM_START + (MUON_MOMENTUM - MUON_MOMENTUM_START) * frac


def apply_lr(optimizer, lr: float, momentum: float | None = None) -> None:
    """The schedule's lr for this step into every group: μP's hidden matrices at lr × their
    ``lr_mult`` (1/m), Muon's groups with their momentum (Muon scales its own lr by ``lr_scale``)."""
    for g in optimizer.param_groups:
        g["lr"] = lr * g.get("lr_mult", 1.0)
        if momentum is not None and g.get("muon"):
            g["momentum"] = momentum


def batch_size_at(cfg: TrainConfig, progress: float) -> int:
    """Names in the step's batch: a quarter of ``batch_size`` growing linearly to all of it over
    the first ``batch_ramp`` of the budget (the speedrun's ramp: early steps need less averaging,
    so small batches buy more of them)."""
    if cfg.batch_ramp <= 0 or progress >= cfg.batch_ramp:
        return cfg.batch_size
    frac = 0.25 + 0.75 * max(progress, 0.0) / cfg.batch_ramp
    return max(1, min(cfg.batch_size, round(cfg.batch_size * frac)))


def make_optimizer(model, cfg: TrainConfig, device: torch.device) -> torch.optim.Optimizer:
    """AdamW with weight decay on matrices (dim ≥ 2) only: not on biases, LayerNorm or gains.

    With ``optimizer = "muon"`` the matrices inside the blocks (attention and feed-forward) take
    Muon steps at ``muon_lr`` instead; embeddings, the head, norms and biases keep AdamW.
    """
    if cfg.optimizer == "muon" and cfg.model == "gpt":
        from minigpt.training.muon import Muon

        hidden = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() == 2 and n.startswith("blocks.")]
        ids = {id(p) for p in hidden}
        rest = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]
        return Muon([{"params": hidden, "muon": True, "lr_scale": cfg.muon_lr / cfg.lr, "weight_decay": cfg.weight_decay,
                      "momentum": muon_momentum_at(cfg, 0)},
                     {"params": [p for p in rest if p.dim() >= 2], "weight_decay": cfg.weight_decay},
                     {"params": [p for p in rest if p.dim() < 2]}],
                    lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    if getattr(getattr(model, "config", None), "parametrization", "sp") == "mup":
        groups = _mup_groups(model, cfg)
    kwargs = dict(lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    if device.type in ("cpu", "cuda"):
        try:
            return torch.optim.AdamW(groups, fused=True, **kwargs)
        except (RuntimeError, TypeError, ValueError):
            pass
    return torch.optim.AdamW(groups, **kwargs)


def _mup_groups(model, cfg: TrainConfig) -> list[dict]:
    """μP's Adam groups: the hidden matrices at lr × 1/m (``lr_mult``, which the trainer's
    schedule keeps), the other matrices and the vectors at lr, weight decay on matrices only."""
    from minigpt.models.mup import lr_multiplier

    by_mult: dict[tuple[float, bool], list] = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            by_mult.setdefault((lr_multiplier(name, p, model.config), p.dim() >= 2), []).append(p)
    return [{"params": ps, "weight_decay": cfg.weight_decay if matrix else 0.0, "lr_mult": mult, "lr": cfg.lr * mult}
            for (mult, matrix), ps in sorted(by_mult.items(), key=lambda kv: (-kv[0][0], not kv[0][1]))]


def eval_rows(block_size: int, vocab_size: int, rows: int = EVAL_ROWS) -> int:
    """Rows per evaluation batch: ``rows``, fewer when their logits would pass EVAL_LOGITS_BYTES
    (a 16,000-character vocabulary: 1,024 rows of 6 positions are 400 MB of logits, twice over)."""
    return max(1, min(rows, EVAL_LOGITS_BYTES // (4 * block_size * vocab_size)))


@torch.no_grad()
def evaluate(model, split: EncodedSplit, device: torch.device | str = "cpu", batch_size: int = EVAL_ROWS,
             dtype: str = "float32") -> float:
    """Mean cross-entropy over every real (non-padding) target of the split."""
    device = torch.device(device)
    vocab_size = getattr(getattr(model, "config", None), "vocab_size", None)
    if vocab_size is not None:
        batch_size = eval_rows(split.block_size, vocab_size, batch_size)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    order = torch.argsort(split.lengths)  # similar lengths together: batches trim more
    for i in range(0, len(split), batch_size):
        x, y = split.batch(order[i : i + batch_size])
        x, y = x.to(device), y.to(device)
        with autocast_for(device, dtype):
            logits, _ = model(x)
        logits = logits.float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                                 ignore_index=IGNORE, reduction="sum")
        total += float(loss)
        count += int((y != IGNORE).sum())
    model.train(was_training)
    return total / max(count, 1)
