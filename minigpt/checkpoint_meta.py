"""A checkpoint's ``config.json``: its names, and the one typed reader that migrates older
formats and names a damaged field in one ``CheckpointError`` (see :mod:`minigpt.checkpoint` for
the folder, the atomic save protocol and the weights)."""

from __future__ import annotations

import json
import math
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path

from minigpt import guarded
from minigpt.data import Vocab
from minigpt.errors import CheckpointError, ConfigError, DatasetError, UnsafeFileError
from minigpt.models.config import MODEL_CONFIGS, config_from_dict

FORMAT = "minigpt-checkpoint"
FORMAT_VERSION = 1
WEIGHTS, CONFIG, OPTIMIZER = "model.safetensors", "config.json", "optimizer.safetensors"
TRAINING_WEIGHTS = "training.safetensors"
MAX_CONFIG_BYTES = guarded.CHECKPOINT_JSON_BYTES  # a vocabulary and a few settings


@dataclass
class CheckpointMeta:
    """``config.json`` of a checkpoint, migrated to the current format and checked."""

    path: Path  # the folder it was read from (``NAME`` or, after a cut save, ``NAME.old``)
    kind: str
    model_config: object
    vocab: Vocab
    train_config: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)
    weights_sha256: str | None = None
    training_weights_sha256: str | None = None
    optimizer: dict | None = None
    raw: dict = field(default_factory=dict, repr=False)  # the checked JSON, as plain values



def _finite_or_none(values: dict) -> dict:
    """JSON has no NaN: a non-finite metric is saved as null."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in values.items()}



# ---------------------------------------------------------------------------- reading config.json


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


# Format 1 is the first versioned one (round 1 wrote it); a step per older version goes here.
_MIGRATIONS: dict = {}


def _json_kind(annotation) -> tuple[tuple[type, ...], str]:
    """The JSON types a model-config field accepts, from its type annotation (``int | None``…)."""
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) \
        else (annotation,)
    accepts, words = (type(None),) if type(None) in options else (), " or null" if type(None) in options else ""
    if bool in options:
        return (bool, *accepts), "true or false" + words
    if int in options:
        return (int, *accepts), "a whole number" + words
    if float in options:
        return (int, float, *accepts), "a number" + words
    return (str, *accepts), "text" + words


def _model_config(kind, values, where: str):
    if not isinstance(kind, str) or kind not in MODEL_CONFIGS:
        raise CheckpointError(f"{where}: kind should be one of {', '.join(MODEL_CONFIGS)}, got {kind!r:.40}")
    if not isinstance(values, dict):
        raise CheckpointError(f"{where}: model_config should be an object, got {type(values).__name__}")
    hints = typing.get_type_hints(MODEL_CONFIGS[kind])
    for f in fields(MODEL_CONFIGS[kind]):
        if f.name not in values:
            continue
        value, (accepted, wanted) = values[f.name], _json_kind(hints[f.name])
        if not isinstance(value, accepted) or (bool not in accepted and isinstance(value, bool)):
            raise CheckpointError(f"{where}: model_config.{f.name} should be {wanted}, got {value!r:.40}")
    try:
        return config_from_dict(kind, values)
    except (ConfigError, TypeError, ValueError) as e:
        raise CheckpointError(f"{where}: invalid model description ({e})") from None


def _vocab(chars, model_config, where: str) -> Vocab:
    if not isinstance(chars, list) or not all(isinstance(c, str) and len(c) == 1 for c in chars):
        raise CheckpointError(f"{where}: vocab should be a list of single characters")
    try:
        vocab = Vocab.from_list(chars)
    except DatasetError as e:
        raise CheckpointError(f"{where}: {e}") from None
    if vocab.size != model_config.vocab_size:
        raise CheckpointError(f"{where}: the vocabulary has {vocab.size} characters but the model expects "
                              f"{model_config.vocab_size}")
    return vocab


def _object(cfg: dict, key: str, where: str) -> dict:
    value = cfg.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CheckpointError(f"{where}: {key} should be an object, got {type(value).__name__}")
    return value


def _check_value(value, test, name: str, wanted: str, where: str) -> None:
    if value is not None and not test(value):
        raise CheckpointError(f"{where}: {name} should be {wanted}, got {value!r:.40}")


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _finite_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def read_checkpoint_meta(path: Path | str) -> CheckpointMeta:
    """The checkpoint's ``config.json``, migrated and checked, without touching the weights."""
    path = _resolve(Path(path))
    where = str(path / CONFIG)
    try:  # a regular file under the limit, opened without blocking (a FIFO, /dev/zero: refused)
        cfg, too_large = json.loads(guarded.read_text(path / CONFIG, MAX_CONFIG_BYTES)), False
    except UnsafeFileError as e:
        cfg, too_large = None, e.strerror
    except IsADirectoryError:
        raise CheckpointError(f"{where}: a folder where a file should be") from None
    except OSError as e:
        raise CheckpointError(f"{where}: cannot be read ({e.strerror or e})") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(f"{where}: not valid JSON ({str(e)[:80]}); the file is damaged") from None
    if not isinstance(cfg, dict) or cfg.get("format") != FORMAT:
        why = too_large or "format field missing"
        raise CheckpointError(f"{where}: not a minigpt checkpoint ({why})")
    version = cfg.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise CheckpointError(f"{where}: format_version should be a whole number ≥ 1, got {version!r:.40}")
    if version > FORMAT_VERSION:
        raise CheckpointError(f"{path}: written by a newer minigpt (format {version})")
    while version < FORMAT_VERSION:
        cfg, version = _MIGRATIONS[version](cfg), version + 1
    model_config = _model_config(cfg.get("kind"), cfg.get("model_config"), where)
    vocab = _vocab(cfg.get("vocab"), model_config, where)
    train_config, metrics, state = (_object(cfg, k, where) for k in ("train_config", "metrics", "state"))
    metrics, state = _finite_or_none(metrics), _finite_or_none(state)  # round 1 wrote NaN for a diverged run
    _check_value(train_config.get("data"), lambda v: isinstance(v, str), "train_config.data", "text", where)
    _check_value(train_config.get("split_seed"), _whole, "train_config.split_seed", "a whole number", where)
    _check_value(state.get("step"), _whole, "state.step", "a whole number", where)
    _check_value(state.get("best_step"), _whole, "state.best_step", "a whole number", where)
    for key in ("elapsed_s", "best_val"):
        _check_value(state.get(key), _finite_number, f"state.{key}", "a finite number", where)
    hashes = [cfg.get(k) for k in ("weights_sha256", "training_weights_sha256")]
    for name, value in zip(("weights_sha256", "training_weights_sha256"), hashes):
        _check_value(value, lambda v: isinstance(v, str) and len(v) == 64, name, "a SHA-256 hex digest", where)
    optimizer = cfg.get("optimizer")
    if optimizer is not None and not (isinstance(optimizer, dict) and isinstance(optimizer.get("state"), dict)
                                      and isinstance(optimizer.get("param_groups"), list)):
        raise CheckpointError(f"{where}: optimizer should be an object with state and param_groups")
    raw = {**cfg, "train_config": train_config, "metrics": metrics, "state": state}
    return CheckpointMeta(path, cfg["kind"], model_config, vocab, train_config, metrics, state,
                          hashes[0], hashes[1], optimizer, raw)


def read_checkpoint_config(path: Path | str) -> dict:
    """``config.json`` as checked by ``read_checkpoint_meta``, as JSON values (``["metrics"]``…)."""
    return read_checkpoint_meta(path).raw
