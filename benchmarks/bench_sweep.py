"""A sweep end to end through the real scheduler: wall time, the fit, and the scheduler's overhead.

    python benchmarks/bench_sweep.py                      # model_size preset, default budget
    python benchmarks/bench_sweep.py --preset scaling_law --data ../shared/data/names.txt
    python benchmarks/bench_sweep.py --quick              # 4 tiny runs: the overhead alone, ~1 minute

The experiment is written to a temporary data folder (or --data-dir) and run by the same
background scheduler `minigpt sweep` starts. Printed per run: its wall time from launch to its
final status, the training time its trainer measured, and the gap between the previous run's
end and this run's launch — the scheduler's own overhead (the goal: under 1 s). A worker's
start (importing torch, loading the data) and its final evaluation are the trainer's cost, the
same for `minigpt train`, and are shown apart. The load average is printed: on a shared machine
the wall times say as much about the neighbours as about the sweep.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="model_size", help="a preset of minigpt.experiments.presets")
    ap.add_argument("--steps", type=int, default=None, help="override the preset's budget (steps a run)")
    ap.add_argument("--data", default=None, help="dataset file (default: the embedded names)")
    ap.add_argument("--data-dir", default=None, help="where the runs go (default: a temporary folder)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="4 tiny runs (d 8-16, 30 steps): overhead only")
    ap.add_argument("--timeout", type=float, default=3 * 3600, help="give up after this many seconds")
    return ap.parse_args()


def main() -> int:
    args = parse_args()
    os.environ["MINIGPT_DATA_DIR"] = args.data_dir or tempfile.mkdtemp(prefix="bench-sweep-")
    from minigpt.experiments import folder as ef
    from minigpt.experiments import plots, presets, results, sweep_runner
    from minigpt.experiments.spec import Budget

    if args.quick:
        grid = presets.parse_grid_text("d_model=8,16 dropout=0,0.1 steps=30 n_layers=1 n_heads=2 batch_size=32")
        spec = presets.custom_spec("quick", grid.axes, grid.budget, grid.base)
    else:
        budget = Budget("steps", args.steps) if args.steps else None
        spec = presets.preset_spec(args.preset, budget=budget)
    load_start = os.getloadavg()
    exp = ef.create_experiment(spec, data=args.data)
    print(f"{exp.name}: {len(exp.runs)} runs, {spec.budget.describe()}, data {args.data or 'embedded'}; "
          f"load average at start {load_start[0]:.2f} (1 min) on {os.cpu_count()} CPUs", flush=True)
    t0 = time.time()
    sweep_runner.start_sync(exp.dir, args.jobs)
    state = ""
    while time.time() - t0 < args.timeout:
        res = results.collect(exp.dir)
        if res.state != state:
            print(f"  {time.time() - t0:7.1f}s {results.summary_line(res)}", flush=True)
            state = res.state
        if res.state in ("finished", "interrupted", "paused", "stopped"):
            break
        time.sleep(2.0)
    wall = time.time() - t0
    res = results.collect(exp.dir)
    print()
    print(results.format_table(res))
    print()
    plot = plots.plot_data(res)
    print(plots.render(plot, width=78, height=18))
    for note in plot.notes:
        print(f"- {note}")
    print()
    report_overhead(exp, ef)
    print(f"\nsweep wall time {wall:.1f} s ({wall / 60:.1f} min); load average at end {os.getloadavg()[0]:.2f}; "
          f"{len(res.finished)}/{len(res.runs)} runs finished; data in {os.environ['MINIGPT_DATA_DIR']}")
    return 0 if res.state == "finished" else 1


def report_overhead(exp, ef) -> None:
    from minigpt.runs.metrics import read_metrics

    events = ef.read_events(exp.dir)
    launches = {e["run"]: e["t"] for e in events if e["event"] in ("start", "resume")}
    ends, rows = {}, []
    for run in exp.runs:
        run_dir = exp.dir / run.name
        try:
            ends[run.name] = (run_dir / "status.json").stat().st_mtime
            launch = json.loads((run_dir / "launch.json").read_text())
            trained = max(r.get("elapsed_s", 0.0) for r in read_metrics(run_dir)[0])
        except (OSError, ValueError):
            continue
        rows.append((run.name, launch["launched_ts"], ends[run.name], trained))
    print(f"{'run':<28} {'wall s':>8} {'training s':>10} {'worker start+final eval s':>26} {'scheduler gap s':>16}")
    gaps = []
    for i, (name, launched, ended, trained) in enumerate(rows):
        gap = launches.get(name, launched) - rows[i - 1][2] if i else None
        if gap is not None:
            gaps.append(gap)
        print(f"{name:<28} {ended - launched:8.1f} {trained:10.1f} {ended - launched - trained:26.1f} "
              f"{'' if gap is None else f'{gap:16.2f}'}")
    if gaps:
        print(f"scheduler overhead between runs: mean {sum(gaps) / len(gaps):.2f} s, max {max(gaps):.2f} s "
              f"(poll interval 0.2 s; the goal is under 1 s)")


if __name__ == "__main__":
    sys.exit(main())
