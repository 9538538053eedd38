"""Background work that can fail without closing the app.

Textual's ``@work`` closes the app when a worker raises (``exit_on_error``). Here a failure is
written, with its traceback, to ``app.log`` in the data folder, and shown to the learner as a
message in the screen that started the work; the app keeps running. Use ``background`` instead of
``@work`` for every worker, and ``run_guarded`` instead of ``run_worker`` for coroutines.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from textual import work

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

    def show() -> None:
        target = node if getattr(node, "is_attached", True) else node.app
        target.notify(markup_escape(message), title="Something went wrong", severity="error", timeout=12)

    app = node.app
    if threading.get_ident() == getattr(app, "_thread_id", None):
        show()
    else:
        try:
            app.call_from_thread(show)
        except RuntimeError:  # the app is shutting down
            pass


def _describe(fn: Callable) -> str:
    return fn.__name__.strip("_").replace("_", " ").capitalize()


def background(*, thread: bool = True, exclusive: bool = True, group: str = "default",
               what: str | None = None):
    """``@work`` that reports a failure to the screen instead of closing the app."""

    def decorate(fn: Callable) -> Callable:
        label = what or _describe(fn)
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def guarded(self, *args, **kwargs) -> Any:
                try:
                    return await fn(self, *args, **kwargs)
                except Exception as error:
                    report_failure(self, label, error)
        else:
            @functools.wraps(fn)
            def guarded(self, *args, **kwargs) -> Any:
                try:
                    return fn(self, *args, **kwargs)
                except Exception as error:
                    report_failure(self, label, error)

        return work(thread=thread, exclusive=exclusive, group=group, exit_on_error=False)(guarded)

    return decorate


def run_guarded(node, coroutine, *, what: str, **kwargs):
    """``node.run_worker(coroutine)`` whose failure is reported, not fatal."""

    async def guarded() -> Any:
        try:
            return await coroutine
        except Exception as error:
            report_failure(node, what, error)

    return node.run_worker(guarded(), exit_on_error=False, **kwargs)
