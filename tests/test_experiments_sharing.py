"""A start while another training runs says they will share the cores: the library's finding of
what trains now, and the training form's question showing it (the sweep's question uses the same)."""

from __future__ import annotations

from textual.widgets import Static

from minigpt import paths
from minigpt.experiments.sharing import sharing_warning, trainings_in_progress
from tests.helpers.run_fixtures import a_training_run, write_run
from tests.helpers.screen_walk import settle


def test_nothing_training_means_no_warning():
    write_run(paths.runs_dir(), "20260105-100000")  # finished
    assert trainings_in_progress() == [] and sharing_warning() is None


def test_a_live_run_is_named_and_the_warning_says_the_cores_are_shared():
    a_training_run()
    assert trainings_in_progress() == ["run busy one"]
    warning = sharing_warning()
    assert "run busy one" in warning and "share" in warning and "measured now" in warning


async def test_the_start_question_says_the_cores_will_be_shared(make_app):
    from minigpt.training.options import TrainConfig
    from tui.common.confirm import StartRunScreen

    a_training_run()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        ask = StartRunScreen(TrainConfig(model="gpt", d_model=8, n_heads=2, n_layers=1, steps=20, device="cpu"))
        app.push_screen(ask)
        await settle(pilot, lambda: ask.estimate is not None or ask.estimate_error is not None, timeout=60)
        line = ask.query_one("#start-sharing", Static)
        assert line.display and "busy one" in str(line.render()) and "share" in str(line.render())
