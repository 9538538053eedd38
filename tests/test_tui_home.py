"""The home screen never waits on the slow parts of its glance (the card queue reads every deck),
and the heavy imports are warmed in a thread once it is up."""

from __future__ import annotations

import sys
import threading
import time
from types import SimpleNamespace

from tests.helpers.waiting import until
from tui.common.glance import Glance


async def test_first_frame_and_keys_do_not_wait_for_the_card_count(monkeypatch, tmp_path, make_app):
    release = threading.Event()

    def slow_glance(store):
        release.wait(10)  # the decks take their time
        return Glance(lessons_read=0, lessons_total=24, cards_due=20, last_run=None)

    monkeypatch.setattr("tui.home.home.glance", slow_glance)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        started = time.monotonic()
        await pilot.pause()
        glance = app.screen.query_one("#glance")
        assert "counting" in str(glance.render())  # shown at once, counted later
        await pilot.press("l")  # the keys answer meanwhile
        await pilot.pause()
        assert type(app.screen).__name__ == "LessonsScreen"
        assert time.monotonic() - started < 5
        release.set()
        await pilot.press("escape")
        await until(pilot, lambda: "Cards to study 20" in str(glance.render()), 60, '"Cards to study 20" in str(glance.render())')
        assert "Cards to study 20" in str(glance.render())


async def test_the_count_reaches_the_home_screen_as_a_message(monkeypatch, make_app):
    """The glance is counted in a worker and handed back as a ``HomeScreen.Counted`` Message
    (tui.workers.Result), which a test can wait for; its handler then shows it."""
    from tui.home.home import HomeScreen

    monkeypatch.setattr("tui.home.home.glance", lambda store: Glance(
        lessons_read=2, lessons_total=24, cards_due=7, last_run=None))
    seen = []
    app = make_app()
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        counted = await until(pilot, lambda: next((m for m in seen if isinstance(m, HomeScreen.Counted)), None),
                              30, "the Counted message")
        assert counted.glance.cards_due == 7
        glance = app.screen.query_one("#glance")
        await until(pilot, lambda: "Cards to study 7" in str(glance.render()), 30, "the count on screen")
        assert "Lessons read   2 / 24" in str(glance.render())


async def test_the_first_frame_is_drawn_before_anything_is_counted(monkeypatch, make_app):
    """The glance (readiness, katas, the interview plan), the decks and the reviews' count start
    only once home has been drawn: a counting thread started before took the GIL from the first
    frame half the time (bench_latency.py's first frame)."""
    import minigpt.study.decks
    import tui.training.run_alerts
    from tui.app import TutorApp
    from tui.home.home import HomeScreen

    events = []
    display = TutorApp._display

    def drawn(app, screen, renderable):
        if isinstance(screen, HomeScreen) and renderable is not None:
            events.append("home drawn")
        display(app, screen, renderable)

    monkeypatch.setattr(TutorApp, "_display", drawn)
    monkeypatch.setattr("tui.home.home.glance", lambda store: events.append("glance") or Glance(
        lessons_read=0, lessons_total=24, cards_due=1, last_run=None))
    monkeypatch.setattr(minigpt.study.decks, "cached_decks", lambda *a, **k: events.append("decks") or [])
    monkeypatch.setattr(tui.training.run_alerts, "watch_reviews", lambda app: events.append("reviews"))
    monkeypatch.setattr("tui.app.PREWARM_AFTER_S", 0.05)  # the warm-ups' pause, shortened here
    monkeypatch.setattr("tui.app.PREWARM", ())
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: {"glance", "decks", "reviews"} <= set(events), 30, "the counts",
                    describe=lambda: str(events))
    assert events[0] == "home drawn", events


