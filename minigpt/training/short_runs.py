"""Short MiniGPT runs in this process, without a run folder: the lab's sweeps train dozens of
small models for a few hundred steps each (μP's learning-rate sweep, the stability comparison),
where a trainer process and its checkpoints per point would cost more than the training.

Each step is the trainer's (``minigpt.training.trainer``): packed batches drawn from a generator
seeded by the run's seed, the schedule of ``lr_at`` (with μP's per-group ``lr_mult``), gradient
clipping, the optimizer of ``make_optimizer``; no weight average, no evaluation between steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from minigpt.data import Dataset
from minigpt.models.build import build_model
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import apply_lr, evaluate, lr_at, make_optimizer


@dataclass
class ShortRun:
    """One run's record: the training loss of every step (until a non-finite one), the largest
    attention score seen at each probe, and the validation loss at the end (None if diverged)."""

    losses: list[float] = field(default_factory=list)
    max_attention_logits: list[float] = field(default_factory=list)
    val_loss: float | None = None
    diverged_at: int | None = None  # the step whose loss or gradient was not finite


def attention_scores(model, x: torch.Tensor, positions=None, segments=None) -> list[torch.Tensor]:
    """Each layer's pre-softmax attention scores q·k·scale (B, heads, T, T), −∞ where a query may
    not look, recomputed from the layer's input (caught by a hook) as the layer computes them."""
    from minigpt.models.gpt import apply_rope, word_mask

    inputs = []
    hooks = [b.attn.register_forward_hook(lambda _m, args, _out: inputs.append(args[0])) for b in model.blocks]
    try:
        with torch.no_grad():
            model(x, positions=positions, segments=segments)
    finally:
        for h in hooks:
            h.remove()
    B, T = x.shape
    mask = word_mask(segments) if segments is not None else torch.ones(T, T, dtype=torch.bool).tril()
    out = []
    with torch.no_grad():
        for block, h in zip(model.blocks, inputs):
            a = block.attn
            q, k, _v = a.qkv(h).split((h.shape[-1], a.kv_dim, a.kv_dim), dim=2)
            q = q.view(B, T, a.n_heads, a.head_dim).transpose(1, 2)
            k = k.view(B, T, a.n_kv_heads, a.head_dim).transpose(1, 2)
            if a.q_norm is not None:
                q, k = a.q_norm(q), a.k_norm(k)
            if a.rope:
                pos = positions if positions is not None else torch.arange(T)
                cos, sin = model.rope_cos[pos], model.rope_sin[pos]
                rope = (cos[:, None], sin[:, None]) if pos.dim() == 2 else (cos, sin)
                q, k = apply_rope(q, *rope), apply_rope(k, *rope)
            k = k.repeat_interleave(a.n_heads // a.n_kv_heads, dim=1)
            out.append(((q @ k.transpose(-2, -1)) * a.scale).masked_fill(~mask, -math.inf))
    return out


def attention_logits_max(model, x: torch.Tensor, positions=None, segments=None) -> float:
    """The largest attention score over every layer, head and allowed pair of the batch (what
    QK-norm bounds)."""
    return max(float(s.max()) for s in attention_scores(model, x, positions, segments))


def short_run(cfg: TrainConfig, data: Dataset, probe_every: int = 0,
              on_step: Callable[[int, float], None] | None = None) -> ShortRun:
    """Train the model ``cfg`` describes for ``cfg.steps`` steps on ``data`` (seeded by
    ``cfg.seed``); stop at the first non-finite loss or gradient. ``probe_every`` > 0 records the
    largest attention score on that step's batch every so many steps."""
    torch.manual_seed(cfg.seed)
    model = build_model("gpt", cfg.model_config(data.vocab.size, data.block_size))
    optimizer = make_optimizer(model, cfg, torch.device("cpu"))
    gen = torch.Generator().manual_seed(cfg.seed * 1_000_003)
    out = ShortRun()
    model.train()
    for step in range(cfg.steps):
        apply_lr(optimizer, lr_at(cfg, step / cfg.steps, step, cfg.steps))
        b = data.train.packed_batch(torch.randint(len(data.train), (cfg.batch_size,), generator=gen))
        extra = {"positions": b.positions, "segments": b.segments}
        _, loss = model(b.x, b.y, **extra)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip or math.inf)
        value = float(loss.detach())
        if not (math.isfinite(value) and math.isfinite(float(norm))):
            out.diverged_at = step + 1
            return out
        optimizer.step()
        out.losses.append(value)
        if probe_every and (step + 1) % probe_every == 0:
            out.max_attention_logits.append(attention_logits_max(model, b.x, **extra))
        if on_step is not None:
            on_step(step + 1, value)
    val = evaluate(model, data.val)
    out.val_loss = val if math.isfinite(val) else None
    if out.val_loss is None:
        out.diverged_at = cfg.steps
    return out
