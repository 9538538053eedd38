"""What an experiment is: a base training config, one or more axes, and a budget for every run.

An :class:`ExperimentSpec` is data (it round-trips through JSON and TOML). :func:`plan_runs`
resolves it against the dataset into :class:`PlannedRun` s, one per point of the grid: each has
its name (the experiment's name and its axis values), its full ``TrainConfig``, its parameter
count and its number of steps. The plan is written once, when the experiment is created, so a
restarted scheduler runs exactly the runs that were planned.

Budgets:

- ``steps``: every run takes the same number of optimizer steps (the same tokens);
- ``time``: every run trains for the same number of seconds;
- ``compute``: every run gets the same training compute C ≈ 6·N·D FLOPs (N parameters, D tokens:
  a forward and backward pass cost about 6 FLOPs per parameter per token), so a bigger model
  takes fewer steps. This is how scaling laws are measured at fixed compute.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from minigpt import guarded
from minigpt.errors import ConfigError
from minigpt.numbers import number_text

BUDGET_KINDS = ("steps", "time", "compute")
PLOT_KINDS = ("size", "dropout", "positions", "lr", "grid")
# Sizes derived from d_model: "scaling" is the course's scaling-law exercise (heads = layers =
# max(d/16, 2)); "exercise" is its model-size table (tiny … large), "scaling" outside the table.
DERIVE_RULES = ("scaling", "exercise")
EXERCISE_SIZES = {32: (2, 2), 64: (4, 4), 128: (4, 6), 256: (8, 8)}
# Wider models get a smaller peak learning rate (∝ 1/d above 64): the recipe's 5e-3 is tuned for
# the 64-wide model, and the form's 128-wide "large" preset already trains at 2e-3.
LR_REFERENCE_WIDTH = 64
# Each run evaluates about this many times, so its val curve has points to overlay.
EVALS_PER_RUN = 12
# An axis of compute budgets (FLOPs per run): each size at several budgets gives the loss against
# compute of every size and their lower envelope, the compute-optimal frontier.
COMPUTE_AXIS = "compute"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+=-]{0,63}$")
# The most runs one experiment may hold (the course's largest preset has 20). Counted from the
# axes' lengths, before any point or run is built: a grid of thousands was refused only after
# gigabytes of planning. A larger study is several experiments.
MAX_RUNS = 256
MAX_COMPUTE = 1e18  # FLOPs per run: weeks of a laptop at the tutor's sizes


@dataclass(frozen=True)
class Axis:
    """One swept option: a ``TrainConfig`` field and the values it takes, in order."""

    name: str
    values: tuple

    def __post_init__(self) -> None:
        if not self.values:
            raise ConfigError(f"axis {self.name}: give at least one value")
        if len(set(map(str, self.values))) != len(self.values):
            raise ConfigError(f"axis {self.name}: a value is repeated")


@dataclass(frozen=True)
class Budget:
    kind: str  # steps | time | compute
    value: float

    def __post_init__(self) -> None:
        if self.kind not in BUDGET_KINDS:
            raise ConfigError(f"budget must be one of {', '.join(BUDGET_KINDS)}, got {self.kind!r}")
        if isinstance(self.value, bool) or not (self.value > 0 and math.isfinite(self.value)):
            raise ConfigError(f"{self.kind} budget must be a positive number, got {self.value!r}")
        if self.kind == "steps" and self.value != int(self.value):
            raise ConfigError(f"steps budget must be a whole number, got {self.value!r}")
        from minigpt.training.options import MAX_SECONDS, MAX_STEPS

        most = {"steps": MAX_STEPS, "time": MAX_SECONDS, "compute": MAX_COMPUTE}[self.kind]
        if self.value > most:
            raise ConfigError(f"{self.kind} budget must be at most {most:g} a run, got {self.value!r}")

    def describe(self) -> str:
        if self.kind == "steps":
            return f"{int(self.value):,} steps a run"
        if self.kind == "time":
            return f"{self.value:g} s a run"
        mantissa, exp = f"{self.value:.2e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exp)} FLOPs a run (≈ 6·N·tokens)"


@dataclass
class ExperimentSpec:
    name: str
    axes: list[Axis]
    budget: Budget
    base: dict = field(default_factory=dict)  # TrainConfig fields every run shares
    kind: str = "grid"  # which plot: size | dropout | positions | lr | grid
    derive: str | None = None  # heads, layers and lr from d_model (see DERIVE_RULES)
    title: str = ""
    description: str = ""
    length_split: int | None = None  # positions: train on names up to this length, test on longer

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        from minigpt.training.options import TrainConfig

        if not NAME_PATTERN.match(self.name or ""):
            raise ConfigError(f"experiment name {self.name!r}: use letters, digits and - _ . = + (at most 64)")
        if self.kind not in PLOT_KINDS:
            raise ConfigError(f"kind must be one of {', '.join(PLOT_KINDS)}, got {self.kind!r}")
        if self.derive is not None and self.derive not in DERIVE_RULES:
            raise ConfigError(f"derive must be one of {', '.join(DERIVE_RULES)}, got {self.derive!r}")
        if not self.axes:
            raise ConfigError("an experiment needs at least one axis (an option and the values it takes)")
        if self.n_runs > MAX_RUNS:  # counted, never built
            raise ConfigError(f"this grid has {self.n_runs:,} runs ({' × '.join(str(len(a.values)) for a in self.axes)}"
                              f" values): more than the {MAX_RUNS} one experiment may hold; use fewer values "
                              f"or split it into several experiments")
        known = {f.name for f in fields(TrainConfig)} - {"steps", "time_s"}
        for name in list(self.base) + [a.name for a in self.axes if a.name != COMPUTE_AXIS]:
            if name not in known:
                raise ConfigError(f"{name!r} is not a training option (one of: {', '.join(sorted(known))})")
        for axis in self.axes:
            if axis.name == COMPUTE_AXIS:
                if self.budget.kind != "compute":
                    raise ConfigError("a compute axis needs a compute budget (--compute, or budget.compute)")
                for v in axis.values:
                    Budget("compute", v)  # each level a positive number
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ConfigError("an option appears on two axes")
        if self.length_split is not None and (not isinstance(self.length_split, int) or self.length_split < 1):
            raise ConfigError(f"length_split must be a positive whole number, got {self.length_split!r}")

    @property
    def n_runs(self) -> int:
        return math.prod(len(a.values) for a in self.axes)

    def points(self) -> list[dict]:
        """Every combination of axis values, the first axis varying slowest."""
        out = [{}]
        for axis in self.axes:
            out = [{**p, axis.name: v} for p in out for v in axis.values]
        return out

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "title": self.title, "description": self.description,
                "base": dict(self.base), "axes": {a.name: list(a.values) for a in self.axes},
                "budget": {self.budget.kind: self.budget.value}, "derive": self.derive,
                "length_split": self.length_split}

    @classmethod
    def from_dict(cls, values: dict) -> ExperimentSpec:
        """From JSON or TOML: ``axes`` is a table of option → list of values, ``budget`` a
        one-entry table (``steps``, ``time`` or ``compute``)."""
        if not isinstance(values, dict):
            raise ConfigError("an experiment is a table of settings")
        known = {"name", "kind", "title", "description", "base", "axes", "budget", "derive", "length_split"}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"unknown experiment settings: {', '.join(sorted(unknown))} "
                              f"(known: {', '.join(sorted(known))})")
        axes = values.get("axes")
        if not isinstance(axes, dict) or not axes:
            raise ConfigError("[axes] must list at least one option and its values, e.g. d_model = [32, 64]")
        axis_list = []
        for name, vals in axes.items():
            vals = vals if isinstance(vals, list) else [vals]
            axis_list.append(Axis(name, tuple(vals)))
        budget = values.get("budget")
        if not isinstance(budget, dict) or len(budget) != 1:
            raise ConfigError("[budget] must hold exactly one of steps, time or compute")
        (kind, amount), = budget.items()
        base = values.get("base", {})
        if not isinstance(base, dict):
            raise ConfigError("[base] must be a table of training options")
        return cls(name=str(values.get("name", "")), axes=axis_list, budget=Budget(kind, amount), base=dict(base),
                   kind=values.get("kind", "grid"), derive=values.get("derive"), title=values.get("title", ""),
                   description=values.get("description", ""), length_split=values.get("length_split"))


def load_spec_file(path: Path | str) -> ExperimentSpec:
    """A custom grid from a TOML file (one clear ConfigError for a missing or malformed file)."""
    import tomllib

    path = Path(path)
    try:
        values = tomllib.loads(guarded.read_text(path, guarded.TEXT_FILE_BYTES))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as e:  # a folder, a FIFO, a device, a file too large (minigpt.guarded)
        raise ConfigError(f"{path}: cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    values.setdefault("name", path.stem)
    return ExperimentSpec.from_dict(values)


# ---------------------------------------------------------------------------- resolving a plan


@dataclass(frozen=True)
class DataInfo:
    """What the plan needs to know about the dataset: the model's shape and tokens per name."""

    vocab_size: int
    block_size: int
    mean_tokens: float  # real positions per training name (its letters + the end token)
    n_train: int


