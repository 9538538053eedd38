"""Background work that can fail without closing the app, and whose results come back as Messages.

Textual's ``@work`` closes the app when a worker raises (``exit_on_error``). Here a failure is
written, with its traceback, to ``app.log`` in the data folder, and shown to the learner as a
message in the screen that started the work; the app keeps running. Use ``background`` instead of
``@work`` for every worker, and ``run_guarded`` instead of ``run_worker`` for coroutines.

A worker hands its result back as a :class:`Result` Message: it returns one (or posts one with
``post_result`` while it runs), and the widget or screen that started it handles it with an
``on_...`` or ``@on(...)`` method, on the event loop, where a test can wait for it. A stale result
is dropped in one place, ``Result.is_stale``, just before it would be handled: its node has left
the app (or says it is leaving, as the lesson screen does with ``is_shown``), or a newer call of
the same exclusive worker group has started since (a thread cannot be cancelled, so Textual's
``exclusive`` alone lets the older result arrive after the newer one).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import itertools
import logging
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.message import Message

from minigpt import guarded, paths
from minigpt.text import markup_escape, printable

_log_lock = threading.Lock()


def log_path():
    return paths.user_data_dir() / "app.log"


def _write_log(what: str, error: BaseException) -> bool:
    """Append ``error`` and its traceback to ``app.log``; False if the log could not be written."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        with _log_lock, guarded.open_append(log_path()) as f:
            f.write(f"--- {what} failed\n{text}\n")
        return True
    except OSError:
        logging.getLogger("minigpt").exception("could not write the app log")
        return False


log_failure = _write_log  # the name the app uses for a failure that closes it


def report_failure(node, what: str, error: BaseException) -> None:
    """Log ``error`` and tell the learner, from the event loop or from a worker thread."""
    _write_log(what, error)
    # One line, all of it: a line break inside a path shows as ␊ instead of cutting the reason off.
    detail = printable(str(error).strip() or type(error).__name__)
    message = f"{what} failed: {detail[:300]}. The details are in {log_path()}."
    try:  # notify posts a message: safe from any thread, and it reaches the app if the node left
        node.app.notify(markup_escape(message), title="Something went wrong", severity="error", timeout=12)
    except RuntimeError:  # the app is shutting down
        pass


class Result(Message, bubble=False, no_dispatch=None):
    """What a background worker hands back to the node (widget, screen or app) that started it.

    Subclass it per kind of result (a ``@dataclass`` works) and handle it with ``on_...`` or
    ``@on(...)``. It does not bubble: it is for the node that asked. ``post_result`` stamps it with
    its worker's ticket; a Result posted any other way (a test) is never stale."""

    _receiver: Callable[[], Any] | None = None  # a weak reference to the node that asked
    _group: str = ""
    _ticket: int | None = None  # None: never superseded (a non-exclusive worker)

    def __init_subclass__(cls, **kwargs) -> None:
        kwargs.setdefault("bubble", None)  # None: inherit (Textual would reset both to its defaults)
        kwargs.setdefault("no_dispatch", None)
        super().__init_subclass__(**kwargs)

    @property
    def is_stale(self) -> bool:
        """The one place a result is dropped: its node left the app (or, like the lesson screen,
        says it is leaving with ``is_shown``), or a newer call of its worker group superseded it."""
        if self._receiver is None:
            return False
        node = self._receiver()
        if node is None:
            return True
        if not isinstance(node, App) and (not node.is_attached or getattr(node, "is_shown", True) is False):
            return True
        return self._ticket is not None and _latest.get(node, {}).get(self._group) != self._ticket

    @property
    def no_dispatch(self) -> bool:
        # Textual reads this as it takes the message off the queue, just before the handlers run:
        # the moment to decide, since a key handled meanwhile may have started a newer request.
        return self.is_stale


# The newest ticket of each node's exclusive worker groups; weak, so a closed screen is forgotten.
_latest: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
_tickets = itertools.count(1)
_running: contextvars.ContextVar[tuple[str, int | None]] = contextvars.ContextVar("tui_worker_ticket")


def _issue(node, group: str, exclusive: bool) -> int | None:
    """A ticket for a worker call (on the event loop); an exclusive one supersedes its group's last."""
    if not exclusive:
        return None
    ticket = next(_tickets)
    _latest.setdefault(node, {})[group] = ticket
    return ticket


