"""Condition waits for tests: wait until something is true, never for a fixed time.

A fixed sleep is either too short on a busy machine (the test fails for no reason) or too long on
an idle one (the suite crawls). These wait on the condition itself, with a generous deadline that
only matters when the condition never comes, and say what they waited for when it does not.

- ``wait_until(condition, timeout, what)``: blocking, for subprocesses, files, servers.
- ``await until(pilot, condition, timeout, what)``: inside ``App.run_test()``, letting the app run
  between checks; ``pilot=None`` in plain asyncio code (the event loop runs between checks).

Both return the condition's (truthy) value, so ``recs = wait_until(lambda: read(run), ...)`` works.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

DEFAULT_TIMEOUT_S = 30.0


def _message(what: str, timeout: float, describe: Callable[[], str] | None) -> str:
    extra = f": {describe()}" if describe is not None else ""
    return f"timed out after {timeout:g} s waiting for {what}{extra}"


def wait_until(condition: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT_S, what: str = "the condition",
               step: float = 0.05, describe: Callable[[], str] | None = None) -> Any:
    """Call ``condition`` every ``step`` seconds until it returns something truthy; return that.

    Raises AssertionError after ``timeout`` seconds, naming ``what`` (and ``describe()``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_message(what, timeout, describe))
        time.sleep(step)


async def until(pilot, condition: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT_S,
                what: str = "the condition", step: float = 0.05,
                describe: Callable[[], str] | None = None) -> Any:
    """``wait_until`` for a Pilot test: the app runs (``pilot.pause``) between checks; with
    ``pilot=None``, any other coroutine does (``asyncio.sleep``)."""
    if pilot is not None:  # let the app handle what the test just did (a key, a new screen) first
        await pilot.pause()
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_message(what, timeout, describe))
        await (pilot.pause(step) if pilot is not None else asyncio.sleep(step))
