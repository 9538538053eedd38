"""The new-run form without Textual: its fields, their text in and out, validation and presets.

The fields are the training options themselves (``minigpt.training.options.OPTIONS``): the form
holds one text per option, keyed by the option's name, common options first and the advanced
ones after them. A blank field is None for an optional option (its placeholder says what that
means: "auto", "no clipping", the embedded names). Text is written so that it reads back exactly,
so config → form → config is the identity and "copy settings" starts the same run.

Every check is the library's own (``TrainConfig``'s bounds, the trainer's data loader, the one size
rule of ``minigpt.models.build`` and the memory estimate, through ``training.session``), so the form
refuses exactly what the trainer would, before anything starts, with a ``ConfigError`` whose
``field`` is the option at fault.
"""

from __future__ import annotations

from pathlib import Path

import torch

from minigpt.errors import ConfigError, DatasetError
from minigpt.training.options import EMBEDDED, OPTIONS, Option, TrainConfig, format_value, load_data_for
from minigpt.training.session import refuse_too_large

# Presets the form offers. "course" is the course's model; tiny trains in seconds on a laptop.
PRESETS: dict[str, dict] = {
    "course": dict(model="gpt", d_model=64, n_heads=4, n_layers=4, batch_size=128, lr=5e-3, steps=3000,
                   eval_interval=250),
    "tiny": dict(model="gpt", d_model=16, n_heads=2, n_layers=1, batch_size=64, lr=1e-2, steps=300,
                 eval_interval=50),
    "large": dict(model="gpt", d_model=128, n_heads=8, n_layers=6, batch_size=128, lr=2e-3, steps=8000,
                  eval_interval=500),
    # The induction-head lesson's run (also its lab job and the bundled checkpoint): two attention-only
    # layers of one head each on repeated random chunks, AdamW at 1e-3 on small batches, the recipe of
    # the small reproductions; the heads form within a few hundred steps (under a minute on a laptop's
    # CPU). No weight average, so the saved model is the last.
    "induction": dict(model="gpt", d_model=64, n_heads=1, n_layers=2, attention_only=True, data_format="repeats",
                      block_size=32, batch_size=32, steps=1500, optimizer="adamw", lr=1e-3, ema=0.0,
                      eval_interval=250),
}
# What a preset leaves as the learner set it: where and on what the run trains.
KEPT_BY_PRESETS = ("device", "data")

ON_WORDS, OFF_WORDS = ("on", "true", "yes", "1"), ("off", "false", "no", "0")

COMMON_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if not o.advanced)
ADVANCED_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if o.advanced)
FORM_OPTIONS: tuple[Option, ...] = COMMON_OPTIONS + ADVANCED_OPTIONS


def available_devices() -> list[str]:
    """The device choices that exist on this machine ("auto" first)."""
    devices = ["auto", "cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append("mps")
    return devices


# ---------------------------------------------------------------------------- text in and out


def text_of(opt: Option, value) -> str:
    """The form's text for an option's value (blank for None)."""
    return "" if value is None else format_value(value)


def value_of(opt: Option, text: str | None):
    """The value the form's text means, or a ConfigError (naming the field) if it means none."""
    text = (text or "").strip()
    if opt.name == "data" and text == EMBEDDED:
        text = ""
    if not text:
        if opt.optional:
            return None
        raise ConfigError(f"{opt.noun}: a value is needed", field=opt.name)
    if opt.kind is bool:
        if text.lower() in ON_WORDS + OFF_WORDS:
            return text.lower() in ON_WORDS
        raise ConfigError(f"{opt.noun}: {text!r} is not on or off", field=opt.name)
    if opt.kind in (int, float):
        try:
            return opt.kind(text)
        except ValueError:
            what = "a whole number" if opt.kind is int else "a number"
            raise ConfigError(f"{opt.noun}: {text!r} is not {what}", field=opt.name) from None
    if opt.choices is not None and text not in opt.choices:
        raise ConfigError(f"{opt.noun}: {text!r} is not one of {', '.join(opt.choices)}", field=opt.name)
    if opt.name == "data":
        return str(Path(text).expanduser())
    return text


def form_from_config(cfg: TrainConfig) -> dict[str, str]:
    """The form's texts for a config (copying a run's settings, applying a preset)."""
    return {opt.name: text_of(opt, getattr(cfg, opt.name)) for opt in FORM_OPTIONS}


def config_from_form(values: dict[str, str]) -> TrainConfig:
    """Turn the form's texts into a validated TrainConfig, or raise ConfigError with ``field`` set.

    An option missing from ``values`` keeps its default. The dataset file is read here, as the
    trainer reads it, so a bad file or a model too large for it is refused before anything starts.
    """
    kw = {opt.name: value_of(opt, values[opt.name]) if opt.name in values else opt.default
          for opt in FORM_OPTIONS}
    cfg = TrainConfig(**kw)
    if cfg.device not in available_devices():
        raise ConfigError(f"device {cfg.device!r} is not available here ({', '.join(available_devices())})",
                          field="device")
    try:  # the trainer's own loader: a text-format file is read as text, a names file as lines
        data = load_data_for(cfg)
    except DatasetError as e:
        raise ConfigError(str(e), field="data") from None
    refuse_too_large(cfg, data)  # every model kind, with the data's real vocabulary and block size
    return cfg


# ---------------------------------------------------------------------------- presets


def preset_config(name: str) -> TrainConfig:
    return TrainConfig(**PRESETS[name])


def apply_preset(values: dict[str, str], name: str) -> dict[str, str]:
    """The form's texts with preset ``name`` applied: every option from the preset (the rest at its
    default) except where and on what the run trains, which stay as the learner set them."""
    out = form_from_config(preset_config(name))
    out.update({key: values[key] for key in KEPT_BY_PRESETS if key in values})
    return out
