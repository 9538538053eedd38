"""The katas in the app, as a learner meets them at 80×24: from the causal-masking lesson to the
attention kata, a version without the scale (its mistake named), the fix, the pass, the stats.

Grading runs in this process here (monkeypatched), to keep the suite quick: the bounded runner
has its own test in tests/test_katas.py.
"""

from __future__ import annotations

from textual.widgets import Static, TextArea

from minigpt.katas import history
from minigpt.katas.catalogue import load_katas
from minigpt.katas.grading import grade_function
from tests.helpers.waiting import until
from tui import navigation

NO_SCALE = """import torch


def attention(q, k, v, causal=False):
    s = q @ k.transpose(-2, -1)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v
"""
FIXED = NO_SCALE.replace("s = q @ k.transpose(-2, -1)", "s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5")


async def _until(pilot, condition, what: str, timeout: float = 30.0):
    await until(pilot, condition, timeout, what)
    await pilot.pause()  # let the screen finish mounting (its header) before the next key


def _text(screen, ident: str) -> str:
    return str(screen.query_one(ident, Static).render())


async def test_attention_kata_from_its_lesson_to_the_stats(app, monkeypatch):
    monkeypatch.setattr("minigpt.katas.sandbox.grade_source", lambda kata, code, **kw: grade_function(kata, code))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.open_lesson("causal-masking")
        await _until(pilot, lambda: navigation.is_screen(app.screen, "lesson"), "the lesson")
        await pilot.press("c")  # the lesson's two katas: the list, attention first (lesson order)
        await _until(pilot, lambda: navigation.is_screen(app.screen, "katas") and app.screen.query("#kata-list"),
                     "the lesson's katas")
        await pilot.pause()
        assert [o.id for o in app.screen.query_one("#kata-list").options] == ["attention", "causal_padding_mask"]
        await pilot.press("enter")
        await _until(pilot, lambda: navigation.is_screen(app.screen, "kata"), "the kata screen")
        screen = app.screen
        editor = screen.query_one(TextArea)
        assert editor.has_focus and "def attention(q: torch.Tensor" in editor.text
        assert editor.language == "python"

        editor.load_text(NO_SCALE)
        await pilot.press("ctrl+r")
        await _until(pilot, lambda: screen.report is not None, "the first grading")
        result = _text(screen, "#kata-result")
        assert "the scores were not divided by √d_k" in result and "First failing case" in result
        assert "expected" in result and "obtained" in result
        record = history.record(app.store, "attention")
        assert (record.attempts, record.passes) == (1, 0)

        await pilot.press("ctrl+b")
        assert "Hint 1:" in _text(screen, "#kata-hints")
        await pilot.press("ctrl+f")  # no diff against the reference before a pass
        assert screen.extra_text == ""

        editor.load_text(FIXED)
        screen.report = None
        await pilot.press("ctrl+r")
        await _until(pilot, lambda: screen.report is not None, "the second grading")
        assert "All 7 cases pass" in _text(screen, "#kata-result") and screen.passed
        await pilot.press("ctrl+f")
        assert "+++ the reference" in screen.extra_text and "-    s = q @ k.transpose(-2, -1) / q.shape" in screen.extra_text
        record = history.record(app.store, "attention")
        assert (record.attempts, record.passes, record.hints_used, record.gave_up) == (2, 1, 1, False)
        assert record.seconds_to_pass is not None and record.draft == FIXED  # saved when run

        await pilot.press("escape", "escape", "escape")  # out of the editor, the kata, the list: the lesson
        await _until(pilot, lambda: navigation.is_screen(app.screen, "lesson"), "the lesson again")
        navigation.open_screen(app, "stats")
        await _until(pilot, lambda: navigation.is_screen(app.screen, "stats"), "the stats screen")
        await pilot.pause()
        total = len(load_katas())
        assert f"Katas passed 1 of {total}" in _text(app.screen, "#stats-katas").replace("\n", " ")
        assert "attention" in _text(app.screen, "#stats-katas")


async def test_giving_up_is_recorded_and_the_lesson_list_counts_passed_katas(app):
    from minigpt.katas.catalogue import kata_by_name

    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        navigation.open_screen(app, "katas", lesson="multi-head-attention")
        await _until(pilot, lambda: navigation.is_screen(app.screen, "katas") and app.screen.query("#kata-list"), "the katas list")
        await pilot.pause()
        listed = [o.id for o in app.screen.query_one("#kata-list").options]
        assert listed == ["split_heads", "merge_heads", "multi_head_attention"]
        await pilot.press("enter")
        await _until(pilot, lambda: navigation.is_screen(app.screen, "kata"), "the kata")
        screen = app.screen
        await pilot.press("ctrl+g")  # asks first
        assert not screen.solution_shown
        await pilot.press("ctrl+g")
        assert screen.solution_shown and "def split_heads" in screen.extra_text
        assert history.record(app.store, "split_heads").gave_up

    history.record_attempt(app.store, "merge_heads", passed=True, cases_failed=0, cases_total=4)
    counts = history.lesson_katas(app.store, [kata_by_name(n) for n in ("split_heads", "merge_heads")],
                                   after_reading=False)
    assert counts == {"multi-head-attention": (1, 2)}


async def test_a_served_session_refuses_to_run_kata_code_without_allow_code(app, monkeypatch):
    monkeypatch.setenv("MINIGPT_SERVED", "1")
    monkeypatch.delenv("MINIGPT_ALLOW_CODE", raising=False)
    from minigpt.katas.catalogue import kata_by_name

    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        navigation.open_screen(app, "kata", kata_by_name("softmax"))
        await pilot.pause()
        app.screen.query_one(TextArea).load_text("def softmax(x, dim=-1):\n    return x\n")
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert "--allow-code" in _text(app.screen, "#kata-result") and not app.screen.running
