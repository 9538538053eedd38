"""A failing background worker shows a message and leaves the app running; a worker's result
reaches the widget that asked as a Message, and a stale one is dropped (tui.workers)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from textual import on
from textual.app import App
from textual.widgets import Static

from minigpt import paths
from minigpt.lessons import load_lessons
from tests.helpers.waiting import until
from tui.lessons.snippet import SnippetBlock
from tui.workers import Result, background, post_result


async def _wait(pilot, condition, seconds: float = 15.0) -> bool:
    try:
        await until(pilot, condition, seconds, "the condition", 0.1)
    except AssertionError:
        return bool(condition())
    return True


def _error_notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications if n.severity == "error"]


async def test_a_thread_worker_that_raises_is_reported_and_the_app_keeps_running(tmp_path, monkeypatch, make_app):
    import tui.playground.playground as pg

    def boom(*_args, **_kwargs):
        raise RuntimeError("injected failure in the loader")

    monkeypatch.setattr(pg, "load_for_playground", boom)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_area("playground")
        assert await _wait(pilot, lambda: any("injected failure" in m for m in _error_notes(app)))
        assert app.is_running
        await pilot.press("escape")  # the app still answers keys
        await pilot.pause()
        assert app.is_running
    log = (paths.user_data_dir() / "app.log").read_text()
    assert "injected failure in the loader" in log and "Traceback" in log


async def test_an_async_worker_that_raises_is_reported_and_the_app_keeps_running(tmp_path, monkeypatch, make_app):
    import tui.lessons.snippet as snippet_module

    def boom(_code, **_options):
        raise OSError("injected failure starting python")

    # The snippet runs the lessons' bounded runner in a guarded background worker.
    monkeypatch.setattr(snippet_module, "run_snippet", boom)
    lesson = next(lesson for lesson in load_lessons() if lesson.snippets())
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lesson.id)
        await pilot.pause()
        snippet = app.screen.query(SnippetBlock).first()
        snippet.action_run()
        assert await _wait(pilot, lambda: any("injected failure" in m for m in _error_notes(app)))
        await asyncio.sleep(0)
        assert app.is_running
    assert "injected failure starting python" in (paths.user_data_dir() / "app.log").read_text()


class Echo(Static):
    """A widget whose worker waits for its gate, then hands back the value it was asked for."""

    @dataclass
    class Done(Result):
        value: str

    def __init__(self) -> None:
        super().__init__("")
        self.gates: dict[str, threading.Event] = {}
        self.started: list[str] = []
        self.posted: list[str] = []  # in the order the workers posted their results
        self.handled: list[str] = []

    def ask(self, value: str) -> None:
        self.gates[value] = threading.Event()
        self._work(value)

    @background(group="echo")
    def _work(self, value: str) -> None:
        self.started.append(value)
        self.gates[value].wait(10)
        post_result(self, self.Done(value))  # (what returning a Result does)
        self.posted.append(value)

    @on(Done)
    def _done(self, message: Done) -> None:
        self.handled.append(message.value)
        self.update(message.value)


class EchoApp(App):
    def compose(self):
        yield Echo()


async def test_a_result_overtaken_by_a_newer_request_is_dropped_and_the_newer_one_shown():
    app = EchoApp()
    async with app.run_test() as pilot:
        echo = app.query_one(Echo)
        # The older result arrives first: dropped, though nothing newer is shown yet.
        echo.ask("first")
        await until(pilot, lambda: "first" in echo.started, 10, "the first worker to start")
        echo.ask("second")  # (a worker cancelled before it started would never return at all)
        echo.gates["first"].set()
        await until(pilot, lambda: echo.posted == ["first"], 10, "the first result to be posted")
        echo.gates["second"].set()
        await until(pilot, lambda: "second" in echo.handled, 10, "the second result")
        assert echo.handled == ["second"] and str(echo.render()) == "second"
        # The older result arrives last: dropped, the newer one stays.
        echo.ask("third")
        await until(pilot, lambda: "third" in echo.started, 10, "the third worker to start")
        echo.ask("fourth")
        echo.gates["fourth"].set()
        await until(pilot, lambda: "fourth" in echo.handled, 10, "the fourth result")
        echo.gates["third"].set()
        await until(pilot, lambda: "third" in echo.posted, 10, "the third result to be posted")
        echo.ask("fifth")  # its result queues behind the third's, so the third's was dealt with first
        echo.gates["fifth"].set()
        await until(pilot, lambda: "fifth" in echo.handled, 10, "the fifth result")
        assert echo.handled == ["second", "fourth", "fifth"] and str(echo.render()) == "fifth"


async def test_a_result_reaches_the_widget_that_asked_as_a_message():
    seen = []
    app = EchoApp()
    async with app.run_test(message_hook=seen.append) as pilot:
        echo = app.query_one(Echo)
        echo.ask("hello")
        echo.gates["hello"].set()
        message = await until(pilot, lambda: next((m for m in seen if isinstance(m, Echo.Done)), None), 10,
                              "the Done message")
        assert message.value == "hello" and not message.is_stale
        await until(pilot, lambda: echo.handled == ["hello"], 10, "its handler")


async def test_a_result_for_a_node_on_its_way_out_is_dropped():
    app = EchoApp()
    async with app.run_test() as pilot:
        echo = app.query_one(Echo)
        echo.is_shown = False  # what the lesson screen says once the learner is leaving it
        echo.ask("late")
        echo.gates["late"].set()
        await until(pilot, lambda: echo.posted == ["late"], 10, "the result to be posted")
        await pilot.pause()
        echo.post_message(Echo.Done("posted by the test"))  # not a worker's: never stale; queued behind
        await until(pilot, lambda: echo.handled, 10, "the test's own message")
        assert echo.handled == ["posted by the test"]


def _give_way_on_a_clock(keys_keep_coming: bool = False):
    """A GiveWay on a clock of its own: sleeping moves it on (and, if asked, a key comes each time)."""
    from tui.workers import GiveWay

    give_way, now, slept = GiveWay(), [100.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds
        if keys_keep_coming:
            give_way.input_seen()

    give_way._clock, give_way._sleep = (lambda: now[0]), sleep
    return give_way, now, slept


def test_a_warm_up_waits_until_the_keys_stop():
    """The torch warm-up held the GIL while help answered (1.8× slower just after launch): the
    warm-up's next piece starts only once no key has come for GIVE_WAY_S, and at once when quiet."""
    from tui import workers

    give_way, now, slept = _give_way_on_a_clock()
    give_way.input_seen()  # a key, just now
    give_way.wait_for_quiet()
    assert now[0] - give_way.last_input >= workers.GIVE_WAY_S and slept
    slept.clear()
    now[0] += 5  # quiet for long enough: no wait at all
    give_way.wait_for_quiet()
    assert slept == []


