"""Worked examples for "Training across many GPUs"."""

from __future__ import annotations

from minigpt.teaching import parallelism as PA
from minigpt.teaching.examples.registry import example, table

GB = 1e9  # decimal gigabytes: 7e9 parameters · 16 bytes = 112 GB, easy to check by hand
DEVICE_GB = 80  # a large datacentre GPU's memory


def _gb(n: float) -> str:
    return f"{n / GB:,.2f}"


@example("parallel.zero_memory", "Memory per GPU for a 7B model on 8 GPUs (mixed-precision Adam)")
def _zero_memory() -> str:
    n_params, n = 7e9, 8
    rows = []
    for stage in PA.STAGES:
        m = PA.memory_per_device(n_params, n, stage)
        rows.append([stage, _gb(m.weights), _gb(m.gradients), _gb(m.optimizer), _gb(m.total)])
    big = {stage: PA.memory_per_device(70e9, 64, stage).total for stage in PA.STAGES}
    fits = [stage for stage, total in big.items() if total < DEVICE_GB * GB]
    return (table(["sharding", "weights", "grads", "optim", "total GB"], rows)
            + "\n\nBytes per parameter: 2 (weights) + 2 (gradients) + 12 (float32 master, "
              "m, v) = 16. Activations come on top. The same for a 70B model on 64 GPUs: "
            + "; ".join(f"{stage}: {_gb(total)} GB" for stage, total in big.items())
            + f". Under an {DEVICE_GB} GB GPU's memory: {', '.join(fits) or 'none'}.")


@example("parallel.tensor_traffic",
         "Tensor parallelism: what one block sends (d = 4,096, 4,096 tokens, bf16)")
def _tensor_traffic() -> str:
    rows = []
    for t in (2, 4, 8):
        tr = PA.tensor_parallel_traffic(batch=1, seq=4096, d_model=4096, t=t)
        rows.append([t, f"{tr.activation_bytes / 2**20:,.0f}", tr.all_reduces,
                     f"{tr.sent_per_device / 2**20:,.0f}",
                     f"{32 * tr.sent_per_device / 2**30:,.1f}"])
    return (table(["t", "tensor MiB", "all-reduces", "sent MiB/block", "32 blocks GiB"], rows)
            + "\n\nOne all-reduced tensor is batch · tokens · d_model · 2 bytes. A ring "
              "all-reduce makes each device send 2·(t − 1)/t of it; a block does two in the "
              "forward pass and two in the backward pass. This traffic comes every step, "
              "which is why tensor parallelism stays inside one server's fast links.")


@example("parallel.bubble", "The pipeline bubble: p = 4 stages, m micro-batches")
def _bubble() -> str:
    p = 4
    picture = "\n".join(f"    stage {s}: {row}" for s, row in enumerate(PA.pipeline_schedule(p, 4)))
    rows = []
    for m in (1, 4, 8, 16, 32):
        counted = PA.idle_share(PA.pipeline_schedule(p, m))
        rows.append([m, f"{p - 1}/{m + p - 1}", f"{PA.bubble_fraction(p, m):.3f}",
                     f"{counted:.3f}"])
    return ("The forward half with m = 4 (digits: which micro-batch; dots: idle):\n\n"
            + picture + "\n\n"
            + table(["m", "(p−1)/(m+p−1)", "formula", "counted in the schedule"], rows)
            + "\n\nMore micro-batches shrink the bubble; each one must still be big enough "
              "to keep a stage busy.")
