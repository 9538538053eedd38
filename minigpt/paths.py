"""Where bundled content and per-user data live.

Bundled content (the names dataset, lessons, the default checkpoint) sits at the top of the
repository during development and under ``minigpt/_bundled`` in an installed wheel; both layouts
are searched so that an editable install and a plain ``pip install .`` behave the same.
User data (the progress database, which holds the settings too, and training runs) goes under
platformdirs folders unless ``MINIGPT_DATA_DIR`` (or the CLI's ``--data-dir``) points elsewhere;
what can be computed again (worked examples' output) goes under the platformdirs cache folder.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
APP_NAME = "minigpt-tutor"


def _bundled(name: str) -> Path:
    installed = _PACKAGE_DIR / "_bundled" / name
    if installed.exists():
        return installed
    return _PACKAGE_DIR.parent / name


def data_dir() -> Path:
    """Folder holding the embedded datasets."""
    return _bundled("data")


def default_dataset() -> Path:
    return data_dir() / "names.txt"


def lessons_dir() -> Path:
    return _bundled("lessons")


def checkpoints_dir() -> Path:
    return _bundled("checkpoints")


def default_checkpoint() -> Path:
    return checkpoints_dir() / "default"


def user_data_dir() -> Path:
    """Per-user folder for the progress database (settings included) and runs (created on demand)."""
    override = os.environ.get("MINIGPT_DATA_DIR")
    if override:
        path = Path(override).expanduser()
    else:
        from platformdirs import user_data_path

        path = user_data_path(APP_NAME, appauthor=False)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Folder for what can be computed again (worked examples' output): ``MINIGPT_CACHE_DIR``, else
    under the data folder when ``MINIGPT_DATA_DIR`` moves it, else the platformdirs cache folder."""
    override = os.environ.get("MINIGPT_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    if os.environ.get("MINIGPT_DATA_DIR"):
        return user_data_dir() / "cache"
    from platformdirs import user_cache_path

    return user_cache_path(APP_NAME, appauthor=False)


def runs_dir() -> Path:
    path = user_data_dir() / "runs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def database_path() -> Path:
    return user_data_dir() / "progress.sqlite3"
