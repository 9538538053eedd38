"""The files of a run folder, written so that another process can follow the run by reading them.

``metrics.jsonl`` starts with a format header and is appended and flushed line by line;
``status.json`` and ``config.json`` are replaced atomically (temp file + fsync + rename), so a
reader never sees half a file. What each file holds is defined in ``minigpt.runs.schema``.

The trainer owns the status, but the learner may rename a run or write its note at any time:
both writers take a short lock on ``.status.lock`` and the trainer keeps a name or note written
by someone else, so neither edit is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from minigpt import guarded
from minigpt.errors import RunError
from minigpt.runs.schema import (
    METRICS_HEADER,
    RunState,
    RunStatus,
    check_name_and_note,
    config_for_file,
    default_run_name,
    metrics_line,
    metrics_record,
    read_status,
)
from minigpt.spawn import process_start_time

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

CONFIG_FILE, METRICS_FILE, STATUS_FILE = "config.json", "metrics.jsonl", "status.json"
BEST_DIR, LAST_DIR = "checkpoint", "last"
STATUS_LOCK = ".status.lock"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


fsync_dir = guarded.fsync_dir  # (kept under its old name for the run-folder writers)


def write_text_atomic(path: Path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def write_json_atomic(path: Path, obj) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, allow_nan=False) + "\n")


def write_run_config(run_dir: Path | str, values: dict) -> None:
    """Save a run's training options (``TrainConfig.to_dict()``) as its versioned config.json."""
    with guarded.disk_full_guard(f"the run's {CONFIG_FILE} in {run_dir}", "nothing was trained yet"):
        write_json_atomic(Path(run_dir) / CONFIG_FILE, config_for_file(values))


