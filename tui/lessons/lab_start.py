"""A lesson's lab jobs (front matter ``lab = ["lora", ...]``) from the app: start one, offer the
choice when there are several, and follow their folders so a result shows while the lesson is open.

Starting: a job not already running or done starts in the background, within a served session's
training limit; the answer is one line for a notice. One key press starts one job, never all.

Following: the job folder is the only channel between the app and the job (as a run folder is
between the app and a trainer). Every ``FOLLOW_S`` the lesson looks at each job's folder (its
result file's identity, and whether the job is alive); when that changes, the job's worked example
(its declaration's ``example``, minigpt.runs.lab.JOBS) is computed again, so "running", then the
result, appear without reopening it.

Opening: a job that kept the run it trained (``lab/<job>/run``) is offered beside the start, to
open that run in the attention explorer or in compare.
"""

from __future__ import annotations

from pathlib import Path

from minigpt import serving_policy
from minigpt.errors import TutorError

FOLLOW_S = 2.0  # as the trained-attention view follows a live run's checkpoint


def job_choices(jobs) -> list[tuple[str, str, str]]:
    """(name, title, state) of each known job, for the choice of which to start."""
    from minigpt.control import lab_jobs

    return [(job, lab_jobs.JOBS[job].title, lab_jobs.job_state(job)) for job in jobs if job in lab_jobs.JOBS]


# What x offers for a job that kept the run it trained (minigpt.runs.lab.lab_runs): choice id prefix, words.
RUN_ACTIONS = (("explore", "its run in the attention explorer"), ("compare", "its run beside your runs (compare)"))


def run_choices(jobs) -> list[tuple[str, str, str]]:
    """(``action:job``, title, where) to open each of ``jobs``' kept runs in the explorer and compare."""
    from minigpt.runs.lab import JOBS, lab_runs

    kept = dict(lab_runs())
    return [(f"{action}:{job}", f"Open {job}'s {words}", "lab/" + job + "/run")
            for job in jobs if job in kept and job in JOBS for action, words in RUN_ACTIONS]


def kept_run(choice: str) -> tuple[str, Path] | None:
    """(action, run folder) of a run choice; None for a job to start or a run no longer there."""
    from minigpt.runs.lab import lab_runs

    action, _, job = choice.partition(":")
    run = dict(lab_runs()).get(job) if job else None
    return (action, run) if run is not None else None


async def start_lab_job(job: str) -> str:
    """Start ``job`` unless it runs or is done; one line saying what happened."""
    from minigpt.control import lab_jobs

    if job not in lab_jobs.JOBS:
        return f"{job}: no such lab job"
    state = lab_jobs.job_state(job)
    if state != "not run":
        return f"{job}: {'already running' if state == 'running' else 'done (shown in the lesson)'}"
    try:
        await serving_policy.start_lab_job(job)
    except TutorError as e:
        return f"{job}: not started ({e})"
    return f"{job}: started in the background; its result shows in the lesson when it is done"


def lab_stamp(job: str) -> tuple:
    """What changes when the job starts, takes its lock, finishes or is run again."""
    from minigpt.control.lab_jobs import is_live
    from minigpt.runs.lab import RESULT_FILE, is_running, job_dir

    folder = job_dir(job)
    try:
        st = (folder / RESULT_FILE).stat()
        result = (st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        result = None
    return result, is_live(folder), is_running(folder)


class LabFollower:
    """Watches a lesson's lab jobs from its screen's timer; recomputes their examples on a change."""

    def __init__(self, screen, jobs: list[str]):
        from minigpt.runs.lab import JOBS

        self.screen = screen
        self.jobs = [job for job in jobs if job in JOBS]
        self.stamps = {job: lab_stamp(job) for job in self.jobs}
        self.timer = screen.set_interval(FOLLOW_S, self.follow) if self.jobs else None

    async def follow(self) -> None:
        from minigpt.runs.lab import JOBS
        from tui.lessons.lesson_blocks import ExampleBlock

        for job in self.jobs:
            stamp = lab_stamp(job)
            if stamp == self.stamps[job]:
                continue
            self.stamps[job] = stamp
            for block in self.screen.query(ExampleBlock):
                if block.example_id == JOBS[job].example:
                    await block.recompute()
