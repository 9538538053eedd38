"""Post-training quantization of the shipped MiniGPT (the ``ptq`` lab job): GPTQ against
round-to-nearest at int4 and int3 per group of 32, FP8 (E4M3, E5M2) with a per-tensor scale,
MXFP4, NVFP4 and NF4, each scored by its validation loss and counted in bytes, beside the
quantization lesson's int8/int4 round-to-nearest (minigpt.models.quantize).

Calibration: the first ``CALIBRATION_NAMES`` validation names (never trained on); the loss is
taken on the validation names after them, so no name both calibrates and scores. GPTQ is run
layer after layer in the model's order, each layer's inputs taken from the model with the layers
before it already quantized (as the paper does). Every linear layer goes through GPTQ; the two
embeddings, which have no inputs to calibrate on, are rounded to nearest in both arms. Per
layer, both methods are scored on the same inputs: GPTQ's output error against RTN's.

Fake quantization, as in the quantization lesson: the dequantized values are written back into a float32
copy; the bytes are what the format would store (element bits, scales, the float32 rest).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch

from minigpt.models import gptq as G
from minigpt.models.quantize import QuantConfig, quantizable, quantize_model
from minigpt.teaching import number_formats

CALIBRATION_NAMES = 256
GROUP = 32
GPTQ_BITS = (4, 3)
FLOAT_BYTES, SCALE_BYTES = 4, 4


@dataclass(frozen=True)
class Shipped:
    model: torch.nn.Module
    calibration: object  # EncodedSplit of the calibration names
    held_out: object     # EncodedSplit of the names the loss is taken on


def load(calibration_names: int = CALIBRATION_NAMES, held_out_names: int | None = None) -> Shipped:
    """The shipped checkpoint and its validation split cut into calibration and scoring names."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.data import EncodedSplit, load_dataset
    from minigpt.paths import default_checkpoint, default_dataset

    ck = load_checkpoint(default_checkpoint())
    ck.model.eval()
    data = load_dataset(default_dataset(), seed=int(ck.train_config.get("split_seed", 42)), vocab=ck.vocab,
                        block_size=ck.model_config.block_size)
    words = list(data.val.words)
    rest = words[calibration_names:]
    if held_out_names is not None:
        rest = rest[:held_out_names]
    block = ck.model_config.block_size
    return Shipped(ck.model, EncodedSplit(words[:calibration_names], ck.vocab, block),
                   EncodedSplit(rest, ck.vocab, block))


def linear_layers(model: torch.nn.Module) -> list[tuple[str, torch.nn.Linear]]:
    return [(name, m) for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)]


def layer_inputs(model: torch.nn.Module, layer: torch.nn.Module, split) -> torch.Tensor:
    """What ``layer`` receives when the model reads the split's names: one row per real token
    (padding positions, which the loss never sees, left out)."""
    from minigpt.data import IGNORE

    x, y = split.batch(torch.arange(len(split)))
    seen: list[torch.Tensor] = []
    handle = layer.register_forward_hook(lambda _m, args, _out: seen.append(args[0].detach()))
    try:
        with torch.no_grad():
            model(x)
    finally:
        handle.remove()
    inputs = seen[0]
    return inputs[y != IGNORE]


@dataclass
class LayerError:
    layer: str
    rtn: float
    gptq: float


def gptq_model(model: torch.nn.Module, calibration, bits: int, group: int = GROUP,
               layers: int | None = None) -> tuple[torch.nn.Module, list[LayerError]]:
    """A copy of ``model`` with its linear layers through GPTQ (the first ``layers`` of them, or
    all) and its embeddings rounded to nearest; each layer's output error under both methods on
    the inputs it receives there."""
    out = copy.deepcopy(model)
    errors = []
    with torch.no_grad():
        for name, layer in linear_layers(out)[:layers]:
            x = layer_inputs(out, layer, calibration)
            w = layer.weight.detach().clone()
            rtn = G.round_to_nearest(w, bits, group)
            chosen = G.gptq(w, G.hessian(x), bits, group)
            errors.append(LayerError(name, G.output_error(w, rtn, x), G.output_error(w, chosen, x)))
            layer.weight.copy_(chosen)
        for module in out.modules():
            if isinstance(module, torch.nn.Embedding):
                module.weight.copy_(G.round_to_nearest(module.weight, bits, group))
    return out, errors


def rtn_model(model: torch.nn.Module, bits: int, group: int = GROUP) -> torch.nn.Module:
    return _each_matrix(model, lambda w: G.round_to_nearest(w, bits, group))


