"""Training at a learning rate too high for the default MiniGPT, with and without each stabiliser.

Four variants share everything but one option: the default model, QK-norm, z-loss (1e-4) and
logit soft-capping (15, the speedrun's cap), each trained from the same seeds (the same initial
weights where the option adds none, and the same batches), so variant and default form pairs
and the paired t-test of ``minigpt.significance`` compares them. Per run: the loss spikes, the largest
attention score seen, and the final validation loss (None when the run diverged).

A **spike** is a step whose training loss lies at least ``SPIKE_NATS`` above the median of the
``SPIKE_WINDOW`` steps before it; consecutive such steps are one spike. A batch of 32 names
varies by about 0.1 nats from the next, so half a nat is well outside batch noise.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from minigpt.significance import paired_t_test
from minigpt.training.options import TrainConfig

SPIKE_NATS, SPIKE_WINDOW = 0.5, 20
VARIANTS = {"default": {}, "QK-norm": {"qk_norm": True}, "z-loss 1e-4": {"z_loss": 1e-4},
            "soft-cap 15": {"softcap": 15.0}}
HIGH_LR = 0.03  # AdamW; six times the default 5e-3: the default model's attention scores run away
STEPS, BATCH, SEEDS, PROBE_EVERY = 200, 32, (1, 2, 3), 10


def count_spikes(losses: list[float], nats: float = SPIKE_NATS, window: int = SPIKE_WINDOW) -> int:
    """Spikes in a loss curve as defined above (none in the first ``window`` steps)."""
    spikes, inside = 0, False
    for i in range(window, len(losses)):
        high = losses[i] >= statistics.median(losses[i - window : i]) + nats
        spikes += high and not inside
        inside = high
    return spikes


def stability_config(seed: int, lr: float = HIGH_LR, steps: int = STEPS, **options) -> TrainConfig:
    """The default MiniGPT (width 64, 4 layers) with AdamW at ``lr``, short batches, no weight average."""
    return TrainConfig(optimizer="adamw", lr=lr, steps=steps, batch_size=BATCH, ema=0.0, seed=seed, **options)


def compare(seeds=SEEDS, lr: float = HIGH_LR, steps: int = STEPS, variants=None,
            progress: Callable[[str], None] = lambda line: None) -> dict:
    """Every variant from every seed; per variant its runs and, against the default, the paired
    t-test of the final validation losses (over the seeds where both finished)."""
    from minigpt.training.options import load_data_for
    from minigpt.training.short_runs import short_run

    data = load_data_for(TrainConfig())
    variants = variants or VARIANTS
    result: dict = {"lr": lr, "steps": steps, "batch_size": BATCH, "seeds": list(seeds), "spike_nats": SPIKE_NATS,
                    "spike_window": SPIKE_WINDOW, "variants": {}}
    for name, options in variants.items():
        runs = []
        for seed in seeds:
            run = short_run(stability_config(seed, lr, steps, **options), data, probe_every=PROBE_EVERY)
            runs.append({"seed": seed, "spikes": count_spikes(run.losses), "diverged_at": run.diverged_at,
                         "max_attention_logit": round(max(run.max_attention_logits, default=0.0), 2),
                         "val_loss": None if run.val_loss is None else round(run.val_loss, 4),
                         "loss_curve": [round(v, 3) for v in run.losses[::PROBE_EVERY]]})
            progress(f"{name:12s} seed {seed}: {runs[-1]['spikes']} spikes, max attention score "
                     f"{runs[-1]['max_attention_logit']:.0f}, val loss {runs[-1]['val_loss']}")
        result["variants"][name] = {"options": options, "runs": runs}
    base = result["variants"]["default"]["runs"]
    for name, variant in result["variants"].items():
        pairs = [(r["val_loss"], b["val_loss"]) for r, b in zip(variant["runs"], base)
                 if r["val_loss"] is not None and b["val_loss"] is not None]
        if name != "default" and len(pairs) >= 2:
            test = paired_t_test([a for a, _ in pairs], [b for _, b in pairs])
            variant["against_default"] = {"difference": test.difference, "stderr": test.stderr, "p": test.p,
                                          "pairs": len(pairs)}
    return result
