"""Fixtures for the browser tests: a Chromium (or a clear skip, or under CI a failure) and servers.

Without a Chromium these tests skip, saying how to get one; under ``CI=true`` a missing browser or
a missing Playwright package fails the run instead, so CI cannot pass by testing nothing.
"""

from __future__ import annotations

import os

import pytest

from tests.browser.harness import ServedTutor, find_chromium, launch_chromium

UNDER_CI = os.environ.get("CI", "").lower() == "true"


def _unavailable(reason: str):
    if UNDER_CI:
        pytest.fail(f"browser tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        _unavailable("no Chromium found (install Debian's `chromium` package, or set MINIGPT_CHROMIUM "
                     "to a Chromium binary)")
    return path


@pytest.fixture(scope="module")
def browser(chromium_path):
    # Module scope, not session: Playwright's sync API keeps an event loop running on this thread
    # while it is open, and the async tests of other modules need the thread to themselves.
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed (pip install playwright; "
                     "its own browser download is not needed)")
    with sync_playwright() as p:
        chromium = launch_chromium(p, chromium_path)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def served(request, tmp_path_factory):
    """One ``minigpt serve`` for a test module, on its own data folder, with default (safe) flags;
    a module's ``SERVED_ENVIRONMENT`` (a dict) is added to the server's environment."""
    folder = tmp_path_factory.mktemp("served")
    server = ServedTutor(folder / "data", log_path=folder / "serve.log",
                         env=getattr(request.module, "SERVED_ENVIRONMENT", None)).start()
    yield server
    server.stop()
    from minigpt.serving_policy import stop_runs_in

    stop_runs_in(folder / "data")  # shared sessions' runs outlive the server by design; not a test's
