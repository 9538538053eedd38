"""A GPT-2-family checkpoint in the Hugging Face layout, loaded into the tutor's own MiniGPT.

The folder holds ``config.json`` (the hub's GPT-2 config), ``model.safetensors``, ``vocab.json``
and ``merges.txt``. GPT-2 is a MiniGPT with these settings: learned positions, pre-norm
LayerNorm with GPT-2's ε, a 4·d feed-forward through GELU's tanh approximation (``gelu_tanh``),
biases everywhere and the output head tied to the token embedding. Its tensors map one to one
onto the MiniGPT's, with one difference: GPT-2 stores its projections as ``Conv1D`` weights,
(in, out), the transpose of a ``Linear``'s (out, in), so those four matrices per block are
transposed on the way in.

Two key layouts exist: the hub's files name tensors ``h.0.attn.c_attn.weight`` and carry each
layer's causal mask as a buffer ``h.0.attn.bias`` (left out: the MiniGPT builds its own mask);
``transformers``' ``save_pretrained`` writes ``transformer.h.0.attn.c_attn.weight``. Both load.

The same rules as the tutor's own checkpoints: safetensors only (a ``pytorch_model.bin`` is a
pickle and is never opened), every file through ``minigpt.guarded``, the header's names and
shapes checked before anything is allocated, and the one size rule with the inference cap
(GPT-2 small's 124 M parameters are past the training cap, within the loading one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import guarded
from minigpt.errors import CheckpointError, ConfigError, SamplingError
from minigpt.models.config import GPTConfig
from minigpt.pretrained.byte_bpe import MERGES_FILE, VOCAB_FILE, ByteLevelBPE, load_byte_bpe, read_folder_json
from minigpt.safetensors_header import read_header

CONFIG_FILE, WEIGHTS_FILE = "config.json", "model.safetensors"
FILES = (CONFIG_FILE, WEIGHTS_FILE, VOCAB_FILE, MERGES_FILE)
PREFIX = "transformer."  # transformers' layout; the hub's files have none
# GELU's tanh approximation under the names transformers gives it (the same function).
TANH_GELUS = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")
MASK_BUFFERS = ("attn.bias", "attn.masked_bias")  # the hub's causal-mask buffers: not weights


MAX_ROWS = 16  # continuations at once on a CPU: each row keeps its own KV cache


@dataclass
class PretrainedCheckpoint:
    """A loaded GPT-2 with the fields of ``minigpt.checkpoint.Checkpoint`` that the tools read
    (``vocab`` is the tokenizer, ``train_config`` says it continues text, no metrics), so the
    playground and the stepper take either."""

    path: Path
    model: object  # a MiniGPT, eval mode
    tokenizer: ByteLevelBPE
    model_config: GPTConfig
    start_token: int = 0  # config.json's bos_token_id (GPT-2's <|endoftext|>): what a text starts after
    kind: str = "gpt"
    train_config: dict = field(default_factory=lambda: {"data_format": "text"})
    metrics: dict = field(default_factory=dict)

    @property
    def vocab(self) -> ByteLevelBPE:
        return self.tokenizer

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def check_continuation(self, prompt: str, tokens: int, rows: int) -> None:
        """SamplingError unless ``rows`` continuations of ``tokens`` tokens after ``prompt`` fit:
        at most MAX_ROWS rows, and the prompt and the continuation within the context (past it,
        every token would recompute the whole context: minutes for GPT-2 on a CPU)."""
        if not 1 <= rows <= MAX_ROWS:
            raise SamplingError(f"{rows} continuations: a pretrained model on a CPU makes 1 to {MAX_ROWS} at once")
        block, prompt_tokens = self.model_config.block_size, len(self.tokenizer.encode(prompt))
        if tokens < 1 or prompt_tokens + tokens > block:
            raise SamplingError(f"the prompt ({prompt_tokens:,} tokens) and a continuation of {tokens:,} must fit "
                                f"the model's context of {block:,} tokens, with at least one token to continue")


def is_pretrained_folder(path: Path | str) -> bool:
    """Whether ``path`` looks like a Hugging Face folder (a tokenizer's files, or a config that
    names a ``model_type``) rather than one of the tutor's checkpoints."""
    path = Path(path)
    if not path.is_dir():
        return False
    if guarded.is_regular(path / VOCAB_FILE) or guarded.is_regular(path / MERGES_FILE):
        return True
    try:
        return "model_type" in json.loads(guarded.read_text(path / CONFIG_FILE, guarded.CHECKPOINT_JSON_BYTES))
    except (OSError, ValueError, TypeError, RecursionError):
        return False


