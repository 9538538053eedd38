"""x in a lesson with lab jobs: a job already done is not started again, and the notice says so;
a served session at its training limit is refused with the limit's reason."""

from __future__ import annotations

from minigpt import serving_policy as policy
from minigpt.control import lab_jobs
from minigpt.runs.lab import job_dir, write_result
from tui.screens.lesson import LessonScreen

LESSON = "quantization-lora-checkpointing"


async def _press_x(app, pilot) -> str:
    app.open_lesson(LESSON)
    for _ in range(200):  # the lesson computes its examples first
        await pilot.pause(0.1)
        if isinstance(app.screen, LessonScreen) and app.screen._all_mounted:
            break
    assert app.screen.check_action("open_experiments", ()) is True
    await pilot.press("x")
    for _ in range(100):
        await pilot.pause(0.1)
        said = [str(n.message) for n in app._notifications]
        if said:
            return said[-1]
    raise AssertionError("no notice after x")


async def test_done_jobs_are_not_started_again(app):
    for job in lab_jobs.JOBS:
        write_result(job_dir(job), {"job": job})
    async with app.run_test(size=(80, 24)) as pilot:
        said = await _press_x(app, pilot)
    assert "lora: done" in said and "checkpointing: done" in said


async def test_a_served_session_without_training_slots_is_refused(app, monkeypatch, tmp_path):
    monkeypatch.setenv(policy.ENV_SERVED, "1")
    monkeypatch.setenv(policy.ENV_STATE_DIR, str(tmp_path / "serve-state"))
    monkeypatch.setenv(policy.ENV_MAX_RUNS, "0")
    async with app.run_test(size=(80, 24)) as pilot:
        said = await _press_x(app, pilot)
    assert "lora: not started" in said and "--max-runs 0" in said
    assert lab_jobs.job_state("lora") == "not run"
