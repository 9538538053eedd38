"""A read-only view of training run folders, for processes other than the trainer.

The training panel follows a run through these functions alone: ``list_runs`` for the table,
``read_metrics`` to tail ``metrics.jsonl`` incrementally. A run whose status says "running" but
whose process is gone (killed, crashed before writing its status) is reported as failed.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from minigpt import paths
from minigpt.runs.files import METRICS_FILE, STATUS_FILE, process_start_time

DEAD_WORKER = "worker exited without writing its status"
# An experiment's folder (minigpt.experiments) holds its runs one level down; listings include them.
EXPERIMENT_FILE = "experiment.json"


@dataclass
class RunInfo:
    path: Path
    name: str
    status: str  # running | finished | failed | stopped | unknown
    reason: str | None = None  # error message or why the state was inferred
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
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def age(self) -> float | None:
        """Seconds since the run started (None when unknown)."""
        t = _parse_time(self.started_at)
        return None if t is None else max(0.0, time.time() - t)

    @property
    def checkpoint(self) -> Path:
        return self.path / "checkpoint"

    def to_dict(self) -> dict:
        return {"path": str(self.path), "name": self.name, "status": self.status, "reason": self.reason,
                "model": self.model, "n_params": self.n_params, "device": self.device, "step": self.step,
                "total": self.total, "total_unit": self.total_unit, "best_val": self.best_val,
                "val_loss": self.val_loss, "test_loss": self.test_loss, "started_at": self.started_at,
                "updated_at": self.updated_at, "age_s": self.age, "pid": self.pid}


def _parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def pid_alive(pid: int | None, start_time: int | None = None) -> bool:
    """Whether ``pid`` is a live (non-zombie) process, and the same one when ``start_time`` is known."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            stat = f.read()
        if stat[stat.rindex(")") + 2 :].split()[0] in ("Z", "X"):
            return False  # exited, not yet reaped
    except (OSError, ValueError):
        pass
    if start_time is not None:
        now = process_start_time(pid)
        if now is not None and now != start_time:
            return False  # the pid was reused by another process
    return True


def read_run(run_dir: Path | str) -> RunInfo:
    run_dir = Path(run_dir)
    info = RunInfo(path=run_dir, name=run_dir.name, status="unknown")
    try:
        st = json.loads((run_dir / STATUS_FILE).read_text(encoding="utf-8"))
        if not isinstance(st, dict):
            raise ValueError("not an object")
    except FileNotFoundError:
        info.reason = "no status.json yet"
        return info
    except (OSError, ValueError) as e:
        info.reason = f"unreadable status.json ({e})"
        return info
    info.raw = st
    info.status = st.get("state", "unknown")
    info.reason = st.get("error")
    info.model, info.n_params, info.device = st.get("model"), st.get("n_params"), st.get("device")
    info.step = st.get("step") or 0
    if st.get("total_steps") is not None:
        info.total, info.total_unit = st["total_steps"], "steps"
    elif st.get("time_budget_s") is not None:
        info.total, info.total_unit = st["time_budget_s"], "seconds"
    info.best_val, info.val_loss, info.test_loss = st.get("best_val"), st.get("val_loss"), st.get("test_loss")
    info.started_at, info.updated_at, info.pid = st.get("started_at"), st.get("updated_at"), st.get("pid")
    if info.status == "running" and not pid_alive(info.pid, st.get("pid_start")):
        info.status, info.reason = "failed", DEAD_WORKER
    return info


def list_runs(root: Path | str | None = None) -> list[RunInfo]:
    """Every run folder under ``root`` (default: the user's runs folder), newest first."""
    root = Path(root) if root is not None else paths.runs_dir()
    if not root.is_dir():
        return []
    runs = []
    folders = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    for d in list(folders):
        if (d / EXPERIMENT_FILE).is_file():
            folders += [r for r in d.iterdir() if r.is_dir() and not r.name.startswith(".")]
    for d in folders:
        if (d / STATUS_FILE).exists() or (d / "config.json").exists():
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


def read_metrics(run_dir: Path | str, since_offset: int = 0) -> tuple[list[dict], int]:
    """Records appended to ``metrics.jsonl`` since byte ``since_offset``, and the new offset.

    Only complete lines are read: a line still being written is left for the next call. A
    damaged complete line is skipped.
    """
    path = Path(run_dir) / METRICS_FILE
    try:
        with open(path, "rb") as f:
            f.seek(since_offset)
            data = f.read()
    except FileNotFoundError:
        return [], since_offset
    end = data.rfind(b"\n")
    if end < 0:
        return [], since_offset
    records = []
    for line in data[: end + 1].splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(rec, dict):
            records.append(rec)
    return records, since_offset + end + 1


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
