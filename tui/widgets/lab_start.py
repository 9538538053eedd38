"""Starting a lesson's lab jobs from the app (front matter ``lab = ["lora", ...]``): each one not
already running or done starts in the background, within a served session's training limit; the
answer is one line for a notice."""

from __future__ import annotations

from minigpt import serving_policy
from minigpt.errors import TutorError


async def start_lab_jobs(jobs) -> str:
    from minigpt.control import lab_jobs

    jobs = [jobs] if isinstance(jobs, str) else list(jobs)
    said = []
    for job in jobs:
        if job not in lab_jobs.JOBS:
            said.append(f"{job}: no such lab job")
            continue
        state = lab_jobs.job_state(job)
        if state != "not run":
            said.append(f"{job}: {'already running' if state == 'running' else 'done (shown in the lesson)'}")
            continue
        try:
            await serving_policy.start_lab_job(job)
        except TutorError as e:
            said.append(f"{job}: not started ({e})")
            continue
        said.append(f"{job}: started in the background; reopen the lesson when it is done")
    return "\n".join(said)
