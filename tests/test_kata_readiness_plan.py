"""Issue 49, item 1's rest: readiness credits a passed kata by its card's FSRS retrievability (kata
credit decays as FSRS says), and the plan to a date lists the katas due before the interview
(`minigpt plan` and the plan screen). Real SQLite files."""

from __future__ import annotations

from datetime import date, timedelta

from click.testing import CliRunner
from textual.widgets import Static

from minigpt.katas import history
from minigpt.katas.catalogue import load_katas
from minigpt.store import Store
from minigpt.study import kata_cards, plan, readiness
from minigpt.study import scheduler as sch
from tests.helpers.waiting import until


def _read_then_pass(store: Store, lesson: str, kata: str, when) -> None:
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO lesson_progress(lesson_id, position, read_at, updated_at) "
                     "VALUES (?, 1.0, ?, ?)", (lesson, sch.iso(when - timedelta(hours=1)), sch.iso(when)))
    history.record_attempt(store, kata, passed=True, cases_failed=0, cases_total=5)
    with store.transaction() as conn:
        conn.execute("UPDATE kata_progress SET opened_at = ?, first_passed_at = ? WHERE kata = ?",
                     (sch.iso(when - timedelta(minutes=20)), sch.iso(when), kata))
        conn.execute("UPDATE kata_attempts SET attempted_at = ? WHERE kata = ?", (sch.iso(when), kata))
    kata_cards.sync_passed(store)


def _katas_part(store: Store, lesson: str, on) -> float:
    per_lesson = history.lesson_katas(store, load_katas(), names=True)
    r = readiness.readiness(store, [(lesson, lesson)], {}, per_lesson, on=on)
    return r.lessons[0].parts["katas"]


def test_kata_credit_decays_as_its_card_retrievability(tmp_path):
    store = Store(tmp_path / "progress.sqlite3")
    now = sch.utc_now()
    _read_then_pass(store, "flash-attention", "tiled_attention", now - timedelta(days=1))
    card = kata_cards.card(store, "tiled_attention")
    scheduler = sch.learner_scheduler(store)
    soon, later = now, now + timedelta(days=120)
    assert _katas_part(store, "flash-attention", soon) == card.retrievability(scheduler, soon)
    assert _katas_part(store, "flash-attention", later) == card.retrievability(scheduler, later)
    assert 0 < _katas_part(store, "flash-attention", later) < _katas_part(store, "flash-attention", soon) < 1
    # the count form (what the katas screen shows) is unchanged: one of one passed
    assert history.lesson_katas(store, load_katas())["flash-attention"] == (1, 1)


def _due_kata_store(path) -> Store:
    store = Store(path / "progress.sqlite3")
    _read_then_pass(store, "softmax", "softmax", sch.utc_now() - timedelta(days=30))
    return store


def test_the_plan_lists_the_katas_due_before_the_interview(tmp_path):
    store = _due_kata_store(tmp_path)
    from minigpt.study.decks import load_decks
    from minigpt.study.review import StudySession

    deck = load_decks(numbers=False)
    session = StudySession(store, deck, lesson_order={})
    made = plan.make_plan(store, deck, date.today() + timedelta(days=10), new_per_day=20,
                              scheduler=session.scheduler, lesson_order={})
    assert made.katas_due[0] == (made.today, "softmax")  # overdue: today
    text = "\n".join(plan.describe(made))
    assert "Katas to re-solve from the stub" in text and "today           softmax" in text
    store.close()
    from minigpt.cli.main import main

    out = CliRunner().invoke(main, ["--data-dir", str(tmp_path), "plan", "--date",
                                    (date.today() + timedelta(days=10)).isoformat()])
    assert out.exit_code == 0 and "today           softmax" in out.output, out.output


async def test_the_plan_screen_lists_the_due_katas(make_app, tmp_path):
    app = make_app(store=_due_kata_store(tmp_path))
    plan.set_plan(app.store, date.today() + timedelta(days=10))
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press("s")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyStatsScreen")
        await pilot.press("i")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyPlanScreen")
        text = lambda: str(app.screen.query_one("#plan-text", Static).render())  # noqa: E731
        await until(pilot, lambda: "Katas to re-solve" in text())
        assert "softmax" in text().split("Katas to re-solve")[1]
