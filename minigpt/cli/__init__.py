"""The headless ``minigpt`` commands: train, sample, eval, runs, stop, rename and sweep.

``main.py`` holds the click group and the small commands, ``train.py`` and ``sweep.py`` the two
large ones, ``support.py`` what they share (the one-line errors, ``--data-dir``). Every mistake a
user can make ends with one line ``Error: …`` and exit status 2. Torch-free until a command runs.
``python -m minigpt.cli`` runs the group (the worker launcher and torchrun start it that way).
"""

import sys
import types
from importlib import import_module


class _Package(types.ModuleType):
    """``main``, the click group, is imported on first use: the app's entry point (``tui.cli``)
    needs only ``support`` and ``settings`` here, and every command's imports (~0.1 s) delayed
    the app's first frame. The name stays the group even once the submodule ``main.py`` is
    imported (the import system then binds the submodule under the same name: ignored)."""

    @property
    def main(self):
        return import_module("minigpt.cli.main").main

    @main.setter
    def main(self, _submodule) -> None:
        pass


sys.modules[__name__].__class__ = _Package
__all__ = ["main"]  # the property above