async def test_filling_the_glance_moves_nothing_on_home(monkeypatch, make_app):
    """The glance's column has its full height while it says "counting…", so the counts filling it
    move no line of the screen."""
    release = threading.Event()

    def slow_glance(store):
        release.wait(10)
        return Glance(lessons_read=3, lessons_total=24, cards_due=20, last_run="gpt-seed-1\nstep 40",
                      katas_passed=1, katas_total=9, ready=0.5)

    monkeypatch.setattr("tui.home.home.glance", slow_glance)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        home = app.screen
        layout = {w.id: w.region for w in home.query("#glance, #area-list, #area-description, #home-intro")}
        release.set()
        glance = home.query_one("#glance")
        await until(pilot, lambda: "Cards to study 20" in str(glance.render()), 30, "the glance filled")
        await pilot.pause()
        assert {w.id: w.region for w in home.query("#glance, #area-list, #area-description, #home-intro")} == layout


async def test_home_looks_the_same_before_and_after_the_other_screens_styles_are_read(monkeypatch, make_app):
    """The first frame parses app.tcss only (all of home's rules are there); the other screens'
    files are read once it is drawn, before any other screen opens, and change nothing on home."""
    from tui.app import TutorApp

    looks = []
    read_later = TutorApp._after_first_frame

    def home_styles(app) -> list:
        return [(type(node).__name__, node.id, node._css_styles.css) for node in app.screen.walk_children()]

    def after_first_frame(app):
        looks.append(home_styles(app))
        read_later(app)
        looks.append(home_styles(app))

    monkeypatch.setattr(TutorApp, "_after_first_frame", after_first_frame)
    app = make_app()
    assert [str(p) for p in app.css_path] == [str(TutorApp.CSS_PATH[0])]
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(looks) == 2, 30, "the other styles read")
        assert all(app.stylesheet.has_source(str(path)) for path in TutorApp.LATER_CSS_PATHS)
        assert len(TutorApp.LATER_CSS_PATHS) >= 5 and looks[0] == looks[1]
        await pilot.press("k")  # a screen styled by another file (katas.tcss: #kata-description)
        await until(pilot, lambda: type(app.screen).__name__ == "KatasScreen", 30, "the katas list")
        assert app.screen.query_one("#kata-description").styles.height.value == 2


def test_the_glance_counts_cards_without_computing_the_numeric_ones(monkeypatch, tmp_path):
    """Counting due cards and readiness needs the cards' ids and lessons only: the glance reads the
    decks with numeric cards described (computing them imports torch, seconds of CPU right after
    the first frame), with the same counts; a deck that cannot be read leaves its parts out."""
    from minigpt.errors import DeckError
    from minigpt.store import Store
    from minigpt.study import decks, numeric
    from minigpt.study.review import StudySession
    from tui.common.glance import glance

    store = Store(tmp_path / "p.sqlite3")
    # (the described decks hold the computed ones' ids: tests/test_study_templates.py)
    full = StudySession(store, decks.load_decks(numbers=False)).counts().total
    computed = []
    monkeypatch.setattr(decks, "_cache", {})
    monkeypatch.setattr(numeric, "generate", lambda *a, **k: computed.append(a) or 1 / 0)
    g = glance(store)
    assert not computed and g.cards_due == full and g.ready is not None

    def broken(*args, **kwargs):
        raise DeckError("cards.toml: not valid TOML")

    monkeypatch.setattr(decks, "cached_decks", broken)
    g = glance(store)
    assert g.cards_due is None and g.ready is not None


PREWARM_CHECK = """
import asyncio, sys
from minigpt.store import Store
from tui.app import TutorApp

async def main():
    app = TutorApp(store=Store(sys.argv[1]))
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(600):  # a script of its own (tests.helpers.waiting is not importable here)
            await pilot.pause(0.05)
            if "minigpt.teaching.attention" in sys.modules and "textual_plotext" in sys.modules:
                break
        print("warmed:", "minigpt.teaching.attention" in sys.modules and "textual_plotext" in sys.modules)

asyncio.run(main())
"""


