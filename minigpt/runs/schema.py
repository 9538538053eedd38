"""What a run folder saves, as one versioned schema: the run's states, ``status.json``,
``config.json`` and the records of ``metrics.jsonl``.

Each file carries a format version and is read through one reader here, which migrates older
versions step by step (``_STATUS_MIGRATIONS``) and checks every field's type, so a damaged or
hand-edited file gives one clear reason instead of a crash somewhere in a screen. Round 1 wrote
these files without a version: that is format 1. A later field goes into ``RunStatus`` (with a
default), its kind into ``_STATUS_FIELDS``, and, when old files need a value other than the
default, a migration step.

Torch-free, so the app can list runs without loading torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from minigpt import guarded
from minigpt.errors import ConfigError, RunError, UnsafeFileError
from minigpt.numbers import number_text


class RunState(StrEnum):
    """Where a run stands. The trainer writes the middle four; the readers add the other two."""

    STARTING = "starting"  # launched (or its folder just made): the trainer has not written its status
    RUNNING = "running"
    STOPPED = "stopped"  # asked to stop (or interrupted): resumable from its last checkpoint
    FINISHED = "finished"  # spent its budget
    FAILED = "failed"  # an error, a divergence, or a worker that died without saying why
    BROKEN = "broken"  # its status file cannot be read: listed with the reason, never opened as a run

    @property
    def active(self) -> bool:
        """A process is (or is about to be) training this run."""
        return self in (RunState.STARTING, RunState.RUNNING)


WRITTEN_STATES = (RunState.RUNNING, RunState.STOPPED, RunState.FINISHED, RunState.FAILED)

STATUS_FORMAT, STATUS_VERSION = "minigpt-run-status", 3  # 3: reference losses, the seed group
CONFIG_FORMAT, CONFIG_VERSION = "minigpt-run-config", 6  # 3: the optimizer is named (Muon is the default)
# 4: the speedrun's tricks are options; a config written before names none and trained without them
# 5 (issue 34): checkpoint_activations, attention_only and the "repeats" data format
# 6 (issue 52): parametrization (SP or μP) and z_loss; a config written before trained with SP, no z-loss
CONFIG_V6_OFF = {"parametrization": "sp", "z_loss": 0.0}
CONFIG_V4_OFF = {"bigram": "off", "smear": False, "value_residual": False, "x0_shortcut": False, "softcap": None,
                 "zero_init": False, "mtp_weight": 0.0, "momentum_warmup": 0, "batch_ramp": 0.0}
METRICS_FORMAT, METRICS_VERSION = "minigpt-metrics", 2
EMBEDDED = "embedded"  # the data field of a run trained on the bundled names
MAX_FILE_BYTES = guarded.SMALL_JSON_BYTES  # status.json and config.json are a few hundred bytes


# ---------------------------------------------------------------------------- field checks


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_time(value) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


# kind → (test, what the message says a valid value is). Counts and numbers are bounded too: a
# step of 10**400 is no run's, and dividing it by the total overflows a float in every progress bar.
MAX_COUNT, MAX_NUMBER = 10**12, 1e12
_KINDS = {
    "text": (lambda v: isinstance(v, str), "text"),
    "count": (lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_COUNT,
              "a whole number ≥ 0 (at most 10**12)"),
    "positive": (lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_COUNT,
                 "a whole number ≥ 1 (at most 10**12)"),
    "number": (lambda v: _finite(v) and abs(v) <= MAX_NUMBER, "a finite number (within ±1e12)"),
    "time": (_is_time, "an ISO date and time"),
}

# Every field of the status but ``state``: its kind, and whether null is allowed.
_STATUS_FIELDS = {
    "name": ("text", False), "note": ("text", False), "model": ("text", True),
    "step": ("count", False), "total_steps": ("positive", True), "time_budget_s": ("number", True),
    "best_val": ("number", True), "val_loss": ("number", True), "test_loss": ("number", True),
    "n_params": ("count", True), "device": ("text", True), "block_size": ("positive", True),
    "world_size": ("positive", False), "cpu_policy": ("text", True), "pid": ("positive", True), "pid_start": ("count", True),
    "started_at": ("time", True), "updated_at": ("time", True), "failure_reason": ("text", True),
    "data_fingerprint": ("text", True),
    "uniform_loss": ("number", True), "bigram_loss": ("number", True), "group": ("text", True),
}


def _check(name: str, value, kind: str, nullable: bool, where: str) -> None:
    if value is None and nullable:
        return
    test, wanted = _KINDS[kind]
    if not test(value):
        raise RunError(f"{where}: {name} should be {wanted}{' or null' if nullable else ''}, got {value!r:.60}")


def read_json_file(path: Path, what: str) -> dict:
    """A small JSON object from ``path``; RunError (with the reason) for anything else."""
    try:
        values = json.loads(guarded.read_text(path, MAX_FILE_BYTES))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise RunError(f"{path}: {what} is a folder, not a file") from None
    except UnsafeFileError as e:
        raise RunError(f"{path}: {e.strerror}") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RunError(f"{path}: {what} is unreadable ({str(e)[:80] or type(e).__name__})") from None
    if not isinstance(values, dict):
        raise RunError(f"{path}: {what} should hold a JSON object, got {type(values).__name__}")
    return values


# ---------------------------------------------------------------------------- status.json


def default_run_name(config: dict | None) -> str:
    """What a run is called until the learner renames it: its model and the settings that tell
    it apart, e.g. ``gpt d64 L4 lr5e-3``."""
    if not isinstance(config, dict):
        return "run"
    kind = config.get("model", "gpt")
    parts = [str(kind)]
    if kind == "gpt":
        parts += [f"d{config.get('d_model')}", f"L{config.get('n_layers')}"]
        if config.get("pos_encoding") not in (None, "learned"):
            parts.append(str(config["pos_encoding"]))
        if config.get("tie_weights") is True:
            parts.append("tied")
    elif kind == "mlp":
        parts += [f"ctx{config.get('mlp_context')}", f"h{config.get('mlp_hidden')}"]
    if kind in ("gpt", "mlp") and _finite(config.get("lr")):
        parts.append("lr" + number_text(config["lr"]))
    return " ".join(parts)


def check_name_and_note(name: str | None, note: str | None) -> None:
    """A run's name and note are one line each, at most 200 characters; a name is not blank."""
    for label, text in (("name", name), ("note", note)):
        if text is not None and ("\n" in text or "\r" in text or len(text) > 200):
            raise RunError(f"a run's {label} is one line of at most 200 characters")
    if name is not None and not name.strip():
        raise RunError("a run's name cannot be empty")


