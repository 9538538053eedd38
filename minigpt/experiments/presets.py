"""The course's exercises as experiments, and custom grids written as text (``d_model=32,64``).

Budgets are chosen so that each preset finishes on a 2-core laptop in minutes (model size: under
15 minutes, measured by ``benchmarks/bench_sweep.py``) except the scaling law, which trains a
12.6M-parameter model and is meant to run in the background for about half an hour.
"""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.errors import ConfigError
from minigpt.experiments.spec import COMPUTE_AXIS, Axis, Budget, ExperimentSpec

# The course's exercise number for each preset, so the lesson and the lab can say which it is.
PRESETS: dict[str, dict] = {
    "model_size": dict(
        title="Model size", kind="size", derive="exercise",
        description="Exercise 2: tiny (d 32, 2 layers), small (64, 4), medium (128, 6) and large (256, 8) "
                    "trained for the same number of steps. Which reaches the lowest val loss?",
        axes={"d_model": [32, 64, 128, 256]}, budget={"steps": 1000}),
    "dropout": dict(
        title="Dropout", kind="dropout",
        description="Exercise 4: the 64-wide model with dropout 0 … 0.5, long enough to overfit. "
                    "Train loss, val loss and their gap per rate.",
        base={"d_model": 64, "n_heads": 4, "n_layers": 4},
        axes={"dropout": [rate / 10 for rate in (0, 1, 2, 3, 5)]}, budget={"steps": 5000}),
    "positions": dict(
        title="Position encodings", kind="positions", length_split=8,
        description="Exercise 5: learned, sinusoidal and RoPE positions, trained on names of up to 8 "
                    "letters, then tested on longer names than any seen in training.",
        base={"d_model": 64, "n_heads": 4, "n_layers": 4},
        axes={"pos_encoding": ["learned", "sinusoidal", "rope"]}, budget={"steps": 3000}),
    "scaling_law": dict(
        title="Scaling law", kind="size", derive="scaling",
        description="Exercise 6: widths 16 … 256 (heads = layers = d/16, at least 2) on the same number "
                    "of tokens; val loss against parameters on log-log axes, with L(N) = a·N^-α + c fitted.",
        axes={"d_model": [16, 32, 64, 128, 256]}, budget={"steps": 2000}),
    "scaling_compute": dict(
        title="Compute-matched sizes", kind="size", derive="scaling",
        description="The same widths at the same compute (≈ 6·N·tokens FLOPs): bigger models take fewer "
                    "steps. At fixed compute the loss is U-shaped in size.",
        axes={"d_model": [32, 64, 128, 256]}, budget={"compute": 1e13}),
    "learning_rate": dict(
        title="Learning rate", kind="lr",
        description="The 64-wide model at peak learning rates 1e-3 … 2e-2: final val loss against lr on a "
                    "log axis. Too small learns slowly, too large diverges. AdamW for every weight, as "
                    "in the course (with Muon, the default, lr would only set the embeddings' and head's).",
        base={"d_model": 64, "n_heads": 4, "n_layers": 4, "optimizer": "adamw"},
        axes={"lr": [1e-3, 2e-3, 5e-3, 1e-2, 2e-2]}, budget={"steps": 2000}),
    # The induction-head lesson's recipe (the training form's "induction" preset, pinned equal by
    # tests/test_experiments_spec.py) at one, two and three layers: generated rows, no file read.
    "induction": dict(
        title="Induction heads and depth", kind="grid",
        description="Attention-only models of 1, 2 and 3 layers (one head each) on rows of a random chunk "
                    "written again and again (data format repeats, the induction-head lesson's). A head "
                    "that finds the letter after the earlier copy needs a previous-token head below it, "
                    "so compare the one-layer model's val loss with the deeper ones'.",
        base={"model": "gpt", "d_model": 64, "n_heads": 1, "attention_only": True, "data_format": "repeats",
              "block_size": 32, "batch_size": 32, "optimizer": "adamw", "lr": 1e-3, "ema": 0.0,
              "eval_interval": 250},
        axes={"n_layers": [1, 2, 3]}, budget={"steps": 1500}),
}


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_spec(name: str, *, experiment_name: str | None = None, budget: Budget | None = None,
                base: dict | None = None) -> ExperimentSpec:
    """The preset ``name`` as a spec; ``budget`` and ``base`` override its own (CLI options)."""
    if name not in PRESETS:
        raise ConfigError(f"no preset called {name!r} (presets: {', '.join(PRESETS)})")
    values = dict(PRESETS[name])
    values["name"] = experiment_name or name
    spec = ExperimentSpec.from_dict({k: v for k, v in values.items()})
    if budget is not None:
        spec.budget = budget
    if base:
        spec.base = {**spec.base, **base}
        spec.validate()
    return spec


