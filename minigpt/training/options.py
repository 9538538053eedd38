"""What a training run is asked to do: ``TrainConfig``, and the one list of its options.

Every field of :class:`TrainConfig` is declared with :func:`option`, which records its help, its
bounds or choices, whether the form shows it among the common options or under "advanced", and
which model kinds it applies to. :data:`OPTIONS` is read from those declarations, and everything
else is generated from it: the ``minigpt train`` flags and their help (``minigpt/cli/train.py``), the
new-run form's fields, its text conversions and presets (``minigpt/control/form.py`` and
``tui/training/training_form.py``), and the checks below.

**Adding an option is a one-place change**: add a field here, e.g. ::

    processes: int = option(1, "Training processes (one per device)", ge=1, advanced=True)

and the CLI gets ``--processes`` (help with its default), the form gets a "processes" field in
its advanced fold, values out of bounds are refused with the field marked, and the saved
``config.json`` carries it. Only cross-field rules (exactly one budget, warmup steps whole) and what
the option *does* (the training loop) need code elsewhere.

Every check raises a ``ConfigError`` whose ``field`` names the option at fault, so the CLI, the
form and a resumed run refuse the same impossible values with the same message. This module
imports no torch, so the command line can build its options before torch loads.
"""

from __future__ import annotations

import types
import typing
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from minigpt import paths
from minigpt.errors import ConfigError
from minigpt.models.config import (
    BIGRAM_TABLES,
    MAX_LAYERS,
    NORMS,
    PARAMETRIZATIONS,
    POSITIONAL_ENCODINGS,
    TRAINED_FEED_FORWARDS,
    BigramConfig,
    GPTConfig,
    MLPConfig,
)
from minigpt.runs.files import CONFIG_FILE
from minigpt.runs.schema import read_config_values
from minigpt.training.option_spec import MODEL_KINDS, Option, format_value, option  # noqa: F401 (form, tests)

if typing.TYPE_CHECKING:
    from minigpt.data import Dataset

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16")
# one item per line (names), one long text, or generated rows with a repeated random chunk
DATA_FORMATS = ("lines", "text", "repeats")
NONFINITE = ("fail", "skip")  # what a NaN or infinite loss or gradient does to a run
SCHEDULES = ("cosine", "wsd")  # after the warmup: cosine decay, or warmup-stable-decay
OPTIMIZERS = ("adamw", "muon")  # muon for the block matrices (AdamW for the rest), or AdamW for all
EMBEDDED = "embedded"
GRADIENT_MODELS = ("gpt", "mlp")  # the bigram counts: no optimiser, batches or evaluations

# Budgets up to this size train without dropout (short runs do better without it; longer ones
# overfit and need it): measured on the names data, see the notes on training on CPU.
SHORT_RUN_STEPS = 6000
SHORT_RUN_SECONDS = 200.0

# The longest budgets accepted: ten million steps (weeks on a laptop for the course's model) or a
# week of wall-clock time. Every option has such an upper bound (le=…), chosen as far beyond what
# a learner would ask as it is short of what hangs or exhausts memory; docs/reliability.md lists
# them (tests/test_readme.py checks its table against OPTIONS) and tests/hostile/test_option_bounds.py
# tries each one from this list.
MAX_STEPS = 10_000_000
MAX_SECONDS = 7 * 24 * 3600.0