@dataclass
class RunStatus:
    """``status.json``: what the trainer says about its run, and what names and describes it."""

    state: RunState
    name: str = ""  # what the run is called in lists (editable; defaults to default_run_name)
    note: str = ""  # the learner's own words about the run
    model: str | None = None
    step: int = 0
    total_steps: int | None = None
    time_budget_s: float | None = None
    best_val: float | None = None
    val_loss: float | None = None
    test_loss: float | None = None
    n_params: int | None = None
    device: str | None = None
    block_size: int | None = None
    world_size: int = 1  # processes training together
    cpu_policy: str | None = None  # how the trainer uses the CPU (OpenMP waiting, threads, why)
    pid: int | None = None
    pid_start: int | None = None  # the pid's start time, to tell a reused pid apart
    started_at: str | None = None
    updated_at: str | None = None
    failure_reason: str | None = None  # why it failed, or what cut it short
    # "SIZE:SHA256" of the data file the run trains on, checked on resume (absent in older files)
    data_fingerprint: str | None = None
    # Format 3 (with data_fingerprint above). The loss chart's reference lines for this run's data: a uniform guess (ln V) and
    # a bigram counted on the training split (val loss), measured when the trainer starts.
    uniform_loss: float | None = None
    bigram_loss: float | None = None
    group: str | None = None  # the seed group (``minigpt train --seeds N``) this run belongs to

    def to_dict(self) -> dict:
        values = {"format": STATUS_FORMAT, "format_version": STATUS_VERSION}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                value = None  # JSON has no NaN: a non-finite number is never written
            values[f.name] = str(value) if f.name == "state" else value
        return values

    @classmethod
    def from_dict(cls, raw: dict, where: str = "status.json", config: dict | None = None) -> RunStatus:
        """Migrate ``raw`` to the current format and check every field (RunError says which is
        wrong). ``config`` (the run's config.json) names runs saved before they had names."""
        values = migrate_status(raw, where, config)
        state = values.get("state")
        if not isinstance(state, str) or state not in {s.value for s in WRITTEN_STATES}:
            raise RunError(f"{where}: state should be one of {', '.join(WRITTEN_STATES)}, got {state!r:.60}")
        for name, (kind, nullable) in _STATUS_FIELDS.items():
            if name in values:  # a missing field takes its default; a wrong one is refused
                _check(name, values[name], kind, nullable, where)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known} | {"state": RunState(state)})


def _status_v1_to_v2(values: dict, config: dict | None) -> dict:
    """Round 1: no name, note or world size; ``error`` held the failure; a diverged run could be
    saved as finished with NaN losses (now: failed, with the reason)."""
    values = dict(values)
    values["failure_reason"] = values.pop("error", None)
    diverged = False
    for key in ("best_val", "val_loss", "test_loss"):
        value = values.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            values[key] = None
            diverged = True
    if diverged and values.get("state") == RunState.FINISHED:
        values["state"] = RunState.FAILED.value
        values["failure_reason"] = "the loss diverged (not a finite number): the run's weights are not usable"
    values.setdefault("name", default_run_name(config) if config else str(values.get("model") or "run"))
    values.setdefault("note", "")
    values.setdefault("world_size", 1)
    return values


def _versioned(raw: dict, where: str, newest: int, error: type[Exception]) -> tuple[int, dict]:
    """(format version, the fields without the version ones) of a saved file; ``error`` when the
    version is not a whole number ≥ 1 or is newer than this minigpt reads (``newest``). A file
    without a version is format 1 (round 1)."""
    version = raw.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise error(f"{where}: format_version should be a whole number ≥ 1, got {version!r:.60}")
    if version > newest:
        raise error(f"{where}: written by a newer minigpt (format {version}, this one reads up to {newest})")
    return version, {k: v for k, v in raw.items() if k not in ("format", "format_version")}


