"""The optional parts of the install (pyproject's extras), named once: what each brings, how to
tell it is installed, and the one line that says which to install when a command needs it.

Torch-free and import-free: an extra is found with ``importlib.util.find_spec``, never imported,
so asking costs nothing and a missing one is never half-imported.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from minigpt.errors import MissingExtraError

PACKAGE = "minigpt-tutor"


@dataclass(frozen=True)
class Extra:
    name: str  # pyproject's [project.optional-dependencies] key
    modules: tuple[str, ...]  # top-level modules that must all be importable
    purpose: str  # what it brings, in the learner's words


EXTRAS = (
    Extra("serve", ("textual_serve", "aiohttp"), "minigpt serve: the app in a web browser"),
    Extra("anki", ("genanki",), "export the flashcards as an Anki package (.apkg)"),
    Extra("optimizer", ("pandas", "tqdm"), "minigpt fsrs fit: the scheduler fitted to your own reviews"),
)
BY_NAME = {extra.name: extra for extra in EXTRAS}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken __spec__
        return False


def installed(name: str) -> bool:
    """Whether every module of the extra ``name`` can be imported."""
    return all(_importable(module) for module in BY_NAME[name].modules)


def install_command(name: str) -> str:
    return f"pip install '{PACKAGE}[{name}]'"


def hint(name: str, what: str) -> str:
    """The one line a command prints without the extra: ``what`` needs it, and how to install it."""
    return f"{what} needs the {name} extra: {install_command(name)}"


def require(name: str, what: str) -> None:
    """Raise MissingExtraError with the one-line hint unless the extra ``name`` is installed."""
    if not installed(name):
        raise MissingExtraError(hint(name, what))
