"""μP's two checks on the MiniGPT: the coordinate check and the learning-rate sweep across widths.

The coordinate check (Yang et al. 2022, section 5) trains models of several widths for a few Adam
steps on one batch and measures how large their activations and their changes are, per
coordinate (an RMS). Under SP the change of the logits and of the residual stream grows with the
width at a fixed learning rate, which is why the best rate falls as a model widens; under μP it
stays flat. The sweep shows the consequence: the validation loss after a short run against the
learning rate, per width, and where each curve's minimum lies.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from minigpt.training.options import TrainConfig

COORD_WIDTHS = (32, 64, 128, 256)
# The lab job's sweep: three widths around μP's base (64), a half-decade grid of rates.
SWEEP_WIDTHS = (32, 64, 128)
SWEEP_LRS = (3e-4, 1e-3, 3e-3, 1e-2, 3e-2)
SWEEP_STEPS, SWEEP_BATCH, SWEEP_LAYERS = 100, 32, 2


def small_config(d_model: int, parametrization: str, **kw) -> TrainConfig:
    """The sweep's model: 2 layers of 4 heads, AdamW (μP's rules are Adam's), no weight average."""
    values = dict(optimizer="adamw", n_layers=SWEEP_LAYERS, n_heads=4, batch_size=SWEEP_BATCH, steps=SWEEP_STEPS,
                  ema=0.0, d_model=d_model, parametrization=parametrization)
    return TrainConfig(**(values | kw))


def _rms(t: torch.Tensor) -> float:
    return float(t.float().square().mean().sqrt())


def coordinate_check(parametrization: str, widths=COORD_WIDTHS, steps: int = 3, lr: float = 1e-2,
                     seed: int = 0) -> dict[int, dict[str, float]]:
    """Per width: the RMS per coordinate of the logits after ``steps`` Adam steps on one fixed
    batch, and of how much the logits and the last block's output (the residual stream) moved
    from their initial values. Deterministic: random tokens from ``seed``, one thread's maths."""
    out = {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: on a busy machine a second thread only waits (~10× slower)
    try:
        for width in widths:
            out[width] = _coordinates(width, parametrization, steps, lr, seed)
    finally:
        torch.set_num_threads(threads)
    return out


def _coordinates(width: int, parametrization: str, steps: int, lr: float, seed: int) -> dict[str, float]:
    from minigpt.models.build import build_model
    from minigpt.models.mup import lr_multiplier

    cfg = small_config(width, parametrization, lr=lr)
    torch.manual_seed(seed)
    model = build_model("gpt", cfg.model_config(27, 16))
    x = torch.randint(0, 27, (8, 16), generator=torch.Generator().manual_seed(seed))
    y = torch.roll(x, -1, dims=1)
    stream: list[torch.Tensor] = []
    hook = model.ln_f.register_forward_hook(lambda _m, args, _out: stream.append(args[0].detach()))
    # Adam written out, each parameter at μP's rate (the trainer's groups follow the same
    # lr_multiplier; torch.optim's first use imports torch._dynamo: seconds for three steps).
    params = [(p, lr * lr_multiplier(n, p, model.config)) for n, p in model.named_parameters()]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p, _ in params]
    with torch.no_grad():
        logits0 = model(x)[0]
    for t in range(1, steps + 1):
        model.zero_grad(set_to_none=True)
        model(x, y)[1].backward()
        with torch.no_grad():
            for (p, rate), (m, v) in zip(params, moments):
                m.lerp_(p.grad, 0.1)  # β₁ = 0.9, β₂ = 0.99 as the training options' defaults
                v.mul_(0.99).addcmul_(p.grad, p.grad, value=0.01)
                p.sub_(rate * (m / (1 - 0.9**t)) / ((v / (1 - 0.99**t)).sqrt() + 1e-8))
    with torch.no_grad():
        logits = model(x)[0]
    hook.remove()
    return {"logits": _rms(logits), "logits_change": _rms(logits - logits0),
            "stream_change": _rms(stream[-1] - stream[0])}


def growth(check: dict[int, dict[str, float]], key: str) -> float:
    """The widest model's value over the narrowest's: about 1 when flat, the width ratio when
    proportional to the width."""
    widths = sorted(check)
    return check[widths[-1]][key] / check[widths[0]][key]


def best_lr(lrs, losses) -> float | None:
    """Where a loss-against-lr curve is lowest: the grid's best point, refined by the parabola
    through it and its two neighbours in log lr (the grid is coarse: half a decade). Diverged
    points (None) are worst; None when every point diverged."""
    scored = [(math.log10(lr), loss) for lr, loss in zip(lrs, losses) if loss is not None]
    if not scored:
        return None
    i = min(range(len(scored)), key=lambda j: scored[j][1])
    if 0 < i < len(scored) - 1:
        (x0, y0), (x1, y1), (x2, y2) = scored[i - 1 : i + 2]
        num = (x1 - x0) ** 2 * (y1 - y2) - (x1 - x2) ** 2 * (y1 - y0)
        den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0)
        if den < 0:  # the parabola opens upwards: its vertex, kept between the neighbours' midpoints
            vertex = x1 - 0.5 * num / den
            return 10 ** min(max(vertex, (x0 + x1) / 2), (x1 + x2) / 2)
    return 10 ** scored[i][0]


def optimum_spread(curves: dict[int, list[float | None]], lrs) -> float:
    """How far the best learning rate moves across the widths: max − min of log10(best lr), in
    decades (0: it stays put)."""
    best = [best_lr(lrs, losses) for losses in curves.values()]
    logs = [math.log10(b) for b in best if b is not None]
    return max(logs) - min(logs) if logs else math.inf


def lr_sweep(widths=SWEEP_WIDTHS, lrs=SWEEP_LRS, steps: int = SWEEP_STEPS, seed: int = 1337,
             progress: Callable[[str], None] = lambda line: None) -> dict:
    """The validation loss after ``steps`` steps for every (parametrization, width, lr) on the
    names; a run that diverges scores None. Returns the curves, each one's best lr and the
    spread of the best lr across widths, per parametrization."""
    from minigpt.training.options import load_data_for
    from minigpt.training.short_runs import short_run

    data = load_data_for(TrainConfig())
    result: dict = {"widths": list(widths), "lrs": list(lrs), "steps": steps, "seed": seed,
                    "batch_size": SWEEP_BATCH, "n_layers": SWEEP_LAYERS, "base_width": 64}
    for parametrization in ("sp", "mup"):
        curves = {}
        for width in widths:
            losses = []
            for lr in lrs:
                run = short_run(small_config(width, parametrization, lr=lr, steps=steps, seed=seed), data)
                losses.append(None if run.val_loss is None else round(run.val_loss, 4))
                progress(f"{parametrization:3s} width {width:4d} lr {lr:.0e}: val loss "
                         f"{'diverged' if run.val_loss is None else f'{run.val_loss:.3f}'}")
            curves[width] = losses
        result[parametrization] = {
            "curves": {str(w): c for w, c in curves.items()},
            "best_lr": {str(w): best_lr(lrs, c) for w, c in curves.items()},
            "spread_decades": optimum_spread(curves, lrs),
        }
    return result