def _status_v2_to_v3(values: dict, config: dict | None) -> dict:
    """Format 2 had no reference losses and no seed groups: both stay unknown (None)."""
    return values


_STATUS_MIGRATIONS = {1: _status_v1_to_v2, 2: _status_v2_to_v3}


def migrate_status(raw: dict, where: str, config: dict | None = None) -> dict:
    version, values = _versioned(raw, where, STATUS_VERSION, RunError)
    while version < STATUS_VERSION:
        values = _STATUS_MIGRATIONS[version](values, config)
        version += 1
    return values


def read_status(path: Path, config: dict | None = None) -> RunStatus:
    """The status file at ``path``, migrated and checked. FileNotFoundError when there is none
    yet; RunError when it cannot be read."""
    return RunStatus.from_dict(read_json_file(path, "status.json"), str(path), config)


# ---------------------------------------------------------------------------- config.json


def config_for_file(values: dict) -> dict:
    """The training options as ``config.json`` stores them: versioned, the data path absolute
    (so ``eval`` and ``--resume`` work from any folder)."""
    values = dict(values)
    data = values.get("data")
    if isinstance(data, str) and data != EMBEDDED:
        values["data"] = str(Path(data).expanduser().resolve())
    return {"format": CONFIG_FORMAT, "format_version": CONFIG_VERSION, **values}


def config_from_file(raw: dict, where: str = "config.json") -> dict:
    """The training options of a ``config.json`` of any version, without the version fields,
    ready for ``TrainConfig.from_dict`` (ConfigError when it was written by a newer minigpt).
    Format 1 (round 1) differs only by the missing version; its relative data paths are kept.
    Formats 1 and 2 had no ``optimizer`` option: those runs were trained with AdamW, and say so
    now (a resumed run must keep its optimizer, whatever today's default is). Formats before 4
    had none of the speedrun's tricks: they are set off, for the same reason; nor, before 6, μP or
    z-loss (SP, no z-loss)."""
    version, values = _versioned(raw, where, CONFIG_VERSION, ConfigError)
    if version < 3 and values.get("model", "gpt") == "gpt":
        values.setdefault("optimizer", "adamw")
    if version < 4:
        for name, off in CONFIG_V4_OFF.items():
            values.setdefault(name, off)
    if version < 5 and values.get("model", "gpt") == "gpt":
        values.setdefault("checkpoint_activations", False)
        values.setdefault("attention_only", False)  # before attention-only models every block had its feed-forward
    if version < 6:
        for name, off in CONFIG_V6_OFF.items():
            values.setdefault(name, off)
    return values


def read_config_values(path: Path) -> dict:
    """The training options saved at ``path`` (a run's config.json), migrated. FileNotFoundError
    when absent; ConfigError when unreadable."""
    try:
        raw = read_json_file(path, "config.json")
    except RunError as e:
        raise ConfigError(str(e)) from None
    if raw.get("format") not in (None, CONFIG_FORMAT):
        raise ConfigError(f"{path}: not a run's config.json (format {raw.get('format')!r:.60})")
    return config_from_file(raw, str(path))


# ---------------------------------------------------------------------------- metrics.jsonl

# Numbers a metrics record may carry, each with the range the trainer writes within (format 2
# writes only finite ones). A value outside is dropped, the rest of the record kept: a loss of
# 1e308 would overflow the perplexity and the charts' scales, an elapsed time of 1e308 the ETA.
MAX_STEP = MAX_COUNT
METRIC_RANGES = {"train_loss": (0.0, 1e6), "val_loss": (0.0, 1e6), "lr": (0.0, 1e3),
                 "tokens_per_s": (0.0, 1e13), "elapsed_s": (0.0, 1e9), "compile_s": (0.0, 1e7),
                 "threads": (1, 1 << 16), "skipped_steps": (0, MAX_STEP)}
METRICS_HEADER = {"format": METRICS_FORMAT, "format_version": METRICS_VERSION}


def metrics_record(raw) -> dict | None:
    """One line of ``metrics.jsonl`` as a record (``step``, the numbers of ``METRIC_RANGES``
    within their ranges, other keys as they are), or None for the header and damaged lines.

    Format 1 could hold NaN or Infinity (a diverged run): those numbers are dropped."""
    if not isinstance(raw, dict):
        return None
    step = raw.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
        return None
    record = {}
    for key, value in raw.items():
        if key in METRIC_RANGES and not in_range(value, *METRIC_RANGES[key]):
            continue
        record[key] = value
    return record


def in_range(value, low: float, high: float) -> bool:
    """A finite number (not a bool) between ``low`` and ``high``; an int where both bounds are."""
    if isinstance(low, int) and isinstance(high, int) and not isinstance(value, int):
        return False
    return _finite(value) and low <= value <= high


def metrics_line(record: dict) -> str:
    """A record as one JSON line; a non-finite number becomes null (never a bare NaN)."""
    clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in record.items()}
    return json.dumps(clean, allow_nan=False) + "\n"
