"""Worked examples for "Training across many GPUs"."""

from __future__ import annotations

from minigpt.teaching import parallelism
from minigpt.teaching.examples.registry import example, table

GB = 1e9  # decimal gigabytes: 7e9 parameters · 16 bytes = 112 GB, easy to check by hand
DEVICE_GB = 80  # a large datacentre GPU's memory


def _gb(n: float) -> str:
    return f"{n / GB:,.2f}"


@example("parallel.zero_memory", "Memory per GPU for a 7B model on 8 GPUs (mixed-precision Adam)")
def _zero_memory() -> str:
    n_params, n = 7e9, 8
    rows = []
    for stage in parallelism.STAGES:
        m = parallelism.memory_per_device(n_params, n, stage)
        rows.append([stage, _gb(m.weights), _gb(m.gradients), _gb(m.optimizer), _gb(m.total)])
    big = {stage: parallelism.memory_per_device(70e9, 64, stage).total for stage in parallelism.STAGES}
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
        tr = parallelism.tensor_parallel_traffic(batch=1, seq=4096, d_model=4096, t=t)
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
    picture = "\n".join(f"    stage {s}: {row}" for s, row in enumerate(parallelism.pipeline_schedule(p, 4)))
    rows = []
    for m in (1, 4, 8, 16, 32):
        counted = parallelism.idle_share(parallelism.pipeline_schedule(p, m))
        rows.append([m, f"{p - 1}/{m + p - 1}", f"{parallelism.bubble_fraction(p, m):.3f}",
                     f"{counted:.3f}"])
    return ("The forward half with m = 4 (digits: which micro-batch; dots: idle):\n\n"
            + picture + "\n\n"
            + table(["m", "(p−1)/(m+p−1)", "formula", "counted in the schedule"], rows)
            + "\n\nMore micro-batches shrink the bubble; each one must still be big enough "
              "to keep a stage busy.")


@example("parallel.schedules", "GPipe, 1F1B and interleaved schedules: p = 4 stages")
def _schedules() -> str:
    p, rows = 4, []
    for m in (4, 8, 16):
        rows.append([m, f"{parallelism.bubble_fraction(p, m):.3f}",
                     f"{parallelism.interleaved_bubble_fraction(p, m, 2):.3f}",
                     f"{parallelism.interleaved_bubble_fraction(p, m, 4):.3f}",
                     parallelism.micro_batches_held(p, m, "gpipe"), parallelism.micro_batches_held(p, m, "1f1b")])
    return (table(["m", "bubble v=1", "v=2", "v=4", "held: GPipe", "held: 1F1B"], rows)
            + "\n\nThe bubble is (p − 1)/(v·m + p − 1): 1F1B leaves it as GPipe's (v = 1) but "
              "caps the micro-batches whose activations the first stage holds at p instead of "
              "m. Interleaving v chunks of layers per GPU divides the fill and drain by v, at "
              "the price of v times as many sends between stages.")


@example("parallel.sequence_expert",
         "Sequence, context and expert parallelism: what each one saves or sends")
def _sequence_expert() -> str:
    s, b, h, a, t = 2048, 1, 12288, 96, 8  # a GPT-3 175B layer, as Korthikanti et al. use
    rows = [[label, f"{parallelism.activation_bytes_per_layer(s, b, h, a, tt, sp) / 2**30:.2f}"]
            for label, tt, sp in (("no model parallelism", 1, False),
                                  (f"tensor parallel, t = {t}", t, False),
                                  (f"tensor + sequence parallel, t = {t}", t, True))]
    seq, c, kv = 131072, 8, 8 * 128  # 8 key/value heads of 128
    ring = parallelism.ring_kv_bytes_received(seq, kv, c)
    tokens, d, k, gpus = 4096, 4096, 2, 8
    sent = parallelism.expert_all_to_all_bytes(tokens, d, k, gpus)
    return (table(["layer of width 12,288, 2,048 tokens", "activations GiB per GPU"], rows)
            + "\n\nTensor parallelism alone leaves the LayerNorms' and dropouts' activations "
              "whole on every GPU; splitting them along the sequence brings the total to "
              "1/t of it. Context parallelism with ring attention at "
              f"{seq:,} tokens over {c} GPUs: each keeps {seq // c:,} tokens and receives "
              f"{ring / 2**20:,.0f} MiB of other blocks' keys and values per layer "
              f"({kv} key/value numbers a token, 16 bits). Expert parallelism, {tokens:,} "
              f"tokens per GPU, width {d:,}, top-{k} routing over {gpus} GPUs: the two "
              f"all-to-alls send {sent / 2**20:,.0f} MiB per MoE layer from each GPU.")
