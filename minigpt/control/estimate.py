"""How long a run will take, measured here just before it starts: a few real steps, one evaluation.

The confirmation the app shows before it starts a run says the budget, this estimate and the
device. A measurement beats a formula: the same model trains 10× faster or slower depending on
the machine, its load and the device, and a few steps (a fraction of a second for the course's
model) tell which. It is an estimate: the worker runs at a lower priority, and a busy machine
(or a warmer GPU) changes the pace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from minigpt.models.build import build_model, count_parameters
from minigpt.training.devices import autocast_for, resolve_device
from minigpt.training.ema import WeightAverage
from minigpt.training.options import TrainConfig, load_data_for
from minigpt.training.schedule import eval_rows, make_optimizer


@dataclass(frozen=True)
class RunEstimate:
    device: str  # where the run will train ("cpu", "cuda", …), "auto" resolved
    n_params: int
    steps: int  # the step budget, or how many steps a time budget is expected to reach
    seconds: float  # expected time of the training itself, evaluations included (not the start-up)
    step_seconds: float  # one optimiser step, as measured
    eval_seconds: float  # one evaluation of the validation split, as measured


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _eval_seconds(model, split, device: torch.device, dtype: str) -> float:
    """One evaluation of ``split``, timed on its first batch (as many rows as the training loop's
    evaluation reads at a time) and scaled to all of them."""
    n = min(eval_rows(split.block_size, model.config.vocab_size), len(split))
    x, _y = split.batch(torch.arange(n))
    model.eval()
    t0 = time.perf_counter()
    with torch.no_grad(), autocast_for(device, dtype):
        logits, _ = model(x.to(device))
        logits.float().sum().item()
    model.train()
    return (time.perf_counter() - t0) * len(split) / max(n, 1)


def estimate_run(cfg: TrainConfig, trial_steps: int = 3) -> RunEstimate:
    """Time ``trial_steps`` optimiser steps (after one warm-up step) and one validation pass of the
    model ``cfg`` describes, and scale them to its budget. Slow (torch, the data): not on a UI thread."""
    device = resolve_device(cfg.device)
    data = load_data_for(cfg)
    torch.manual_seed(cfg.seed)
    model = build_model(cfg.model, cfg.model_config(data.vocab.size, data.block_size)).to(device)
    n_params = count_parameters(model)
    if cfg.model == "bigram":  # one pass of counting, then val, test and train are evaluated
        t0 = time.perf_counter()
        model.fit(data.train.x.to(device), data.train.y.to(device))
        fit = time.perf_counter() - t0
        ev = _eval_seconds(model, data.val, device, cfg.dtype)
        seconds = fit + ev * (2 + len(data.train) / max(len(data.val), 1))  # val, test, then train
        return RunEstimate(str(device), n_params, 1, seconds, fit, ev)

    optimizer = make_optimizer(model, cfg, device)
    average = WeightAverage(model, cfg.ema) if cfg.ema > 0 else None
    gen = torch.Generator().manual_seed(cfg.seed)
    packed = cfg.pack and cfg.model == "gpt"  # as the training loop does

    def one_step(step: int) -> None:
        idx = torch.randint(len(data.train), (cfg.batch_size,), generator=gen)
        if packed:
            b = data.train.packed_batch(idx)
            x, y, extra = b.x, b.y, {"positions": b.positions, "segments": b.segments}
        else:
            (x, y), extra = data.train.batch(idx), {}
        x, y = x.to(device), y.to(device)
        extra = {k: v.to(device) for k, v in extra.items()}
        with autocast_for(device, cfg.dtype):
            _, loss = model(x, y, **extra)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        if average is not None:
            average.update(model, step)
        loss.item()  # wait for the step to finish

    model.train()
    one_step(0)  # the first step pays for allocations the others reuse
    _sync(device)
    t0 = time.perf_counter()
    for step in range(1, trial_steps + 1):
        one_step(step)
    _sync(device)
    step_s = (time.perf_counter() - t0) / trial_steps
    eval_s = _eval_seconds(model, data.val, device, cfg.dtype)
    final_s = 2 * eval_s  # the best checkpoint's val and test losses at the end
    if cfg.steps is not None:
        steps = cfg.steps
        seconds = steps * step_s + (steps // cfg.eval_interval + 1) * eval_s + final_s
    else:  # evaluations take their share of a time budget
        steps = max(1, int(cfg.time_s / (step_s + eval_s / cfg.eval_interval)))
        seconds = cfg.time_s + final_s
    return RunEstimate(str(device), n_params, steps, seconds, step_s, eval_s)


@dataclass(frozen=True)
class SweepEstimate:
    runs: list[RunEstimate]  # one per run, in the order the scheduler trains them
    seconds: float  # the runs one after another (the scheduler trains one at a time by default)

    @property
    def n_params(self) -> tuple[int, int]:
        """The smallest and the largest model of the sweep."""
        sizes = [r.n_params for r in self.runs]
        return min(sizes), max(sizes)


def estimate_sweep(configs: list[TrainConfig], trial_steps: int = 2, jobs: int = 1) -> SweepEstimate:
    """Each run of a sweep measured as :func:`estimate_run` does, and their total when the
    scheduler trains ``jobs`` of them at a time (each then gets a share of the cores, so ``jobs``
    does not divide the time: the total is the longest of ``jobs`` equal lanes, a floor)."""
    estimates = [estimate_run(cfg, trial_steps) for cfg in configs]
    total = sum(e.seconds for e in estimates)
    lanes = max(1, min(jobs, len(estimates)))
    return SweepEstimate(estimates, max(total / lanes, max((e.seconds for e in estimates), default=0.0)))
