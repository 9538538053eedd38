"""A read-only view of training run folders, for processes other than the trainer.

The runs list reads runs through these functions (``list_runs``, ``read_run``); a run's
``metrics.jsonl`` is read by ``minigpt.runs.metrics`` alone. A run whose status says "running" but
whose process is gone (killed, crashed before writing its status) is reported as failed; a run
whose status cannot be read is listed as broken, with the reason, and never stops the others
from being listed.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from minigpt import paths, processes
from minigpt.errors import RunError
from minigpt.runs.files import CONFIG_FILE, STATUS_FILE, process_start_time
from minigpt.runs.lock import is_locked
from minigpt.runs.schema import RunState, RunStatus, default_run_name, read_json_file

DEAD_WORKER = "worker exited without writing its status"
# An experiment's folder (minigpt.experiments) holds its runs one level down; listings include them.
EXPERIMENT_FILE = "experiment.json"


@dataclass
class RunInfo:
    path: Path
    name: str  # the folder's name: what commands take to mean this run
    status: RunState
    reason: str | None = None  # why it failed or is broken, or why the state was inferred
    label: str = ""  # the run's own name from its status (editable, e.g. "gpt d64 L4 lr5e-3")
    note: str = ""
    model: str | None = None
    n_params: int | None = None
    device: str | None = None
    step: int = 0
    total: int | float | None = None  # total steps, or the time budget in seconds
    total_unit: str = "steps"  # "steps" or "seconds"
    best_val: float | None = None
    val_loss: float | None = None
    test_loss: float | None = None
    started_at: str | None = None
    updated_at: str | None = None
    pid: int | None = None
    world_size: int = 1  # processes training together (data parallel)
    cpu_policy: str | None = None  # how the trainer uses the CPU: OpenMP waiting, threads, why
    uniform_loss: float | None = None  # the loss chart's reference lines (status format 3)
    bigram_loss: float | None = None
    group: str | None = None  # the seed group of ``minigpt train --seeds N``
    raw: dict = field(default_factory=dict, repr=False)  # status.json as read ({} when none could be read)

    @property
    def age(self) -> float | None:
        """Seconds since the run started (None when unknown)."""
        t = _parse_time(self.started_at)
        return None if t is None else max(0.0, time.time() - t)

    @property
    def checkpoint(self) -> Path:
        return self.path / "checkpoint"

    def to_dict(self) -> dict:
        return {"path": str(self.path), "name": self.name, "label": self.label, "note": self.note,
                "status": str(self.status), "reason": self.reason, "model": self.model,
                "n_params": self.n_params, "device": self.device, "step": self.step, "total": self.total,
                "total_unit": self.total_unit, "best_val": self.best_val, "val_loss": self.val_loss,
                "test_loss": self.test_loss, "started_at": self.started_at, "updated_at": self.updated_at,
                "age_s": self.age, "pid": self.pid, "world_size": self.world_size,
                "cpu_policy": self.cpu_policy, "uniform_loss": self.uniform_loss,
                "bigram_loss": self.bigram_loss, "group": self.group}


def _parse_time(value) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def pid_alive(pid: int | None, start_time: int | None = None) -> bool:
    """Whether ``pid`` is a live (non-zombie) process, and the same one when ``start_time`` is known."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OSError, OverflowError):
        return False
    if processes.is_zombie(pid):
        return False  # exited, not yet reaped
    if start_time is not None:
        now = process_start_time(pid)
        if now is not None and now != start_time:
            return False  # the pid was reused by another process
    return True


# A folder whose trainer has not written its status within this long never will.
STARTUP_GRACE_S = 120.0


