"""Our MiniGPT, the one model the lessons call "ours": every figure read from the shipped checkpoint.

Lessons and worked examples that speak of "our MiniGPT" (its width, depth, heads, context,
parameter count, losses, steps) take those figures from here, so there is one model across the
course and a retrained ``checkpoints/default`` updates every lesson at once. Only ``config.json``
is read (no weights loaded); tests/test_teaching_shipped.py checks every figure the content shows
against that file.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from minigpt.models.config import GPTConfig


@dataclass(frozen=True)
class ShippedModel:
    """The shipped checkpoint's shape and training record."""

    config: GPTConfig
    n_params: int  # as the trainer counted them (equal to params.gpt_total(config): tested)
    val_loss: float  # the best validation loss, at ``best_step``: the checkpoint keeps that step
    test_loss: float  # the held-out test split, measured once on the kept weights
    best_step: int
    steps_trained: int  # steps the run went on for (it keeps the best step's weights)
    train_seconds: float  # wall-clock seconds of the whole run
    device: str
    recipe: dict = field(default_factory=dict)  # the run's training options (train_config), as saved

    @property
    def shape(self) -> str:
        """``d 64, 4 layers, 4 heads, context 16`` (the words a table cell needs)."""
        c = self.config
        return f"d {c.d_model}, {c.n_layers} layers, {c.n_heads} heads, context {c.block_size}"


@functools.lru_cache(maxsize=4)
def _read(folder: Path) -> ShippedModel:
    from minigpt.checkpoint import read_checkpoint_config

    raw = read_checkpoint_config(folder)
    metrics = raw["metrics"]
    return ShippedModel(
        config=GPTConfig(**raw["model_config"]),
        n_params=int(metrics["n_params"]),
        val_loss=float(metrics["val_loss"]),
        test_loss=float(metrics["test_loss"]),
        best_step=int(metrics["step"]),
        steps_trained=int(metrics["steps_done"]),
        train_seconds=float(metrics["elapsed_s"]),
        device=str(metrics.get("device", "cpu")),
        recipe=dict(raw.get("train_config") or {}),
    )


def shipped_model(folder: Path | str | None = None) -> ShippedModel:
    """The shipped default MiniGPT (``checkpoints/default``), read once per process."""
    from minigpt.paths import default_checkpoint

    return _read(Path(folder) if folder is not None else default_checkpoint())


def shipped_config() -> GPTConfig:
    """A fresh copy of the shipped model's config (callers may change it: ``replace`` it)."""
    from dataclasses import replace

    return replace(shipped_model().config)
