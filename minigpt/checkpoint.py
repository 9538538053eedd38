"""Checkpoints: a folder with ``model.safetensors`` and ``config.json``, written atomically.

Nothing here unpickles: weights and optimizer tensors are safetensors, everything else is JSON.
``config.json`` carries a format version and is read through one typed reader,
``read_checkpoint_meta``, which migrates older versions and names a damaged field in one
``CheckpointError``. Before a model is built it passes the one size rule (``check_model_size``
with the inference cap, counted from the config alone) and its shapes are checked against the
weights file's header.

The save protocol survives a kill at any point, any number of times in a row. The new checkpoint
is written complete into ``NAME.tmp`` (never read by the loader), then ``NAME`` is renamed to
``NAME.old`` and ``NAME.tmp`` to ``NAME``. ``NAME.old`` is deleted only while ``NAME`` exists, and
a save that finds ``NAME`` missing first puts ``NAME.old`` back: so at every instant ``NAME`` or
``NAME.old`` holds a complete checkpoint, and the loader reads ``NAME``, else ``NAME.old``.

``model.safetensors`` always holds the weights to use (the run's weight average when it keeps
one). A checkpoint meant for resuming also holds the optimizer state and, beside an average,
the raw weights the optimizer was moving (``training.safetensors``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from minigpt import guarded
from minigpt.checkpoint_meta import (  # noqa: F401  (read_checkpoint_* and the names: imported from here too)
    CONFIG,
    FORMAT,
    FORMAT_VERSION,
    OPTIMIZER,
    TRAINING_WEIGHTS,
    WEIGHTS,
    CheckpointMeta,
    _finite_or_none,
    read_checkpoint_config,
    read_checkpoint_meta,
)
from minigpt.data import Vocab
from minigpt.errors import CheckpointError, ConfigError
from minigpt.models.build import build_model, check_model_size, on_meta_device
from minigpt.models.config import config_to_dict
from minigpt.safetensors_header import check_shapes, read_header


@dataclass
class Checkpoint:
    path: Path
    kind: str
    model: torch.nn.Module
    vocab: Vocab
    model_config: object
    train_config: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)  # trainer state for resume (step, …)


# ---------------------------------------------------------------------------- saving


def _write_json(path: Path, obj) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True, allow_nan=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with guarded.open_file(path, guarded.WEIGHTS_BYTES) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict, dict]:
    """Split an optimizer's state into flat tensors (safetensors) and JSON-able metadata."""
    sd = optimizer.state_dict()
    tensors, meta = {}, {"param_groups": sd["param_groups"], "state": {}}
    for pid, st in sd["state"].items():
        meta["state"][str(pid)] = []
        for key, value in st.items():
            if torch.is_tensor(value):
                tensors[f"{pid}.{key}"] = value.detach().cpu().contiguous()
                meta["state"][str(pid)].append(key)
    return tensors, meta


def _weights(model) -> dict:
    # Tied weights are one tensor under two names: safetensors refuses shared storage, so save
    # the head only when it is a separate matrix.
    weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if getattr(model.config, "tie_weights", False):
        weights.pop("head.weight", None)
    return weights


def _tensor_shapes(model) -> dict[str, tuple[int, ...]]:
    """What ``_weights`` saves, as names and shapes only (works on the meta device)."""
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    if getattr(model.config, "tie_weights", False):
        shapes.pop("head.weight", None)
    return shapes


def recover_interrupted_save(path: Path | str) -> None:
    """Undo a save cut between its two renames: ``NAME`` is gone, ``NAME.old`` is complete."""
    path = Path(path)
    old = path.with_name(path.name + ".old")
    if not path.exists() and (old / CONFIG).exists():
        os.rename(old, path)
        guarded.fsync_dir(path.parent)


