"""Does a run started right after heavy work train at full speed once the cores are free?

For each way a run starts (the CLI as a learner types it; the app's and the sweeps' worker
command, which adds --nice 5 --quiet), this trains the same small budget twice: once on a quiet
machine, once started the moment a 60 s full load on every core ends. It prints steps per second
and the ratio quiet / after-load (target ≤ 1.1), plus the policy each run recorded.

The two runs of a pair are only seconds apart, and pairs alternate, so the slow drift of a shared
VM's speed (±10 % between minutes here) falls on both sides; the median of the pairs' ratios is
the figure to read.

    python benchmarks/bench_cpu_policy.py [--pairs 3] [--load-s 60] [--train-s 20]

Run it on an otherwise idle machine: other work during the measurement is the very thing measured.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _spin(until: float) -> None:
    x = 0
    while time.time() < until:
        x += 1


def full_load(seconds: float) -> None:
    """Keep every core busy for ``seconds`` (separate processes, like a test suite or a build)."""
    until = time.time() + seconds
    procs = [mp.Process(target=_spin, args=(until,)) for _ in range(os.cpu_count() or 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()


def one_run(out: Path, train_s: float, worker: bool) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "minigpt.cli", "train", "--time", str(train_s), "--device", "cpu",
           "--eval-interval", "100000", "--out", str(out)]
    if worker:
        cmd += ["--nice", "5", "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["PYTHONPATH"] = str(REPO)
    subprocess.run(cmd, check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    status = json.loads((out / "status.json").read_text())
    sys.path.insert(0, str(REPO))
    from minigpt.runs.metrics import read_metrics

    train = [r for r in read_metrics(out)[0] if "train_loss" in r]
    first, last = train[0], train[-1]
    rate = (last["step"] - first["step"]) / max(last["elapsed_s"] - first["elapsed_s"], 1e-9)
    return rate, status.get("cpu_policy", "?")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3, help="quiet/after-load pairs per way of starting")
    ap.add_argument("--load-s", type=float, default=60.0)
    ap.add_argument("--train-s", type=float, default=20.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for label, worker in (("CLI", False), ("app/sweep worker (nice 5)", True)):
            ratios = []
            for pair in range(args.pairs):
                time.sleep(5)  # the previous run's exit settles
                quiet, quiet_policy = one_run(Path(tmp) / f"{worker}-quiet-{pair}", args.train_s, worker)
                full_load(args.load_s)
                after, after_policy = one_run(Path(tmp) / f"{worker}-after-{pair}", args.train_s, worker)
                ratios.append(quiet / after)
                print(f"{label} pair {pair + 1}: quiet {quiet:.1f} steps/s [{quiet_policy}]", flush=True)
                print(f"{label} pair {pair + 1}: after {args.load_s:.0f} s of full load {after:.1f} steps/s "
                      f"[{after_policy}]; ratio {quiet / after:.2f}", flush=True)
            print(f"{label}: ratio quiet/after, median of {len(ratios)} pairs = {statistics.median(ratios):.2f} "
                  f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)}; target ≤ 1.10)", flush=True)


if __name__ == "__main__":
    main()