def _each_matrix(model: torch.nn.Module, round_trip: Callable[[torch.Tensor], torch.Tensor]) -> torch.nn.Module:
    out = copy.deepcopy(model)
    with torch.no_grad():
        for _name, p in _matrices(out):
            p.copy_(round_trip(p))
    return out


def _matrices(model: torch.nn.Module):
    """Every 2-D weight once (a tied one counts once), as minigpt.models.quantize does."""
    seen: set[int] = set()
    for name, p in model.named_parameters():
        if quantizable(name, p) and id(p) not in seen:
            seen.add(id(p))
            yield name, p


def stored_bytes(model: torch.nn.Module, bits_per_weight: Callable[[torch.Tensor], float]) -> int:
    """The model stored with its matrices at ``bits_per_weight(matrix)`` bits each (scales
    included), everything else float32."""
    matrices = {id(p) for _, p in _matrices(model)}
    total = sum(p.numel() * bits_per_weight(p) / 8 for _, p in _matrices(model))
    total += sum(p.numel() * FLOAT_BYTES for p in model.parameters() if id(p) not in matrices)
    return round(total)


def int_bits(bits: int, group: int) -> Callable[[torch.Tensor], float]:
    return lambda p: bits + 8 * SCALE_BYTES / group


# Each format: (label, the round trip of one matrix, its bits per weight with scales).
FORMATS: tuple[tuple[str, Callable, Callable], ...] = (
    ("FP8 E4M3, per tensor", lambda w: number_formats.scaled_round_trip(w, number_formats.E4M3),
     lambda p: 8 + 32 / p.numel()),
    ("FP8 E5M2, per tensor", lambda w: number_formats.scaled_round_trip(w, number_formats.E5M2),
     lambda p: 8 + 32 / p.numel()),
    ("MXFP4 (E2M1, E8M0 per 32)", lambda w: number_formats.mx_round_trip(w),
     lambda p: number_formats.bits_per_value(4, number_formats.MX_BLOCK, 8, p.numel())),
    ("NVFP4 (E2M1, E4M3 per 16)", lambda w: number_formats.nvfp4_round_trip(w),
     lambda p: number_formats.bits_per_value(4, number_formats.NVFP4_BLOCK, 8, p.numel(), tensor_scale_bits=32)),
    ("NF4, float32 absmax per 64", lambda w: number_formats.nf4_round_trip(w),
     lambda p: number_formats.bits_per_value(4, number_formats.NF4_BLOCK, 32, p.numel())),
)


def measure(progress: Callable[[str], None] = print, shipped: Shipped | None = None) -> dict:
    """The lab job: every row's bytes and validation loss, and GPTQ's per-layer errors."""
    from minigpt.training.schedule import evaluate

    s = shipped or load()
    base_loss = evaluate(s.model, s.held_out)
    float_bytes = stored_bytes(s.model, lambda p: 32)
    rows = [{"label": "float32", "family": "float", "bytes": float_bytes, "loss": base_loss}]

    def add(label: str, family: str, model: torch.nn.Module, n_bytes: int) -> None:
        rows.append({"label": label, "family": family, "bytes": n_bytes, "loss": evaluate(model, s.held_out)})
        progress(f"{label:34s} {n_bytes / 1024:7.1f} KiB  loss {rows[-1]['loss']:.4f}")

    # The quantization lesson's rows (its own code); its int4 groups of 32 is the RTN row below.
    for cfg in (QuantConfig(8, "channel"), QuantConfig(4, "channel")):
        model, counted = quantize_model(s.model, cfg)
        add(f"{cfg.label}, RTN", "int rtn", model, counted.quant_bytes)
    layer_errors = {}
    for bits in GPTQ_BITS:
        n_bytes = stored_bytes(s.model, int_bits(bits, GROUP))
        add(f"int{bits} groups of {GROUP}, RTN", "int rtn", rtn_model(s.model, bits), n_bytes)
        model, errors = gptq_model(s.model, s.calibration, bits)
        add(f"int{bits} groups of {GROUP}, GPTQ", "int gptq", model, n_bytes)
        layer_errors[f"int{bits}"] = [vars(e) for e in errors]
    for label, round_trip, bits_of in FORMATS:
        add(label, "float", _each_matrix(s.model, round_trip), stored_bytes(s.model, bits_of))
    return {"rows": rows, "layer_errors": layer_errors, "group": GROUP,
            "calibration_names": len(s.calibration), "held_out_names": len(s.held_out),
            "float_bytes": float_bytes}
