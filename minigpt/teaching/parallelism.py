"""Training across many devices: memory per device under ZeRO/FSDP sharding, tensor-parallel
communication per layer, the pipeline bubble (GPipe, 1F1B, interleaved), and what sequence,
context and expert parallelism keep or send.

Mixed-precision Adam keeps 16 bytes per parameter (``precision.TRAINING_BYTES["mixed bf16"]``):
2 for the 16-bit weights, 2 for their gradients and 12 of optimizer state (a float32 master copy
and Adam's m and v). Plain data parallelism copies all 16 onto every device. ZeRO (Rajbhandari et
al. 2020) splits them over the N data-parallel devices in three stages: stage 1 the optimizer
state, stage 2 the gradients too, stage 3 the weights too. PyTorch's FSDP with FULL_SHARD is
stage 3, with SHARD_GRAD_OP stage 2. Activations are left out: they depend on batch and sequence,
not on the sharding.

Tensor parallelism in the Megatron-LM style (Shoeybi et al. 2019) splits each block's matrices
over t devices so that a block needs one all-reduce after attention and one after the MLP in the
forward pass, and two more in the backward pass. Pipeline parallelism (GPipe, Huang et al. 2019)
gives each of p devices a run of layers; with m micro-batches the fill-and-drain schedule leaves
each device idle for a fraction (p − 1)/(m + p − 1) of the time, which ``pipeline_schedule``
checks by laying the schedule out cell by cell.
"""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.teaching.precision import TRAINING_BYTES

_MIXED = TRAINING_BYTES["mixed bf16"]
WEIGHT_BYTES = _MIXED["weights"]                                       # 2
GRADIENT_BYTES = _MIXED["gradients"]                                   # 2
OPTIMIZER_BYTES = _MIXED["fp32 master"] + _MIXED["adam m"] + _MIXED["adam v"]  # 12

# What each stage shards: (weights, gradients, optimizer state)
STAGES = {
    "data parallel": (False, False, False),
    "ZeRO-1": (False, False, True),
    "ZeRO-2 / FSDP SHARD_GRAD_OP": (False, True, True),
    "ZeRO-3 / FSDP FULL_SHARD": (True, True, True),
}


@dataclass(frozen=True)
class DeviceMemory:
    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


def memory_per_device(n_params: float, n_devices: int, stage: str) -> DeviceMemory:
    """Bytes of weights, gradients and optimizer state on one of ``n_devices`` devices."""
    shard_w, shard_g, shard_o = STAGES[stage]
    n = n_devices
    return DeviceMemory(
        weights=WEIGHT_BYTES * n_params / (n if shard_w else 1),
        gradients=GRADIENT_BYTES * n_params / (n if shard_g else 1),
        optimizer=OPTIMIZER_BYTES * n_params / (n if shard_o else 1),
    )


# --- tensor parallelism ----------------------------------------------------------------------

ALL_REDUCES_PER_BLOCK = {"forward": 2, "backward": 2}  # after attention, after the MLP


def ring_all_reduce_bytes_sent(tensor_bytes: float, n_devices: int) -> float:
    """Bytes each device sends in a ring all-reduce: a reduce-scatter then an all-gather, each
    passing (n − 1) chunks of size tensor_bytes / n."""
    return 2 * (n_devices - 1) / n_devices * tensor_bytes


@dataclass(frozen=True)
class TensorParallelTraffic:
    activation_bytes: float      # one all-reduced tensor: batch · seq · d_model · bytes
    all_reduces: int             # per block, forward and backward
    sent_per_device: float       # bytes each device sends per block, forward and backward


def tensor_parallel_traffic(batch: int, seq: int, d_model: int, t: int,
                            bytes_per_value: int = 2) -> TensorParallelTraffic:
    """What one block costs in communication when its matrices are split over ``t`` devices."""
    activation = batch * seq * d_model * bytes_per_value
    n = sum(ALL_REDUCES_PER_BLOCK.values())
    return TensorParallelTraffic(activation, n, n * ring_all_reduce_bytes_sent(activation, t))


# --- pipeline parallelism --------------------------------------------------------------------


def bubble_fraction(p: int, m: int) -> float:
    """Idle share of a fill-and-drain pipeline of p stages and m micro-batches."""
    return (p - 1) / (m + p - 1)


def pipeline_schedule(p: int, m: int) -> list[str]:
    """The forward half of a GPipe schedule, one row per stage: stage s works on micro-batch j
    at time s + j; '.' is an idle slot. (The backward half is the mirror image.)"""
    steps = m + p - 1
    rows = []
    for s in range(p):
        row = ["."] * steps
        for j in range(m):
            row[s + j] = str(j + 1) if m < 10 else "#"
        rows.append("".join(row))
    return rows


def idle_share(schedule: list[str]) -> float:
    """The share of '.' slots in a schedule laid out by ``pipeline_schedule``."""
    cells = "".join(schedule)
    return cells.count(".") / len(cells)


def interleaved_bubble_fraction(p: int, m: int, v: int = 1) -> float:
    """Idle share when each device holds v chunks of layers spread through the pipeline (the
    interleaved schedule, Narayanan et al. 2021): the fill and the drain last (p − 1)/v
    micro-batch slots, so the share is (p − 1)/(v·m + p − 1). v = 1 is GPipe's and 1F1B's."""
    return (p - 1) / (v * m + p - 1)


def micro_batches_held(p: int, m: int, schedule: str) -> int:
    """Micro-batches whose activations the first stage holds at its peak. GPipe runs every
    forward pass before any backward, so all m; 1F1B starts a backward pass as soon as the first
    micro-batch comes back, after p forwards, and from then on alternates one forward with one
    backward, so never more than p."""
    if schedule == "gpipe":
        return m
    if schedule == "1f1b":
        return min(p, m)
    raise ValueError(f"unknown schedule {schedule!r}: 'gpipe' or '1f1b'")


# --- sequence, context and expert parallelism -------------------------------------------------


def activation_bytes_per_layer(seq: int, batch: int, hidden: int, heads: int, t: int = 1,
                               sequence_parallel: bool = False) -> float:
    """Activation bytes one transformer layer keeps for backward on each device, in 16 bits with
    dropout masks (Korthikanti et al. 2022, table 2): s·b·h·(34 + 5·a·s/h) alone;
    s·b·h·(10 + 24/t + 5·a·s/(h·t)) with tensor parallelism over t, whose LayerNorms and dropouts
    still see the whole sequence; s·b·h·(34 + 5·a·s/h)/t once sequence parallelism splits those
    along the sequence too."""
    sbh, scores = seq * batch * hidden, 5 * heads * seq / hidden
    if sequence_parallel:
        return sbh * (34 + scores) / t
    return sbh * (10 + 24 / t + scores / t) if t > 1 else sbh * (34 + scores)


def ring_kv_bytes_received(seq: int, kv_width: int, c: int, bytes_per_value: int = 2) -> float:
    """Context parallelism with ring attention: each of c devices keeps seq/c tokens and receives
    the other c − 1 blocks of keys and values in turn, per layer."""
    return (c - 1) * 2 * (seq / c) * kv_width * bytes_per_value


def expert_all_to_all_bytes(tokens: int, d_model: int, top_k: int, devices: int,
                            bytes_per_value: int = 2) -> float:
    """Bytes a device sends per MoE layer in the forward pass under expert parallelism: each token
    goes to its top_k experts and comes back (two all-to-alls); with experts spread evenly and
    routing balanced, a share (devices − 1)/devices of those copies leaves the device."""
    return 2 * tokens * top_k * d_model * bytes_per_value * (devices - 1) / devices
