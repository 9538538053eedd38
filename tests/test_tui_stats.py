"""The study stats screen over a seeded review log: every number read back from the widgets
matches minigpt.study.stats."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import Static

from minigpt.store import Store
from minigpt.study import scheduler, stats
from minigpt.study.decks import load_decks
from minigpt.study.review import StudySession
from tests.helpers.waiting import until
from tui.study.study_card import card_title
from tui.study.study_charts import ForecastChart, glyph
from tui.study.study_stats import StudyStatsScreen


def _seed(store: Store) -> list[str]:
    """Ten cards studied over the last five days (today included), some forgotten."""
    session = StudySession(store, load_decks())
    session.set_new_per_day(1000)
    now = scheduler.utc_now()
    cards = session.queue(now)[:10]
    for back in range(4, -1, -1):
        t = now - timedelta(days=back, minutes=5)
        for i, cid in enumerate(cards):
            rating = 1 if (i + back) % 3 == 0 else 3
            session.rate(cid, rating, now=t, mode="quiz:choice" if i == 9 else "review")
    return cards


def _text(screen, ident: str) -> str:
    return str(screen.query_one(f"#stats-{ident}", Static).render())


async def test_stats_screen_shows_the_library_numbers(tmp_path, make_app):
    store = Store(tmp_path / "p.sqlite3")
    _seed(store)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StudyStatsScreen)
        forecast = stats.due_forecast(store, days=14)
        assert screen.query_one(ForecastChart).drawn == forecast
        assert f"Next 14 days: {sum(n for _, n in forecast)} reviews due" in _text(screen, "forecast-text")
        assert "new cards are not forecast" in _text(screen, "forecast-text")  # beside "To study now"
        activity = stats.reviews_per_day(store)
        assert activity.streak == 5
        heat = _text(screen, "activity")
        assert "Current streak 5 days" in heat
        assert glyph(10) in heat  # ten reviews a day
        r = stats.retention(store)
        assert f"{r.true_retention:.1%}  ({r.reviews} reviews)" in _text(screen, "retention")
        assert "Desired" in _text(screen, "retention") and "90%" in _text(screen, "retention")
        breakdown = stats.button_breakdown(store)
        lines = _text(screen, "buttons").splitlines()
        for rating, name in [(1, "Again"), (3, "Good")]:
            line = next(l for l in lines if l.startswith(f"{rating} {name}"))
            assert f" {breakdown[rating]}  (" in line
        weakest = stats.weakest_cards(store, n=10)
        assert weakest and f"{weakest[0][1]:>3} lapses" in _text(screen, "weakest")
        assert weakest[0][0] not in _text(screen, "weakest")     # a name, never the card's id
        assert card_title(load_decks()[weakest[0][0]])[:40] in _text(screen, "weakest")


async def test_stats_screen_with_no_reviews_explains_itself(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        screen = app.screen
        assert "Current streak 0 days" in _text(screen, "activity")
        assert "No scheduled reviews" in _text(screen, "retention")
        assert "No answers yet" in _text(screen, "buttons")
        assert "No lapses yet" in _text(screen, "weakest")
        app.save_screenshot(str(tmp_path / "stats.svg"))


async def test_desired_retention_is_set_here_with_its_workload_and_the_verdict_waits(tmp_path, make_app):
    from minigpt.study.stats import MIN_REVIEWS_TO_JUDGE

    store = Store(tmp_path / "p.sqlite3")
    _seed(store)
    r = stats.retention(store)
    assert 0 < r.reviews < MIN_REVIEWS_TO_JUDGE
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        screen = app.screen
        assert f"too few reviews to judge: {MIN_REVIEWS_TO_JUDGE - r.reviews} more needed" in _text(screen, "retention")
        assert "points" not in _text(screen, "retention")
        await until(pilot, lambda: "Reviews a day" in _text(screen, "workload"), 30,  # simulated in a thread
                    "the simulated workload", describe=lambda: _text(screen, "workload"))
        text = _text(screen, "workload")
        figures = [int(cell.split(": ")[1]) for cell in text.split("(simulated): ")[1].splitlines()[0].split(" · ")]
        assert "Desired retention 90%" in text and len(figures) == 4 and figures == sorted(figures)
        assert "a fit to your log needs" in text and "more reviews" in text      # FSRS fitted: not yet
        await pilot.press("minus", "minus")
        await pilot.pause()
        assert scheduler.desired_retention(store) == 0.88
        assert "Desired retention 88%" in _text(screen, "workload") and "88%" in _text(screen, "retention")
        assert StudySession(store, load_decks()).scheduler.desired_retention == 0.88   # the scheduler uses it
