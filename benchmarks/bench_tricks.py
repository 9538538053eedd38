"""The speedrun's tricks raced on names: each against the default recipe, paired by seed.

    python benchmarks/bench_tricks.py --steps 2000 --seeds 1337,7,11 \
        --candidate bigram=residual --candidate value_residual=true,x0_shortcut=true

Every run trains for a FIXED number of steps (not seconds), so the machine's load changes how
long a race takes but not its losses: the tricks can be raced on a shared machine. Each
candidate and the default run with the same seeds (same initial weights where the model is the
same, same batches); the score is the best checkpoint's loss on makemore's test split (see
benchmarks/bench.py), and the paired t-test of ``minigpt.significance`` on the per-seed differences says
whether a candidate's gain is beyond the seed-to-seed noise. A trick that costs time per step is
not charged for it here: read its steps per second next to it.

Results are appended to a JSON-lines file (``--results``) as each run ends, and a run already
there (same steps, seed and options) is not repeated: a race cut short resumes where it stopped,
and the default's runs are shared by every candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench import CANONICAL, makemore_dataset, recipe_changes  # noqa: E402
from minigpt.checkpoint import load_checkpoint  # noqa: E402
from minigpt.significance import mean, paired_t_test  # noqa: E402
from minigpt.training.cpu_policy import physical_cores  # noqa: E402
from minigpt.training.loop import train  # noqa: E402
from minigpt.training.options import TrainConfig  # noqa: E402
from minigpt.training.schedule import evaluate  # noqa: E402


def run_key(steps: int, seed: int, changes: dict) -> str:
    return json.dumps({"steps": steps, "seed": seed, "changes": changes}, sort_keys=True)


def one_run(ds, steps: int, seed: int, changes: dict) -> dict:
    cfg = TrainConfig(**{"steps": steps, "eval_interval": 250, "seed": seed, **changes})
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        st = train(cfg, Path(d) / "run", dataset=ds)
        wall = time.perf_counter() - t0
        if st["step"] != steps:  # stopped early (SIGTERM stops a run cleanly): never a result
            raise SystemExit(f"the run stopped at step {st['step']} of {steps}: not recorded")
        best = load_checkpoint(Path(d) / "run" / "checkpoint")
        test = evaluate(best.model, ds.test)
    return {"steps": steps, "seed": seed, "changes": changes, "best_val": st["best_val"], "test": test,
            "wall_s": round(wall, 1), "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=2000, help="the step budget of every run")
    ap.add_argument("--seeds", default="1337,7,11", help="comma-separated seeds (the pairs)")
    ap.add_argument("--candidate", action="append", default=[], metavar="OPTION=VALUE[,OPTION=VALUE]",
                    help="options changed from the default recipe, raced together (repeatable: one race each)")
    ap.add_argument("--results", default="bench_tricks.jsonl", help="JSON lines of finished runs (reused)")
    args = ap.parse_args()
    torch.set_num_threads(physical_cores())
    seeds = [int(s) for s in args.seeds.split(",")]
    ds = makemore_dataset(CANONICAL if CANONICAL.exists() else REPO / "data" / "names.txt")
    results_path = Path(args.results)
    done = {}
    if results_path.exists():
        for line in results_path.read_text().splitlines():
            r = json.loads(line)
            done[run_key(r["steps"], r["seed"], r["changes"])] = r
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}, "
          f"{args.steps} steps a run, seeds {seeds}", flush=True)

    def get(seed: int, changes: dict) -> dict:
        key = run_key(args.steps, seed, changes)
        if key not in done:
            done[key] = one_run(ds, args.steps, seed, changes)
            with results_path.open("a") as f:
                f.write(json.dumps(done[key]) + "\n")
            r = done[key]
            print(f"  {changes or 'default'} seed {seed}: test {r['test']:.4f} (best val {r['best_val']:.4f}, "
                  f"{r['wall_s']:.0f} s, load {r['load']})", flush=True)
        return done[key]

    for text in args.candidate:
        changes = recipe_changes(text.split(","))
        base = [get(s, {})["test"] for s in seeds]
        cand = [get(s, changes)["test"] for s in seeds]
        t = paired_t_test(cand, base)
        diffs = [c - b for c, b in zip(cand, base)]
        signs = "all lower" if all(d < 0 for d in diffs) else "all higher" if all(d > 0 for d in diffs) else "mixed"
        print(f"[race] {text}: test {mean(cand):.4f} vs default {mean(base):.4f}, mean difference "
              f"{mean(diffs):+.4f} ({signs}; per seed {', '.join(f'{d:+.4f}' for d in diffs)}), paired p = {t.p:.3f}",
              flush=True)


if __name__ == "__main__":
    main()