@dataclass
class TrainConfig:
    model: str = option("gpt", "Model kind: gpt (the MiniGPT Transformer), mlp (a window of characters "
                        "into a hidden layer) or bigram (a table of pair counts).", choices=MODEL_KINDS)
    # MiniGPT
    d_model: int = option(64, "MiniGPT width: the length of every position's vector.", label="d_model",
                          models=("gpt",), ge=1, le=4096,
                          hint="width")
    n_heads: int = option(4, "Attention heads per block; each gets d_model / heads dimensions.",
                          label="heads", models=("gpt",), ge=1, le=256, hint="divides d_model")
    n_layers: int = option(4, "Transformer blocks.", label="layers", models=("gpt",), ge=1, le=MAX_LAYERS)
    dropout: float | None = option(None, "Dropout probability while training.", models=("gpt",), ge=0, lt=1,
                                   none_means="0 for short budgets, 0.1 for long ones", hint="auto")
    block_size: int | None = option(None, "Longest sequence the model reads.", label="block size",
                                    advanced=True, ge=2, le=16384, none_means="the longest item + 1", hint="auto")
    pos_encoding: str = option("learned", "How positions are told apart: learned vectors, fixed sinusoids or "
                               "rotations of query and key (rope).", label="positions", advanced=True,
                               models=("gpt",), choices=POSITIONAL_ENCODINGS, flag="--pos")
    tie_weights: bool = option(False, "Share the token embedding with the output head.", label="tie weights",
                               advanced=True, models=("gpt",), flag="--tie")
    norm: str = option("layernorm", "Normalisation before each sub-layer: layernorm (the course's) or rmsnorm "
                       "(rescale only: no mean, no bias).", advanced=True, models=("gpt",), choices=NORMS)
    ffn: str = option("gelu", "Feed-forward: gelu (4·d hidden, the course's), swiglu (gated, 8·d/3 hidden) or "
                      "relu2 (squared ReLU).", label="feed-forward", advanced=True, models=("gpt",),
                      choices=TRAINED_FEED_FORWARDS)
    qk_norm: bool = option(False, "RMS-normalise each head's queries and keys before their dot product.",
                           label="QK-norm", advanced=True, models=("gpt",))
    bias: bool = option(True, "Biases in the linear layers and LayerNorms.", advanced=True, models=("gpt",))
    # The modded-nanogpt speedrun's tricks (minigpt/models/speedrun.py; raced in docs/benchmarks.md)
    bigram: str = option("off", "An exact table of character pairs: residual ((previous, current) pair → a "
                         "vector added before every block) or logits (a 27×27 table of next-character "
                         "logits).", label="bigram table", advanced=True, models=("gpt",), choices=BIGRAM_TABLES)
    smear: bool = option(False, "A gate adds the previous character's embedding to each position's.",
                         advanced=True, models=("gpt",))
    value_residual: bool = option(False, "Every layer's attention values mix in the first layer's.",
                                  label="value residual", advanced=True, models=("gpt",))
    x0_shortcut: bool = option(False, "The embedding is added to every block's input (a learned weight each).",
                               label="x0 shortcut", advanced=True, models=("gpt",))
    softcap: float | None = option(None, "Logits soft-capped at ±cap by cap·tanh(logit / cap).", label="logit cap",
                                   advanced=True, models=("gpt",), ge=1, le=1000, none_means="no cap",
                                   hint="blank: off")
    zero_init: bool = option(False, "The projections into the residual stream and the head start at zero.",
                             label="zero init", advanced=True, models=("gpt",))
    mtp_weight: float = option(0.0, "Multi-token prediction: weight of an auxiliary loss on the character "
                               "after next (0: off).", label="MTP weight", advanced=True, models=("gpt",), ge=0,
                               le=10)
    attention_only: bool = option(False, "MiniGPT without feed-forward layers: attention alone (the model "
                                  "induction heads are studied in).", label="attention only", advanced=True,
                                  models=("gpt",))
    parametrization: str = option("sp", "sp (the standard parametrization) or mup (μP: the hidden matrices' init and "
                                  "Adam lr, the logits and the attention scores scaled with d_model / 64, so a "
                                  "learning rate tuned at width 64 transfers; needs adamw).", label="parametrization",
                                  advanced=True, models=("gpt",), choices=PARAMETRIZATIONS)
    z_loss: float = option(0.0, "PaLM's z-loss: this weight times (log Z)² of the output softmax joins the training "
                           "loss (e.g. 1e-4; 0: off).", label="z-loss", advanced=True, models=("gpt",), ge=0, le=1)
    # MLP
    mlp_context: int = option(3, "MLP: how many previous characters it sees.", label="context",
                              models=("mlp",), ge=1, le=256)
    mlp_embd: int = option(10, "MLP: length of each character's embedding.", label="embedding",
                           models=("mlp",), ge=1, le=4096)
    mlp_hidden: int = option(200, "MLP: units in the hidden layer.", label="hidden units", models=("mlp",), ge=1,
                            le=65536)
    # Bigram
    smoothing: float = option(1.0, "Bigram: count added to every pair before normalising (add-k).",
                              models=("bigram",), ge=0, le=1e6)
    # Optimisation
    batch_size: int = option(128, "Names per optimiser step.", label="batch size", models=GRADIENT_MODELS, ge=1,
                            le=65536)
    # 3e-3 → 5e-3 measured −0.02 test loss at a 120 s budget
    lr: float = option(5e-3, "Peak learning rate.", label="learning rate", models=GRADIENT_MODELS, gt=0,
                      le=10)
    min_lr_ratio: float = option(0.1, "Where the cosine decay ends, as a fraction of the peak.",
                                 label="min lr ratio", advanced=True, models=GRADIENT_MODELS, ge=0, le=1)
    # muon: test 1.897 against AdamW's 1.932 (three-seed means, 120 s on two cores; docs/benchmarks.md)
    optimizer: str = option("muon", "muon (orthogonalized momentum for the matrices inside the blocks; embeddings, "
                            "head, norms and biases keep AdamW) or adamw for everything (the course's).",
                            advanced=True, models=("gpt",), choices=OPTIMIZERS)
    momentum_warmup: int = option(0, "muon: steps over which its momentum warms up from 0.85 to 0.95 (0: 0.95 "
                                  "from the start).", label="muon warmup", advanced=True, models=("gpt",),
                                  ge=0, le=MAX_STEPS)
    batch_ramp: float = option(0.0, "A fraction of the budget over which the batch grows from a quarter of the "
                               "batch size to all of it (0: the full batch from the start).", label="batch ramp",
                               advanced=True, models=GRADIENT_MODELS, ge=0, le=1)
    muon_lr: float = option(0.02, "muon: the peak learning rate of the block matrices (the schedule scales it "
                            "like the AdamW one).", label="muon lr", advanced=True, models=("gpt",), gt=0,
                            le=10)
    schedule: str = option("cosine", "After the warmup: cosine decay to the min lr, or wsd (warmup-stable-decay: "
                           "the peak lr held, then a linear cooldown to the min lr).", advanced=True,
                           models=GRADIENT_MODELS, choices=SCHEDULES)
    cooldown: float = option(0.2, "wsd: the final fraction of the budget spent decaying.", advanced=True,
                             models=GRADIENT_MODELS, gt=0, le=1)
    warmup: float = option(0.02, "Warmup: a fraction of the budget (< 1) or a number of steps (≥ 1).",
                           advanced=True, models=GRADIENT_MODELS, ge=0, le=MAX_STEPS, hint="<1 fraction, ≥1 steps")
    beta1: float = option(0.9, "AdamW's decay of the gradient average.", advanced=True, models=GRADIENT_MODELS,
                          ge=0, lt=1)
    beta2: float = option(0.99, "AdamW's decay of the squared-gradient average.", advanced=True,
                          models=GRADIENT_MODELS, ge=0, lt=1)
    weight_decay: float = option(0.1, "AdamW weight decay of the matrices.", label="weight decay", advanced=True,
                                 models=GRADIENT_MODELS, ge=0, le=100)
    grad_clip: float | None = option(1.0, "Largest gradient norm; larger gradients are scaled down.",
                                     label="grad clip", advanced=True, models=GRADIENT_MODELS, gt=0, le=1e6,
                                     none_means="no clipping", hint="blank: off")
    ema: float = option(0.999, "Decay of the weight average (an exponential moving average, EMA) that is "
                        "evaluated and kept; 0 turns it off.", label="EMA decay", advanced=True,
                        models=GRADIENT_MODELS, ge=0, lt=1)
    nonfinite: str = option("fail", "When the loss or the gradients stop being finite numbers (NaN, inf): fail "
                            "stops the run as failed with the reason; skip skips that batch (20 in a row "
                            "still fail).", label="on NaN", advanced=True, models=GRADIENT_MODELS,
                            choices=NONFINITE, flag="--on-nan")
    pack: bool = option(True, "MiniGPT: several names to a row, kept apart by a mask (same loss, less "
                        "padding to compute).", label="packing", advanced=True, models=("gpt",))
    # Budget: exactly one of steps / time_s
    steps: int | None = option(3000, "Budget in optimiser steps.", ge=1, le=MAX_STEPS, one_of="budget",
                               none_means="the budget is a time")
    time_s: float | None = option(None, "Budget in seconds (instead of steps).", label="seconds", gt=0,
                                  le=MAX_SECONDS, one_of="budget", flag="--time", none_means="the budget is in steps")
    eval_interval: int = option(250, "Steps between evaluations on the validation split (each keeps the best "
                                "checkpoint).", label="eval every", models=GRADIENT_MODELS, ge=1, le=MAX_STEPS, hint="steps")
    layer_every: int = option(25, "Steps between layer-health samples (each matrix's gradient norm and update "
                              "size, shown by the training panel); 0: none.", label="layer health every",
                              advanced=True, models=GRADIENT_MODELS, ge=0, le=MAX_STEPS)
    log_interval: int = option(10, "Steps between metrics records.", label="log every", advanced=True,
                               models=GRADIENT_MODELS, ge=1, le=MAX_STEPS, hint="steps")
    # Environment
    device: str = option("auto", "Where to train (auto: a GPU if there is one).", choices=DEVICES)
    dtype: str = option("auto", "Number format (auto: bfloat16 autocast on CUDA, float32 elsewhere).",
                        advanced=True, choices=DTYPES)
    seed: int = option(1337, "Random seed of the weights and the batches.", ge=0, lt=2**32)
    data: str | None = option(None, "UTF-8 text file, one item per line.", label="dataset",
                              none_means="the embedded names", hint="embedded names, or a file path")
    data_format: str = option("lines", "How the data file is read: lines (one item per line, e.g. names) or "
                              "text (one long text, trained on windows of it); repeats generates rows with a repeated random "
                              "chunk (no file read: the induction-head lesson).", label="data format",
                              advanced=True, choices=DATA_FORMATS, flag="--format")
    split_seed: int = option(42, "Seed of the train / val / test split of the dataset.", label="split seed",
                             advanced=True, ge=0, lt=2**32)
    # Scale-out
    processes: int = option(1, "Data-parallel training processes on this machine (torchrun + "
                            "DistributedDataParallel).", label="processes", advanced=True, ge=1, le=64,
                            models=GRADIENT_MODELS, flag="--nproc")
    compile: bool = option(False, "torch.compile the model (its warm-up is left out of tokens/s).",
                           label="compile", advanced=True, models=GRADIENT_MODELS)
    checkpoint_activations: bool = option(False, "Recompute each block's activations in the backward pass "
                                          "instead of keeping them (less memory, more time).",
                                          label="checkpointing", advanced=True, models=("gpt",))

    def __post_init__(self) -> None:
        for opt in OPTIONS:  # a float option given a whole number (JSON, Python) keeps one type
            value = getattr(self, opt.name)
            if opt.kind is float and isinstance(value, int) and not isinstance(value, bool):
                setattr(self, opt.name, float(value))
        self.validate()

    def validate(self) -> None:
        for opt in OPTIONS:
            opt.check(getattr(self, opt.name))
        for group in sorted({o.one_of for o in OPTIONS if o.one_of}):
            members = [o for o in OPTIONS if o.one_of == group]
            if sum(getattr(self, o.name) is not None for o in members) != 1:
                raise ConfigError(f"give exactly one {group}: {' or '.join(o.label for o in members)}",
                                  field=members[0].name)
        if self.warmup >= 1 and not self.warmup.is_integer():
            raise ConfigError(f"warmup must be a fraction in [0, 1) or a whole number of steps, got {self.warmup!r}",
                              field="warmup")
        if self.parametrization == "mup" and self.model == "gpt" and self.optimizer != "adamw":
            raise ConfigError("μP's learning-rate rules are Adam's (Yang et al. 2022): use optimizer adamw",
                              field="parametrization")
        if self.processes > 1 and self.model == "bigram":
            raise ConfigError("the bigram is counted, not trained: it runs in one process", field="processes")
        # The model's own checks (d_model divisible by n_heads, …) with a stand-in vocabulary.
        try:
            self.model_config(27, self.block_size or 16)
        except ConfigError as e:
            raise ConfigError(str(e), field=_MODEL_FIELDS.get(e.field, e.field) or "model") from None

    @property
    def effective_dropout(self) -> float:
        if self.dropout is not None:
            return float(self.dropout)
        short = (self.steps is not None and self.steps <= SHORT_RUN_STEPS) or (
            self.time_s is not None and self.time_s <= SHORT_RUN_SECONDS)
        return 0.0 if short else 0.1

    def model_config(self, vocab_size: int, block_size: int):
        if self.model == "gpt":
            return GPTConfig(vocab_size=vocab_size, block_size=block_size, d_model=self.d_model,
                             n_heads=self.n_heads, n_layers=self.n_layers, dropout=self.effective_dropout,
                             pos_encoding=self.pos_encoding, tie_weights=self.tie_weights, norm=self.norm,
                             ffn=self.ffn, qk_norm=self.qk_norm, bias=self.bias, bigram=self.bigram,
                             smear=self.smear, value_residual=self.value_residual, x0_shortcut=self.x0_shortcut,
                             softcap=self.softcap, zero_init=self.zero_init, mtp_weight=self.mtp_weight,
                             checkpoint_activations=self.checkpoint_activations,
                             attention_only=self.attention_only, parametrization=self.parametrization,
                             z_loss=self.z_loss)
        if self.model == "mlp":
            return MLPConfig(vocab_size=vocab_size, block_size=block_size, context=self.mlp_context,
                             n_embd=self.mlp_embd, n_hidden=self.mlp_hidden)
        return BigramConfig(vocab_size=vocab_size, block_size=block_size, smoothing=self.smoothing)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["data"] = self.data if self.data is not None else EMBEDDED
        return d

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        if not isinstance(values, dict):
            raise ConfigError(f"a training config is a JSON object, got {type(values).__name__}")
        unknown = set(values) - {o.name for o in OPTIONS}
        if unknown:
            raise ConfigError(f"unknown training options: {', '.join(sorted(unknown))}")
        values = dict(values)
        if values.get("data") == EMBEDDED:
            values["data"] = None
        return cls(**values)

    def data_path(self) -> Path:
        return Path(self.data) if self.data is not None else paths.default_dataset()


