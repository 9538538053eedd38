"""A lesson open while its lab job runs and finishes shows "running", then the result, without being
reopened: it follows the job's folder (the only channel between the app and the job)."""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown

from minigpt.control import form, lab_jobs
from minigpt.runs.lab import job_dir
from minigpt.runs.lock import RunLock
from tests.waiting import until
from tui.screens.lesson import LessonScreen
from tui.widgets.lesson_blocks import ExampleBlock


def _lab_text(app) -> str:
    for block in app.screen.query(ExampleBlock):
        if block.example_id == "induction.lab":
            return "\n".join(m.source or "" for m in block.query(Markdown))
    return ""


async def test_the_result_appears_while_the_lesson_is_open(app, monkeypatch):
    # the real job (training, scoring, the result file), on a short budget
    monkeypatch.setitem(form.PRESETS, "induction", {**form.PRESETS["induction"], "steps": 20, "eval_interval": 10})
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson("induction-heads")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen) and "Not run yet" in _lab_text(app),
                    30, "the lesson saying the job has not run")
        job_dir("induction").mkdir(parents=True)
        with RunLock(job_dir("induction")):  # a job holding its folder's lock: running
            await until(pilot, lambda: "Running in the background" in _lab_text(app), 15,
                        "the lesson saying the job runs", describe=lambda: _lab_text(app))
        result = await asyncio.to_thread(lab_jobs.run_job, "induction", None, lambda line: None)
        assert result["steps"] == 20
        text = await until(pilot, lambda: "| repeats (loss) |" in _lab_text(app) and _lab_text(app), 15,
                           "the result in the open lesson", describe=lambda: _lab_text(app))
    assert f"| repeats (loss) | {result['loss_repeated']:.3f} |" in text
    assert "20 steps from seed 1337" in text