def test_a_learner_who_keeps_typing_still_gets_the_warm_up_done():
    from tui import workers

    give_way, _clock, slept = _give_way_on_a_clock(keys_keep_coming=True)
    give_way.input_seen()
    for _module in ("torch", "torch.nn", "textual_plotext"):  # each waits; the cap is for them all
        give_way.wait_for_quiet()
    assert workers.MAX_WAIT_S <= sum(slept) < workers.MAX_WAIT_S + workers.GIVE_WAY_S


async def test_other_threads_import_while_the_apps_warm_up_gives_way(make_app, tmp_path, monkeypatch):
    """The app's warm-up, waiting for the keys to stop, holds no lock. The first version waited
    inside an import hook, which Python calls with its global import lock held: every other
    thread's imports stalled while keys came, and a served GPT-2 sat at "Loading…" past 30 s
    under load. Here input keeps coming (from a thread, every 20 ms, against a 5 s give-way, so a
    loaded machine cannot open a quiet gap): another thread's import must finish while the
    warm-up is still giving way, and the warm-up's own import follows once the input stops."""
    import sys
    import threading
    from importlib import import_module

    from tests.helpers.waiting import until
    from tui import workers

    monkeypatch.setattr(workers, "MAX_WAIT_S", 120.0)
    monkeypatch.setattr(workers, "GIVE_WAY_S", 5.0)
    monkeypatch.setattr("tui.app.PREWARM_AFTER_S", 0.05)
    monkeypatch.setattr("tui.app.PREWARM", ("give_way_probe_warm",))
    for name in ("give_way_probe_warm", "give_way_probe_other"):
        (tmp_path / f"{name}.py").write_text("VALUE = 3\n")
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    app = make_app()
    typing = threading.Event()

    def keys():
        while not typing.is_set():
            app.give_way.input_seen()
            typing.wait(0.02)

    feeder = threading.Thread(target=keys)
    async with app.run_test(size=(80, 24)) as pilot:
        feeder.start()
        try:
            await until(pilot, lambda: app.give_way._until is not None, 30, "the warm-up giving way")
            other = threading.Thread(target=import_module, args=("give_way_probe_other",))
            other.start()
            await until(pilot, lambda: not other.is_alive(), 30, "another thread's import, while keys come")
            assert "give_way_probe_warm" not in sys.modules, "the warm-up should still be giving way"
        finally:
            typing.set()
            feeder.join()
        await until(pilot, lambda: "give_way_probe_warm" in sys.modules, 30, "the warm-up, once keys stop")


async def test_keys_and_clicks_reach_the_warm_ups_clock(make_app, monkeypatch):
    monkeypatch.setattr("tui.app.PREWARM_AFTER_S", 600)  # (no warm-up to wait for at the end)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        before = app.give_way.last_input
        await pilot.press("down")
        assert app.give_way.last_input > before
        seen = app.give_way.last_input
        await pilot.click(offset=(1, 1))
        assert app.give_way.last_input > seen
