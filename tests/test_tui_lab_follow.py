"""A lesson open while its lab job runs and finishes shows "running", then the result, without being
reopened: it follows the job's folder (the only channel between the app and the job)."""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown

from minigpt.control import form, lab_jobs
from minigpt.runs.lab import job_dir
from minigpt.runs.lock import RunLock
from tests.helpers.waiting import until
from tui.lessons.lesson import LessonScreen
from tui.lessons.lesson_blocks import ExampleBlock


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


async def test_o_opens_the_attention_view_on_the_induction_model_and_shows_both_heads(app):
    """The lesson's explorer_options: the trained view opens on the bundled induction model and a
    repeated string; layer 0's head looks one letter back, layer 1's at the letter after the
    earlier copy of the current one."""
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson("induction-heads")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen) and app.screen._all_mounted, 30, "the lesson")
        await pilot.press("o")
        view = await until(pilot, lambda: getattr(app.screen, "maps", None) is not None and app.screen, 30,
                           "the attention view with its maps")
        assert view.base_path.name == "induction" and view.initial_name == "qxfbkwqxfbkw"
        maps = [[list(map(list, head)) for head in layer] for layer in view.maps]
    assert len(maps) == 2 and len(maps[0]) == 1 and len(maps[0][0]) == 13  # ".qxfbkwqxfbkw"
    argmax = [[max(range(len(row)), key=row.__getitem__) for row in layer[0]] for layer in maps]
    assert argmax[0][1:] == list(range(12))  # each position t looks at t − 1
    assert argmax[1][7:] == [2, 3, 4, 5, 6, 7]  # second copy: t looks at t − 6 + 1
