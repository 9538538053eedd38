"""Training at scale: pipeline schedules with split backward passes (zero bubble), a search over
tensor, pipeline and data degrees for a cluster, the numbers behind three stability tricks, μP's
scaling rules, and DeepSeek-V3's balancing of experts by a bias instead of a loss.

Zero-bubble pipelines (Qi et al. 2023) split a backward pass into B (the gradient with respect to
the input, which the previous stage waits for) and W (the gradient of the weights, which nobody
waits for). With F, B, W the times of one micro-batch's pieces on one stage, 1F1B idles
(p − 1)·(F + B + W) per step; ZB-H1 fills part of it with W passes, leaving (p − 1)·(F + B − W),
at 1F1B's activation memory; ZB-H2 holds more micro-batches in flight and reaches about zero.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from minigpt.teaching import parallelism

# --- pipeline schedules ---------------------------------------------------------------------------


def schedule_bubble(p: int, m: int, schedule: str, f: float = 1.0, b: float = 1.0,
                    w: float = 1.0, v: int = 1) -> float:
    """Idle share of a step of m micro-batches on p stages. "gpipe" and "1f1b" idle
    (p − 1)(F + B + W); "interleaved" divides that by v chunks per device; "zb-h1" idles
    (p − 1)(F + B − W); "zb-h2" none."""
    work = m * (f + b + w)
    idle = {"gpipe": (p - 1) * (f + b + w), "1f1b": (p - 1) * (f + b + w),
            "interleaved": (p - 1) * (f + b + w) / v, "zb-h1": (p - 1) * (f + b - w),
            "zb-h2": 0.0}[schedule]
    return idle / (idle + work)


def activations_held(p: int, m: int, schedule: str) -> int:
    """Micro-batches whose activations the first stage keeps at its peak (1F1B's p from
    ``parallelism.micro_batches_held``; ZB-H2 about doubles it, Qi et al. table 1)."""
    if schedule == "gpipe":
        return parallelism.micro_batches_held(p, m, "gpipe")
    if schedule == "zb-h2":
        return min(2 * p - 1, m)
    return parallelism.micro_batches_held(p, m, "1f1b")


# --- choosing the degrees -------------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    gpus: int
    gpus_per_node: int
    memory_bytes: float
    flops_per_s: float
    intra_bytes_per_s: float   # inside a node (NVLink)
    inter_bytes_per_s: float   # between nodes, per GPU


@dataclass(frozen=True)
class Job:
    n_params: float
    layers: int
    d_model: int
    heads: int
    seq: int
    global_batch: int   # sequences per step
    micro_batch: int = 1


@dataclass(frozen=True)
class Plan:
    t: int
    p: int
    d: int
    memory: float        # bytes a GPU holds at its peak
    step_s: float        # estimated seconds a step
    fits: bool


def plan(job: Job, cl: Cluster, t: int, p: int, d: int) -> Plan:
    """Memory and time of one layout: ZeRO-1 over the d data-parallel copies of each shard,
    activations of 1F1B with sequence parallelism, compute at full speed but for the bubble,
    tensor-parallel traffic on NVLink (or the network when t spans nodes) and the gradient
    all-reduce on the network, neither hidden behind compute."""
    shard = job.n_params / (t * p)
    states = parallelism.memory_per_device(shard, d, "ZeRO-1").total
    m = job.global_batch // (d * job.micro_batch)
    per_layer = parallelism.activation_bytes_per_layer(job.seq, job.micro_batch, job.d_model, job.heads,
                                              t, sequence_parallel=t > 1)
    memory = states + per_layer * job.layers / p * parallelism.micro_batches_held(p, m, "1f1b")
    compute = 6 * job.n_params * job.global_batch * job.seq / (cl.gpus * cl.flops_per_s)
    compute /= 1 - parallelism.bubble_fraction(p, m)
    tp_link = cl.intra_bytes_per_s if t <= cl.gpus_per_node else cl.inter_bytes_per_s
    tp = 0.0
    if t > 1:
        per_block = parallelism.tensor_parallel_traffic(job.micro_batch, job.seq, job.d_model, t)
        tp = per_block.sent_per_device * job.layers / p * m / tp_link
    dp = parallelism.ring_all_reduce_bytes_sent(2 * shard, d) / cl.inter_bytes_per_s if d > 1 else 0.0
    return Plan(t, p, d, memory, compute + tp + dp, memory <= cl.memory_bytes)


def search(job: Job, cl: Cluster) -> list[Plan]:
    """Every layout with t dividing the GPUs of a node, p dividing the layers, t·p·d the cluster
    and d dividing the batch into whole micro-batches; best (fitting, fastest) first."""
    plans = []
    for t in (x for x in range(1, cl.gpus_per_node + 1) if cl.gpus_per_node % x == 0):
        for p in (x for x in range(1, job.layers + 1) if job.layers % x == 0):
            if cl.gpus % (t * p):
                continue
            d = cl.gpus // (t * p)
            if job.global_batch % (d * job.micro_batch):
                continue
            plans.append(plan(job, cl, t, p, d))
    return sorted(plans, key=lambda pl: (not pl.fits, pl.step_s))


# --- stability -------------------------------------------------------------------------------------


def z_loss(logits: list[float], coeff: float = 1e-4) -> float:
    """PaLM's auxiliary term coeff·(log Σ e^z)² (Chowdhery et al. 2022): it pulls the softmax's
    normaliser towards 1 so the logits cannot drift upward together."""
    top = max(logits)
    log_z = top + math.log(sum(math.exp(z - top) for z in logits))
    return coeff * log_z**2


def soft_cap(x: float, cap: float) -> float:
    """cap·tanh(x/cap): near x for small x, never past ±cap (Gemma 2: 50 on attention scores,
    30 on the final logits)."""
    return cap * math.tanh(x / cap)


def max_qk_logit(head_dim: int, gain: float = 1.0) -> float:
    """With QK-norm (Dehghani et al. 2023) q and k are RMS-normalised, so each has length
    gain·√head_dim and a scaled score q·k/√head_dim is at most gain²·√head_dim, whatever the
    weights grow to."""
    return gain**2 * math.sqrt(head_dim)


# --- μP --------------------------------------------------------------------------------------------

# Yang et al. 2022, table 3 (Adam): how init variance and learning rate scale with the width
# multiplier m = width / base width, per kind of parameter.
MUP_RULES = {
    "embedding / input": {"init_var": 0, "adam_lr": 0},    # exponents of m
    "hidden matrix": {"init_var": -1, "adam_lr": -1},
    "output (unembedding)": {"init_var": -2, "adam_lr": -1},
}


def mup_multipliers(kind: str, m: float) -> tuple[float, float]:
    """(init standard deviation, Adam learning rate) relative to the base model's."""
    rule = MUP_RULES[kind]
    return math.sqrt(m ** rule["init_var"]), m ** rule["adam_lr"]


# --- balancing experts without an auxiliary loss --------------------------------------------------


def bias_balancing(experts: int = 8, top_k: int = 2, tokens: int = 512, steps: int = 80,
                   gamma: float = 0.01, seed: int = 0) -> list[float]:
    """Routing with a per-expert bias added to the scores for choosing experts only (the gate
    weights still use the raw scores); after each batch an overloaded expert's bias drops by
    gamma and an underloaded one's rises (Wang et al. 2024; DeepSeek-V3). Returns the busiest
    expert's load over the mean load, step by step; the scores favour low-numbered experts."""
    rng = random.Random(seed)
    bias = [0.0] * experts
    history = []
    for _ in range(steps):
        load = [0] * experts
        for _ in range(tokens):
            scores = [rng.random() + 0.3 * (experts - e) / experts for e in range(experts)]
            chosen = sorted(range(experts), key=lambda e: scores[e] + bias[e])[-top_k:]
            for e in chosen:
                load[e] += 1
        mean = tokens * top_k / experts
        history.append(max(load) / mean)
        bias = [b - gamma * ((n > mean) - (n < mean)) for b, n in zip(bias, load)]
    return history
