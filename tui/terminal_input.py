"""Bytes from the terminal that are not UTF-8 must not end the app.

Textual's input threads decode what the terminal sends with a strict UTF-8 decoder: one byte
such as 0xE9 (a Latin-1 terminal, an 8-bit Meta key, a paste of such text) raised
UnicodeDecodeError in the input thread and the app exited. Textual offers no option for it, so
the drivers' decoder factory is replaced, once, by one that turns a bad byte into U+FFFD (which
the app receives as a character like any other) and keeps every valid byte as it was.
"""

from __future__ import annotations

import codecs
import functools


def _lenient_decoder(encoding: str):
    return functools.partial(codecs.getincrementaldecoder(encoding), errors="replace")


def tolerate_non_utf8_input() -> None:
    """Make every Textual driver that reads the terminal decode with errors="replace"."""
    from textual.drivers import linux_driver

    drivers = [linux_driver]
    try:
        from textual.drivers import web_driver  # served to a browser (tui.browser.serve_session)

        drivers.append(web_driver)
    except ImportError:  # pragma: no cover - a Textual without it
        pass
    for module in drivers:
        if getattr(module, "getincrementaldecoder", None) is not None:
            module.getincrementaldecoder = _lenient_decoder