# ---------------------------------------------------------------------------- custom grids as text


def coerce(option: str, text: str):
    """A value typed as text, as the training option ``option`` expects it (64 → int, 0.1 → float),
    with the new-run form's own conversion and messages."""
    from minigpt.control.form import value_of
    from minigpt.training.options import OPTIONS_BY_NAME

    if option not in OPTIONS_BY_NAME:
        raise ConfigError(f"{option!r} is not a training option (one of: {', '.join(sorted(OPTIONS_BY_NAME))})")
    if option in ("steps", "time_s"):
        raise ConfigError("the budget is the experiment's: give steps=, time= or compute=")
    return value_of(OPTIONS_BY_NAME[option], text)


def parse_axis(text: str) -> Axis:
    """``d_model=32,64,128`` → Axis("d_model", (32, 64, 128)); ``compute=1e12,1e13`` → budgets."""
    option, sep, values = text.partition("=")
    option = option.strip().replace("-", "_")
    if not sep or not option:
        raise ConfigError(f"axis {text!r}: write it as option=value,value (for example d_model=32,64)")
    if option == COMPUTE_AXIS:
        try:
            return Axis(option, tuple(float(v) for v in values.split(",")))
        except ValueError:
            raise ConfigError(f"compute: {values!r} is not a list of numbers of FLOPs") from None
    return Axis(option, tuple(coerce(option, v) for v in values.split(",")))


@dataclass
class GridText:
    axes: list[Axis]
    base: dict
    budget: Budget | None


def parse_grid_text(text: str) -> GridText:
    """A whole custom grid on one line, as the lab's form takes it:
    ``d_model=16,32 dropout=0,0.1 steps=500 n_layers=1``. Options with several values are axes,
    with one value they are shared by every run; steps=, time= or compute= is the budget."""
    axes, base, budget = [], {}, None
    for token in text.split():
        key, sep, value = token.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ConfigError(f"{token!r}: write option=value or option=v1,v2,…")
        if key in ("steps", "time", "compute") and "," not in value:
            try:
                amount = float(value)
            except ValueError:
                raise ConfigError(f"{key}: {value!r} is not a number") from None
            budget = Budget(key, int(amount) if key == "steps" and amount == int(amount) else amount)
        elif "," in value:
            axes.append(parse_axis(token))
        else:
            base[key] = coerce(key, value)
    if not axes:
        raise ConfigError("give at least one option with several values, e.g. d_model=16,32")
    compute = next((a for a in axes if a.name == COMPUTE_AXIS), None)
    if compute is not None and budget is None:
        budget = Budget("compute", compute.values[0])  # the axis sets each run's budget
    return GridText(axes, base, budget)


def infer_kind(axes: list[Axis]) -> str:
    first = axes[0].name
    return {"d_model": "size", "n_layers": "size", "dropout": "dropout", "pos_encoding": "positions",
            "lr": "lr"}.get(first, "grid")


def custom_spec(name: str, axes: list[Axis], budget: Budget, base: dict | None = None) -> ExperimentSpec:
    """A grid the learner wrote: the plot follows the first axis; a d_model axis derives heads and
    layers as the course's scaling exercise does unless they are fixed in ``base``."""
    base = dict(base or {})
    if any(a.name == COMPUTE_AXIS for a in axes) and budget.kind != "compute":
        raise ConfigError("a compute axis sets each run's budget: give no --steps or --time with it")
    kind = infer_kind(axes)
    fixed = set(base) | {a.name for a in axes}
    derive = "scaling" if axes[0].name == "d_model" and not {"n_heads", "n_layers"} & fixed else None
    return ExperimentSpec(name=name, axes=list(axes), budget=budget, base=base, kind=kind, derive=derive,
                          title="Custom grid", description=" × ".join(a.name for a in axes))
