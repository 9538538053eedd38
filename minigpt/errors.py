"""The errors a user can cause, in one torch-free module.

The CLI turns each into one line ``Error: …`` with exit status 2, and the app shows it in the
screen that met it. Keeping them here lets the command line and the app catch them without
importing the modules (and torch) that raise them.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """An impossible hyperparameter (the message says which and why).

    ``field`` names the option at fault (a ``TrainConfig`` or model-config field) when one is,
    so the form can mark it and the CLI can name its flag without reading the message.
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class DatasetError(ValueError):
    """The dataset file cannot be used (the message names the file and, if relevant, the line)."""


class CheckpointError(ValueError):
    """The folder is not a loadable checkpoint (the message says why)."""


class SamplingError(ValueError):
    """A sampling option that cannot work (the message says which and why)."""


class RunError(ValueError):
    """A run folder that cannot be used for what was asked: not a run, damaged, or busy."""


class RunBusyError(RunError):
    """Another live process is training this run (it holds the run's lock)."""


class TrainingDiverged(ValueError):
    """The loss or the gradients stopped being finite numbers: the run is marked failed."""
