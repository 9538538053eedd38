"""Where a training step's time goes, and what torch.compile and a cheaper Muon would buy, on a CPU.

    python benchmarks/bench_step.py                  # ~3 minutes on two idle cores, much more when loaded
    python benchmarks/bench_step.py --profile        # also a torch.profiler table of 40 eager steps
    python benchmarks/bench_step.py --no-compile     # skip the compiled trainer (its first compile is minutes under load)
    python benchmarks/bench_step.py --isolated       # also the bare step: eager, padded to one shape, compiled

In one process, taking turns (A, B, C, A, B, C) so the machine's load lands on all alike:
1. makemore's own loop (``references.MakemoreLoop``: 32 names a step, AdamW) in real tokens/s;
2. our trainer as it runs by default (Muon, 128 names packed into rows, eager);
3. our trainer with ``compile=True``: batches padded to one fixed shape (``training/shapes.py``),
   ``torch.compile`` with inductor. Its compile seconds are reported (the first round compiles
   cold; later rounds find inductor's on-disk cache), left out of its tokens/s.
Tokens/s are the median of the trainer's own 10-step records after the first ten steps. Then the Newton–Schulz part of a Muon step
timed alone (5, 4 and 3 iterations; float32 and bfloat16), and model FLOP/s against this
machine's measured fp32 matmul peak.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks.bench import CANONICAL, makemore_dataset, measured_matmul_peak  # noqa: E402
from benchmarks.references import MakemoreLoop, steady_tokens_per_s  # noqa: E402
from minigpt.models.gpt import MiniGPT  # noqa: E402
from minigpt.training.cpu_policy import physical_cores  # noqa: E402
from minigpt.training.flops import cost_of, mfu  # noqa: E402
from minigpt.training.loop import train  # noqa: E402
from minigpt.training.muon import orthogonalize  # noqa: E402
from minigpt.training.options import TrainConfig  # noqa: E402


def trainer_run(ds, steps: int, **changes) -> dict:
    """Our trainer for ``steps`` steps: median tokens/s of its records, compile seconds, worst record."""
    records = []
    cfg = TrainConfig(steps=steps, eval_interval=steps, log_interval=10, layer_every=0, **changes)
    with tempfile.TemporaryDirectory() as d:
        train(cfg, Path(d) / "run", on_log=records.append, dataset=ds)
    rates = [r["tokens_per_s"] for r in records if r["step"] > 10 and r.get("tokens_per_s") and "val_loss" not in r]
    first = records[0]
    return {"tokens_per_s": statistics.median(rates), "slowest": min(rates), "compile_s": first.get("compile_s")}


def newton_schulz_ms(shapes, steps: int, dtype: torch.dtype, repeat: int = 15) -> float:
    """Median ms of one Muon step's orthogonalisations (one batched call per matrix shape)."""
    gs = [torch.randn(s) for s in shapes]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for g in gs:
            orthogonalize(g.to(dtype), steps)
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="names file (default as bench.py)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=150, help="steps per trainer run")
    ap.add_argument("--reference-seconds", type=float, default=8.0)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--isolated", action="store_true", help="also time the bare step: eager, padded, compiled")
    args = ap.parse_args()
    torch.set_num_threads(physical_cores())
    path = args.data or (CANONICAL if CANONICAL.exists() else REPO / "data" / "names.txt")
    ds = makemore_dataset(path)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY', 'default')}, load average {os.getloadavg()[0]:.2f}, data {path}")
    best = {"makemore": 0.0, "eager": 0.0, "compiled": 0.0}
    for r in range(args.rounds):
        torch.set_num_threads(physical_cores())
        loop = MakemoreLoop(list(ds.splits.train), ds.vocab.stoi, ds.block_size)
        mm = steady_tokens_per_s(loop.step, args.reference_seconds)
        eager = trainer_run(ds, args.steps)
        line = f"  round {r + 1}: makemore {mm:,.0f}, ours {eager['tokens_per_s']:,.0f}"
        best["makemore"], best["eager"] = max(best["makemore"], mm), max(best["eager"], eager["tokens_per_s"])
        if not args.no_compile:
            t = time.perf_counter()
            comp = trainer_run(ds, args.steps, compile=True)
            best["compiled"] = max(best["compiled"], comp["tokens_per_s"])
            line += (f", compiled {comp['tokens_per_s']:,.0f} real tokens/s (first step with compilation "
                     f"{comp['compile_s']:.1f} s, slowest 10-step record {comp['slowest']:,.0f} tokens/s, "
                     f"whole run {time.perf_counter() - t:.0f} s)")
        print(line + f"   load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"[throughput] best of {args.rounds}: ours {best['eager']:,.0f} = {best['eager'] / best['makemore']:.2f}x "
          f"makemore's loop ({best['makemore']:,.0f} real tokens/s; goal 5x)")
    if best["compiled"]:
        print(f"  compiled: {best['compiled']:,.0f} = {best['compiled'] / best['makemore']:.2f}x makemore, "
              f"{best['compiled'] / best['eager']:.2f}x eager")

    model = MiniGPT(TrainConfig().model_config(ds.vocab.size, ds.block_size))
    shapes = {}
    for p in model.blocks.parameters():
        if p.dim() == 2:
            shapes.setdefault(tuple(p.shape), 0)
            shapes[tuple(p.shape)] += 1
    stacks = [(n, *s) for s, n in shapes.items()]
    step_ms = 1000 * 128 * 7.1 / best["eager"]  # a batch of 128 names holds ~7.1 real tokens a name
    print(f"\n[Newton-Schulz] one Muon step's orthogonalisations ({', '.join('x'.join(map(str, s)) for s in stacks)}), "
          f"against a {step_ms:.0f} ms step:")
    for dtype in (torch.float32, torch.bfloat16):
        for steps in (5, 4, 3):
            ms = newton_schulz_ms(stacks, steps, dtype)
            print(f"  {str(dtype).replace('torch.', ''):>8}, {steps} iterations: {ms:6.2f} ms ({100 * ms / step_ms:.0f}% of a step)")

    peak = measured_matmul_peak()
    cost = cost_of(model)
    for label, tps in (("eager", best["eager"]), ("compiled", best["compiled"])):
        if tps:
            print(f"[FLOP/s] {label}: {cost.model_flops(tps) / 1e9:.1f} GFLOP/s of model FLOPs = "
                  f"{100 * mfu(tps, cost, peak):.1f}% of the measured fp32 matmul peak {peak / 1e9:.0f} GFLOP/s "
                  f"(2048² on {torch.get_num_threads()} threads: as many as our trainer's governor left)")
    if args.isolated:
        torch.set_num_threads(physical_cores())
        isolated_steps(ds, args.rounds)
    if args.profile:
        profile_steps(ds)


