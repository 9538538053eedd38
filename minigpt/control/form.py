"""The new-run form, without Textual: text fields in, a validated ``TrainConfig`` (or a clear
``FormError`` naming the field) out, plus the presets and the ``minigpt train`` argv of a config.

Every check is the library's own (``TrainConfig``, ``load_words``), so the form refuses exactly
what the trainer would, before anything starts.
"""

from __future__ import annotations

from pathlib import Path

import torch

from minigpt.models.config import ConfigError
from minigpt.data import DatasetError, load_words
from minigpt.training.options import TrainConfig

# Larger models cannot train in a tutorial's time on a laptop, and a typo (d_model 6400) would
# otherwise only fail inside the worker, allocating gigabytes. The "large" preset has ~1.2M.
MAX_PARAMS = 50_000_000

# Presets the form offers. "course" is the course's model; tiny trains in seconds on a laptop.
PRESETS: dict[str, dict] = {
    "course": dict(model="gpt", d_model=64, n_heads=4, n_layers=4, batch_size=128, lr=5e-3, steps=3000,
                   eval_interval=250),
    "tiny": dict(model="gpt", d_model=16, n_heads=2, n_layers=1, batch_size=64, lr=1e-2, steps=300,
                 eval_interval=50),
    "large": dict(model="gpt", d_model=128, n_heads=8, n_layers=6, batch_size=128, lr=2e-3, steps=8000,
                  eval_interval=500),
}

# Form field -> words a ConfigError message uses for it, so the form can point at the culprit.
_FIELD_WORDS = {
    "d_model": ("d_model",), "n_heads": ("n_heads", "heads"), "n_layers": ("n_layers",),
    "block_size": ("block size",), "dropout": ("dropout",), "batch_size": ("batch size",),
    "lr": ("learning rate",), "warmup": ("warmup",), "budget": ("budget", "steps"),
    "eval_interval": ("eval interval",), "device": ("device",), "model": ("model",),
}


class FormError(ValueError):
    """A form value that cannot start a run; ``field`` names the form field at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def available_devices() -> list[str]:
    """The device choices that exist on this machine ("auto" first)."""
    devices = ["auto", "cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append("mps")
    return devices


# ---------------------------------------------------------------------------- the form


def _number(field: str, text: str, kind, label: str, blank_ok: bool = False):
    text = (text or "").strip()
    if not text:
        if blank_ok:
            return None
        raise FormError(field, f"{label}: a value is needed")
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise FormError(field, f"{label}: {text!r} is not {what}") from None


def config_from_form(values: dict[str, str]) -> TrainConfig:
    """Turn the form's text fields into a validated TrainConfig, or raise FormError with the reason.

    Blank block size / dropout mean "automatic"; data blank or "embedded" means the bundled names.
    The dataset file is read here, so a bad file is refused before anything starts.
    """
    device = values.get("device", "auto")
    if device not in available_devices():
        raise FormError("device", f"device {device!r} is not available here ({', '.join(available_devices())})")
    budget_kind = values.get("budget_kind", "steps")
    kw = dict(
        model=values.get("model", "gpt"),
        d_model=_number("d_model", values.get("d_model"), int, "d_model"),
        n_heads=_number("n_heads", values.get("n_heads"), int, "heads"),
        n_layers=_number("n_layers", values.get("n_layers"), int, "layers"),
        block_size=_number("block_size", values.get("block_size"), int, "block size", blank_ok=True),
        dropout=_number("dropout", values.get("dropout"), float, "dropout", blank_ok=True),
        batch_size=_number("batch_size", values.get("batch_size"), int, "batch size"),
        lr=_number("lr", values.get("lr"), float, "learning rate"),
        warmup=_number("warmup", values.get("warmup"), float, "warmup"),
        eval_interval=_number("eval_interval", values.get("eval_interval"), int, "eval interval"),
        seed=_number("seed", values.get("seed"), int, "seed"),
        device=device,
    )
    if budget_kind == "time":
        kw.update(time_s=_number("budget", values.get("budget"), float, "time budget (s)"), steps=None)
    else:
        kw["steps"] = _number("budget", values.get("budget"), int, "steps")
    data = (values.get("data") or "").strip()
    kw["data"] = None if data in ("", "embedded") else str(Path(data).expanduser())
    try:
        cfg = TrainConfig(**kw)
    except ConfigError as e:
        raise FormError(_field_of(str(e)), str(e)) from None
    if cfg.model == "gpt":
        from minigpt.teaching.params import gpt_total

        n = gpt_total(cfg.model_config(27, cfg.block_size or 16))
        if n > MAX_PARAMS:
            raise FormError("d_model", f"d_model {cfg.d_model} × {cfg.n_layers} layers makes about {n:,} parameters: "
                                       f"more than this tutor trains (at most {MAX_PARAMS:,})")
    try:
        load_words(cfg.data_path())
    except DatasetError as e:
        raise FormError("data", str(e)) from None
    return cfg


def _field_of(message: str) -> str:
    first = message.split(" must ")[0].split(" requested")[0].lower()
    for name, words in _FIELD_WORDS.items():
        if any(w in first for w in words):
            return name
    return "model"


def form_from_config(cfg: TrainConfig) -> dict[str, str]:
    """The form's text fields for a config (duplicating a run, applying a preset)."""
    return {
        "model": cfg.model, "d_model": str(cfg.d_model), "n_heads": str(cfg.n_heads),
        "n_layers": str(cfg.n_layers), "block_size": "" if cfg.block_size is None else str(cfg.block_size),
        "dropout": "" if cfg.dropout is None else f"{cfg.dropout:g}", "batch_size": str(cfg.batch_size),
        "lr": f"{cfg.lr:g}", "warmup": f"{cfg.warmup:g}", "eval_interval": str(cfg.eval_interval),
        "budget_kind": "time" if cfg.time_s is not None else "steps",
        "budget": f"{cfg.time_s:g}" if cfg.time_s is not None else str(cfg.steps),
        "device": cfg.device if cfg.device in available_devices() else "auto",
        "seed": str(cfg.seed), "data": cfg.data or "embedded",
    }


def preset_config(name: str) -> TrainConfig:
    return TrainConfig(**PRESETS[name])


def train_argv(cfg: TrainConfig) -> list[str]:
    """The ``minigpt train`` options that reproduce ``cfg`` (everything the form can set)."""
    argv = ["--model", cfg.model, "--d-model", str(cfg.d_model), "--n-heads", str(cfg.n_heads),
            "--n-layers", str(cfg.n_layers), "--pos", cfg.pos_encoding,
            "--tie" if cfg.tie_weights else "--no-tie", "--batch-size", str(cfg.batch_size),
            "--lr", repr(float(cfg.lr)), "--warmup", repr(float(cfg.warmup)),
            "--eval-interval", str(cfg.eval_interval), "--device", cfg.device, "--seed", str(cfg.seed)]
    if cfg.block_size is not None:
        argv += ["--block-size", str(cfg.block_size)]
    if cfg.dropout is not None:
        argv += ["--dropout", repr(float(cfg.dropout))]
    argv += ["--time", repr(float(cfg.time_s))] if cfg.time_s is not None else ["--steps", str(cfg.steps)]
    if cfg.data is not None:
        argv += ["--data", str(cfg.data)]
    return argv
