"""Issue 49, item 3's rest: a sweep over dropout gives the question "why did this sweep's best
dropout beat 0.0 at this size", asked as a presumed difference only when the t-test over the two
settings' seeds says it is real, else "is it real?"; and the chapter quiz asks the learner's run
questions beside the deck's."""

from __future__ import annotations

import pytest

from minigpt.experiments import folder
from minigpt.experiments.results import collect
from minigpt.experiments.spec import Axis, Budget, ExperimentSpec
from minigpt.experiments.sweep_questions import dropout_questions, sweep_questions
from minigpt.significance import welch_t_test
from minigpt.study import quiz
from minigpt.study.run_questions import ALPHA, as_card, dropout_question
from tests.helpers.run_fixtures import fake_run


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("\n".join(["abcd", "bcda", "cdab", "dabc", "aabb", "bbcc", "ccdd", "ddaa"]), encoding="utf-8")
    return str(path)


def _sweep(tmp_path, data, losses: dict[float, list[tuple[float, float]]]):
    """A dropout sweep with a seed axis whose runs finished at the given (train, val) losses."""
    seeds = tuple(range(1, 1 + max(len(v) for v in losses.values())))
    axes = [Axis("dropout", tuple(losses))] + ([Axis("seed", seeds)] if len(seeds) > 1 else [])
    spec = ExperimentSpec(name="drop", axes=axes, budget=Budget("steps", 20),
                          base={"d_model": 16, "n_heads": 2, "n_layers": 1}, kind="dropout")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=data)
    for run in exp.runs:
        train, val = losses[run.values["dropout"]][run.values.get("seed", 1) - 1]
        fake_run(exp, run.name, "finished", 20, val, train=train)
    return exp


def test_a_real_difference_is_asked_why_with_the_sweeps_numbers(tmp_path, data):
    exp = _sweep(tmp_path, data, {0.0: [(2.00, 2.40), (2.01, 2.42), (1.99, 2.41)],
                                  0.2: [(2.10, 2.20), (2.11, 2.21), (2.09, 2.19)]})
    [q] = dropout_questions(collect(exp.dir))
    p = welch_t_test([2.20, 2.21, 2.19], [2.40, 2.42, 2.41]).p
    assert p < ALPHA
    assert q.prompt.endswith("Why did dropout 0.2 beat 0.0 at this size?")
    assert "2.200" in q.prompt and "2.410" in q.prompt and f"p = {p:.3g}" in q.prompt
    assert "0.410 without dropout and 0.100 with it" in q.answer  # the gaps, val − train
    assert any("beyond seed noise" in point for point in q.rubric) and q.lesson == "training"


def test_one_run_per_setting_asks_whether_it_is_real(tmp_path, data):
    _sweep(tmp_path, data, {0.0: [(2.0, 2.40)], 0.1: [(2.1, 2.30)], 0.3: [(2.2, 2.35)]})
    [q] = sweep_questions(tmp_path / "runs")
    assert q.prompt.endswith("Is dropout 0.1 really better than 0.0 here?") and "Why" not in q.prompt
    assert q.answer.startswith("Not shown: with one run per setting")


def test_within_seed_noise_asks_whether_it_is_real_and_a_best_of_zero_asks_nothing(tmp_path, data):
    noisy = dropout_question("s", "1,000 parameters", 0.2, [2.30, 2.50], [2.35, 2.52])
    assert "Is dropout 0.2 really better" in noisy.prompt and "p = " in noisy.answer
    exp = _sweep(tmp_path, data, {0.0: [(2.0, 2.1)], 0.2: [(2.1, 2.3)]})
    assert dropout_questions(collect(exp.dir)) == []


def test_an_interview_with_a_dropout_sweep_asks_about_it(tmp_path, data):
    from minigpt.study import interview

    _sweep(tmp_path, data, {0.0: [(2.0, 2.40)], 0.1: [(2.1, 2.30)]})
    plan = interview.plan([], ["training"], {}, minutes=10, run_questions=sweep_questions(tmp_path / "runs"), seed=3)
    assert [q.kind for q in plan] == ["run"] and "Is dropout 0.1 really better than 0.0" in plan[0].prompt


def test_the_chapter_quiz_asks_a_run_question_of_its_lesson():
    q = dropout_question("drop", "1,000 parameters", 0.2, [2.2, 2.21, 2.19], [2.4, 2.42, 2.41])
    questions = quiz.chapter_quiz("training", seed=1, run_questions=[q])
    asked = [x for x in questions if x.card_id == q.id]
    assert len(asked) == 1 and asked[0].format == "explain" and len(questions) == quiz.CHAPTER_QUIZ_SIZE
    assert quiz.reveal(asked[0]) == (q.answer, q.rubric)
    other = quiz.chapter_quiz("layer-norm", seed=1, run_questions=[q])
    assert q.id not in {x.card_id for x in other}
    assert as_card(q).checklist == q.rubric


async def test_the_chapter_quiz_screen_asks_about_a_run_and_schedules_nothing_for_it(make_app):
    from textual.widgets import Static, TextArea

    from minigpt import paths
    from minigpt.study.review import history
    from tests.helpers.run_fixtures import write_run
    from tests.helpers.waiting import until
    from tui.study.quiz import QuizScreen

    write_run(paths.runs_dir(), "20260105-100200", steps=300, best_val=2.1)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, QuizScreen))
        screen = app.screen
        screen.start_chapter("the-loss")
        await pilot.pause()
        own = [i for i, x in enumerate(screen.questions) if x.card_id.startswith("run:")]
        assert len(own) == 1 and screen.questions[own[0]].prompt.startswith("About your own run: Your run")
        screen.index = own[0]
        screen.show_question()
        await pilot.pause()
        screen.view.query_one(TextArea).insert("divide by ln 2")
        await pilot.press("ctrl+s", "space", "ctrl+s")
        await until(pilot, lambda: bool(screen.query(".quiz-recorded")))
        assert "scored here, not scheduled" in str(screen.query_one(".quiz-recorded", Static).render())
        assert not [r for r in history(app.store) if r["card_id"].startswith("run:")]
