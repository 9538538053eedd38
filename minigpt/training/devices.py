"""Where training runs: the device `auto` picks and the autocast it uses (threads: ``cpu_policy``)."""

from __future__ import annotations

import torch

from minigpt.errors import ConfigError


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device cuda requested but no CUDA GPU is available (try --device auto)")
    if name == "mps" and not (getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()):
        raise ConfigError("device mps requested but Apple MPS is not available (try --device auto)")
    return torch.device(name)


def autocast_dtype(device_type: str, dtype: str) -> torch.dtype | None:
    """The autocast dtype for this device and option, or None for plain float32.

    ``auto`` means bf16 on CUDA (the loss is still computed in float32) and float32 elsewhere:
    on CPU, bf16 autocast made these small models slower (37k vs 45–53k tokens/s measured).
    """
    if dtype == "bfloat16" or (dtype == "auto" and device_type == "cuda"):
        return torch.bfloat16
    return None


def autocast_for(device: torch.device, dtype: str):
    chosen = autocast_dtype(device.type, dtype)
    if chosen is not None:
        return torch.autocast(device_type=device.type, dtype=chosen)
    return torch.autocast(device_type=device.type, enabled=False)


def compile_unsupported(device: torch.device) -> str | None:
    """Why ``torch.compile`` cannot run here, or None when it can: the trainer then trains
    without it (and says so in its first metrics record) instead of failing at the first step."""
    import torch._dynamo

    if not torch._dynamo.is_dynamo_supported():
        return "torch.compile is not supported on this Python or platform"
    if device.type == "cpu":  # inductor writes C++ for the CPU and needs a compiler to build it
        try:
            from torch._inductor.cpp_builder import get_cpp_compiler

            get_cpp_compiler()
        except Exception as e:  # what it raises varies by version: any failure means no compiler
            return f"no C++ compiler for torch.compile's CPU code ({type(e).__name__})"
    return None
