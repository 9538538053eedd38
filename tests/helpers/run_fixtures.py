"""Run folders written by hand for screen tests: fixed numbers, fixed times, no training.

A run folder is the only channel between a trainer and the app (config.json, status.json,
metrics.jsonl), so a test can stand in for any trainer by writing those files.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict
from pathlib import Path

from minigpt import paths
from minigpt.runs.files import process_start_time, write_json_atomic
from minigpt.runs.insight import LAYERS_FILE, SURPRISE_FILE, InsightLog, layers_header, surprise_header
from minigpt.training.options import TrainConfig

STARTED = "2026-01-05T10:00:00+00:00"


def write_run(root: Path, folder: str, *, model: str = "gpt", steps: int = 300, lr: float = 5e-3, seed: int = 1337,
              d_model: int = 64, n_layers: int = 4, state: str = "finished", best_val: float = 2.1,
              eval_every: int = 50, log_every: int = 10, start_loss: float = 3.3, n_params: int = 204_544,
              label: str | None = None, note: str | None = None, step: int | None = None) -> Path:
    """A run folder with a smooth, deterministic loss curve that ends near ``best_val``."""
    run = root / folder
    run.mkdir(parents=True, exist_ok=True)
    cfg = asdict(TrainConfig(model=model, d_model=d_model, n_layers=n_layers, lr=lr, seed=seed, steps=steps,
                             eval_interval=eval_every))
    cfg["data"] = "embedded"
    (run / "config.json").write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    done = steps if step is None else step
    lines = []
    for s in [1] + list(range(log_every, done + 1, log_every)):
        frac = s / steps
        train = best_val - 0.05 + (start_loss - best_val) * math.exp(-6 * frac) + 0.03 * math.sin(s / 7)
        rec = {"step": s, "train_loss": round(train, 5), "lr": lr * min(1.0, s / (0.02 * steps + 1)) *
               (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))), "tokens_per_s": 30000.0,
               "elapsed_s": round(s * 0.03, 3)}
        if s % eval_every == 0:
            rec["val_loss"] = round(best_val + (start_loss - best_val) * math.exp(-6 * frac), 5)
        lines.append(json.dumps(rec))
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    status = {"state": state, "pid": None, "pid_start": None, "step": done, "total_steps": steps,
              "time_budget_s": None, "best_val": best_val, "model": model, "n_params": n_params, "device": "cpu",
              "started_at": STARTED, "updated_at": STARTED, "error": None,
              "val_loss": best_val if state == "finished" else None,
              "test_loss": round(best_val - 0.02, 4) if state == "finished" else None, "block_size": 16}
    if label is not None:
        status["name"] = label
    if note is not None:
        status["note"] = note
    (run / "status.json").write_text(json.dumps(status, indent=2), encoding="utf-8")
    return run


def write_course_runs(root: Path) -> list[Path]:
    """Four runs a learner might have after chapter 9: a bigram, an MLP and two MiniGPTs."""
    return [
        write_run(root, "20260105-100000", model="bigram", steps=1, best_val=2.454, start_loss=2.454, n_params=729,
                  eval_every=1, log_every=1),
        write_run(root, "20260105-100100", model="mlp", steps=3000, best_val=2.115, n_params=11_897),
        write_run(root, "20260105-100200", steps=3000, lr=5e-3, best_val=1.996),
        write_run(root, "20260105-100300", steps=3000, lr=3e-3, seed=7, d_model=32, n_layers=2, state="stopped",
                  best_val=2.08, n_params=27_712, step=1200),
    ]


def grouped_run(root: Path, folder: str, group: str, seed: int, best_val: float) -> Path:
    run = write_run(root, folder, seed=seed, best_val=best_val, steps=200)
    status = json.loads((run / "status.json").read_text())
    status.update(format="minigpt-run-status", format_version=3, name=folder, note="", world_size=1, group=group)
    status.pop("error", None)
    (run / "status.json").write_text(json.dumps(status))
    return run


def write_insight(run):
    status = json.loads((run / "status.json").read_text())
    status.update(format="minigpt-run-status", format_version=3, name="inside", note="", world_size=1,
                  uniform_loss=3.2958, bigram_loss=2.4541)
    status.pop("error", None)
    (run / "status.json").write_text(json.dumps(status))
    log = InsightLog(run / SURPRISE_FILE, surprise_header(["ava", "bo"], [["a", "v", "a", "."], ["b", "o", "."]]))
    log.write({"step": 50, "nll": [[3.1, 3.0, 2.9, 1.0], [3.2, 3.1, 2.0]]})
    log.write({"step": 300, "nll": [[2.1, 0.5, 1.2, 0.3], [2.6, 1.4, 0.9]]})
    log.close()
    names = ["tok_emb.weight", "blocks.0.attn.qkv.weight", "blocks.0.attn.proj.weight", "blocks.0.ffn.up.weight",
             "blocks.0.ffn.down.weight", "head.weight"]
    log = InsightLog(run / LAYERS_FILE, layers_header(names, ["adamw", "muon", "muon", "muon", "muon", "adamw"], 25))
    for step in range(25, 301, 25):
        log.write({"step": step, "grad": [0.3, 0.12, 0.1, 0.11, 0.1, 0.2],
                   "ratio": [-3.0, -1.5, -1.6, -1.4, -4.2 if step == 300 else -1.5, -3.1]})
    log.close()


def a_training_run(label: str = "busy one"):
    """A run whose status says running, held by a live process (this one)."""
    run = write_run(paths.runs_dir(), "20260105-110000", state="running", label=label, step=10)
    status = json.loads((run / "status.json").read_text(encoding="utf-8"))
    status.update(pid=os.getpid(), pid_start=process_start_time(os.getpid()))
    (run / "status.json").write_text(json.dumps(status), encoding="utf-8")
    return run


def fake_run(exp, name, state, step, val, train=None, long=None, pid=None):
    run_dir = exp.run_dir(name)
    run_dir.mkdir()
    write_json_atomic(run_dir / "config.json", exp.run(name).config)
    status = {"state": state, "step": step, "total_steps": exp.run(name).steps, "best_val": val,
              "val_loss": val if state == "finished" else None, "model": "gpt",
              "pid": pid or 2 ** 22 + 5, "pid_start": process_start_time(pid) if pid else None}
    write_json_atomic(run_dir / "status.json", status)
    with open(run_dir / "metrics.jsonl", "w", encoding="utf-8") as f:
        for s in range(10, step + 1, 10):
            f.write(json.dumps({"step": s, "train_loss": val + 0.05, "tokens_per_s": 1000.0 * s,
                                **({"val_loss": val + (step - s) * 0.001} if s % 20 == 0 else {})}) + "\n")
    if train is not None:
        extras = {"train_loss": train, **({"long_loss": long} if long is not None else {})}
        write_json_atomic(run_dir / "extras.json", extras)


def time_run(root, folder, group, seed, best_val, steps, eval_every):
    """A --time run of 6 s: each seed reaches its own step count and evaluates at its own steps
    (no step is shared by all three), the last one as the budget runs out."""
    run = grouped_run(root, folder, group, seed, best_val)
    write_run(root, folder, seed=seed, best_val=best_val, steps=steps, eval_every=eval_every, log_every=1)
    status = json.loads((run / "status.json").read_text())
    status.update(format="minigpt-run-status", format_version=3, name=folder, note="", world_size=1, group=group,
                  total_steps=None, time_budget_s=6.0)
    status.pop("error", None)
    (run / "status.json").write_text(json.dumps(status))
    return run


def time_budget_groups(root):
    """Groups A and B of three --time seeds each (A's finals 2.01–2.03, B's 0.1 higher), as the
    seed groups ``minigpt.experiments.groups`` finds. At 0.03 s a step, 200 steps end at the
    budget, 195 at 97.5 % of it, 210 just past it."""
    from minigpt.experiments import groups
    from minigpt.runs import listing

    for seed, steps, every in ((1, 200, 40), (2, 195, 39), (3, 210, 42)):
        time_run(root, f"a{seed}", "A", seed, 2.00 + seed / 100, steps, every)
        time_run(root, f"b{seed}", "B", seed, 2.10 + seed / 100, steps, every)
    return groups.find_groups(sorted(listing.list_runs(root), key=lambda i: i.name))