def test_heavy_modules_are_imported_after_the_first_frame(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", PREWARM_CHECK, str(tmp_path / "p.sqlite3")], capture_output=True,
                         text=True, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, timeout=120)
    assert out.returncode == 0, out.stderr
    # (That the path to the first frame imports no torch is tests/test_architecture.py's check.)
    assert "warmed: True" in out.stdout, out.stdout


async def test_home_shows_the_interview_plan_only_when_a_date_is_set(tmp_path, make_app):
    from datetime import date, timedelta

    from minigpt.store import Store
    from minigpt.study import plan
    from minigpt.study.decks import cached_decks
    from tui.common.glance import glance

    store = Store(tmp_path / "p.sqlite3")
    assert glance(store).plan is None                       # without a date nothing changes
    plan.set_plan(store, date.today() + timedelta(days=14), ("training", "layer-norm"))
    g = glance(store)
    share = -(-sum(1 for c in cached_decks() if c.lesson in ("training", "layer-norm")) // 13)  # 13 days, the eve for reviews
    reviews = g.plan[2].rsplit(" + ", 1)[1]
    assert g.plan == ["Interview in 14 d", "[green]on pace[/green]", f"today: {share} new + {reviews}"]
    plan.set_plan(store, date.today() + timedelta(days=3), ())  # every lesson in three days: off pace
    off = glance(store).plan
    assert off[0] == "Interview in 3 d" and off[1].startswith("[red]off pace: ")
    assert off[1].endswith(" new a day needed (now 20)[/red]") and "behind" not in " ".join(off)
    plan.set_plan(store, date.today() + timedelta(days=14), ("training", "layer-norm"))
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        glance_box = app.screen.query_one("#glance")
        await until(pilot, lambda: f"today: {share} new" in str(glance_box.render()), 60, "today's work on home")
        text = str(glance_box.render())
        assert "Interview in 14 d" in text and "on pace" in text


async def test_readiness_block_and_w_opens_the_weakest_lessons_next_step(tmp_path, make_app):
    from minigpt.lessons import load_lessons
    from minigpt.store import Store

    first = load_lessons()[0]
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position(first.id, 1.0, reached_end=True)  # read: it leaves the weakest three
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        glance = app.screen.query_one("#glance")
        await until(pilot, lambda: "Ready" in str(glance.render()), what="the glance's readiness")
        text = str(glance.render())
        assert "Ready" in text and "Weakest" in text
        weakest = app.screen._glance.weakest
        assert len(weakest) == 3 and first.id not in [w[0] for w in weakest]
        assert weakest[0][3] == "read"  # an unread lesson's next step is reading it
        await pilot.press("w")
        await pilot.pause()
        assert type(app.screen).__name__ == "LessonScreen"


async def test_back_from_help_the_glance_is_not_counted_again_but_after_a_write_it_is(monkeypatch, make_app):
    """A recount reads every lesson, deck and kata in a thread; after help (nothing changed) it only
    slowed the next key (bench_latency.py's help p95). After a write to the progress database it
    is needed."""
    counts = []

    def counting_glance(store):
        counts.append(1)
        return Glance(lessons_read=len(store.lessons_read()), lessons_total=24, cards_due=3, last_run=None)

    monkeypatch.setattr("tui.home.home.glance", counting_glance)
    # The glance also counts again when the minute turns (cards fall due): a slow run of this test
    # that crossed a minute counted once more. The minute stands still here.
    monkeypatch.setattr("tui.home.home.time", SimpleNamespace(time=lambda: 1_800_000_000.0))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        glance = home.query_one("#glance")
        await until(pilot, lambda: "Cards to study 3" in str(glance.render()), what="the first count")
        # A new database's one write at start (migration 3's re-grade marked done, after the decks
        # are read in a thread) is a real change: let it land and be counted before measuring.
        from minigpt.settings import REGRADE
        await until(pilot, lambda: app.store.get_setting(REGRADE.key) == "done", what="the start-up re-grade")
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("escape")

        def counted_up_to_date() -> bool:  # the recount that write called for has run (a loaded
            # machine started its thread after a fixed 0.2 s pause had already read the count)
            counting = any(w.group == "glance" and not w.is_finished for w in app.workers)
            return app.screen is home and not counting and home._glance_key() == home._counted_for

        await until(pilot, counted_up_to_date, what="the recount after the start-up write")
        first = len(counts)
        assert first >= 1
        for _ in range(3):
            await pilot.press("question_mark")
            await pilot.pause()
            assert type(app.screen).__name__ == "HelpScreen"
            await pilot.press("escape")
            await pilot.pause()
        await pilot.pause(0.2)
        assert len(counts) == first
        app.store.save_lesson_position("query-key-value", 1.0, reached_end=True)  # a lesson read
        await pilot.press("question_mark")
        await pilot.pause()
        await pilot.press("escape")
        await until(pilot, lambda: len(counts) > first, 60, 'len(counts) > first')
        assert len(counts) == first + 1


def test_the_heap_is_frozen_once_imports_and_decks_are_in(monkeypatch, make_app):
    """The garbage collector's full passes over the warmed heap were the slow tail of a key press;
    the app freezes what is alive once both warm-ups are done (never in a headless test app)."""
    import gc

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    app = make_app()
    monkeypatch.setattr(type(app), "is_headless", property(lambda self: False))
    app._warmed("imports")
    assert frozen == []  # the decks are not in yet
    app._warmed("decks")
    assert frozen == [True]


async def test_home_counts_again_after_another_app_instance_passed_a_kata(tmp_path, make_app):
    """A kata passed in a second app instance (another connection to the same file) changes what
    home depends on, so returning to home recounts "Katas passed"."""
    from minigpt.katas import history
    from minigpt.store import Store

    app = make_app(store=Store(tmp_path / "p.sqlite3"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        home = app.screen
        before = home._glance_key()
        other = Store(tmp_path / "p.sqlite3")
        history.record_attempt(other, "softmax", passed=True, cases_failed=0, cases_total=5)
        other.close()
        after = home._glance_key()
        assert after[1] != before[1] and after[0] == before[0]  # not this app's write: another's


async def test_watch_says_it_opens_the_run_and_counts_nothing_meanwhile(monkeypatch, make_app):
    """`minigpt watch` (initial="run:…"): home says which run is on its way instead of "counting…",
    and leaves the CPU to the run's panel; if the panel does not come, home counts as usual."""
    from tui.app import TutorApp

    counted = []
    monkeypatch.setattr("tui.home.home.glance", lambda store: counted.append(1) or Glance(0, 24, None, None))
    monkeypatch.setattr(TutorApp, "_open_initial", lambda self: None)  # the panel still on its way
    app = make_app(initial="run:/somewhere/runs/gpt-seed-1337")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        glance = app.screen.query_one("#glance")
        assert "opening run gpt-seed-1337 …" in str(glance.render()) and not counted
        app._initial = None  # the run could not be opened: home is what the learner sees
        app.screen._follow_run()
        await until(pilot, lambda: "Lessons read" in str(glance.render()), 10, "the glance counted")


async def test_home_recounts_while_shown_when_a_second_instance_passes_a_kata(make_app, tmp_path):
    """Home and the Katas screen agree: a kata passed in a second app instance (another connection
    to the database) reaches the home count without leaving home."""
    from minigpt.katas.catalogue import load_katas
    from minigpt.katas.history import record_attempt
    from minigpt.store import Store

    app = make_app()
    total = len(load_katas())
    async with app.run_test(size=(80, 24)) as pilot:
        glance = app.screen.query_one("#glance")
        await until(pilot, lambda: f"Katas passed   0 / {total}" in str(glance.render()), 30, "the first count")
        other = Store(tmp_path / "progress.sqlite3")
        record_attempt(other, load_katas()[0].name, passed=True, cases_failed=0, cases_total=3)
        other.close()
        await until(pilot, lambda: f"Katas passed   1 / {total}" in str(glance.render()), 30,
                    "the count from the other instance", describe=lambda: str(glance.render()))
