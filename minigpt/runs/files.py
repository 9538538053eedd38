"""The files of a run folder, written so that another process can follow the run by reading them.

``metrics.jsonl`` is appended and flushed line by line; ``status.json`` is replaced atomically
(temp file + fsync + rename), so a reader never sees half a status.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path


CONFIG_FILE, METRICS_FILE, STATUS_FILE = "config.json", "metrics.jsonl", "status.json"
BEST_DIR, LAST_DIR = "checkpoint", "last"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def process_start_time(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            stat = f.read()
        return int(stat[stat.rindex(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def write_json_atomic(path: Path, obj) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class RunWriter:
    """Everything one training run writes, kept in one place."""

    def __init__(self, cfg, run_dir: Path, on_log):
        self.cfg, self.dir, self.on_log = cfg, run_dir, on_log
        self.status = {
            "state": "running", "pid": os.getpid(), "pid_start": process_start_time(os.getpid()),
            "step": 0, "total_steps": cfg.steps, "time_budget_s": cfg.time_s, "best_val": None,
            "model": cfg.model, "n_params": None, "device": None, "started_at": now_iso(),
            "updated_at": now_iso(), "error": None, "val_loss": None, "test_loss": None,
        }
        self._last_status_write = 0.0
        self._metrics = open(run_dir / METRICS_FILE, "a", encoding="utf-8")

    def write_status(self, force: bool = True, **changes) -> None:
        self.status.update(changes)
        t = time.monotonic()
        if not force and t - self._last_status_write < 1.0:
            return
        self.status["updated_at"] = now_iso()
        write_json_atomic(self.dir / STATUS_FILE, self.status)
        self._last_status_write = t

    def log(self, record: dict) -> None:
        self._metrics.write(json.dumps(record) + "\n")
        self._metrics.flush()
        if self.on_log is not None:
            self.on_log(record)

    def close(self) -> None:
        self._metrics.close()
