"""The errors a user can cause, in one torch-free module, under one root: ``TutorError``.

The CLI turns each into one line ``Error: …`` with exit status 2, and the app shows it in the
screen that met it. Keeping them here lets the command line and the app catch them without
importing the modules (and torch) that raise them; ``except TutorError`` catches every one.

Each class also keeps the built-in base it had before the root existed (``ValueError`` for bad
input, ``RuntimeError`` for an action that cannot be done now), so code that catches those
still catches these. ``tests/test_errors.py`` fails when a module elsewhere defines an error of
its own that does not derive from ``TutorError``.
"""

from __future__ import annotations

import errno


class TutorError(Exception):
    """Something the user can cause and fix; the message says what and, where it can, how."""


# ------------------------------------------------------------------ any file a user can reach

class UnsafeFileError(TutorError, OSError):
    """A path a reader will not open: a pipe, a device or a socket (reading one may never end),
    or a file larger than that reader accepts (``minigpt.guarded``). Also an ``OSError``, so a
    reader that reports "cannot read" reports this too; ``strerror`` says why."""

    def __init__(self, path, reason: str, too_large: bool = False):
        super().__init__(errno.EINVAL, reason, str(path))
        self.too_large = too_large  # else: not a regular file

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class DiskFullError(TutorError, OSError):
    """A write failed because the disk (or the user's quota) is full; the message says what was
    not written and what was kept intact (``minigpt.guarded.disk_full_guard``)."""

    def __init__(self, message: str):
        super().__init__(errno.ENOSPC, message)

    def __str__(self) -> str:
        return self.strerror


# ------------------------------------------------------------------ training and its inputs

class ConfigError(TutorError, ValueError):
    """An impossible hyperparameter (the message says which and why).

    ``field`` names the option at fault (a ``TrainConfig`` or model-config field) when one is,
    so the form can mark it and the CLI can name its flag without reading the message.
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class DatasetError(TutorError, ValueError):
    """The dataset file cannot be used (the message names the file and, if relevant, the line)."""


class CheckpointError(TutorError, ValueError):
    """The folder is not a loadable checkpoint (the message says why)."""


class SamplingError(TutorError, ValueError):
    """A sampling option that cannot work (the message says which and why)."""


class TrainingDiverged(TutorError, ValueError):
    """The loss or the gradients stopped being finite numbers: the run is marked failed."""


# ------------------------------------------------------------------------------- runs

class RunError(TutorError, ValueError):
    """A run folder that cannot be used for what was asked: not a run, damaged, or busy."""


class DataChangedError(RunError):
    """A run is resumed on a data file that is not the one it started on (size or hash differ)."""


class RunBusyError(RunError):
    """Another live process is training this run (it holds the run's lock)."""


class RunControlError(TutorError, RuntimeError):
    """An action that cannot be done on this run right now (the message says why)."""


class FitError(TutorError, ValueError):
    """Too few or unusable points for a scaling-law fit (the message says which)."""


# ----------------------------------------------------------------------- content files

class LessonError(TutorError, ValueError):
    """A lesson file that cannot be used; the message always names the file."""


class DeckError(TutorError, ValueError):
    """A deck file is malformed; the message names the file and the card."""


class CardImportError(TutorError, ValueError):
    """A file to import is malformed; the message names the file and line."""


class KataError(TutorError, ValueError):
    """A kata that does not exist or whose folder is malformed; the message names it."""


class PlanError(TutorError, ValueError):
    """A study plan that cannot be made: a date that has passed or is unreadable, a lesson with
    no cards; the message says which."""


class SettingError(TutorError, ValueError):
    """A setting not declared in ``minigpt.settings``, or a value it does not accept; the message
    names the setting and what it accepts."""


class KeymapError(SettingError):
    """A key setting the app cannot use (``keys.<id>``): the message names the id or the key and
    why, in one line."""


class StudySettingError(SettingError):
    """A study setting out of its range (desired retention), or an FSRS fit that cannot run yet
    (too few reviews, the optimizer extra missing); the message says what would make it work."""


class KataCodeError(TutorError, ValueError):
    """The learner's code for a kata cannot be graded (a syntax error, a forbidden call, the
    function missing, the grader stopped); the message says which, in the learner's terms."""


class MissingExtraError(TutorError, RuntimeError):
    """A command needs an optional part of the install that is missing; the message names the extra
    and the pip command that installs it (``minigpt.extras``)."""


# ------------------------------------------------------------------ the progress database

class StoreError(TutorError, RuntimeError):
    """The progress database cannot do what was asked; the message says why and what to do."""


class StoreBusy(StoreError):
    """Another process held the write lock past the busy timeout: nothing was written; retry."""


class StoreReadOnly(StoreError):
    """The database is open read-only: nothing can be written."""


class StoreFull(StoreError):
    """The disk (or the database's size limit) is full: nothing was written."""


class StoreDamaged(StoreError):
    """The file is not a usable SQLite database."""


class BadRowError(TutorError, ValueError):
    """One row of a valid progress database holds a value the tutor never writes (bad JSON, a time
    that is not one, a number out of its range): its readers leave the row out and count it."""


class UndoError(TutorError, RuntimeError):
    """The last answer cannot be undone without erasing a later one; the message says why."""


# ------------------------------------------------------------------- a served session

class PolicyRefusal(TutorError):
    """Something a served session may not do; the message says why and which flag allows it."""


class TrainingLimitReached(PolicyRefusal):
    """Too many runs started from served sessions are training at once."""
