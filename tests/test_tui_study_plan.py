"""The interview-plan screen (i on the study stats): a date typed and saved is the plan the
study sessions and the home screen use; a bad date is one line and saves nothing."""

from __future__ import annotations

from datetime import date, timedelta

from textual.widgets import Input, Static

from minigpt.study import plan
from tests.helpers.waiting import until


async def test_set_a_date_on_the_plan_screen(make_app):
    app = make_app()
    day = date.today() + timedelta(days=14)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyStatsScreen")
        await pilot.press("i")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyPlanScreen")
        screen = app.screen
        text = lambda: str(screen.query_one("#plan-text", Static).render())  # noqa: E731
        assert screen.query_one("#plan-date", Input).value == day.isoformat()   # two weeks out, offered
        # what the plan stores is capped where it is typed (a pasted megabyte: tests/hostile/test_input_caps.py)
        assert [screen.query_one(box, Input).max_length for box in ("#plan-date", "#plan-lessons")] == [32, 4_000]
        assert "Not saved yet" in text() and plan.plan_settings(app.store)[0] is None
        screen.query_one("#plan-lessons", Input).value = "layer-norm"
        await pilot.press("enter")
        await until(pilot, lambda: "Saved." in text())
        assert plan.plan_settings(app.store) == (day, ("layer-norm",))
        assert "in 14 days" in text() and "cards (layer-norm)" in text()
        screen.query_one("#plan-date", Input).value = "next thursday"
        await pilot.press("enter")
        await until(pilot, lambda: "not a date" in text())
        assert plan.plan_settings(app.store)[0] == day                      # nothing lost
        screen.query_one("#plan-date", Input).value = ""
        await pilot.press("enter")
        await until(pilot, lambda: "studying as usual" in text())
        assert plan.plan_settings(app.store)[0] is None


async def test_new_cards_a_day_help_and_a_scope_change_on_the_plan_screen(make_app):
    from minigpt import settings
    from tui import navigation

    app = make_app()
    plan.set_plan(app.store, date.today() + timedelta(days=14), ("training",))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        navigation.open_screen(app, "study_plan")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyPlanScreen")
        screen = app.screen
        text = lambda: str(screen.query_one("#plan-text", Static).render())  # noqa: E731
        field = screen.query_one("#plan-new", Input)
        assert field.value == "20" and field.region.right <= 80            # the setting, on screen at 80
        await pilot.press("question_mark")                                   # the date field has the focus
        await until(pilot, lambda: navigation.is_screen(app.screen, "help"))
        assert screen.query_one("#plan-date", Input).value == str(date.today() + timedelta(days=14))  # no "?"
        keys = str(app.screen.query_one("#help-body Static", Static).render())
        assert "Save the day, lessons and new cards a day" in keys
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        field.value = "7"
        screen.query_one("#plan-lessons", Input).value = "training,layer-norm"
        await pilot.press("enter")
        await until(pilot, lambda: "Saved." in text())
        assert settings.get(app.store, settings.NEW_PER_DAY) == 7
        assert "Lessons in scope: training, layer-norm (replacing training)" in text()
        assert "New cards a day: 7" in text()
        field.value = "lots"
        await pilot.press("enter")
        await until(pilot, lambda: "whole number" in text())
        assert settings.get(app.store, settings.NEW_PER_DAY) == 7                # nothing lost
        await pilot.press("f1")
        await until(pilot, lambda: navigation.is_screen(app.screen, "help"))
        assert "F1             these keys, also from a text field" in str(
            app.screen.query_one("#help-body Static", Static).render())