# Model-config fields whose TrainConfig option has another name.
_MODEL_FIELDS = {"context": "mlp_context", "n_embd": "mlp_embd", "n_hidden": "mlp_hidden"}


def _collect_options() -> tuple[Option, ...]:
    hints = typing.get_type_hints(TrainConfig)
    out = []
    for f in fields(TrainConfig):
        if "option" not in f.metadata:
            raise TypeError(f"TrainConfig.{f.name} is not declared with option(): the CLI and the form need it")
        hint, optional = hints[f.name], False
        if typing.get_origin(hint) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(hint) if a is not type(None)]
            hint, optional = args[0], len(args) < len(typing.get_args(hint))
        spec = dict(f.metadata["option"])
        spec["label"] = spec["label"] or f.name.replace("_", " ")
        out.append(Option(name=f.name, kind=hint, default=f.default, optional=optional, **spec))
    return tuple(out)


OPTIONS: tuple[Option, ...] = _collect_options()
OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}


def load_config_file(path: Path | str) -> TrainConfig:
    """A saved training config: a ``config.json`` file, or a run folder (its ``config.json``), of
    any saved format version (read through ``minigpt.runs.schema``)."""
    path = Path(path)
    if path.is_dir():
        path = path / CONFIG_FILE
    try:
        values = read_config_values(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    return TrainConfig.from_dict(values)


def load_run_config(run_dir: Path | str) -> TrainConfig:
    if not (Path(run_dir) / CONFIG_FILE).exists():  # (a FIFO there is refused by the guarded reader)
        raise ConfigError(f"{run_dir}: not a run folder (no {CONFIG_FILE})")
    return load_config_file(Path(run_dir) / CONFIG_FILE)


def load_data_for(cfg: TrainConfig, vocab=None, block_size: int | None = None) -> Dataset:
    """The run's data: a names ``Dataset``, a ``TextDataset`` for ``data_format = "text"``, or
    generated rows for ``"repeats"`` (seeded by the split seed; no file is read)."""
    if cfg.data_format == "repeats":
        from minigpt.repeat_data import load_repeat_dataset

        return load_repeat_dataset(block_size=block_size or cfg.block_size, seed=cfg.split_seed, vocab=vocab)
    if cfg.data_format == "text":
        from minigpt.text_data import load_text_dataset

        return load_text_dataset(cfg.data_path(), block_size=block_size or cfg.block_size, vocab=vocab)
    from minigpt.data import load_dataset  # torch: only when data is really loaded

    return load_dataset(cfg.data_path(), seed=cfg.split_seed, vocab=vocab,
                        block_size=block_size or cfg.block_size)
