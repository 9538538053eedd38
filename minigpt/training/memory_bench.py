"""Memory and time of one training step with and without activation checkpointing.

What is measured, honestly: on a CPU, PyTorch's profiler reports every allocation and free made by
its tensor allocator; the running sum of those over one forward + backward, at its highest, is the
step's peak tensor memory (activations, gradients and temporaries; the weights, allocated before,
are not in it). It is not the process's resident memory: Python objects, the allocator's cached
blocks and the libraries are left out, and on a GPU ``torch.cuda.max_memory_allocated`` would be
the figure to read instead. Times are wall-clock on a shared machine: only the ratio within one
process, measured interleaved (off, on, off, on …), means much.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace

import torch

from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT


@dataclass(frozen=True)
class BenchConfig:
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 16  # deeper than the shipped 4: the saving grows with depth
    block_size: int = 32
    batch_size: int = 32
    repeats: int = 5
    seed: int = 0


def peak_step_bytes(model: MiniGPT, x: torch.Tensor, y: torch.Tensor) -> int:
    """Peak tensor bytes allocated during one forward + backward (profiler memory events)."""
    from torch.profiler import ProfilerActivity, profile

    model.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        _, loss = model(x, y)
        loss.backward()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    current = peak = 0
    for e in events:
        current += e.nbytes()
        peak = max(peak, current)
    return peak


def step_seconds(model: MiniGPT, x: torch.Tensor, y: torch.Tensor) -> float:
    model.zero_grad(set_to_none=True)
    t = time.perf_counter()
    _, loss = model(x, y)
    loss.backward()
    return time.perf_counter() - t


def gradients(model: MiniGPT, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    model.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def measure(cfg: BenchConfig, progress=print) -> dict:
    """Both settings on the same weights and batch: peak bytes, median step time, and whether the
    gradients agree."""
    torch.manual_seed(cfg.seed)
    gcfg = GPTConfig(vocab_size=27, block_size=cfg.block_size, d_model=cfg.d_model, n_heads=cfg.n_heads,
                     n_layers=cfg.n_layers)
    plain = MiniGPT(gcfg)
    checkpointed = MiniGPT(replace(gcfg, checkpoint_activations=True))
    checkpointed.load_state_dict(plain.state_dict())
    x = torch.randint(0, 27, (cfg.batch_size, cfg.block_size))
    y = torch.randint(0, 27, (cfg.batch_size, cfg.block_size))
    models = {"off": plain, "on": checkpointed}
    for m in models.values():
        step_seconds(m, x, y)  # warm-up
    times: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(cfg.repeats):  # interleaved, so load on the machine hits both alike
        for key, m in models.items():
            times[key].append(step_seconds(m, x, y))
    peaks = {key: peak_step_bytes(m, x, y) for key, m in models.items()}
    g_off, g_on = gradients(plain, x, y), gradients(checkpointed, x, y)
    diff = max((g_off[n] - g_on[n]).abs().max().item() for n in g_off)
    result = dict(
        config=dict(cfg.__dict__), parameters=sum(p.numel() for p in plain.parameters()),
        peak_bytes=peaks, median_seconds={k: statistics.median(v) for k, v in times.items()},
        # the fastest step of each: the one least slowed by other processes on a shared machine
        fastest_seconds={k: min(v) for k, v in times.items()},
        max_gradient_difference=diff)
    progress(f"peak {peaks['off'] / 1e6:.1f} MB → {peaks['on'] / 1e6:.1f} MB; fastest step "
             f"{result['fastest_seconds']['off'] * 1e3:.0f} → {result['fastest_seconds']['on'] * 1e3:.0f} ms")
    return result
