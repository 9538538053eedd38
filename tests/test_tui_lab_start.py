"""x in a lesson with lab jobs: one key press starts one job (a lesson with several asks which);
a job already done is not started again, and the notice says so; a served session at its training
limit is refused with the limit's reason."""

from __future__ import annotations

import pytest

from minigpt import serving_policy
from minigpt.control import lab_jobs
from minigpt.runs.lab import job_dir, write_result
from tests.helpers.waiting import until
from tui.experiments.lab_menu import LabMenu
from tui.lessons.lesson import LessonScreen

TWO_JOBS = "quantization-lora-checkpointing"  # lab = ["lora", "checkpointing"]
ONE_JOB = "induction-heads"  # lab = ["induction"]


async def _open(app, pilot, lesson: str) -> LessonScreen:
    app.open_lesson(lesson)
    screen = await until(pilot, lambda: isinstance(app.screen, LessonScreen) and app.screen._all_mounted
                         and app.screen, 30, "the lesson and its examples")
    assert screen.check_action("start_lab", ()) is True and not screen.check_action("open_experiments", ())
    return screen


def _answers(app) -> list[str]:
    """The notices that answer x (not the "starting …" said while one is slow to come)."""
    return [str(n.message) for n in app._notifications if "starting the lab job" not in str(n.message)]


async def _notice(app, pilot, after: int = 0) -> str:
    await until(pilot, lambda: len(_answers(app)) > after, 10, "a notice")
    return _answers(app)[-1]


async def test_x_asks_which_job_and_starts_only_the_one_chosen(app):
    for job in ("lora", "checkpointing"):
        write_result(job_dir(job), {"job": job})
    async with app.run_test(size=(80, 24)) as pilot:
        lesson = await _open(app, pilot, TWO_JOBS)
        await pilot.press("x")
        menu = await until(pilot, lambda: isinstance(app.screen, LabMenu) and app.screen, 10, "the job menu")
        assert [name for name, _title, _state in menu.jobs] == ["lora", "checkpointing"]
        assert all(state == "done" for _name, _title, state in menu.jobs)
        await pilot.press("2")
        said = await _notice(app, pilot)
        assert app.screen is lesson
        assert said.startswith("checkpointing: done") and "lora" not in said
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, LabMenu), 10, "the job menu again")
        await pilot.press("enter")  # the first line is highlighted
        said = await _notice(app, pilot, after=1)
        assert said.startswith("lora: done") and "checkpointing" not in said


async def test_closing_the_menu_starts_nothing(app):
    async with app.run_test(size=(80, 24)) as pilot:
        lesson = await _open(app, pilot, TWO_JOBS)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, LabMenu), 10, "the job menu")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is lesson, 10, "the lesson again")
        await pilot.pause(0.3)
        assert not app._notifications
    assert lab_jobs.job_state("lora") == lab_jobs.job_state("checkpointing") == "not run"
    assert not job_dir("lora").exists() and not job_dir("checkpointing").exists()


async def test_a_lesson_with_one_job_starts_it_without_asking(app):
    write_result(job_dir("induction"), {"job": "induction"})
    async with app.run_test(size=(80, 24)) as pilot:
        lesson = await _open(app, pilot, ONE_JOB)
        await pilot.press("x")
        said = await _notice(app, pilot)
        assert app.screen is lesson and said == "induction: done (shown in the lesson)"


async def test_a_served_session_without_training_slots_is_refused(app, monkeypatch, tmp_path):
    monkeypatch.setenv(serving_policy.ENV_SERVED, "1")
    monkeypatch.setenv(serving_policy.ENV_STATE_DIR, str(tmp_path / "serve-state"))
    monkeypatch.setenv(serving_policy.ENV_MAX_RUNS, "0")
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, TWO_JOBS)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, LabMenu), 10, "the job menu")
        await pilot.press("1")
        said = await _notice(app, pilot)
    assert "lora: not started" in said and "--max-runs 0" in said
    assert lab_jobs.job_state("lora") == "not run"


async def test_x_says_at_once_that_the_job_is_starting_when_its_answer_is_slow(app, monkeypatch):
    import asyncio

    release = asyncio.Event()

    async def slow_start(job):
        await release.wait()  # a busy machine: the job's start takes its time
        return f"{job}: started in the background"

    monkeypatch.setattr("tui.lessons.lab_start.start_lab_job", slow_start)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open(app, pilot, ONE_JOB)
        await pilot.press("x")
        await until(pilot, lambda: any("induction: starting the lab job" in str(n.message) for n in app._notifications),
                    10, "the notice that the job is starting")
        assert not _answers(app)
        release.set()
        assert await _notice(app, pilot) == "induction: started in the background"


def keep_a_lab_run(job: str = "induction"):
    """What the induction job leaves: its result and the run it trained (the bundled model as its checkpoint)."""
    import shutil

    from minigpt.paths import checkpoints_dir
    from minigpt.runs.lab import RUN_DIR
    from tests.helpers.run_fixtures import write_run

    run = write_run(job_dir(job), RUN_DIR, d_model=64, n_layers=2, best_val=1.4, label="induction heads (lab)")
    shutil.copytree(checkpoints_dir() / "induction", run / "checkpoint")
    write_result(job_dir(job), {"job": job, "run": str(run)})
    return run


@pytest.mark.soak  # a lesson, the attention explorer and compare opened in turn: 8 s on two busy cores
async def test_a_kept_lab_run_opens_from_x_in_the_attention_explorer_and_in_compare(app):
    from tui.explorers.explorer_trained import TrainedAttentionScreen
    from tui.training.compare_runs import CompareRunsScreen

    run = keep_a_lab_run()
    async with app.run_test(size=(80, 24)) as pilot:
        lesson = await _open(app, pilot, ONE_JOB)
        await pilot.press("x")  # one job, but its run can be opened: the menu asks
        menu = await until(pilot, lambda: isinstance(app.screen, LabMenu) and app.screen, 10, "the menu")
        assert [name for name, _title, _state in menu.jobs] == ["induction", "explore:induction", "compare:induction"]
        await pilot.press("2")
        explorer = await until(pilot, lambda: isinstance(app.screen, TrainedAttentionScreen) and app.screen, 20,
                               "the attention explorer")
        assert explorer.checkpoints[0][1] == run / "checkpoint"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is lesson, 10, "back in the lesson")
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, LabMenu), 10, "the menu again")
        await pilot.press("3")
        compare = await until(pilot, lambda: isinstance(app.screen, CompareRunsScreen) and app.screen, 20, "compare")
        assert compare.shown[0] == str(run)


def test_x_offers_a_kept_run_beside_its_job_and_names_the_folder_it_opens():
    from tui.lessons.lab_start import kept_run, run_choices

    assert run_choices(["induction"]) == [] and kept_run("explore:induction") is None
    run = keep_a_lab_run()
    assert [choice for choice, _title, _where in run_choices(["induction", "lora"])] == [
        "explore:induction", "compare:induction"]
    assert kept_run("explore:induction") == ("explore", run) and kept_run("compare:induction") == ("compare", run)
    assert kept_run("induction") is None  # a job to start, not a run to open
