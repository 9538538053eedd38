"""What the inside views cost the trainer: throughput with the logging on against off, same run.

"On" is the default: the loss chart's reference losses at start, 4 validation items scored at each
evaluation (surprise.jsonl), every weight matrix sampled every ``--layer-every`` steps
(layers.jsonl) and the step scrubber's weight snapshots (log-spaced steps and evaluations).
"Off" trains the same configuration with none of them (the trainer's probes replaced by nothing,
the reference losses skipped). The runs alternate on, off, on, off, … in one process with the
same seed, so a shared machine's drift falls on both sides; the median of the pairs' ratios is the
figure to read, with its spread (lowest–highest pair, and the standard deviation).

    nice -n 10 python benchmarks/bench_insight.py [--pairs 5] [--steps 600] [--eval-interval 250]

It prints each pair's steps per second (whole run: steps / wall time, evaluations and saves
included) and the cost, time on / time off − 1; the issue's target is at most 5%. It also prints
the cost in CPU time (this process's, all threads): on a machine shared with other work the wall
clock swings with their load, the CPU time this process spent much less.

``--parts`` instead trains once with the logging on and times each measurement's calls in CPU
time (this process's), then projects them onto a default run (3,000 steps, an evaluation every
250, layer health every 25): the share of that run's CPU time the logging takes. It needs no
"off" run, so another program's load cannot tilt it. The default
run's settings (the default model, eval every 250, layer health every 25) are the default here;
a short run overstates the cost, as its log-spaced snapshots (10, 14, 20, … 57) crowd into few steps.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minigpt.training import trainer  # noqa: E402
from minigpt.training.loop import train  # noqa: E402
from minigpt.training.options import TrainConfig  # noqa: E402

_PROBES, _REFERENCES = trainer.Trainer.setup_probes, trainer.reference_losses


def logging(on: bool) -> None:
    """Switch every inside measurement on (the trainer as shipped) or off."""
    if on:
        trainer.Trainer.setup_probes = _PROBES
        trainer.reference_losses = _REFERENCES
    else:
        def no_probes(self):  # the weight average stays: it is training, not logging
            self.observers = trainer.StepObservers(self.model, self.average)

        trainer.Trainer.setup_probes = no_probes
        trainer.reference_losses = lambda *a, **k: {}


def one_run(cfg: TrainConfig, on: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole run."""
    logging(on)
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        train(cfg, Path(tmp) / "run")
        return time.perf_counter() - t0, time.process_time() - c0


def parts(cfg: TrainConfig, default_steps: int = 3000) -> None:
    """CPU time of each measurement's calls in one run, projected onto a default run."""
    from minigpt.runs.snapshots import is_log_step
    from minigpt.training import insight

    spent: dict[str, list[float]] = {}

    def timed(owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            c0 = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent.setdefault(label, []).append(time.process_time() - c0)

        setattr(owner, name, wrapper)

    logging(True)
    timed(insight.SurpriseProbe, "record", "surprise (per evaluation)")
    timed(insight.LayerProbe, "before_update", "layer health (per sample)")
    timed(insight.LayerProbe, "after_update", "layer health (per sample)")
    timed(insight.SnapshotKeeper, "take", "snapshot (per snapshot)")
    timed(trainer, "reference_losses", "reference losses (once)")
    with tempfile.TemporaryDirectory() as tmp:
        c0 = time.process_time()
        train(cfg, Path(tmp) / "run")
        total = time.process_time() - c0
    logged = sum(sum(v) for v in spent.values())
    per_step = (total - logged) / cfg.steps  # training, evaluation and saves: what runs anyway
    default = TrainConfig()  # what the projection is for: the default run's intervals
    calls = {"surprise (per evaluation)": default_steps // default.eval_interval,
             "layer health (per sample)": 2 * (default_steps // default.layer_every),  # before + after
             "snapshot (per snapshot)": sum(1 for s in range(1, default_steps + 1)
                                            if is_log_step(s) or s % default.eval_interval == 0),
             "reference losses (once)": 1}
    print(f"{uptime()}; one run of {cfg.steps} steps: {total:.1f} s CPU, {1000 * per_step:.1f} ms CPU a step "
          f"without the logging")
    projected = 0.0
    for label, values in spent.items():
        each = sum(values) / len(values)
        projected += each * calls[label]
        print(f"  {label}: {1000 * each:.2f} ms CPU a call, {calls[label]} calls in a default run")
    run_cpu = per_step * default_steps
    print(f"logging's share of a default run ({default_steps} steps): {projected:.1f} s of {run_cpu:.0f} s CPU "
          f"= {100 * projected / run_cpu:.1f}% (target ≤ 5%); {uptime()} at end")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--eval-interval", type=int, default=250)
    ap.add_argument("--layer-every", type=int, default=25)
    ap.add_argument("--parts", action="store_true", help="time each measurement in CPU time, project onto a default run")
    args = ap.parse_args()
    cfg = TrainConfig(steps=args.steps, eval_interval=args.eval_interval,
                      layer_every=args.layer_every)  # the default model and seed
    if args.parts:
        parts(cfg)
        return
    one_run(TrainConfig(steps=20, eval_interval=10), True)  # warm-up: imports, allocator, data cache
    ratios, cpu_ratios = [], []
    print(f"{uptime()} at start, {os.cpu_count()} cores; {args.steps} steps, eval every "
          f"{args.eval_interval}, layer health every {args.layer_every}")
    for pair in range(args.pairs):
        times = {on: one_run(cfg, on) for on in (True, False)}  # A, B, A, B, …
        ratio = times[True][0] / times[False][0]  # time on / time off = throughput off / on
        ratios.append(ratio)
        cpu_ratios.append(times[True][1] / times[False][1])
        print(f"pair {pair + 1}: on {args.steps / times[True][0]:.1f} steps/s, off {args.steps / times[False][0]:.1f} "
              f"steps/s, cost {100 * (ratio - 1):+.1f}% wall, {100 * (cpu_ratios[-1] - 1):+.1f}% CPU; {uptime()}",
              flush=True)
    for what, values in (("wall", ratios), ("CPU", cpu_ratios)):
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(f"cost of the logging ({what} time): median {100 * (statistics.median(values) - 1):+.1f}% "
              f"(pairs {100 * (min(values) - 1):+.1f}% to {100 * (max(values) - 1):+.1f}%, "
              f"sd {100 * spread:.1f} points; target ≤ 5%)")
    print(f"{uptime()} at end")


def uptime() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


if __name__ == "__main__":
    main()
