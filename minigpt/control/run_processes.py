"""Starting, following and steering training runs from another process (the app), without Textual.

The app never trains in its own process: it validates a form into a :class:`TrainConfig`, writes
it as the new run folder's ``config.json`` and launches ``minigpt train --config RUN/config.json``
as an asyncio subprocess in a new session (so a closed terminal or SSH connection does not take it
down): the worker reads the very file the app wrote, so no command line is rebuilt option by
option. From then on the app only reads the run folder: ``status.json``, ``stderr.log`` and
``metrics.jsonl`` (through ``minigpt.runs.metrics.RunMetrics``).

Besides the trainer's files, a launch writes ``launch.json`` (pid and time of the launch): it lets
the panel tell "still importing torch" from "died before writing its status", and a resumed run
from the stale status of its previous life.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import minigpt
from minigpt import guarded, spawn
from minigpt.alerts import WATCHED_TRAINER_FLAGS, watcher_mark
from minigpt.data import load_words
from minigpt.errors import RunControlError
from minigpt.runs import listing
from minigpt.runs.files import (
    BEST_DIR,
    CONFIG_FILE,
    LAST_DIR,
    STATUS_FILE,
    distinct_name,
    now_iso,
    process_start_time,
    write_json_atomic,
    write_run_config,
)
from minigpt.runs.lock import is_locked, lock_holder, proof_limit, proven_trainer
from minigpt.runs.schema import RunState, default_run_name
from minigpt.training.options import TrainConfig, load_run_config

LAUNCH_FILE, STDOUT_FILE, STDERR_FILE = "launch.json", "stdout.log", "stderr.log"
STOP_FILE = "stop-requested.json"  # written by stop_run: a worker gone before its status was a stop
# A test seam: the module run as the trainer (``python -m MODULE train …``). Unset, it is
# ``minigpt.cli``; the tests set it to ``tests.helpers.minigpt_fake_trainer`` (no torch, a step rate they
# choose) where the trainer is not what they check. Read from the environment so that a scheduler
# started as a subprocess launches the same trainer as the test that started it.
TRAINER_MODULE_VARIABLE = "MINIGPT_TRAINER"


# ---------------------------------------------------------------------------- launching


def trainer_argv(args: list[str]) -> list[str]:
    """The command line of a trainer worker running ``minigpt ARGS`` (every launch goes through here)."""
    return [sys.executable, "-m", os.environ.get(TRAINER_MODULE_VARIABLE) or "minigpt.cli", *args]


# Process objects of the workers this process launched: kept so they are not garbage-collected
# (asyncio closes a collected transport, which would kill the worker).
_LAUNCHED: list = []
# Workers run at a lower CPU priority so the app's keys answer at once while both cores train.
WORKER_NICENESS = 5


async def _spawn(run_dir: Path, args: list[str]) -> int:
    # In a session of its own, so a closed terminal or SSH connection does not take it down.
    root = Path(minigpt.__file__).resolve().parent.parent  # the worker must import this minigpt
    with guarded.open_append(run_dir / STDOUT_FILE, text=False) as out, \
            guarded.open_append(run_dir / STDERR_FILE, text=False) as err:
        proc = await spawn.start(trainer_argv(args), env=spawn.child_env(import_root=root, extra=watcher_mark()),
                                 new_session=True, niceness=WORKER_NICENESS, stdout=out, stderr=err)
    _LAUNCHED.append(proc)
    write_json_atomic(run_dir / LAUNCH_FILE, {"pid": proc.pid, "pid_start": process_start_time(proc.pid),
                                              "launched_at": now_iso(), "launched_ts": time.time(),
                                              "argv": ["minigpt", *args]})
    return proc.pid


async def start_run(cfg: TrainConfig, root: Path | str | None = None, name: str | None = None) -> Path:
    """Create a run folder for ``cfg`` and launch its worker; returns the folder at once.

    The worker trains the config it reads back from the folder (``train --config``), the same file
    the runs list shows and "copy settings" copies.
    """
    cfg.validate()
    if cfg.data_format == "text":  # a clear error now, not in the worker's log (repeats read no file)
        from minigpt.text_data import load_text

        load_text(cfg.data_path())
    elif cfg.data_format == "lines":
        load_words(cfg.data_path())
    run_dir = listing.new_run_dir(root, name)
    write_run_config(run_dir, cfg.to_dict())  # listed (and duplicable) from the start
    named = ["--name", name] if name else []  # the folder's name is the run's name too
    await _spawn(run_dir, ["train", "--config", str(run_dir / CONFIG_FILE), "--out", str(run_dir), *named, "--quiet",
                           *WATCHED_TRAINER_FLAGS])
    return run_dir


def expected_name(cfg: TrainConfig, run_dir: Path | str) -> str:
    """The name the worker will give a run started without one (what lists will call it)."""
    return distinct_name(default_run_name(cfg.to_dict()), Path(run_dir))


# ---------------------------------------------------------------------------- following


@dataclass
class RunView:
    """What the panel shows about a run's process: the trainer's status, corrected by liveness."""

    status: RunState
    reason: str | None
    info: listing.RunInfo
    alive_pid: int | None  # the live worker, if any


def _launch(run_dir: Path) -> dict | None:
    import json

    try:
        launch = json.loads(guarded.read_text(run_dir / LAUNCH_FILE, guarded.SMALL_JSON_BYTES))
    except (OSError, ValueError):
        return None
    return launch if isinstance(launch, dict) else None


def run_state(run_dir: Path | str) -> RunView:
    run_dir = Path(run_dir)
    info = listing.read_run(run_dir)
    launch = _launch(run_dir)
    try:
        status_mtime = (run_dir / STATUS_FILE).stat().st_mtime
    except OSError:
        status_mtime = None
    launched_ts = launch.get("launched_ts") if launch else None
    if launch is not None and (status_mtime is None or status_mtime < (launched_ts if isinstance(launched_ts, (int, float)) else 0)):
        # The latest launch has not written its status yet (or the status is from a previous life).
        pid = launch.get("pid")
        if listing.pid_alive(pid, launch.get("pid_start") if isinstance(launch.get("pid_start"), int) else None):
            return RunView(RunState.STARTING, None, info, pid)
        if _stopped_since(run_dir, launched_ts):
            return RunView(RunState.STOPPED, "stopped before training began (nothing to resume)", info, None)
        tail = stderr_tail(run_dir, 1)
        return RunView(RunState.FAILED, tail[-1] if tail else "the worker exited before it started training", info, None)
    if info.status == RunState.STARTING and is_locked(run_dir):
        return RunView(RunState.STARTING, None, info, lock_holder(run_dir))  # `minigpt train` just began
    alive = info.pid if info.status == RunState.RUNNING else None
    return RunView(info.status, info.reason, info, alive)


def stderr_tail(run_dir: Path | str, lines: int = 8) -> list[str]:
    """The last non-empty lines of the worker's error output (where a crash leaves its traceback)."""
    try:
        text = guarded.read_tail(Path(run_dir) / STDERR_FILE, 16384).decode("utf-8", "replace")
    except OSError:
        return []
    return [ln for ln in text.replace("\r", "\n").splitlines() if ln.strip()][-lines:]


