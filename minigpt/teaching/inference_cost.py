"""What generating text costs: FLOPs per token, prefill vs decode, and why decoding one token at a
time is limited by memory bandwidth rather than arithmetic.

A forward pass does about 2 FLOPs per weight per token (one multiply, one add), so 2·N for N
non-embedding parameters, plus the attention scores and mixing: 4·L·T·d for a token that attends
to T positions (2·T·d for its scores, 2·T·d for its weighted sum, per layer). Kaplan et al. 2020
(table 1) list 2·L·T·d without a reason; one reading is the average over a causal context, where a
position attends to about T/2. Prefill runs the whole prompt at once (big matrix
multiplies, compute-bound); decode produces one token per step and must read every weight from
memory for it, so at batch 1 it does about 2 FLOPs per 2-byte weight read: one FLOP per byte,
far below what a GPU can do per byte it loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.training.flops import attention_forward_flops


def flops_per_token(n_params: int, n_layers: int, context: int, d_model: int) -> int:
    """Forward FLOPs for one token that attends to ``context`` positions: 2N + 4·L·T·d
    (its scores against T keys and its weighted sum of T values, in every layer)."""
    return 2 * n_params + attention_forward_flops(n_layers, context, d_model)


def prefill_flops(n_params: int, n_layers: int, prompt: int, d_model: int) -> int:
    """FLOPs to run a prompt of ``prompt`` tokens (token t attends to t + 1 positions)."""
    return sum(flops_per_token(n_params, n_layers, t + 1, d_model) for t in range(prompt))


@dataclass(frozen=True)
class Accelerator:
    """A round, illustrative accelerator: peak dense 16-bit FLOP/s and memory bandwidth."""

    name: str
    flops_per_s: float
    bytes_per_s: float

    @property
    def balance(self) -> float:
        """FLOPs it can do per byte it reads: below this, a kernel waits on memory."""
        return self.flops_per_s / self.bytes_per_s


ILLUSTRATIVE_GPU = Accelerator("a datacentre GPU (≈1 PFLOP/s, 3 TB/s)", 1e15, 3e12)


@dataclass(frozen=True)
class DecodeStep:
    batch: int
    flops: float
    bytes_read: float
    compute_s: float
    memory_s: float

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes_read

    @property
    def bound(self) -> str:
        return "memory" if self.memory_s > self.compute_s else "compute"


def decode_step(n_params: int, batch: int, gpu: Accelerator = ILLUSTRATIVE_GPU,
                bytes_per_weight: int = 2) -> DecodeStep:
    """One decode step for ``batch`` sequences: every weight is read once and used batch times
    (the KV cache reads are left out, which only makes decoding more memory-bound)."""
    flops = 2.0 * n_params * batch
    bytes_read = float(n_params * bytes_per_weight)
    return DecodeStep(batch, flops, bytes_read, flops / gpu.flops_per_s, bytes_read / gpu.bytes_per_s)