def _step_runner(ds, net=None):
    """(model, step): one bare training step of the default recipe (a fresh packed batch,
    forward, backward, clip, optimizer), with no trainer around it; ``step(fixed)`` pads the
    batch to one shape first, as ``compile=True`` runs do; ``net`` is what the step runs."""
    from minigpt.training.schedule import make_optimizer
    from minigpt.training.shapes import FixedShape

    cfg = TrainConfig()
    model = MiniGPT(cfg.model_config(ds.vocab.size, ds.block_size))
    opt = make_optimizer(model, cfg, torch.device("cpu"))
    gen, fixed_shape = torch.Generator().manual_seed(0), FixedShape(ds.block_size)

    def step(fixed: bool = False, net=model) -> None:
        b = ds.train.packed_batch(torch.randint(len(ds.train), (cfg.batch_size,), generator=gen))
        x, y, extra = b.x, b.y, {"positions": b.positions, "segments": b.segments}
        if fixed:
            x, y, extra = fixed_shape(x, y, extra)
        _, loss = net(x, y, **extra)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()

    return model, step


def profile_steps(ds, steps: int = 40) -> None:
    from torch.profiler import ProfilerActivity, profile

    _, step = _step_runner(ds)
    for _ in range(10):
        step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    print(f"\n[profile] {steps} eager steps of the default recipe")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=14))


def isolated_steps(ds, rounds: int, steps: int = 60) -> None:
    """The step alone, no trainer around it: eager on packed rows, eager on the fixed padded
    shape, and compiled on that shape (milliseconds, median after 10 warm-up steps)."""
    model, step = _step_runner(ds)
    compiled = torch.compile(model, dynamic=False)
    t = time.perf_counter()
    step(fixed=True, net=compiled)
    print(f"\n[isolated] one bare step (forward, backward, clip, Muon), {torch.get_num_threads()} threads; "
          f"compiling took {time.perf_counter() - t:.1f} s")

    def median_ms(fixed: bool, net) -> float:
        times = []
        for _ in range(steps):
            t = time.perf_counter()
            step(fixed, net)
            times.append(time.perf_counter() - t)
        return 1000 * statistics.median(times[10:])

    for r in range(rounds):
        print(f"  round {r + 1}: eager packed {median_ms(False, model):.1f} ms, eager fixed shape "
              f"{median_ms(True, model):.1f} ms, compiled fixed shape {median_ms(True, compiled):.1f} ms", flush=True)


if __name__ == "__main__":
    main()