def _recent(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime < STARTUP_GRACE_S
    except OSError:
        return False


def _config_or_none(run_dir: Path) -> dict | None:
    try:
        return read_json_file(run_dir / CONFIG_FILE, "config.json")
    except (OSError, RunError):
        return None


def read_run(run_dir: Path | str) -> RunInfo:
    """What the run folder says about its run. Never raises: an unreadable status gives a
    BROKEN run with the reason."""
    run_dir = Path(run_dir)
    info = RunInfo(path=run_dir, name=run_dir.name, status=RunState.STARTING)
    try:
        raw = read_json_file(run_dir / STATUS_FILE, "status.json")
        config = _config_or_none(run_dir) if "name" not in raw else None  # round 1 had no names
        st = RunStatus.from_dict(raw, "status.json", config)
        info.raw = raw
    except FileNotFoundError:
        info.label = default_run_name(_config_or_none(run_dir))
        if not (is_locked(run_dir) or _recent(run_dir / CONFIG_FILE)):
            info.status = RunState.FAILED
            info.reason = "no status.json: the trainer never started, or died before writing it"
        else:
            info.reason = "no status.json yet"
        return info
    except RunError as e:
        info.status, info.reason = RunState.BROKEN, str(e).replace(str(run_dir) + os.sep, "")
        return info
    except OSError as e:  # permission denied, an I/O error
        info.status, info.reason = RunState.BROKEN, f"status.json cannot be read ({e.strerror or e})"
        return info
    info.status, info.reason, info.label, info.note = st.state, st.failure_reason, st.name, st.note
    info.model, info.n_params, info.device, info.step = st.model, st.n_params, st.device, st.step
    if st.total_steps is not None:
        info.total, info.total_unit = st.total_steps, "steps"
    elif st.time_budget_s is not None:
        info.total, info.total_unit = st.time_budget_s, "seconds"
    info.best_val, info.val_loss, info.test_loss = st.best_val, st.val_loss, st.test_loss
    info.started_at, info.updated_at, info.pid, info.world_size = st.started_at, st.updated_at, st.pid, st.world_size
    info.cpu_policy = st.cpu_policy
    info.uniform_loss, info.bigram_loss, info.group = st.uniform_loss, st.bigram_loss, st.group
    if info.status == RunState.RUNNING and not pid_alive(info.pid, st.pid_start):
        info.status, info.reason = RunState.FAILED, DEAD_WORKER
    return info


def is_run_folder(path: Path) -> bool:
    """A folder a trainer wrote (status.json, or a run's config.json: not a checkpoint's)."""
    try:
        if (path / STATUS_FILE).exists():
            return True
        if not (path / CONFIG_FILE).is_file():
            return False
    except OSError:
        return False
    config = _config_or_none(path)
    return config is None or config.get("format") != "minigpt-checkpoint"


def _subfolders(folder: Path) -> list[Path]:
    """The visible folders in ``folder``; one that cannot be looked at is left out, not fatal."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    found = []
    for d in entries:
        try:
            if not d.name.startswith(".") and d.is_dir():
                found.append(d)
        except OSError:
            continue
    return found


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def list_runs(root: Path | str | None = None) -> list[RunInfo]:
    """Every run folder under ``root`` (default: the user's runs folder), newest first."""
    root = Path(root) if root is not None else paths.runs_dir()
    if not root.is_dir():
        return []
    folders = _subfolders(root)
    for d in list(folders):
        if _is_file(d / EXPERIMENT_FILE):
            folders += _subfolders(d)
    runs = []
    for d in folders:
        if is_run_folder(d):
            runs.append(read_run(d))

    def key(r: RunInfo):
        t = _parse_time(r.started_at)
        if t is None:
            try:
                t = r.path.stat().st_mtime
            except OSError:
                t = 0.0
        return (t, r.name)

    return sorted(runs, key=key, reverse=True)


def latest_run(root: Path | str | None = None) -> RunInfo | None:
    runs = list_runs(root)
    return runs[0] if runs else None


def new_run_dir(root: Path | str | None = None, name: str | None = None) -> Path:
    """Create and return a fresh run folder: ``name`` or a timestamp, made unique with a suffix."""
    root = Path(root) if root is not None else paths.runs_dir()
    root.mkdir(parents=True, exist_ok=True)
    base = name or datetime.now().strftime("%Y%m%d-%H%M%S")
    if "/" in base or base in (".", "..") or not base.strip():
        raise ValueError(f"invalid run name {base!r}")
    for i in range(1000):
        candidate = root / (base if i == 0 else f"{base}-{i}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"could not create a unique run folder under {root}")
