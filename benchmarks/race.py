"""Time to quality against makemore, in one process: ``python benchmarks/bench.py --race``.

makemore's own model and loop (``references.MakemoreLoop``: its Transformer, 32 names a step,
AdamW 5e-4, no schedule) trains for 120 s; our default recipe trains for 10, 15, 20 and 30 s.
The two take turns (makemore 30 s, ours 10 s, makemore 30 s, ours 15 s, ...), so a change in the
machine's load lands on both. Every model is scored by the same function on makemore's test split
(the last 1000 names of the seed-3407 permutation). The race prints the shortest of our budgets
whose test loss is at or below makemore's after 120 s, and the ratio of the two times.

Fair to makemore where it matters: it trains on its whole training part (our recipe holds 1000 of
those names out for validation), and only its steps are timed, while our budgets count everything
our trainer does in them (evaluations, checkpoints, the weight average). Both use the same number
of threads: makemore's slices follow the rule of our trainer's thread governor (the cores nobody
else is using, re-read every 5 s), which on a busy machine is one thread.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.references import MakemoreLoop
from minigpt.data import Dataset
from minigpt.training.cpu_policy import measure_busy_cores, physical_cores, threads_for
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig
from minigpt.training.schedule import evaluate

OUR_BUDGETS = (10.0, 15.0, 20.0, 30.0)
MAKEMORE_SECONDS = 120.0
RECHECK_S = 5.0  # as often as our trainer's thread governor looks at the machine


def makemore_slice(makemore: MakemoreLoop, seconds: float) -> None:
    """Train makemore's loop for ``seconds`` with the thread count our trainer's governor would
    choose now (the cores nobody else uses): on a busy machine our trainer drops to one thread,
    and a reference keeping two would get twice the CPU share."""
    end = makemore.seconds + seconds
    while makemore.seconds < end - 1e-9:
        torch.set_num_threads(threads_for(measure_busy_cores(), physical_cores()))
        makemore.train_for(min(RECHECK_S, end - makemore.seconds))


def shortest_at_or_below(losses: dict[float, float], reference: float) -> float | None:
    """The shortest budget whose test loss is at or below the reference's, or None."""
    return min((b for b, loss in losses.items() if loss <= reference), default=None)


def our_run(ds: Dataset, seconds: float, seed: int, changes: dict) -> tuple[int, float]:
    """Our recipe for ``seconds``: (steps, test loss of its best checkpoint)."""
    from minigpt.checkpoint import load_checkpoint

    cfg = TrainConfig(**{"steps": None, "time_s": seconds, "eval_interval": 250, "seed": seed, **changes})
    with tempfile.TemporaryDirectory() as d:
        status = train(cfg, Path(d) / "run", dataset=ds)
        best = load_checkpoint(Path(d) / "run" / "checkpoint")
        return status["step"], evaluate(best.model, ds.test)


def race(ds: Dataset, seed: int = 1337, changes: dict | None = None, budgets=OUR_BUDGETS,
         makemore_seconds: float = MAKEMORE_SECONDS) -> dict:
    """Run the race; print each leg as it ends and the verdict; return the figures."""
    changes = changes or {}
    makemore = MakemoreLoop(list(ds.splits.train) + list(ds.splits.val), ds.vocab.stoi, ds.block_size, seed=3407)
    what = ", ".join(f"{k}={v}" for k, v in changes.items()) or "default recipe"
    print(f"\n[race] makemore's loop ({makemore.n_params:,} params, batch 32, AdamW 5e-4) {makemore_seconds:g} s "
          f"against ours ({what}, seed {seed}) for {', '.join(f'{b:g}' for b in budgets)} s, taking turns")
    slice_s = makemore_seconds / len(budgets)
    ours: dict[float, tuple[int, float]] = {}
    for budget in budgets:
        makemore_slice(makemore, slice_s)
        print(f"  makemore: {makemore.seconds:5.1f} s, {makemore.steps} steps, {torch.get_num_threads()} threads "
              f"(load {os.getloadavg()[0]:.2f})")
        t = time.perf_counter()
        steps, test = our_run(ds, budget, seed, changes)
        ours[budget] = (steps, test)
        print(f"  ours {budget:g} s: {steps} steps, test {test:.4f}   ({time.perf_counter() - t:.0f} s wall with "
              f"setup and scoring, "
              f"load {os.getloadavg()[0]:.2f})")
    reference = evaluate(makemore.model, ds.test)
    print(f"  makemore after {makemore.seconds:.0f} s ({makemore.steps} steps): test {reference:.4f}")
    first = shortest_at_or_below({b: test for b, (_, test) in ours.items()}, reference)
    if first is not None:
        print(f"[race] our {first:g} s reach makemore's {makemore_seconds:g} s test loss "
              f"({ours[first][1]:.4f} <= {reference:.4f}): {makemore_seconds / first:.0f}x less time "
              f"(goal: 15 s, 8x)")
    else:
        print(f"[race] none of our budgets reached makemore's {makemore_seconds:g} s test loss {reference:.4f} "
              f"(goal: 15 s, 8x)")
    return {"makemore_test": reference, "makemore_steps": makemore.steps, "ours": ours, "first": first}
