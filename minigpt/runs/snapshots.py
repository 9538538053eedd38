"""Weight snapshots for the step scrubber: the kept model at log-spaced steps, so a learner can
move every view of a run (samples, surprise, layer health, the chart's marker) back to step 200
of a run at step 3,000, while it trains, after it finished, or after reattaching.

A snapshot is a checkpoint folder without optimizer state, ``snapshots/step-00000200``, written
atomically like every checkpoint. The trainer takes one at log-spaced steps (10, 14, 20, 28, 40,
…: each ~√2 times the last) and at every evaluation; the folder is bounded both in count
(``MAX_SNAPSHOTS``) and in bytes (``MAX_SNAPSHOT_BYTES`` in all), and thinned as the run grows:
the snapshot dropped is the one whose neighbours lie closest together on a log scale, so the
kept steps stay spread evenly from the first step to the last. The first and the latest are
always kept. Torch-free: the app lists snapshots without loading torch.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from minigpt.runs.files import BEST_DIR

SNAPSHOT_DIR = "snapshots"
MAX_SNAPSHOTS = 64
MAX_SNAPSHOT_BYTES = 64 << 20  # all snapshots of a run together (the default model's is ~0.8 MB)
FIRST_SNAPSHOT = 10
_NAME = re.compile(r"^step-(\d{8})$")


def snapshot_name(step: int) -> str:
    return f"step-{step:08d}"


def is_log_step(step: int) -> bool:
    """Whether ``step`` is one of 10, 14, 20, 28, 40, 57, 80, 113, 160, … (10·√2^k, rounded)."""
    if step < FIRST_SNAPSHOT:
        return False
    k = round(2 * math.log2(step / FIRST_SNAPSHOT))
    return round(FIRST_SNAPSHOT * 2 ** (k / 2)) == step


def capacity(snapshot_bytes: int, max_count: int = MAX_SNAPSHOTS, max_bytes: int = MAX_SNAPSHOT_BYTES) -> int:
    """How many snapshots of ``snapshot_bytes`` each fit both bounds (at least 2: first and latest)."""
    return max(2, min(max_count, max_bytes // max(snapshot_bytes, 1)))


def to_drop(steps: list[int], keep: int) -> list[int]:
    """The steps to delete so that at most ``keep`` remain, evenly spread on a log scale: each
    time, the interior step whose neighbours are closest (in log steps) goes."""
    steps = sorted(steps)
    dropped = []
    while len(steps) > max(keep, 2):
        logs = [math.log(max(s, 1)) for s in steps]
        i = min(range(1, len(steps) - 1), key=lambda j: (logs[j + 1] - logs[j - 1], steps[j]))
        dropped.append(steps.pop(i))
    return dropped


def snapshot_steps(run_dir: Path | str) -> list[int]:
    """The steps the run has a complete snapshot of (a folder with its weights), ascending."""
    root = Path(run_dir) / SNAPSHOT_DIR
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    steps = []
    for entry in entries:
        match = _NAME.match(entry.name)
        if match and (entry / "config.json").is_file():
            steps.append(int(match.group(1)))
    return sorted(steps)


def snapshot_path(run_dir: Path | str, step: int) -> Path:
    return Path(run_dir) / SNAPSHOT_DIR / snapshot_name(step)


def folder_bytes(path: Path) -> int:
    try:
        return sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    except OSError:
        return 0


def scrub_target(steps: list[int], current: int | None, direction: int) -> int | None:
    """Where the scrubber goes from ``current`` (None: live, the latest model) one snapshot back
    (``direction`` < 0) or on (> 0) among ``steps`` (ascending): back from live is the newest
    snapshot, back from the first stays there, on past the newest is live again (None)."""
    if current is None:
        return steps[-1] if direction < 0 and steps else None
    if direction < 0:
        earlier = [s for s in steps if s < current]
        return earlier[-1] if earlier else (steps[0] if steps else None)
    later = [s for s in steps if s > current]
    return later[0] if later else None



def run_of_checkpoint(path: Path | str) -> tuple[Path, int | None] | None:
    """(the run folder, the snapshot's step or None for the kept checkpoint) when ``path`` is a
    run's checkpoint or one of its snapshots; None for any other folder (a shipped model)."""
    path = Path(path)
    if path.name == BEST_DIR:
        return path.parent, None
    match = _NAME.match(path.name)
    if match and path.parent.name == SNAPSHOT_DIR:
        return path.parent.parent, int(match.group(1))
    return None
