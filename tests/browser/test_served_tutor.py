"""The tutor as a learner meets it in a browser: ``minigpt serve`` opened in headless Chromium.

Each test presses keys in the page and reads back the terminal xterm.js shows (see harness.py),
then saves a screenshot under test-artifacts/browser/. One server serves the module; every test
opens its own tab, which is its own app process, as a second browser tab would be.
"""

from __future__ import annotations

import re

import pytest

from minigpt.lessons import load_lessons, run_snippet
from minigpt.teaching.attention import COURSE_EXAMPLE
from minigpt.teaching.stepper import STAGE, preset_state, stages_for
from tests.browser.harness import TutorPage
from tui.serve_server import PAGE_TITLE

pytestmark = pytest.mark.slow


@pytest.fixture
def tab(browser, served):
    page = TutorPage(browser, served.url)
    yield page
    page.close()


def test_home_then_a_lesson_then_the_attention_stepper(tab):
    tab.open()
    assert tab.page.title() == PAGE_TITLE
    home = tab.screen_text()
    assert "minigpt-tutor" in home and "Learn how GPT works" in home and "Lessons" in home
    tab.screenshot("home")

    first = load_lessons()[0]
    tab.press("l")
    tab.wait_for_text("0 of", f"1. {first.title}")
    tab.press("ArrowDown", "Enter")  # a fresh profile highlights nothing: the first press selects lesson 1
    lesson = tab.wait_for_text(f"minigpt-tutor — {first.title}", first.objectives[0])
    assert "You will learn to" in lesson
    tab.screenshot("lesson")

    tab.press("Escape")
    tab.wait_for_text("last read")
    tab.press("Escape")
    tab.wait_for_text("Learn how GPT works")
    tab.press("a")
    n_stages = len(stages_for(preset_state(0)))  # the stepper opens on the course's example
    stage1 = tab.wait_for_text(COURSE_EXAMPLE.name, f" 1/{n_stages} ", STAGE["input"].title)
    assert "Checks ✓" in stage1
    tab.press("n")
    tab.wait_for_text(f" 2/{n_stages} ", STAGE["qkv"].title)
    stage2 = tab.wait_for_text("Q[0,0] = x₀·W_Q[:,0]")
    q00 = sum(x * w[0] for x, w in zip(COURSE_EXAMPLE.X[0], COURSE_EXAMPLE.W_q))
    line = next(row for row in stage2.splitlines() if "Q[0,0] = x₀·W_Q[:,0]" in row)
    assert line.rstrip().endswith(f"= {q00:.2f}"), line
    tab.screenshot("stepper")


def test_a_lessons_snippet_runs_as_written(tab):
    lesson = next(l for l in load_lessons() if l.id == "scaling-laws")
    expected = run_snippet(lesson.snippets()[0]).stdout.splitlines()[0]  # the library's own runner
    tab.open()
    tab.press("Control+p")
    tab.wait_for_text("Search for commands")
    tab.type(lesson.title)
    tab.wait_for_text(f": {lesson.title}")
    tab.press("Enter")
    tab.wait_for_text(f"minigpt-tutor — {lesson.title}")
    tab.press("Tab")
    tab.wait_for_text("⏎ Run")
    tab.press("Enter")
    tab.wait_for_text("✓ ran", expected, timeout=30)
    tab.screenshot("snippet")


def test_paths_outside_the_fence_are_refused_inside_are_imported(tab, served):
    (served.data_dir / "mine.md").write_text("Q: Where does a served tab read files?\nA: In its data folder.\n",
                                             encoding="utf-8")
    tab.open()
    tab.press("f")
    tab.wait_for_text("Flashcards")
    tab.press("i")
    tab.wait_for_text("path/to/cards.md")
    tab.type("/etc/hostname")
    tab.press("Enter")
    refused = tab.wait_for_text("outside this server's folders")
    assert "--allow-files" in refused.replace("\n", " ") or "allow-files" in refused
    tab.screenshot("fence-refused")

    tab.press("Control+u")  # empty the field, and see it empty before typing (xterm may reorder otherwise)
    tab.wait_for_text("path/to/cards.md")
    tab.type("mine.md")  # relative: the served app's working folder is its data folder
    tab.press("Enter")
    tab.wait_for_text("Imported 1 cards from mine.md")


def test_a_run_started_in_the_browser_updates_its_chart_and_a_second_is_refused(tab):
    tab.open()
    tab.press("t")
    tab.wait_for_text("New training run")
    tab.press("Control+s")

    def progress() -> tuple[int, str]:
        screen = tab.wait_for_text("▶ running", timeout=60)
        match = re.search(r"step (\d+)/(\d+)", screen)
        assert match, screen
        chart = "\n".join(row for row in screen.splitlines() if "┤" in row or "│" in row)
        return int(match.group(1)), chart

    tab.page.wait_for_function(
        "() => /step [1-9][0-9]*\\/\\d+/.test(window.__minigptScreen())", timeout=90_000, polling=200)
    step_a, chart_a = progress()
    tab.page.wait_for_function(
        f"() => {{ const m = window.__minigptScreen().match(/step (\\d+)\\//); return m && +m[1] >= {step_a + 30}; }}",
        timeout=60_000, polling=200)
    step_b, chart_b = progress()
    assert step_b > step_a > 0
    assert "train" in chart_b and chart_b != chart_a  # the loss curve was redrawn with new points
    tab.screenshot("training")

    tab.press("n")
    tab.wait_for_text("New training run")
    tab.press("Control+s")
    refused = tab.wait_for_text("Not started", "already training")
    assert "allows 1 at a time" in refused
    tab.screenshot("training-limit")

    tab.press("Escape")
    tab.wait_for_text("▶ running")
    tab.press("s")
    tab.wait_for_text("■ stopped", timeout=60)