def save_checkpoint(path: Path | str, model, vocab: Vocab, *, train_config: dict | None = None,
                    metrics: dict | None = None, optimizer=None, state: dict | None = None,
                    training_model=None) -> Path:
    """Write ``model`` (the weights to use) atomically; ``training_model`` holds the raw weights
    behind a weight average, saved for resuming. A full disk is one ``DiskFullError`` that says
    which checkpoint stays intact; the half-written copy is removed, freeing its room."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    old = path.with_name(path.name + ".old")
    recover_interrupted_save(path)
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with guarded.disk_full_guard(f"checkpoint {path}", lambda: _still_intact(path)):
            _write_complete(tmp, model, vocab, train_config, metrics, optimizer, state, training_model)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        if old.exists():
            shutil.rmtree(old)  # safe: NAME is complete; raises rather than leave a half-deleted .old
        os.rename(path, old)
    os.rename(tmp, path)
    guarded.fsync_dir(path.parent)
    shutil.rmtree(old, ignore_errors=True)
    return path


def _write_complete(tmp: Path, model, vocab: Vocab, train_config, metrics, optimizer, state, training_model):
    """Every file of the checkpoint into ``tmp``, on disk before the swap makes them live."""
    tmp.mkdir()
    save_file(_weights(model), tmp / WEIGHTS)
    cfg = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "kind": model.kind,
        "model_config": config_to_dict(model.config), "vocab": list(vocab.chars),
        "train_config": train_config or {}, "metrics": _finite_or_none(metrics or {}),
        "state": _finite_or_none(state or {}), "weights_sha256": _sha256(tmp / WEIGHTS),
    }
    if optimizer is not None:
        tensors, meta = _optimizer_tensors(optimizer)
        save_file(tensors, tmp / OPTIMIZER)
        cfg["optimizer"] = meta
    if training_model is not None:
        save_file(_weights(training_model), tmp / TRAINING_WEIGHTS)
        cfg["training_weights_sha256"] = _sha256(tmp / TRAINING_WEIGHTS)
    _write_json(tmp / CONFIG, cfg)
    for f in tmp.iterdir():
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    guarded.fsync_dir(tmp)


def _still_intact(path: Path) -> str:
    """What a failed save left usable, for its message: the latest complete checkpoint beside it
    (``NAME``, ``NAME.old`` or a sibling, such as a run's best and last)."""
    found = []
    for folder in sorted(path.parent.iterdir()) if path.parent.is_dir() else ():
        if folder.name.endswith(".tmp") or not (folder / CONFIG).is_file():
            continue
        try:
            found.append((read_checkpoint_meta(folder).state.get("step") or 0, folder))
        except (CheckpointError, OSError):
            continue
    if not found:
        return "no earlier checkpoint was there to keep"
    step, folder = max(found, key=lambda f: (f[0], f[1] == path))
    return f"the last good checkpoint (step {step}) is intact in {folder}"


# ---------------------------------------------------------------------------- weights


def expected_tensors(meta: CheckpointMeta) -> dict[str, tuple[int, ...]]:
    """Names and shapes the weights file must hold, from a model built on the meta device
    (nothing allocated) once the size rule has passed its config; CheckpointError when the model
    is larger than the tutor loads."""
    try:  # the one size rule (minigpt.models.build), before anything is allocated
        check_model_size(meta.kind, meta.model_config, verb="loads")
    except ConfigError as e:
        raise CheckpointError(f"{meta.path / CONFIG}: describes a model too large: {e}") from None
    with on_meta_device():
        model = build_model(meta.kind, meta.model_config)
    return _tensor_shapes(model)


def _load_weights(weights_file: Path, sha256: str | None, model, device) -> None:
    check_shapes(weights_file, _tensor_shapes(model))
    if sha256 and _sha256(weights_file) != sha256:
        raise CheckpointError(f"{weights_file}: contents do not match {CONFIG} (truncated or replaced)")
    try:
        weights = load_file(weights_file, device=str(device))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{weights_file}: not a readable safetensors file ({e})") from None
    if not all(torch.isfinite(t).all() for t in weights.values()):
        raise CheckpointError(f"{weights_file}: holds NaN or infinite weights (the run that saved them "
                              f"diverged); these weights cannot be used")
    if getattr(model.config, "tie_weights", False) and "tok_emb.weight" in weights:
        weights["head.weight"] = weights["tok_emb.weight"]
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:
        raise CheckpointError(f"{weights_file}: weights do not fit the model in {CONFIG} ({e})") from None


REPLACED_RETRIES = 3  # reads of a folder that a live run's saves keep swapping under the reader


def _replaced(path: Path | str, meta: CheckpointMeta) -> bool:
    """Whether ``path`` holds another checkpoint than ``meta`` now: a save swapped it mid-read."""
    try:
        now = read_checkpoint_meta(path)
    except CheckpointError:
        return False
    return (now.path, now.weights_sha256) != (meta.path, meta.weights_sha256)


def load_checkpoint(path: Path | str, device: str | torch.device = "cpu") -> Checkpoint:
    """The checkpoint at ``path``, its model built and loaded. A live run replaces its best
    checkpoint at each evaluation; a read that straddles that swap (config.json of one save, the
    weights of the next) is read again rather than reported as a damaged file."""
    for _ in range(REPLACED_RETRIES - 1):
        meta = read_checkpoint_meta(path)
        try:
            return _load(meta, device)
        except CheckpointError:
            if not _replaced(path, meta):
                raise  # damaged for good: say so
    return _load(read_checkpoint_meta(path), device)


def _load(meta: CheckpointMeta, device) -> Checkpoint:
    check_shapes(meta.path / WEIGHTS, expected_tensors(meta))  # before anything is allocated
    model = build_model(meta.kind, meta.model_config)
    _load_weights(meta.path / WEIGHTS, meta.weights_sha256, model, device)
    model.to(device).eval()
    return Checkpoint(path=meta.path, kind=meta.kind, model=model, vocab=meta.vocab,
                      model_config=meta.model_config, train_config=meta.train_config, metrics=meta.metrics,
                      state=meta.state)


def load_optimizer_state(path: Path | str, optimizer: torch.optim.Optimizer) -> bool:
    """Restore optimizer state saved with the checkpoint; False when there is none."""
    meta = read_checkpoint_meta(path)
    if not meta.optimizer or not (meta.path / OPTIMIZER).exists():
        return False
    try:
        read_header(meta.path / OPTIMIZER)  # a regular file, whole, before safetensors opens it
        tensors = load_file(meta.path / OPTIMIZER)
        state = {int(pid): {k: tensors[f"{pid}.{k}"] for k in keys} for pid, keys in meta.optimizer["state"].items()}
        optimizer.load_state_dict({"state": state, "param_groups": meta.optimizer["param_groups"]})
    except (SafetensorError, OSError, KeyError, TypeError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{meta.path / OPTIMIZER}: does not fit this run's optimizer ({e})") from None
    return True


def load_training_weights(path: Path | str, model) -> bool:
    """Load the raw training weights saved beside a weight average; False when there are none
    (the run kept no average, or the checkpoint was not meant for resuming)."""
    meta = read_checkpoint_meta(path)
    if not (meta.path / TRAINING_WEIGHTS).exists():
        return False
    _load_weights(meta.path / TRAINING_WEIGHTS, meta.training_weights_sha256, model,
                  next(model.parameters()).device)
    return True
