"""The headless ``minigpt`` commands: train, sample, eval, runs, stop, rename and sweep.

``main.py`` holds the click group and the small commands, ``train.py`` and ``sweep.py`` the two
large ones, ``support.py`` what they share (the one-line errors, ``--data-dir``). Every mistake a
user can make ends with one line ``Error: …`` and exit status 2. Torch-free until a command runs.
``python -m minigpt.cli`` runs the group (the worker launcher and torchrun start it that way).
"""

from minigpt.cli.main import main

__all__ = ["main"]
