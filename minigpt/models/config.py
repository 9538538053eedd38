"""Configuration dataclasses for the three models, validated on construction.

A bad value fails here with a message that names the field and says what would be valid, so the
CLI, the training form and checkpoint loading all report the same clear reason.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from minigpt.errors import ConfigError

POSITIONAL_ENCODINGS = ("learned", "sinusoidal", "rope", "none")
NORMS = ("layernorm", "rmsnorm")
TRAINED_FEED_FORWARDS = ("gelu", "swiglu", "relu2")  # what `minigpt train --ffn` offers
# gelu_tanh: GELU's tanh approximation, the activation of GPT-2's checkpoints (minigpt.pretrained)
FEED_FORWARDS = (*TRAINED_FEED_FORWARDS, "gelu_tanh")
BIGRAM_TABLES = ("off", "residual", "logits")  # the exact bigram table: none, into the residual, into the logits
# Standard parametrization, or μP (Yang et al. 2022, Tensor Programs V): init, learning rates and
# multipliers scaled with the width against a base width, so a tuned learning rate transfers.
PARAMETRIZATIONS = ("sp", "mup")
MUP_BASE_WIDTH = 64  # μP's base: the course's d_model, where μP and SP build the same model
MAX_LAYERS = 256  # the deepest MiniGPT the tutor builds (the training option's bound, and a checkpoint's)


def _positive(obj, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{name} must be a positive whole number, got {value!r}", field=name)


@dataclass
class GPTConfig:
    vocab_size: int = 27
    block_size: int = 16  # longest sequence: longest name + the start token
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 4
    dropout: float = 0.0
    bias: bool = True
    pos_encoding: str = "learned"  # learned | sinusoidal | rope | none (causal attention alone)
    norm: str = "layernorm"  # layernorm | rmsnorm (no mean subtraction, no bias)
    ffn: str = "gelu"  # gelu (4d hidden) | swiglu (gated, 8d/3 hidden: the same parameters) | relu2 | gelu_tanh
    norm_eps: float = 1e-5  # LayerNorm's ε (GPT-2's config.json names its own: layer_norm_epsilon)
    qk_norm: bool = False  # RMS-normalise each head's queries and keys before their dot product
    tie_weights: bool = False  # share the token embedding with the output head
    # Grouped-query attention: heads share keys and values in n_kv_heads groups (1 = multi-query).
    # None means one K/V head per query head, plain multi-head attention.
    n_kv_heads: int | None = None
    # The speedrun's tricks (minigpt/models/speedrun.py), all off here: a checkpoint that does not
    # name them was trained without them, whatever the training recipe's default becomes.
    bigram: str = "off"  # off | residual ((prev, cur) pair table into every block) | logits (V×V table)
    smear: bool = False  # a gate adds the previous character's embedding to each position's
    value_residual: bool = False  # every layer's values mix in the first layer's (learned λ per layer)
    x0_shortcut: bool = False  # the embedding x0 is added to every block's input (learned λ per block)
    softcap: float | None = None  # logits = cap·tanh(logits / cap); None: no cap
    zero_init: bool = False  # the projections into the residual stream and the head (untied) start at zero
    mtp_weight: float = 0.0  # > 0: a second head predicts the character after next, an auxiliary loss
    # Activation checkpointing: while training, keep only each block's input and recompute the
    # block's insides during backward (less memory for the activations, about a third more time).
    checkpoint_activations: bool = False
    # No feed-forward sub-layers: a stack of attention alone (with its norms and residuals), the
    # smallest model in which induction heads are studied. False keeps the full blocks.
    attention_only: bool = False
    # μP (minigpt/models/mup.py): "sp" is the usual model; "mup" scales the hidden matrices' init
    # and Adam learning rate, the logits and the attention scores with d_model / mup_base_width.
    parametrization: str = "sp"
    mup_base_width: int = MUP_BASE_WIDTH
    # PaLM's z-loss: while training, z_loss · mean (log Z)² of the output softmax joins the loss
    # (Z the normaliser), pulling log Z towards 0 so the logits cannot drift up together. 0: off.
    z_loss: float = 0.0

    def __post_init__(self) -> None:
        _positive(self, "vocab_size", "block_size", "d_model", "n_heads", "n_layers")
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads}): each "
                f"head gets d_model / n_heads dimensions", field="d_model"
            )
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        _positive(self, "n_kv_heads")
        if self.n_heads % self.n_kv_heads:
            raise ConfigError(
                f"n_kv_heads ({self.n_kv_heads}) must divide n_heads ({self.n_heads}): each group "
                f"of query heads shares one key/value head"
            )
        if not (0.0 <= float(self.dropout) < 1.0):
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout!r}", field="dropout")
        if self.pos_encoding not in POSITIONAL_ENCODINGS:
            raise ConfigError(
                f"pos_encoding must be one of {', '.join(POSITIONAL_ENCODINGS)}, got {self.pos_encoding!r}",
                field="pos_encoding")
        if self.norm not in NORMS:
            raise ConfigError(f"norm must be one of {', '.join(NORMS)}, got {self.norm!r}", field="norm")
        if self.ffn not in FEED_FORWARDS:
            raise ConfigError(f"ffn must be one of {', '.join(FEED_FORWARDS)}, got {self.ffn!r}", field="ffn")
        if isinstance(self.norm_eps, bool) or not isinstance(self.norm_eps, (int, float)) or not 0 < self.norm_eps < 1:
            raise ConfigError(f"norm_eps must be a number in (0, 1), got {self.norm_eps!r}", field="norm_eps")
        if self.bigram not in BIGRAM_TABLES:
            raise ConfigError(f"bigram must be one of {', '.join(BIGRAM_TABLES)}, got {self.bigram!r}", field="bigram")
        if self.softcap is not None and (isinstance(self.softcap, bool) or not isinstance(self.softcap, (int, float))
                                         or not self.softcap > 0):
            raise ConfigError(f"softcap must be a positive number (or none), got {self.softcap!r}", field="softcap")
        if not (0.0 <= float(self.mtp_weight) <= 10.0):
            raise ConfigError(f"mtp_weight must be in [0, 10], got {self.mtp_weight!r}", field="mtp_weight")
        if self.parametrization not in PARAMETRIZATIONS:
            raise ConfigError(f"parametrization must be one of {', '.join(PARAMETRIZATIONS)}, got "
                              f"{self.parametrization!r}", field="parametrization")
        _positive(self, "mup_base_width")
        if self.parametrization == "mup" and self.tie_weights:
            raise ConfigError("μP scales the output head apart from the embedding: untie them (no tie_weights)",
                              field="parametrization")
        if isinstance(self.z_loss, bool) or not isinstance(self.z_loss, (int, float)) or not 0.0 <= self.z_loss <= 1.0:
            raise ConfigError(f"z_loss must be in [0, 1], got {self.z_loss!r}", field="z_loss")
        if self.pos_encoding == "rope" and self.head_dim % 2:
            raise ConfigError("RoPE rotates pairs of dimensions: d_model / n_heads must be even",
                              field="pos_encoding")
        if self.pos_encoding == "sinusoidal" and self.d_model % 2:
            raise ConfigError("sinusoidal positions pair sin and cos: d_model must be even", field="pos_encoding")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def ffn_hidden(self) -> int:
        """Hidden width of the feed-forward: 4·d, or 8·d/3 for the gated SwiGLU (three matrices
        instead of two, so the parameter count stays that of the 4·d GELU)."""
        return int(8 * self.d_model / 3) if self.ffn == "swiglu" else 4 * self.d_model

    @property
    def width_multiplier(self) -> float:
        """μP's m = d_model / base width (1 under SP: nothing is rescaled)."""
        return self.d_model / self.mup_base_width if self.parametrization == "mup" else 1.0

    @property
    def attention_scale(self) -> float:
        """What q·k is multiplied by: 1/√head_dim under SP; under μP 1/head_dim, times the base
        head width's √ so that at the base width both are the same (μP's 1/d, SP's value at m = 1)."""
        if self.parametrization != "mup":
            return 1.0 / math.sqrt(self.head_dim)
        return math.sqrt(self.mup_base_width / self.n_heads) / self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the keys (and of the values): one head_dim per key/value head."""
        return self.n_kv_heads * self.head_dim


@dataclass
class MLPConfig:
    """The course's Day 2 model: a window of previous characters → tanh hidden layer → logits."""

    vocab_size: int = 27
    block_size: int = 16  # longest sequence (for data), not the window
    context: int = 3  # how many previous characters the MLP sees
    n_embd: int = 10
    n_hidden: int = 200

    def __post_init__(self) -> None:
        _positive(self, "vocab_size", "block_size", "context", "n_embd", "n_hidden")