def fetched_folders(models: Path | None = None) -> list[Path]:
    """The GPT-2-family folders ``minigpt hf fetch`` keeps (``models/`` in the data folder), by name."""
    from minigpt import paths

    root = models if models is not None else paths.user_data_dir() / "models"
    return sorted(d for d in root.iterdir() if is_pretrained_folder(d)) if root.is_dir() else []


def _whole(config: dict, key: str, path: Path) -> int:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CheckpointError(f"{path}: {key} must be a positive whole number, got {value!r:.40}")
    return value


def read_config_json(folder: Path) -> dict:
    """``config.json`` of a Hugging Face folder, read once through the guarded reader."""
    return read_folder_json(folder / CONFIG_FILE)


def gpt2_config(config: dict, path: Path) -> GPTConfig:
    """The MiniGPT that ``config`` (read from ``path``) describes; one CheckpointError for what is
    not GPT-2."""
    if config.get("model_type") != "gpt2":
        raise CheckpointError(f"{path}: model_type is {config.get('model_type')!r:.40}; only GPT-2-family "
                              f"checkpoints (\"gpt2\") load here")
    d = _whole(config, "n_embd", path)
    activation = config.get("activation_function", "gelu_new")
    if activation not in (*TANH_GELUS, "gelu"):
        raise CheckpointError(f"{path}: activation_function {activation!r:.40} is not one the MiniGPT has "
                              f"(GPT-2's gelu_new, or gelu)")
    if config.get("n_inner") not in (None, 4 * d):
        raise CheckpointError(f"{path}: n_inner {config.get('n_inner')!r:.40}: the MiniGPT's feed-forward is 4·n_embd wide")
    if config.get("scale_attn_by_inverse_layer_idx") or config.get("scale_attn_weights", True) is not True:
        raise CheckpointError(f"{path}: attention scaled otherwise than by 1/√head_dim; the MiniGPT cannot run it")
    eps = config.get("layer_norm_epsilon", 1e-5)
    try:
        return GPTConfig(vocab_size=_whole(config, "vocab_size", path), block_size=_whole(config, "n_positions", path),
                         d_model=d, n_heads=_whole(config, "n_head", path), n_layers=_whole(config, "n_layer", path),
                         ffn="gelu" if activation == "gelu" else "gelu_tanh", norm_eps=eps,
                         tie_weights=config.get("tie_word_embeddings", True) is not False)
    except ConfigError as e:
        raise CheckpointError(f"{path}: {e}") from None


def _file_name(name: str) -> tuple[str, bool]:
    """A MiniGPT tensor's name in GPT-2's files (unprefixed), and whether it is stored transposed."""
    if name == "tok_emb.weight":
        return "wte.weight", False
    if name == "pos_emb.weight":
        return "wpe.weight", False
    if name == "head.weight":
        return "lm_head.weight", False
    if name.startswith("ln_f."):
        return name, False
    _, layer, part, *rest = name.split(".")  # blocks.3.attn.qkv.weight
    inner = {"ln1": "ln_1", "ln2": "ln_2", "attn.qkv": "attn.c_attn", "attn.proj": "attn.c_proj",
             "ffn.up": "mlp.c_fc", "ffn.down": "mlp.c_proj"}[".".join([part, *rest[:-1]])]
    return f"h.{layer}.{inner}.{rest[-1]}", not part.startswith("ln") and rest[-1] == "weight"


