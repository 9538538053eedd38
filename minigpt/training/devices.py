"""Where training runs: the device `auto` picks and the autocast it uses (threads: ``cpu_policy``)."""

from __future__ import annotations

import torch

from minigpt.models.config import ConfigError


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


def autocast_for(device: torch.device, dtype: str):
    use_bf16 = dtype == "bfloat16" or (dtype == "auto" and device.type == "cuda")
    if use_bf16:
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return torch.autocast(device_type=device.type, enabled=False)
