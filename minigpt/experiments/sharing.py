"""What else is training on this machine right now: the runs and sweeps a new start would share
the cores with.

A start while another training runs is allowed (the learner may want both), but the two share the
CPU cores, so each goes slower than alone: the app says so before it starts anything, and its
estimate, measured at that moment, already pays for the sharing.
"""

from __future__ import annotations

from minigpt.control import run_processes
from minigpt.experiments import folder
from minigpt.experiments.sweep_runner import max_jobs
from minigpt.runs import listing


def trainings_in_progress() -> list[str]:
    """One line per run or sweep training now, e.g. ``run gpt d64 L4 lr5e-3`` or ``sweep dropout``."""
    busy = []
    for info in listing.list_runs():
        if info.status.active and run_processes.run_state(info.path).alive_pid is not None:
            busy.append(f"run {info.label or info.name}")
    for exp_dir in folder.list_experiments():
        if folder.scheduler_alive(exp_dir) is not None:
            busy.append(f"sweep {exp_dir.name}")
    return busy


def sharing_warning(busy: list[str] | None = None) -> str | None:
    """The sentence a start shows while something else trains (None when nothing does)."""
    busy = trainings_in_progress() if busy is None else busy
    if not busy:
        return None
    cores = max_jobs()
    what = busy[0] if len(busy) == 1 else f"{busy[0]} and {len(busy) - 1} more"
    return (f"Also training now: {what}. They will share this machine's {cores} "
            f"core{'s' if cores != 1 else ''}, so each goes slower than alone; the estimate is "
            "measured now, with it running.")