def post_result(node, result: Result) -> bool:
    """Post ``result`` to ``node``, stamped with the ticket of the ``background`` worker running
    this code (from its thread or task). Thread-safe; False if the node is closed."""
    result._receiver = weakref.ref(node)
    result._group, result._ticket = _running.get(("", None))
    try:
        return node.post_message(result)
    except RuntimeError:  # the node left the app (no app to reach) or the app is closing: stale
        return False


def _describe(fn: Callable) -> str:
    return fn.__name__.strip("_").replace("_", " ").capitalize()


def background(*, thread: bool = True, exclusive: bool = True, group: str = "default",
               what: str | None = None):
    """``@work`` that reports a failure to the screen instead of closing the app; a
    :class:`Result` the worker returns is posted back to the node that started it."""

    def decorate(fn: Callable) -> Callable:
        label = what or _describe(fn)
        if not thread and not inspect.iscoroutinefunction(fn):
            raise TypeError(f"{fn.__name__} is not async: it needs thread=True")

        def finish(self, value) -> Any:
            if isinstance(value, Result):
                post_result(self, value)
            return value

        if inspect.iscoroutinefunction(fn):
            async def job(self, ticket, *args, **kwargs) -> Any:
                _running.set((group, ticket))  # (a task has a context of its own)
                try:
                    return finish(self, await fn(self, *args, **kwargs))
                except Exception as error:
                    report_failure(self, label, error)
        else:
            def job(self, ticket, *args, **kwargs) -> Any:
                token = _running.set((group, ticket))  # (pool threads are reused: reset after)
                try:
                    return finish(self, fn(self, *args, **kwargs))
                except Exception as error:
                    report_failure(self, label, error)
                finally:
                    _running.reset(token)

        @functools.wraps(fn)
        def start(self, *args, **kwargs):
            ticket = _issue(self, group, exclusive)
            return self.run_worker(functools.partial(job, self, ticket, *args, **kwargs), name=fn.__name__,
                                   group=group, description=label, exclusive=exclusive,
                                   exit_on_error=False, thread=thread)

        return start

    return decorate


def run_guarded(node, coroutine, *, what: str, **kwargs):
    """``node.run_worker(coroutine)`` whose failure is reported, not fatal."""

    async def guarded() -> Any:
        try:
            return await coroutine
        except Exception as error:
            report_failure(node, what, error)

    return node.run_worker(guarded(), exit_on_error=False, **kwargs)


# -- warm-ups that give way to keys -------------------------------------------------------------
GIVE_WAY_S = 0.5  # a warm-up's next import waits until no key or click has come for this long
# Giving way ends this long after the first warm-up starts: a learner typing on still gets the
# imports and, after them, the heap frozen out of the collector's way (tui.app._warmed), whose
# full passes otherwise hit keys later on.
MAX_WAIT_S = 10.0


class GiveWay:
    """Lets a warm-up wait while the learner is pressing keys.

    Importing torch in a thread holds the GIL for most of its ~1.5 s: a key handled meanwhile gets
    half the interpreter, so help answered 1.8× slower in the first seconds after launch. A
    warm-up calls ``wait_for_quiet`` before each piece of its work (each module of the prewarm
    list, the decks): it sleeps until no input has come for ``GIVE_WAY_S`` (the app calls
    ``input_seen`` on each key and click), for ``MAX_WAIT_S`` in all.

    It waits between pieces, in the warm-up's own thread, holding no lock. (A first version
    waited inside an import hook: Python calls a finder with its global import lock held, so every
    other thread's imports, the playground's model loader among them, stalled while keys came;
    a served GPT-2 sat at "Loading…" for over 30 s under load.)"""

    def __init__(self) -> None:
        self.last_input = 0.0
        self._until: float | None = None  # when giving way ends (MAX_WAIT_S after the first wait)
        self._clock, self._sleep = time.monotonic, time.sleep  # (a test gives its own)

    def input_seen(self) -> None:
        self.last_input = self._clock()

    def wait_for_quiet(self) -> None:
        if self._until is None:
            self._until = self._clock() + MAX_WAIT_S
        while (quiet := self._clock() - self.last_input) < GIVE_WAY_S and self._clock() < self._until:
            self._sleep(min(GIVE_WAY_S - quiet, max(self._until - self._clock(), 0.0)) + 0.001)
