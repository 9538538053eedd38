"""Checkpoints: a folder with ``model.safetensors`` and ``config.json``, written atomically.

Nothing here unpickles: weights and optimizer tensors are safetensors, everything else is JSON.
A save writes a complete new folder beside the old one, fsyncs it, then swaps the two with
renames. A process killed at any moment leaves either the old or the new checkpoint loadable
(``load_checkpoint`` also looks at the ``.old`` folder left by a swap cut short).

``model.safetensors`` always holds the weights to use (the run's weight average when it keeps
one). A checkpoint meant for resuming also holds the optimizer state and, beside an average,
the raw weights the optimizer was moving (``training.safetensors``).
"""

from __future__ import annotations

from minigpt.errors import CheckpointError

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from minigpt.models.config import ConfigError, config_from_dict, config_to_dict
from minigpt.data import Vocab
from minigpt.models.build import build_model

FORMAT = "minigpt-checkpoint"
FORMAT_VERSION = 1
WEIGHTS, CONFIG, OPTIMIZER = "model.safetensors", "config.json", "optimizer.safetensors"
TRAINING_WEIGHTS = "training.safetensors"




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


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_json(path: Path, obj) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
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


def save_checkpoint(path: Path | str, model, vocab: Vocab, *, train_config: dict | None = None,
                    metrics: dict | None = None, optimizer=None, state: dict | None = None,
                    training_model=None) -> Path:
    """Write ``model`` (the weights to use) atomically; ``training_model`` holds the raw weights
    behind a weight average, saved for resuming."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    old = path.with_name(path.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    save_file(_weights(model), tmp / WEIGHTS)
    cfg = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "kind": model.kind,
        "model_config": config_to_dict(model.config), "vocab": list(vocab.chars),
        "train_config": train_config or {}, "metrics": metrics or {}, "state": state or {},
        "weights_sha256": _sha256(tmp / WEIGHTS),
    }
    if optimizer is not None:
        tensors, meta = _optimizer_tensors(optimizer)
        save_file(tensors, tmp / OPTIMIZER)
        cfg["optimizer"] = meta
    if training_model is not None:
        save_file(_weights(training_model), tmp / TRAINING_WEIGHTS)
        cfg["training_weights_sha256"] = _sha256(tmp / TRAINING_WEIGHTS)
    _write_json(tmp / CONFIG, cfg)
    for f in tmp.iterdir():  # the files are complete on disk before the swap makes them live
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    _fsync_dir(tmp)
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        os.rename(path, old)
    os.rename(tmp, path)
    _fsync_dir(path.parent)
    shutil.rmtree(old, ignore_errors=True)
    return path


def _resolve(path: Path) -> Path:
    if (path / CONFIG).exists():
        return path
    old = path.with_name(path.name + ".old")
    if not path.exists() and (old / CONFIG).exists():
        return old  # a save was cut between its two renames: the previous checkpoint is intact
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint folder")
    if path.is_file():
        raise CheckpointError(f"{path}: expected a checkpoint folder (with {CONFIG} and {WEIGHTS}), got a file")
    raise CheckpointError(f"{path}: not a checkpoint (no {CONFIG})")


def read_checkpoint_config(path: Path | str) -> dict:
    """The checkpoint's JSON, validated, without loading the weights."""
    path = _resolve(Path(path))
    try:
        cfg = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path / CONFIG}: not valid JSON ({e}); the file is damaged") from None
    if not isinstance(cfg, dict) or cfg.get("format") != FORMAT:
        raise CheckpointError(f"{path / CONFIG}: not a minigpt checkpoint (format field missing)")
    if cfg.get("format_version", 0) > FORMAT_VERSION:
        raise CheckpointError(f"{path}: written by a newer minigpt (format {cfg['format_version']})")
    return cfg


def _load_weights(weights_file: Path, sha256: str | None, model, device) -> None:
    name = weights_file.name
    if not weights_file.exists():
        raise CheckpointError(f"{weights_file.parent}: {name} is missing")
    if sha256 and _sha256(weights_file) != sha256:
        raise CheckpointError(f"{weights_file}: contents do not match {CONFIG} (truncated or replaced)")
    try:
        weights = load_file(weights_file, device=str(device))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{weights_file}: not a readable safetensors file ({e})") from None
    if getattr(model.config, "tie_weights", False) and "tok_emb.weight" in weights:
        weights["head.weight"] = weights["tok_emb.weight"]
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:
        raise CheckpointError(f"{weights_file}: weights do not fit the model in {CONFIG} ({e})") from None


def load_checkpoint(path: Path | str, device: str | torch.device = "cpu") -> Checkpoint:
    path = _resolve(Path(path))
    cfg = read_checkpoint_config(path)
    try:
        vocab = Vocab.from_list(cfg["vocab"])
        model_config = config_from_dict(cfg["kind"], cfg["model_config"])
    except (KeyError, TypeError, ValueError, ConfigError) as e:
        raise CheckpointError(f"{path / CONFIG}: invalid model description ({e})") from None
    model = build_model(cfg["kind"], model_config)
    _load_weights(path / WEIGHTS, cfg.get("weights_sha256"), model, device)
    model.to(device).eval()
    return Checkpoint(path=path, kind=cfg["kind"], model=model, vocab=vocab, model_config=model_config,
                      train_config=cfg.get("train_config", {}), metrics=cfg.get("metrics", {}),
                      state=cfg.get("state", {}))


def load_optimizer_state(path: Path | str, optimizer: torch.optim.Optimizer) -> bool:
    """Restore optimizer state saved with the checkpoint; False when there is none."""
    path = _resolve(Path(path))
    cfg = read_checkpoint_config(path)
    meta = cfg.get("optimizer")
    if not meta or not (path / OPTIMIZER).exists():
        return False
    try:
        tensors = load_file(path / OPTIMIZER)
    except (SafetensorError, OSError) as e:
        raise CheckpointError(f"{path / OPTIMIZER}: unreadable ({e})") from None
    state = {int(pid): {k: tensors[f"{pid}.{k}"] for k in keys} for pid, keys in meta["state"].items()}
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    return True


def load_training_weights(path: Path | str, model) -> bool:
    """Load the raw training weights saved beside a weight average; False when there are none
    (the run kept no average, or the checkpoint was not meant for resuming)."""
    path = _resolve(Path(path))
    cfg = read_checkpoint_config(path)
    if not (path / TRAINING_WEIGHTS).exists():
        return False
    _load_weights(path / TRAINING_WEIGHTS, cfg.get("training_weights_sha256"), model,
                  next(model.parameters()).device)
    return True
