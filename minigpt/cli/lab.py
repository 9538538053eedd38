"""``minigpt lab``: the lessons' background measurements (the jobs of ``minigpt.runs.lab.JOBS``: a
LoRA fine-tune, quantization of the shipped model, μP transfer…), run in the foreground or shown
once done.

The app starts the same ``lab run JOB`` command in the background from the lesson; what it saves
(``lab/<job>/result.json`` in the data folder) is what the lesson shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from minigpt.cli.support import UserError, _fail
from minigpt.errors import TutorError
from minigpt.runs.lab import JOBS
from minigpt.text import printable

ROOT_HELP = "Folder of the lab jobs (default: lab/ in the data folder)."


@click.group(short_help="Lessons' longer measurements (lab jobs), run here or shown once done.")
def lab() -> None:
    """The lessons' longer measurements, which run for a minute or more."""


# The jobs listed from the one registry, so a new job is in the help without editing it ("\b":
# click keeps the lines as they are).
lab.help += "\n\n\b\nJobs:\n" + "\n".join(f"  {job.id:<17} {job.title}" for job in JOBS.values())


@lab.command(name="run")
@click.argument("job", type=click.Choice(tuple(JOBS)))
@click.option("--root", type=click.Path(path_type=Path), default=None, help=ROOT_HELP)
def run_cmd(job: str, root: Path | None) -> None:
    """Run JOB here and save its result (the lesson shows it)."""
    from minigpt.control.lab_jobs import run_job

    try:
        result = run_job(job, root, progress=lambda line: click.echo(printable(line)))
    except TutorError as e:
        raise _fail(e) from None
    click.echo(f"done in {result['seconds']:.0f} s (load average {result['load_average']:.1f})")
    if result.get("run"):  # a job that trains keeps its run: the app's explorers and compare list it
        click.echo(printable(f"its run: {result['run']} (minigpt watch {result['run']})"))


@lab.command(name="show")
@click.argument("job", type=click.Choice(tuple(JOBS)))
@click.option("--root", type=click.Path(path_type=Path), default=None, help=ROOT_HELP)
def show_cmd(job: str, root: Path | None) -> None:
    """Print JOB's saved result as JSON."""
    from minigpt.runs.lab import job_dir, read_result

    try:
        result = read_result(job_dir(job, root))
    except TutorError as e:
        raise _fail(e) from None
    if result is None:
        raise UserError(f"the {job} lab job has not finished yet: minigpt lab run {job}")
    click.echo(json.dumps(result, indent=2))