@dataclass
class BigramConfig:
    """A count table of next-character frequencies with add-k smoothing."""

    vocab_size: int = 27
    block_size: int = 16
    smoothing: float = 1.0

    def __post_init__(self) -> None:
        _positive(self, "vocab_size", "block_size")
        if not (float(self.smoothing) >= 0):
            raise ConfigError(f"smoothing must be ≥ 0, got {self.smoothing!r}", field="smoothing")


MODEL_CONFIGS = {"gpt": GPTConfig, "mlp": MLPConfig, "bigram": BigramConfig}


def config_from_dict(kind: str, values: dict):
    """Rebuild a model config (from a checkpoint's JSON), ignoring nothing silently."""
    if kind not in MODEL_CONFIGS:
        raise ConfigError(f"unknown model kind {kind!r}; expected one of {', '.join(MODEL_CONFIGS)}")
    cls = MODEL_CONFIGS[kind]
    known = {f.name for f in fields(cls)}
    unknown = set(values) - known
    if unknown:
        raise ConfigError(f"unknown {kind} config fields: {', '.join(sorted(unknown))}")
    return cls(**values)


def config_to_dict(config) -> dict:
    return asdict(config)


# What the app and the CLI call each kind of model.
MODEL_LABELS = {"gpt": "MiniGPT", "mlp": "MLP", "bigram": "Bigram"}