def data_info(words: list[str], split_seed: int = 42, block_size: int | None = None) -> DataInfo:
    from minigpt.data import Vocab
    from minigpt.splits import split_words

    train = split_words(words, split_seed).train
    block = block_size or max(len(w) for w in words) + 1
    # A word longer than the block is cut to block − 1 letters (EncodedSplit does the same).
    mean = sum(min(len(w), block - 1) + 1 for w in train) / max(len(train), 1)
    return DataInfo(Vocab.from_words(words).size, block, mean, len(train))


DATA_FORMATS_PLANNED = ("lines", "text", "repeats")


def data_format_of(spec: ExperimentSpec) -> str:
    """The one data format of an experiment's runs (its base's, or an axis of one value): losses
    on different data are not comparable, so an axis of several formats is refused."""
    formats = [v for a in spec.axes if a.name == "data_format" for v in a.values] or [
        spec.base.get("data_format", "lines")]
    if len(set(map(str, formats))) > 1:
        raise ConfigError("data_format is one per experiment: losses on different data are not comparable "
                          "(make one experiment per format)")
    fmt = str(formats[0])
    if fmt not in DATA_FORMATS_PLANNED:
        raise ConfigError(f"data_format must be one of {', '.join(DATA_FORMATS_PLANNED)}, got {fmt!r}")
    if spec.length_split is not None and fmt != "lines":
        raise ConfigError("length_split trains on the shorter names: it needs data_format lines")
    return fmt


