"""One LLM system-design question worked end to end: serve a LLaMA-2-70B-shaped model at a given
request rate and latency target on 80 GB GPUs. Each step is a small function so that the lesson
shows, and the tests pin, every number: weights and KV-cache memory, the tensor-parallel degree,
the batch that memory and the per-token latency target allow, the decode step's time from
memory bandwidth, the prefill time from compute, the replicas the load needs and the cost.

The model is deliberately simple (a roofline: a decode step reads every weight once and every
cached key and value once; a prefill runs at a fixed share of peak FLOP/s) and its assumptions
are named constants, so a learner can change one and see what moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: float
    bytes_per_s: float  # HBM bandwidth
    flops_per_s: float  # dense 16-bit peak
    dollars_per_hour: float  # an assumed rental price


H100 = Gpu("H100 SXM 80 GB", 80e9, 3.35e12, 989e12, 2.50)


@dataclass(frozen=True)
class Model:
    name: str
    n_params: float
    n_layers: int
    n_kv_heads: int
    head_dim: int
    bytes_per_value: int = 2  # 16-bit weights and cache


LLAMA2_70B = Model("LLaMA-2 70B", 70e9, 80, 8, 128)


@dataclass(frozen=True)
class Workload:
    requests_per_s: float
    prompt_tokens: int
    output_tokens: int
    tpot_s: float  # target time per output token
    ttft_s: float  # target time to first token


TARGET = Workload(requests_per_s=10, prompt_tokens=1000, output_tokens=250, tpot_s=0.050,
                  ttft_s=1.0)
MEMORY_RESERVE = 0.10  # share of each GPU kept for activations, the runtime and fragmentation
BANDWIDTH_EFFICIENCY = 0.7  # share of peak bandwidth a decode step reaches
PREFILL_MFU = 0.5  # share of peak FLOP/s a long prefill reaches
TP_DEGREES = (1, 2, 4, 8)  # divisors of the 8 KV heads, within one 8-GPU server


def weight_bytes(m: Model) -> float:
    return m.n_params * m.bytes_per_value


def kv_bytes_per_token(m: Model) -> int:
    """A key and a value vector per KV head per layer."""
    return 2 * m.n_layers * m.n_kv_heads * m.head_dim * m.bytes_per_value


def little_concurrency(requests_per_s: float, seconds_in_system: float) -> float:
    """Little's law: requests in flight = arrival rate × time each spends in the system."""
    return requests_per_s * seconds_in_system


def max_batch_from_memory(m: Model, gpu: Gpu, tp: int, context: int) -> int:
    """Sequences of ``context`` tokens whose KV cache fits beside the weights on ``tp`` GPUs."""
    free = tp * gpu.memory_bytes * (1 - MEMORY_RESERVE) - weight_bytes(m)
    return max(0, math.floor(free / (context * kv_bytes_per_token(m))))


def decode_step_s(m: Model, gpu: Gpu, tp: int, batch: int, mean_context: float) -> float:
    """One decode step, memory-bound: the weights plus every sequence's cache, read over ``tp``
    GPUs' bandwidth at BANDWIDTH_EFFICIENCY."""
    bytes_read = weight_bytes(m) + batch * mean_context * kv_bytes_per_token(m)
    return bytes_read / (tp * gpu.bytes_per_s * BANDWIDTH_EFFICIENCY)


def decode_compute_s(m: Model, gpu: Gpu, tp: int, batch: int) -> float:
    """The same step's arithmetic at peak: 2 FLOPs per parameter per sequence."""
    return 2 * m.n_params * batch / (tp * gpu.flops_per_s)


def prefill_s(m: Model, gpu: Gpu, tp: int, prompt_tokens: int) -> float:
    """A prompt's forward pass, compute-bound: 2 FLOPs per parameter per token at PREFILL_MFU."""
    return 2 * m.n_params * prompt_tokens / (tp * gpu.flops_per_s * PREFILL_MFU)


def prefill_wait_s(utilisation: float, prefill: float) -> float:
    """Mean wait for the prefill queue: requests arrive at random and each prefill takes the same
    time, an M/D/1 queue, whose mean wait is u · t / (2 · (1 − u)) (Pollaczek-Khinchine)."""
    return utilisation * prefill / (2 * (1 - utilisation))


@dataclass(frozen=True)
class Design:
    """``replicas`` copies of the model, each on ``tp`` GPUs, sharing the load evenly."""

    tp: int
    replicas: int
    requests_per_s: float  # per replica
    prefill_s: float
    prefill_share: float  # the share of a replica's time its prefills take
    batch: float  # the mean number of sequences decoding together (Little's law)
    batch_memory: int  # the most sequences of full length the KV room holds
    step_s: float  # one decode step at that batch
    tpot_s: float  # the step stretched by the prefills that interrupt decoding
    ttft_s: float  # a prefill plus its mean wait in the queue

    @property
    def gpus(self) -> int:
        return self.tp * self.replicas

    def meets(self, w: Workload) -> bool:
        return (self.batch <= self.batch_memory and self.tpot_s <= w.tpot_s
                and self.ttft_s <= w.ttft_s)


def design(m: Model, gpu: Gpu, w: Workload, tp: int, replicas: int) -> Design | None:
    """The steady state of ``replicas`` replicas of ``tp`` GPUs, or None where the load cannot be
    carried at all. Decoding runs in the time prefills leave (a share 1 − u), so a step of
    a + b·B seconds yields a token every (a + b·B) / (1 − u); the batch B is the requests in
    flight, B = q · (prefill + output · TPOT), and the two together are linear in B."""
    q = w.requests_per_s / replicas
    pre = prefill_s(m, gpu, tp, w.prompt_tokens)
    u = q * pre
    mean_context = w.prompt_tokens + w.output_tokens / 2
    a = decode_step_s(m, gpu, tp, 0, mean_context)  # the weights' share of a step
    b = decode_step_s(m, gpu, tp, 1, mean_context) - a  # each sequence's cache
    if u >= 1:
        return None
    slack = 1 - q * w.output_tokens * b / (1 - u)
    if slack <= 0:
        return None
    batch = (q * pre + q * w.output_tokens * a / (1 - u)) / slack
    step = a + b * batch
    full = w.prompt_tokens + w.output_tokens
    return Design(tp, replicas, q, pre, u, batch, max_batch_from_memory(m, gpu, tp, full),
                  step, step / (1 - u), pre + prefill_wait_s(u, pre))


def cheapest(m: Model, gpu: Gpu, w: Workload, max_replicas: int = 64) -> list[Design]:
    """For each tensor-parallel degree, the fewest replicas that meet the targets."""
    found = []
    for tp in TP_DEGREES:
        for replicas in range(1, max_replicas + 1):
            d = design(m, gpu, w, tp, replicas)
            if d is not None and d.meets(w):
                found.append(d)
                break
    return found


def gpu_seconds_per_token(d: Design, w: Workload) -> tuple[float, float]:
    """GPU-seconds a prompt token and an output token take in design ``d``: a prefill's time
    shared by its prompt's tokens, and a decode step's time shared by the batch."""
    return d.tp * d.prefill_s / w.prompt_tokens, d.tp * d.step_s / d.batch


def dollars_per_million_tokens(gpus: int, gpu: Gpu, tokens_per_s: float) -> float:
    return gpus * gpu.dollars_per_hour / (tokens_per_s * 3600) * 1e6
