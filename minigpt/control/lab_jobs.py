"""The lessons' lab jobs: measurements too long for a snippet, run in the background.

``lora`` fine-tunes the shipped MiniGPT on the names of one letter (full and LoRA at three ranks);
``checkpointing`` times and measures a training step of a 16-layer MiniGPT with and without
activation checkpointing; ``induction`` trains the two-layer attention-only model on repeated
chunks (the training form's "induction" preset), scores its heads and keeps the run (``lab/induction/run``,
listed by the explorers and compare); ``test-time`` samples the shipped model's names for pass@k and
best-of-k; ``mup`` sweeps learning rates at three widths under SP and μP (and runs the coordinate
check); ``stability`` trains the default model at a too-high learning rate with and without QK-norm,
z-loss and soft-capping. ``minigpt lab run JOB`` runs one in the foreground; ``start_job`` (the
app) launches the same command as a background process, at the trainers' niceness, holding the job
folder's lock. The lesson shows ``result.json`` once it exists (``minigpt.runs.lab``).

A job is declared in ``minigpt.runs.lab.JOBS`` (id, title, example); here only its runner is
written, bound to the declared id by ``@runner(id)``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import minigpt
from minigpt import guarded, spawn
from minigpt.errors import RunBusyError, RunError
from minigpt.runs.files import now_iso, write_json_atomic
from minigpt.runs.lab import JOBS, RUN_DIR, is_running, job_dir, read_result, write_result
from minigpt.runs.lock import RunLock

LOG_FILE, LAUNCH_FILE = "job.log", "launch.json"
NICENESS = 5  # as the training workers: the app's keys answer while the job trains
_LAUNCHED: list = []  # keep the process objects (asyncio closes a collected transport)

# The function that runs each job declared in minigpt.runs.lab.JOBS, bound by its id (``runner``).
RUNNERS: dict[str, Callable[[Callable[[str], None]], dict]] = {}
# Jobs whose runner trains a run and keeps it: called as ``(progress, run_dir)``, the folder to train in.
KEEPS_RUN: set[str] = set()


def runner(job: str, keeps_run: bool = False):
    """Decorator: bind a function ``(progress) -> result`` to the lab job declared as ``job``; with
    ``keeps_run``, ``(progress, run_dir) -> result``, and the run it trains there is kept in the
    job's folder (``lab/<job>/run``), where the explorers and compare find it."""

    def bind(fn):
        if job not in JOBS:
            raise ValueError(f"no lab job called {job!r} is declared in minigpt.runs.lab.JOBS")
        if job in RUNNERS:
            raise ValueError(f"lab job {job!r} has two runners")
        RUNNERS[job] = fn
        if keeps_run:
            KEEPS_RUN.add(job)
        return fn

    return bind


@runner("lora")
def _lora(progress) -> dict:
    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import load_dataset
    from minigpt.paths import default_checkpoint, default_dataset
    from minigpt.training.finetune import FinetuneConfig, run_finetune

    ck = load_checkpoint(default_checkpoint())
    dataset = load_dataset(default_dataset(), seed=int(ck.train_config.get("split_seed", 42)), vocab=ck.vocab,
                           block_size=ck.model_config.block_size)
    return run_finetune(ck.model, dataset, FinetuneConfig(), progress)


@runner("checkpointing")
def _checkpointing(progress) -> dict:
    from minigpt.training.memory_bench import BenchConfig, measure

    return measure(BenchConfig(), progress)


@runner("induction", keeps_run=True)
def _induction(progress, run_dir: Path) -> dict:
    from minigpt.checkpoint import load_checkpoint
    from minigpt.control.form import preset_config
    from minigpt.repeat_data import load_repeat_dataset
    from minigpt.teaching.induction import measure
    from minigpt.training.loop import train

    cfg = preset_config("induction")  # the bundled model's recipe: the learner grows the same heads

    def log(record: dict) -> None:
        if record.get("step", 1) % cfg.eval_interval == 0 and "train_loss" in record:
            progress(f"step {record['step']:5d}  loss {record['train_loss']:.3f}")

    train(cfg, run_dir, on_log=log, name="induction heads (lab)")
    ck = load_checkpoint(run_dir / "checkpoint")
    test = load_repeat_dataset(cfg.block_size, seed=cfg.split_seed, vocab=ck.vocab,
                               sizes={"train": 1, "val": 1, "test": 512}).test
    return {**measure(ck.model.eval(), test), "steps": cfg.steps, "seed": cfg.seed}


@runner("ptq")
def _ptq(progress) -> dict:
    from minigpt.teaching.ptq_shipped import measure

    return measure(progress)


# The self-speculation job's model: the course's MiniGPT, a short budget, a second head (DeepSeek-V3
# weighed its multi-token loss 0.3 for most of training). About 3 minutes on two busy cores.
SELF_SPEC_TRAINING = dict(model="gpt", d_model=64, n_heads=4, n_layers=4, batch_size=64, lr=5e-3, steps=600,
                          eval_interval=200, mtp_weight=0.3)