def last_good_checkpoint(run_dir: Path) -> str:
    """Which checkpoint of a run stays usable, for a message after a failed write."""
    for name in (LAST_DIR, BEST_DIR):
        for folder in (run_dir / name, run_dir / f"{name}.old"):
            try:
                values = json.loads(guarded.read_text(folder / CONFIG_FILE, guarded.CHECKPOINT_JSON_BYTES))
                step = values["state"]["step"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            return f"the last good checkpoint (step {step}) is intact in {folder}"
    return "no checkpoint was saved yet"


@contextlib.contextmanager
def _status_guard(run_dir: Path):
    """A lock held for one read-modify-write of status.json (milliseconds)."""
    if fcntl is None:
        yield
        return
    fd = os.open(run_dir / STATUS_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def edit_status(run_dir: Path | str, *, name: str | None = None, note: str | None = None) -> RunStatus:
    """Rename a run or set its note (the only fields that are not the trainer's); returns the
    new status. RunError when the run has no readable status."""
    run_dir = Path(run_dir)
    check_name_and_note(name, note)
    with _status_guard(run_dir):
        try:
            status = read_status(run_dir / STATUS_FILE)
        except FileNotFoundError:
            raise RunError(f"{run_dir}: no status.json yet (the run has not started)") from None
        if name is not None:
            status.name = name.strip()
        if note is not None:
            status.note = note.strip()
        write_json_atomic(run_dir / STATUS_FILE, status.to_dict())
    return status


def distinct_name(base: str, run_dir: Path) -> str:
    """``base``, or ``base (2)``, ``base (3)``… when a sibling run already has that name: three runs
    of the same settings are told apart in lists (the learner can rename them)."""
    taken = set()
    try:
        siblings = [d for d in Path(run_dir).parent.iterdir() if d != Path(run_dir)]
    except OSError:
        siblings = []
    for d in siblings:
        try:
            taken.add(json.loads(guarded.read_text(d / STATUS_FILE, guarded.SMALL_JSON_BYTES)).get("name"))
        except (OSError, ValueError, AttributeError):
            continue
    if base not in taken:
        return base
    n = 2
    while f"{base} ({n})" in taken:
        n += 1
    return f"{base} ({n})"


class RunWriter:
    """Everything one training run writes, kept in one place."""

    def __init__(self, cfg, run_dir: Path, on_log, previous: RunStatus | None = None,
                 name: str | None = None, note: str | None = None, data_fingerprint: str | None = None):
        """``previous``: the status of the run being resumed (its name, note and start time carry on)."""
        self.cfg, self.dir, self.on_log = cfg, Path(run_dir), on_log
        config = cfg.to_dict()
        self.status = RunStatus(
            state=RunState.RUNNING, pid=os.getpid(), pid_start=process_start_time(os.getpid()),
            total_steps=cfg.steps, time_budget_s=cfg.time_s, model=cfg.model, started_at=now_iso(),
            name=name or (previous.name if previous else "") or distinct_name(default_run_name(config), self.dir),
            note=note if note is not None else (previous.note if previous else ""),
            data_fingerprint=data_fingerprint)
        if previous is not None and previous.started_at:
            self.status.started_at = previous.started_at
        self._last_status_write = 0.0
        self._written_stat = None  # (inode, mtime) of our last status write: anything else is an edit
        metrics = self.dir / METRICS_FILE
        self._metrics = guarded.open_append(metrics)  # a FIFO there: refused, not waited on
        if self._metrics.tell() == 0:
            with guarded.disk_full_guard(f"the run's {METRICS_FILE}", "nothing was trained yet"):
                self._metrics.write(json.dumps(METRICS_HEADER) + "\n")
                self._metrics.flush()

    def write_status(self, force: bool = True, **changes) -> None:
        for key, value in changes.items():
            setattr(self.status, key, RunState(value) if key == "state" else value)
        t = time.monotonic()
        if not force and t - self._last_status_write < 1.0:
            return
        self.status.updated_at = now_iso()
        path = self.dir / STATUS_FILE
        with guarded.disk_full_guard(f"the run's {STATUS_FILE}", lambda: last_good_checkpoint(self.dir)), \
                _status_guard(self.dir):
            self._keep_edits(path)
            write_json_atomic(path, self.status.to_dict())
            st = path.stat()
            self._written_stat = (st.st_ino, st.st_mtime_ns)
        self._last_status_write = t

    def _keep_edits(self, path: Path) -> None:
        """Adopt a name or note the learner wrote since our last write."""
        if self._written_stat is None:
            return
        try:
            st = path.stat()
            if (st.st_ino, st.st_mtime_ns) == self._written_stat:
                return
            on_disk = read_status(path)
        except (OSError, RunError):
            return
        self.status.name, self.status.note = on_disk.name, on_disk.note

    def log(self, record: dict) -> None:
        with guarded.disk_full_guard(f"the run's {METRICS_FILE}", lambda: last_good_checkpoint(self.dir)):
            self._metrics.write(metrics_line(record))
            self._metrics.flush()
        if self.on_log is not None:
            self.on_log(record)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a full disk: what could not be flushed was said already
            self._metrics.close()


def truncate_metrics(run_dir: Path | str, last_step: int) -> int:
    """Drop the records past ``last_step`` (work lost after the checkpoint a run resumes from),
    rewriting the file atomically in the current format; returns how many were dropped."""
    path = Path(run_dir) / METRICS_FILE
    try:
        data = guarded.read_bytes(path, guarded.METRICS_BYTES)
    except FileNotFoundError:
        return 0
    except OSError as e:  # a pipe, a device, a file too large: the resumed run starts a new one
        raise RunError(f"{path}: cannot be read ({e.strerror or e}); remove it to resume") from None
    kept, dropped = [json.dumps(METRICS_HEADER) + "\n"], 0
    for line in data.splitlines():
        try:
            record = metrics_record(json.loads(line))
        except (UnicodeDecodeError, ValueError, RecursionError):
            record = None
        if record is None:
            continue
        if record["step"] > last_step:
            dropped += 1
            continue
        kept.append(metrics_line(record))
    with guarded.disk_full_guard(f"{path}", lambda: last_good_checkpoint(Path(run_dir))):
        write_text_atomic(path, "".join(kept))
    return dropped