def tensor_plan(config: GPTConfig, header: dict, weights_file: Path) -> dict[str, tuple[str, bool]]:
    """MiniGPT name → (name in the file, transposed), once the file's names and shapes are checked
    against ``config``: one CheckpointError naming the first tensor missing, extra or misshapen."""
    from minigpt.models.build import build_model, on_meta_device

    with on_meta_device():
        shapes = {k: tuple(v.shape) for k, v in build_model("gpt", config).state_dict().items()}
    if config.tie_weights:
        shapes.pop("head.weight")
    prefix = PREFIX if f"{PREFIX}wte.weight" in header else ""
    if f"{prefix}wte.weight" not in header:
        raise CheckpointError(f"{weights_file}: no token embedding (wte.weight or {PREFIX}wte.weight): "
                              f"not a GPT-2 weights file")
    plan, wanted = {}, set()
    for name, shape in shapes.items():
        file_name, transposed = _file_name(name)
        file_name = (prefix if name != "head.weight" else "") + file_name
        stored = tuple(reversed(shape)) if transposed else shape
        if file_name not in header:
            raise CheckpointError(f"{weights_file}: {file_name} is missing")
        if tuple(header[file_name]["shape"]) != stored:
            raise CheckpointError(f"{weights_file}: {file_name} has shape {tuple(header[file_name]['shape'])} but "
                                  f"{CONFIG_FILE} needs {stored}")
        plan[name] = (file_name, transposed)
        wanted.add(file_name)
    unknown = sorted(k for k in header if k not in wanted and not k.endswith(MASK_BUFFERS)
                     and k != "lm_head.weight")  # a tied head saved all the same: the embedding wins
    if unknown:
        raise CheckpointError(f"{weights_file}: unexpected tensors {', '.join(unknown[:3])} for the GPT-2 in {CONFIG_FILE}")
    return plan


def load_gpt2(folder: Path | str, device: str = "cpu") -> PretrainedCheckpoint:
    """The GPT-2 checkpoint in ``folder`` as a MiniGPT with its tokenizer; CheckpointError for a
    missing file, a model past the loading cap or the free memory, or weights that do not fit."""
    import torch
    from safetensors import SafetensorError, safe_open

    from minigpt.models.build import build_model, check_model_size, on_meta_device

    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: no such folder")
    config_json = read_config_json(folder)
    config = gpt2_config(config_json, folder / CONFIG_FILE)
    tokenizer = load_byte_bpe(folder)
    if tokenizer.size > config.vocab_size:
        raise CheckpointError(f"{folder / VOCAB_FILE}: ids up to {tokenizer.size - 1:,}, past the model's "
                              f"vocab_size {config.vocab_size:,}")
    try:
        check_model_size("gpt", config, verb="loads")
    except ConfigError as e:
        raise CheckpointError(f"{folder / CONFIG_FILE}: describes a model too large: {e}") from None
    weights_file = folder / WEIGHTS_FILE
    if not weights_file.exists() and (folder / "pytorch_model.bin").exists():
        raise CheckpointError(f"{folder}: only pytorch_model.bin, a pickle, which the tutor never opens; "
                              f"get the model.safetensors file instead")
    plan = tensor_plan(config, read_header(weights_file), weights_file)
    weights = {}
    try:
        with safe_open(str(weights_file), framework="pt", device="cpu") as f:
            for name, (file_name, transposed) in plan.items():
                tensor = f.get_tensor(file_name).float()
                weights[name] = tensor.t().contiguous() if transposed else tensor
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{weights_file}: not a readable safetensors file ({e})") from None
    if not all(torch.isfinite(t).all() for t in weights.values()):
        raise CheckpointError(f"{weights_file}: holds NaN or infinite weights; these weights cannot be used")
    with on_meta_device():
        model = build_model("gpt", config)
    if config.tie_weights:
        weights["head.weight"] = weights["tok_emb.weight"]
    model.load_state_dict(weights, assign=True)  # names and shapes were checked by tensor_plan
    if config.tie_weights:
        model.head.weight = model.tok_emb.weight  # one matrix, as GPT-2 has it
    model.to(device).eval()
    return PretrainedCheckpoint(path=folder, model=model, tokenizer=tokenizer, model_config=config,
                                start_token=_start_token(config_json, config))


def _start_token(config_json: dict, config: GPTConfig) -> int:
    """config.json's bos_token_id when it names a token of the model, else 0."""
    bos = config_json.get("bos_token_id")
    valid = isinstance(bos, int) and not isinstance(bos, bool) and 0 <= bos < config.vocab_size
    return bos if valid else 0
