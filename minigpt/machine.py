"""The machine beside the loss: what the trainer's process uses (``minigpt.processes``), how fast it
steps, and on CUDA what the GPU says through NVML when its library (``nvidia-ml-py``, imported as
``pynvml``) can be imported; it is never a dependency. Without NVML the trainer's own torch memory
counters (``cuda_mem_mb`` and ``cuda_peak_mb`` in its metrics records) stand in.

Torch-free: the app imports this to draw the machine line.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuUsage:
    """One GPU's utilisation (%), memory in use and in all (MiB) and temperature (°C); a figure
    the source does not give is None (torch's counters give only the memory the trainer holds)."""

    utilisation: float | None
    memory_mb: float
    memory_total_mb: float | None
    temperature_c: float | None
    source: str  # "nvml" or "torch"


def _nvml():
    """The NVML module when it imports and initialises (no NVIDIA driver: None)."""
    try:
        nvml = importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception:  # not installed, no driver, no GPU: the library's many errors mean the same
        return None
    return nvml


class GpuSampler:
    """Reads GPU ``index`` through NVML, at most once per ``interval_s`` like
    ``processes.UsageSampler``; ``available`` is False where NVML cannot be used."""

    def __init__(self, index: int = 0, interval_s: float = 1.0, clock=None):
        import time

        self._clock = clock or time.monotonic
        self.interval_s = interval_s
        self._nvml = _nvml()
        self._handle = None
        if self._nvml is not None:
            try:
                self._handle = self._nvml.nvmlDeviceGetHandleByIndex(index)
            except Exception:  # no such device
                self._nvml = None
        self._last_at: float | None = None
        self._last: GpuUsage | None = None

    @property
    def available(self) -> bool:
        return self._nvml is not None

    def sample(self) -> GpuUsage | None:
        if self._nvml is None:
            return None
        now = self._clock()
        if self._last_at is not None and now - self._last_at < self.interval_s:
            return self._last
        self._last_at = now
        nvml, handle = self._nvml, self._handle
        try:
            util = nvml.nvmlDeviceGetUtilizationRates(handle).gpu
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            temp = nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)
        except Exception:  # the device went away or the driver refused: say nothing rather than stale
            self._last = None
            return None
        self._last = GpuUsage(float(util), memory.used / 2**20, memory.total / 2**20, float(temp), "nvml")
        return self._last


def torch_gpu_usage(record: dict) -> GpuUsage | None:
    """The trainer's own CUDA memory counters from a metrics record (None: not on CUDA)."""
    used = record.get("cuda_mem_mb")
    if not isinstance(used, (int, float)):
        return None
    return GpuUsage(None, float(used), None, None, "torch")


def steps_per_second(records: list[dict], window: int = 5) -> float | None:
    """Steps per second over the last ``window`` records, from their steps and elapsed times
    (None until two records have advanced)."""
    timed = [(r["step"], r["elapsed_s"]) for r in records[-window - 1:]
             if isinstance(r.get("step"), int) and isinstance(r.get("elapsed_s"), (int, float))]
    if len(timed) < 2:
        return None
    (s0, t0), (s1, t1) = timed[0], timed[-1]
    return (s1 - s0) / (t1 - t0) if t1 > t0 and s1 > s0 else None


def _size(mb: float) -> str:
    return f"{mb / 1024:.1f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def machine_line(usage, steps_s: float | None, left: str | None, gpu: GpuUsage | None) -> str:
    """One line of at most ~78 characters: ``cpu 187% 8 thr · 412 MB · 12.5 steps/s · 1m20s left ·
    gpu 87% 3.0/80 GB 61°C`` (the CPU in % of one core, threads, resident memory) (``usage``: a ``processes.Usage``, or None when the trainer
    cannot be seen)."""
    parts = []
    if usage is not None:
        parts += [f"cpu {usage.cpu_percent:.0f}% {usage.threads} thr", _size(usage.rss_bytes / 2**20)]
    if steps_s is not None:
        parts.append(f"{steps_s:.3g} steps/s")
    if left:
        parts.append(f"{left} left")
    if gpu is not None:
        memory = _size(gpu.memory_mb) if gpu.memory_total_mb is None else (
            f"{gpu.memory_mb / 1024:.1f}/{gpu.memory_total_mb / 1024:.0f} GB")
        text = "gpu" + (f" {gpu.utilisation:.0f}%" if gpu.utilisation is not None else "") + f" {memory}"
        text += f" {gpu.temperature_c:.0f}°C" if gpu.temperature_c is not None else ""
        text += " (torch)" if gpu.source == "torch" else ""
        parts.append(text)
    return " · ".join(parts)
