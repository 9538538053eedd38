"""The mock interview screen driven with Pilot at 80×24: length, every question kind answered,
the report, the saved row, answers in the flashcard schedule, and readiness moving."""

from __future__ import annotations

from minigpt.store import Store
from minigpt.study import readiness


async def _wait(pilot, cond, tries=200):
    for _ in range(tries):
        if cond():
            return True
        await pilot.pause(0.05)
    return cond()


async def test_a_short_interview_from_home_to_report(tmp_path, make_app):
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("causal-masking", 1.0, reached_end=True)  # the one lesson read
    before = {x.lesson: x.figure for x in readiness.readiness_for_store(store, {}).lessons}
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("i")
        assert await _wait(pilot, lambda: type(app.screen).__name__ == "InterviewScreen")
        screen = app.screen
        await pilot.press("5", "enter")
        assert await _wait(pilot, lambda: screen.state == "asking")
        assert screen.minutes == 5 and len(screen.questions) == 3
        assert {q.lesson for q in screen.questions} == {"causal-masking"}
        assert "⏱ 0" in str(screen.query_one("#iv-status").render())
        kinds = []
        while screen.state != "report":
            q = screen.questions[screen.index]
            kinds.append(q.kind)
            if q.kind == "kata":
                await pilot.press("ctrl+n")
            else:
                await pilot.press(*"12", "enter")
                await _wait(pilot, lambda: screen.state == "revealed")
                if q.kind == "define":
                    await pilot.press("y")
                elif q.kind == "explain":
                    await pilot.press("1", "enter")
                else:
                    await pilot.press("enter")
            await pilot.pause()
        assert len(kinds) == 3 and len(set(kinds)) >= 2
        text = str(screen.query_one("#iv-body").children[0].render())
        assert "Time per question" in text and "By kind" in text
    rows = store.conn.execute("SELECT questions, minutes FROM interview").fetchall()
    assert [tuple(r) for r in rows] == [(3, 5.0)]
    rated = store.conn.execute("SELECT COUNT(*) FROM review_log WHERE mode = 'interview'").fetchone()[0]
    assert rated == sum(k != "kata" for k in kinds)
    after = {x.lesson: x.figure for x in readiness.readiness_for_store(store, {}).lessons}
    assert after["causal-masking"] > before["causal-masking"]  # its cards now have a memory


async def test_escape_mid_interview_keeps_what_was_answered(tmp_path, make_app):
    store = Store(tmp_path / "p.sqlite3")
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        from tui import navigation

        navigation.open_screen(app, "interview", 30, seed=1)
        screen = app.screen
        assert await _wait(pilot, lambda: screen.state == "asking")
        assert len(screen.questions) == 12  # 30 minutes, 2.5 each
        await pilot.press("ctrl+n")  # skip one
        await pilot.press("escape")  # leave: the report comes first
        assert await _wait(pilot, lambda: screen.state == "report")
    assert store.conn.execute("SELECT questions FROM interview").fetchone()[0] == 1
