"""Data-parallel training on this machine: 1 process against N under torchrun, same global batch.

    python benchmarks/bench_ddp.py [--nproc 2] [--steps 300]

Both runs train the default MiniGPT on the embedded names with the same global batch (128 names
a step), so they do the same arithmetic; the N-process run splits each batch and adds one
gradient all-reduce (plus two tiny ones: the token count and the stop flag) per step. On a 2-core
machine one process already uses both cores with 2 threads, so little gain is expected: the figure
says what data parallelism costs here, and the same command shows what it buys on a bigger machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def steps_per_s(run: Path) -> float:
    sys.path.insert(0, str(REPO))
    from minigpt.runs.metrics import read_metrics

    train = [r for r in read_metrics(run)[0] if "train_loss" in r]
    first, last = train[0], train[-1]
    return (last["step"] - first["step"]) / max(last["elapsed_s"] - first["elapsed_s"], 1e-9)


def train(out: Path, nproc: int, steps: int) -> float:
    cmd = [sys.executable, "-m", "minigpt.cli", "train", "--steps", str(steps), "--eval-interval", str(steps),
           "--device", "cpu", "--nproc", str(nproc), "--out", str(out), "-q"]
    subprocess.run(cmd, check=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                   stdout=subprocess.DEVNULL)
    return steps_per_s(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one = train(Path(tmp) / "one", 1, args.steps)
        many = train(Path(tmp) / "many", args.nproc, args.steps)
    print(f"1 process:          {one:6.1f} steps/s  ({1000 / one:5.1f} ms a step)")
    print(f"{args.nproc} processes (DDP): {many:6.1f} steps/s  ({1000 / many:5.1f} ms a step)")
    print(f"speed-up {many / one:.2f}x; DDP's cost per step {1000 / many - 1000 / one / args.nproc:+.1f} ms "
          f"over an ideal split of the 1-process step")


if __name__ == "__main__":
    main()
