"""The command palette reaches every screen and action from home by plain words (the plan, compare
runs, seed groups, each lab job, flagged cards), never by a class name; the flagged cards can be
read and resolved there, at 80×24."""

from __future__ import annotations

import re

from textual.command import CommandList
from textual.widgets import OptionList, Static

from minigpt.runs.lab import JOBS
from minigpt.study import flags
from tests.helpers.waiting import until
from tui import navigation
from tui.common.screen_commands import screen_name

# Every screen's class name, whole and without "Screen", where it is not a plain word ("StudyStats",
# "KataScreen"; "Runs" is a word).
CLASS_NAMES = {name for path in navigation.SCREENS.values() for cls in [path.partition(":")[2]]
               for name in (cls, cls.removesuffix("Screen")) if re.search(r"[a-z][A-Z]", name)}


def _class_names_in(text: str) -> list[str]:
    return [name for name in CLASS_NAMES if re.search(rf"\b{name}\b", text)]


def test_every_screen_is_named_in_words_in_the_palette():
    for name in navigation.SCREENS:
        words = screen_name(navigation.screen_class(name))
        assert words and not _class_names_in(words) and not words.endswith("Screen"), (name, words)


async def test_home_palette_lists_the_plan_runs_groups_lab_jobs_and_flags_in_words(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Interview plan", "Compare runs", "Seed groups", "Flagged cards",
                       *(f"Lab job: {job.title}" for job in JOBS.values())):
            assert wanted in titles, wanted
        assert not [t for t in titles if _class_names_in(t)]
        from minigpt.lessons import load_lessons

        lesson = next(x for x in load_lessons() if len(x.objectives) >= 2)  # two sentences, not one run-on
        helps = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert helps[f"Lesson {load_lessons().index(lesson) + 1}: {lesson.title}"] == " · ".join(lesson.objectives[:2])


async def _palette(app, pilot, words: str) -> None:
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*words)
    await until(pilot, lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
                30, "the palette's hits")
    await pilot.press("enter")


async def test_seed_groups_and_flagged_cards_open_from_the_palette(app):
    a, b = "term.masked-softmax", "term.causal-average"
    flags.flag_card(app.store, a, "the definition is off")
    flags.flag_card(app.store, b)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        seed_groups = next(c for c in app.get_system_commands(app.screen) if c.title == "Seed groups")
        seed_groups.callback()
        await until(pilot, lambda: navigation.is_screen(app.screen, "compare_runs"), 30, "compare runs")
        assert app.screen.group_mode
        app.go_home()
        await _palette(app, pilot, "flagged cards")  # typed, as a learner finds it
        await until(pilot, lambda: navigation.is_screen(app.screen, "flagged_cards"), 30, "the flagged cards")
        screen = app.screen
        assert "2 cards flagged as wrong" in str(screen.query_one("#flagged-summary", Static).render())
        assert screen.query_one(OptionList).option_count == 2
        assert "the definition is off" in str(screen.query_one("#flagged-detail", Static).render())
        await pilot.press("r")
        await until(pilot, lambda: screen.query_one(OptionList).option_count == 1, 10, "the flag resolved")
        assert [f.card_id for f in flags.flags(app.store)] == [b] and a not in flags.left_out(app.store)