def windowed_info(fmt: str, block_size: int | None, data: Path | str | None = None) -> DataInfo:
    """The plan's facts for data read in windows, where every position of a row is a target: a
    text file (``text``) or the generated repeated chunks (``repeats``, no file read)."""
    if fmt == "repeats":
        from minigpt.repeat_data import DEFAULT_BLOCK, SPLIT_ROWS, repeat_vocab

        block = block_size or DEFAULT_BLOCK
        return DataInfo(repeat_vocab().size, block, float(block), SPLIT_ROWS["train"])
    from minigpt import paths
    from minigpt.text_data import TRAIN_FRACTION, load_text, text_vocab

    block = block_size or 64  # load_text_dataset's default
    text = load_text(data or paths.default_dataset())
    train_chars = int(TRAIN_FRACTION * len(text))
    if train_chars <= block:
        raise ConfigError(f"the text's {train_chars:,} training characters hold no window of {block + 1}")
    return DataInfo(text_vocab(text).size, block, float(block), train_chars - block)


def spec_data_info(spec: ExperimentSpec, data: Path | str | None = None, words: list[str] | None = None) -> DataInfo:
    """The plan's facts for ``spec``'s data format: names counted from ``words`` (or the file), a
    text's or the generated rows' windows."""
    fmt = data_format_of(spec)
    block = spec.base.get("block_size")
    if fmt != "lines":
        return windowed_info(fmt, block, data)
    if words is None:
        from minigpt.data import load_words

        words = load_words(data)
    return data_info(words, split_seed=int(spec.base.get("split_seed", 42)), block_size=block)


@dataclass(frozen=True)
class PlannedRun:
    name: str  # the run folder's name: experiment name + axis values
    values: dict  # axis → value
    config: dict  # TrainConfig.to_dict()
    n_params: int
    tokens_per_step: float
    steps: int | None  # None for a time budget
    flops: float | None  # 6·N·tokens for the whole run (None for a time budget)

    def to_dict(self) -> dict:
        return {"name": self.name, "values": self.values, "config": self.config, "n_params": self.n_params,
                "tokens_per_step": self.tokens_per_step, "steps": self.steps, "flops": self.flops}

    @classmethod
    def from_dict(cls, d: dict) -> PlannedRun:
        return cls(d["name"], dict(d["values"]), dict(d["config"]), int(d["n_params"]),
                   float(d["tokens_per_step"]), d.get("steps"), d.get("flops"))


def value_text(value) -> str:
    """An axis value as it appears in run names and tables: 0.001 → 1e-3, 0.1 → 0.1, 64 → 64
    (the one notation of minigpt.numbers.number_text, also the runs list's and the form's)."""
    if isinstance(value, float):
        return number_text(value)
    return str(value)


