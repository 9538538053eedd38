"""The stop signals of a trainer: SIGINT/SIGTERM set a flag that the loop reads between steps.

Torch-free (like the rest of ``minigpt.runs``), so that anything that writes a run folder (the
trainer, and the tests' stand-in trainer ``tests/helpers/minigpt_fake_trainer.py``) stops the same way.
"""

from __future__ import annotations

import signal
import threading


class StopFlag:
    """SIGINT/SIGTERM set a flag; the loop finishes its step, saves and stops. ``pending`` holds
    signals caught before the flag existed (the CLI's early handler): the first one counts."""

    def __init__(self, pending: list[int] | None = None):
        self.signal: int | None = None
        self._pending = pending
        self._previous = {}

    def __enter__(self):
        if self._pending:
            self.signal = self._pending[0]
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop right away
        self.signal = signum

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False
