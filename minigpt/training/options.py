"""What a training run is asked to do: the validated options behind `minigpt train` and the form.

Every check lives here so the CLI, the training panel's form and a resumed run refuse the same
impossible combinations with the same message (a ``ConfigError`` that names the option).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from minigpt import paths
from minigpt.models.config import BigramConfig, ConfigError, GPTConfig, MLPConfig
from minigpt.data import load_dataset
from minigpt.runs.files import CONFIG_FILE

MODEL_KINDS = ("gpt", "mlp", "bigram")
DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16")
DATA_FORMATS = ("lines", "text")  # one item per line (names) or one long text
EMBEDDED = "embedded"


# Budgets up to this size train without dropout (short runs do better without it; longer ones
# overfit and need it): measured on the names data, see the notes on training on CPU.
SHORT_RUN_STEPS = 6000
SHORT_RUN_SECONDS = 200.0


@dataclass
class TrainConfig:
    model: str = "gpt"  # gpt | mlp | bigram
    # MiniGPT
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 4
    block_size: int | None = None  # None: the dataset's longest word + 1
    dropout: float | None = None  # None: 0.0 for short budgets, 0.1 for long ones
    pos_encoding: str = "learned"
    tie_weights: bool = False
    # MLP
    mlp_context: int = 3
    mlp_embd: int = 10
    mlp_hidden: int = 200
    # Bigram
    smoothing: float = 1.0
    # Optimisation
    batch_size: int = 128
    lr: float = 5e-3  # 3e-3 → 5e-3 measured −0.02 test loss at a 120 s budget (README)
    min_lr_ratio: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    weight_decay: float = 0.1
    warmup: float = 0.02  # < 1: fraction of the budget; ≥ 1: a number of steps
    grad_clip: float | None = 1.0
    ema: float = 0.999  # decay of the weight average that is evaluated and kept; 0 turns it off
    pack: bool = True  # MiniGPT: several words to a row (same loss, less padding to compute)
    # Budget: exactly one of steps / time_s
    steps: int | None = 3000
    time_s: float | None = None
    eval_interval: int = 250
    log_interval: int = 10
    # Environment
    device: str = "auto"
    dtype: str = "auto"  # auto: bf16 autocast on CUDA, float32 elsewhere
    seed: int = 1337
    data: str | None = None  # None: the embedded names
    data_format: str = "lines"  # lines: one item per line; text: one long text, windows of it
    split_seed: int = 42
    # Scale-out
    processes: int = 1  # data-parallel processes on this machine (torchrun, DistributedDataParallel)
    compile: bool = False  # torch.compile the model (its warm-up is left out of tokens/s)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if self.model not in MODEL_KINDS:
            raise ConfigError(f"model must be one of {', '.join(MODEL_KINDS)}, got {self.model!r}")
        if (self.steps is None) == (self.time_s is None):
            raise ConfigError("give exactly one budget: a number of steps or a time in seconds")
        if self.steps is not None and (isinstance(self.steps, bool) or not isinstance(self.steps, int)
                                       or self.steps <= 0):
            raise ConfigError(f"steps must be a positive whole number, got {self.steps!r}")
        if self.time_s is not None and not (self.time_s > 0 and math.isfinite(self.time_s)):
            raise ConfigError(f"time budget must be a positive number of seconds, got {self.time_s!r}")
        for name in ("batch_size", "eval_interval", "log_interval"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name.replace('_', ' ')} must be a positive whole number, got {value!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError(f"learning rate must be > 0, got {self.lr!r}")
        if not (0 <= self.min_lr_ratio <= 1):
            raise ConfigError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio!r}")
        if not (0 <= self.ema < 1):
            raise ConfigError(f"EMA decay must be in [0, 1) (0 turns the average off), got {self.ema!r}")
        for name in ("beta1", "beta2"):
            if not (0 <= getattr(self, name) < 1):
                raise ConfigError(f"{name} must be in [0, 1), got {getattr(self, name)!r}")
        if not (self.weight_decay >= 0):
            raise ConfigError(f"weight decay must be ≥ 0, got {self.weight_decay!r}")
        if not (self.warmup >= 0) or (self.warmup >= 1 and self.warmup != int(self.warmup)):
            raise ConfigError(f"warmup must be a fraction in [0, 1) or a whole number of steps, got {self.warmup!r}")
        if self.grad_clip is not None and not (self.grad_clip > 0):
            raise ConfigError(f"grad clip must be > 0 (or none), got {self.grad_clip!r}")
        if self.device not in DEVICES:
            raise ConfigError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.dropout is not None and not (0.0 <= float(self.dropout) < 1.0):
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if self.data_format not in DATA_FORMATS:
            raise ConfigError(f"data format must be one of {', '.join(DATA_FORMATS)}, got {self.data_format!r}")
        if isinstance(self.processes, bool) or not isinstance(self.processes, int) or not 1 <= self.processes <= 64:
            raise ConfigError(f"processes must be a whole number from 1 to 64, got {self.processes!r}")
        if self.processes > 1 and self.model == "bigram":
            raise ConfigError("the bigram is counted, not trained: it runs in one process")
        if self.block_size is not None and (not isinstance(self.block_size, int) or self.block_size < 2):
            raise ConfigError(f"block size must be at least 2, got {self.block_size!r}")
        # The model's own checks (d_model divisible by n_heads, …) with a stand-in vocabulary.
        self.model_config(27, self.block_size or 16)

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
                             pos_encoding=self.pos_encoding, tie_weights=self.tie_weights)
        if self.model == "mlp":
            return MLPConfig(vocab_size=vocab_size, block_size=block_size, context=self.mlp_context,
                             n_embd=self.mlp_embd, n_hidden=self.mlp_hidden)
        return BigramConfig(vocab_size=vocab_size, block_size=block_size, smoothing=self.smoothing)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["data"] = self.data if self.data is not None else EMBEDDED
        return d

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"unknown training options: {', '.join(sorted(unknown))}")
        values = dict(values)
        if values.get("data") == EMBEDDED:
            values["data"] = None
        return cls(**values)

    def data_path(self) -> Path:
        return Path(self.data) if self.data is not None else paths.default_dataset()


def load_run_config(run_dir: Path | str) -> TrainConfig:
    path = Path(run_dir) / CONFIG_FILE
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{run_dir}: not a run folder (no {CONFIG_FILE})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: unreadable ({e})") from None
    return TrainConfig.from_dict(values)


def load_data_for(cfg: TrainConfig, vocab=None, block_size: int | None = None):
    """The run's data: a names ``Dataset``, or a ``TextDataset`` for ``data_format = "text"``."""
    if cfg.data_format == "text":
        from minigpt.text_data import load_text_dataset

        return load_text_dataset(cfg.data_path(), block_size=block_size or cfg.block_size, vocab=vocab)
    return load_dataset(cfg.data_path(), seed=cfg.split_seed, vocab=vocab,
                        block_size=block_size or cfg.block_size)