def run_name(spec: ExperimentSpec, values: dict) -> str:
    """``scaling_law-d64``, ``dropout-drop0.1``, ``positions-rope``: words stand for themselves."""
    parts = [spec.name] + [value_text(v) if isinstance(v, str) else f"{_short(axis)}{value_text(v)}"
                           for axis, v in values.items()]
    return "-".join(parts)


_SHORT = {"d_model": "d", "n_layers": "L", "n_heads": "h", "dropout": "drop", "pos_encoding": "pos",
          "lr": "lr", "block_size": "T", "batch_size": "B", COMPUTE_AXIS: "C"}


def _short(axis: str) -> str:
    return _SHORT.get(axis, axis + "=")


def derived_shape(rule: str, d_model: int) -> tuple[int, int]:
    """(heads, layers) for a width under a derive rule."""
    if rule == "exercise" and d_model in EXERCISE_SIZES:
        return EXERCISE_SIZES[d_model]
    n = max(d_model // 16, 2)
    return n, n


def derived_lr(base_lr: float, d_model: int) -> float:
    return base_lr * min(1.0, LR_REFERENCE_WIDTH / d_model)


def resolve_config(spec: ExperimentSpec, values: dict, budget_steps: int | None = None):
    """The TrainConfig of one grid point (before a compute budget sets its steps)."""
    from minigpt.training.options import TrainConfig

    values = {k: v for k, v in values.items() if k != COMPUTE_AXIS}
    kw = {**spec.base, **values}
    if spec.derive is not None and "d_model" in values:
        heads, layers = derived_shape(spec.derive, int(kw["d_model"]))
        if "n_heads" not in values and "n_heads" not in spec.base:
            kw["n_heads"] = heads
        if "n_layers" not in values and "n_layers" not in spec.base:
            kw["n_layers"] = layers
        if "lr" not in values:
            kw["lr"] = derived_lr(float(kw.get("lr", TrainConfig.lr)), int(kw["d_model"]))
    if spec.budget.kind == "time":
        kw.update(time_s=float(spec.budget.value), steps=None)
    else:
        # (a compute budget's steps come from the model's size: one step stands in until then)
        placeholder = int(spec.budget.value) if spec.budget.kind == "steps" else 1
        kw.update(steps=budget_steps or placeholder, time_s=None)
    try:
        return TrainConfig(**kw)
    except ConfigError as e:
        point = ", ".join(f"{k}={value_text(v)}" for k, v in values.items())
        raise ConfigError(f"run {point}: {e}") from None
    except TypeError as e:  # a value of the wrong type for its option (a string for a width)
        raise ConfigError(f"run with {values}: {e}") from None


def count_params(cfg, info: DataInfo) -> int:
    """Parameters of the model ``cfg`` builds on this data (without building it for MiniGPT)."""
    model_config = cfg.model_config(info.vocab_size, cfg.block_size or info.block_size)
    if cfg.model == "gpt":
        from minigpt.teaching.params import gpt_total

        return gpt_total(model_config)

    from minigpt.models.build import build_model, count_parameters, on_meta_device

    with on_meta_device():
        return count_parameters(build_model(cfg.model, model_config))


def steps_for_compute(flops: float, n_params: int, tokens_per_step: float) -> int:
    """Steps that spend ``flops`` at 6·N FLOPs per token (at least one)."""
    return max(1, round(flops / (6 * n_params * tokens_per_step)))


def plan_runs(spec: ExperimentSpec, info: DataInfo) -> list[PlannedRun]:
    plan = []
    for values in spec.points():
        cfg = resolve_config(spec, values)
        n_params = count_params(cfg, info)
        tokens_per_step = cfg.batch_size * info.mean_tokens
        steps = cfg.steps
        if spec.budget.kind == "compute":
            flops = float(values.get(COMPUTE_AXIS, spec.budget.value))
            steps = steps_for_compute(flops, n_params, tokens_per_step)
            cfg = resolve_config(spec, values, budget_steps=steps)
        if steps is not None and "eval_interval" not in spec.base and "eval_interval" not in values:
            # about EVALS_PER_RUN evaluations for the val curve, never more often than every 10 steps
            cfg.eval_interval = max(-(-steps // EVALS_PER_RUN), min(10, steps))
        flops = 6.0 * n_params * tokens_per_step * steps if steps is not None else None
        plan.append(PlannedRun(run_name(spec, values), values, cfg.to_dict(), n_params, tokens_per_step,
                               steps, flops))
    return plan