def progress(info: listing.RunInfo, last: dict) -> tuple[float, float | None]:
    """(fraction done, seconds left or None) from the status and the latest metrics record."""
    elapsed = float(last.get("elapsed_s") or 0.0)
    step = max(info.step, int(last.get("step") or 0))
    if info.status == RunState.FINISHED:
        return 1.0, 0.0
    if info.total_unit == "seconds" and info.total:
        frac = min(elapsed / info.total, 1.0)
        return frac, max(info.total - elapsed, 0.0)
    if info.total:
        frac = min(step / info.total, 1.0)
        eta = (info.total - step) * elapsed / step if step and elapsed else None
        return frac, eta
    return 0.0, None


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else (f"{m}m{s:02d}s" if m else f"{s}s")


def sample_names(run_dir: Path | str, n: int = 6, seed: int | None = None, step: int | None = None) -> list[str]:
    """A few names from the run's best checkpoint so far, or from its snapshot at ``step`` (the
    step scrubber); slow: call it off the UI thread."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.runs.snapshots import snapshot_path
    from minigpt.sampling import generate

    ckpt = load_checkpoint(snapshot_path(run_dir, step) if step is not None else Path(run_dir) / BEST_DIR)
    return [s.text for s in generate(ckpt.model, ckpt.vocab, n, seed=seed)]


def has_checkpoint(run_dir: Path | str) -> bool:
    d = Path(run_dir)
    return any((d / name / "config.json").exists() or (d / (name + ".old") / "config.json").exists()
               for name in (BEST_DIR, LAST_DIR))


# ---------------------------------------------------------------------------- controls


def trainer_pid(run_dir: Path | str) -> int:
    """The pid of the run's live trainer, proven before anything signals it; RunControlError when
    there is none or it cannot be proven.

    A run folder is data: its status or launch record may name any pid (a reused one, or one
    written by hand). The process must be a ``minigpt train`` (its command line) and either hold
    the run's lock file open, or be the worker the app launched for this folder (its start time as
    recorded at launch, and this folder on its command line) while it has not taken the lock yet.
    """
    run_dir = Path(run_dir)
    state = run_state(run_dir)
    pid = state.alive_pid
    if pid is None or not state.status.active:
        raise RunControlError(f"the run is {state.status}, not running: nothing to stop")
    if not proven_trainer(run_dir, pid, _launch(run_dir)):
        limit = f"; {proof_limit()}" if proof_limit() else ""
        raise RunControlError(f"pid {pid} is not this run's trainer (the run folder names a process that "
                              f"does not hold its lock{limit}): not signalling it")
    return pid


@dataclass(frozen=True)
class RunActions:
    """What a learner can do with a run in its state: the one rule the runs list and the run's
    panel both show (a key appears only where it would do something)."""

    stop: bool  # a worker is training it
    resume: bool  # stopped or failed, with a checkpoint to continue from
    delete: bool  # not training
    duplicate: bool  # its settings can be read (a new run with them)


def run_actions(status: RunState, run_dir: Path | str) -> RunActions:
    run_dir = Path(run_dir)
    return RunActions(
        stop=status.active,
        resume=status in (RunState.STOPPED, RunState.FAILED) and has_checkpoint(run_dir),
        delete=not status.active,
        duplicate=(run_dir / CONFIG_FILE).exists())


def stop_run(run_dir: Path | str) -> int:
    """Ask the worker to stop cleanly (SIGTERM: it finishes its step and saves); returns its pid."""
    pid = trainer_pid(run_dir)
    # Said in the folder first: a worker stopped while Python starts (before it can catch the
    # signal) then reads as stopped, not as a crash.
    write_json_atomic(Path(run_dir) / STOP_FILE, {"requested_at": now_iso(), "requested_ts": time.time(),
                                                  "pid": pid})
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        raise RunControlError("the worker had already exited") from None
    return pid


def _stopped_since(run_dir: Path, launched_ts) -> bool:
    """A stop was asked for after the latest launch."""
    import json

    try:
        asked = json.loads(guarded.read_text(run_dir / STOP_FILE, guarded.SMALL_JSON_BYTES)).get("requested_ts")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(asked, (int, float)) and asked >= (launched_ts if isinstance(launched_ts, (int, float)) else 0)


def wait_until_stopped(run_dir: Path | str, timeout: float = 60.0, poll: float = 0.1) -> RunView:
    """Wait (at most ``timeout`` seconds) for a stopped worker to save and exit."""
    deadline = time.monotonic() + timeout
    while True:
        state = run_state(run_dir)
        if not state.status.active or time.monotonic() > deadline:
            return state
        time.sleep(poll)


async def resume_run(run_dir: Path | str) -> int:
    """Launch a worker that continues the run from its last checkpoint; returns its pid."""
    run_dir = Path(run_dir)
    state = run_state(run_dir)
    if state.status.active or is_locked(run_dir):
        raise RunControlError("the run is still running")
    if state.status == RunState.FINISHED:
        raise RunControlError("the run has finished its budget: duplicate it to train again")
    if not has_checkpoint(run_dir):
        raise RunControlError("nothing to resume: the run saved no checkpoint (it stops before its first evaluation)")
    return await _spawn(run_dir, ["train", "--resume", str(run_dir), "--quiet", *WATCHED_TRAINER_FLAGS])


def delete_run(run_dir: Path | str) -> None:
    """Remove a run folder (refused while its worker lives, and for folders that are not runs)."""
    run_dir = Path(run_dir)
    if not listing.is_run_folder(run_dir):
        raise RunControlError(f"{run_dir} is not a run folder")
    if run_state(run_dir).status.active or is_locked(run_dir):
        raise RunControlError("stop the run before deleting it")
    shutil.rmtree(run_dir)


def run_settings(run_dir: Path | str) -> TrainConfig:
    """The configuration of a run, to start a new one with the same settings."""
    return load_run_config(run_dir)


# ---------------------------------------------------------------------------- charts and comparison


def downsample(xs: list[float], ys: list[float], max_points: int) -> tuple[list[float], list[float]]:
    """At most about ``max_points`` points that keep the curve's shape: per bucket, its min and max.

    Keeping both extremes (in their original order) preserves spikes that averaging would hide;
    the first and last points are always kept.
    """
    n = len(xs)
    if n <= max_points or max_points < 4:
        return list(xs), list(ys)
    buckets = max_points // 2
    out_x, out_y = [], []
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        if hi <= lo:
            continue
        seg = ys[lo:hi]  # slices + builtin min/max: about 5x faster than key= lookups
        i_min = lo + seg.index(min(seg))
        i_max = lo + seg.index(max(seg))
        for i in sorted({i_min, i_max}):
            out_x.append(xs[i])
            out_y.append(ys[i])
    if out_x[0] != xs[0]:
        out_x.insert(0, xs[0])
        out_y.insert(0, ys[0])
    if out_x[-1] != xs[-1]:
        out_x.append(xs[-1])
        out_y.append(ys[-1])
    return out_x, out_y


@dataclass
class ComparisonRow:
    name: str
    model: str
    n_params: int | None
    steps: int
    status: str
    best_val: float | None
    test_loss: float | None


def comparison_rows(infos: list[listing.RunInfo]) -> list[ComparisonRow]:
    """The chapter-9 table from the learner's runs: bigram, then MLP, then GPT, best val first."""
    order = {"bigram": 0, "mlp": 1, "gpt": 2}
    rows = [ComparisonRow(i.name, i.model or "?", i.n_params, i.step, i.status, i.best_val, i.test_loss)
            for i in infos]
    return sorted(rows, key=lambda r: (order.get(r.model, 3), r.best_val if r.best_val is not None else 1e9))