@runner("self-speculation")
def _self_speculation(progress, training: dict | None = None, names: int = 200) -> dict:
    import tempfile

    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import load_dataset
    from minigpt.paths import checkpoints_dir
    from minigpt.teaching.self_speculation import compare, second_head_rank_hits
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig

    cfg = TrainConfig(**(training or SELF_SPEC_TRAINING))

    def log(record: dict) -> None:
        if record.get("step", 1) % cfg.eval_interval == 0 and "val_loss" in record:
            progress(f"step {record['step']:5d}  val loss {record['val_loss']:.3f}")

    with tempfile.TemporaryDirectory(prefix="minigpt-self-spec-") as tmp:
        status = train(cfg, Path(tmp) / "run", on_log=log, name="self-speculation (lab)")
        ck = load_checkpoint(Path(tmp) / "run" / "checkpoint")
    model = ck.model.eval()
    progress("timing plain sampling, self-speculation and the MLP draft")
    result = compare(model, ck.vocab, load_checkpoint(checkpoints_dir() / "mlp").model, n=names)
    test = load_dataset(None, seed=cfg.split_seed, vocab=ck.vocab, block_size=model.config.block_size).splits.test
    result["rank_hits"] = second_head_rank_hits(model, [ck.vocab.encode(w) for w in test[:300]])
    result["training"] = {k: getattr(cfg, k) for k in ("d_model", "n_layers", "batch_size", "steps", "mtp_weight",
                                                       "seed")}
    result["val_loss"], result["test_loss"] = status.get("val_loss"), status.get("test_loss")
    return result


@runner("test-time")
def _test_time(progress) -> dict:
    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import load_words
    from minigpt.paths import default_checkpoint, default_dataset
    from minigpt.teaching.test_time import measure

    ck = load_checkpoint(default_checkpoint())
    split_seed = int(ck.train_config.get("split_seed", 42))
    return measure(ck.model, ck.vocab, list(load_words(default_dataset())), split_seed, progress=progress)
@runner("mup")
def _mup(progress) -> dict:
    from minigpt.training.transfer import coordinate_check, lr_sweep

    result = lr_sweep(progress=progress)
    result["coordinate_check"] = {p: {str(w): v for w, v in coordinate_check(p).items()} for p in ("sp", "mup")}
    return result


@runner("stability")
def _stability(progress) -> dict:
    from minigpt.training.stability import compare

    return compare(progress=progress)


def run_job(job: str, root: Path | str | None = None, progress=print) -> dict:
    """Run ``job`` here, holding its folder's lock, and save its result (RunBusyError when it is
    already running)."""
    folder = job_dir(job, root)
    folder.mkdir(parents=True, exist_ok=True)
    with RunLock(folder):
        import torch

        # One thread: the job shares the cores with the app and any training, and two threads
        # fighting other processes for two cores run slower than one.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            t = time.perf_counter()
            if job in KEEPS_RUN:
                fresh = _fresh(folder / f"{RUN_DIR}.new")
                result = RUNNERS[job](progress, fresh)
            else:
                result = RUNNERS[job](progress)
        finally:
            torch.set_num_threads(threads)
        result.update(job=job, finished_at=now_iso(), seconds=time.perf_counter() - t,
                      load_average=os.getloadavg()[0])
        if job in KEEPS_RUN:
            result["run"] = str(_replace_run(fresh, folder / RUN_DIR))
        write_result(folder, result)
    return result


def _fresh(path: Path) -> Path:
    """An empty folder at ``path`` (what a killed job left there is removed)."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    return path


def _replace_run(fresh: Path, kept: Path) -> Path:
    """The finished run becomes the job's kept run; the previous one is removed only after the
    rename, so a crash in between leaves one of the two, never neither."""
    import shutil

    old = kept.with_name(f"{RUN_DIR}.old")
    shutil.rmtree(old, ignore_errors=True)
    if kept.exists():
        kept.rename(old)
    fresh.rename(kept)
    shutil.rmtree(old, ignore_errors=True)
    return kept


async def start_job(job: str, root: Path | str | None = None) -> int:
    """Launch ``minigpt lab run JOB`` in the background; its pid. RunBusyError while it runs."""
    folder = job_dir(job, root)
    if is_live(folder):
        raise RunBusyError(f"the {job} lab job is already running")
    folder.mkdir(parents=True, exist_ok=True)
    import_root = Path(minigpt.__file__).resolve().parent.parent
    argv = [sys.executable, "-m", "minigpt.cli", "lab", "run", job]
    if root is not None:
        argv += ["--root", str(root)]
    with guarded.open_append(folder / LOG_FILE, text=False) as log:
        proc = await spawn.start(argv, env=spawn.child_env(import_root=import_root), new_session=True,
                                 niceness=NICENESS, stdout=log, stderr=log)
    _LAUNCHED.append(proc)
    # Until the job takes its lock (a second later), its pid and start time say it is alive.
    write_json_atomic(folder / LAUNCH_FILE, {"pid": proc.pid, "pid_start": spawn.process_start_time(proc.pid),
                                             "launched_at": now_iso()})
    return proc.pid


def is_live(folder: Path) -> bool:
    """The job holds its lock, or the process launched for it is still the one recorded."""
    if is_running(folder):
        return True
    try:
        launch = json.loads(guarded.read_text(folder / LAUNCH_FILE, guarded.SMALL_JSON_BYTES))
        pid, start = int(launch["pid"]), launch["pid_start"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return start is not None and spawn.process_start_time(pid) == start


def job_state(job: str, root: Path | str | None = None) -> str:
    """'running', 'done' or 'not run' (a damaged result reads as not run: a new run replaces it)."""
    folder = job_dir(job, root)
    if is_live(folder):
        return "running"
    try:
        return "done" if read_result(folder) is not None else "not run"
    except RunError:  # a damaged result: run it again
        return "not run"


__all__ = ["JOBS", "RUNNERS", "is_live", "job_state", "run_job", "start_job"]
