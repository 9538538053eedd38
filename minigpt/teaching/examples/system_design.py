"""Worked examples for "ML system design for LLMs": serving a 70B model at 10 requests a second
with a 50 ms per-token target, every number from ``minigpt.teaching.system_design``."""

from __future__ import annotations

from dataclasses import replace

from minigpt.teaching import system_design
from minigpt.teaching.examples.registry import count, example, fmt, table

M, GPU, W = system_design.LLAMA2_70B, system_design.H100, system_design.TARGET
GB = 1e9


def _chosen() -> system_design.Design:
    """The fewest GPUs; between equals, the smaller tensor-parallel degree (more replicas, so a
    failed server takes away less)."""
    return min(system_design.cheapest(M, GPU, W), key=lambda d: (d.gpus, d.tp))


@example("design.memory", "A 70B model's memory: weights, KV cache, and what fits per TP degree")
def _memory() -> str:
    per_token = system_design.kv_bytes_per_token(M)
    full = W.prompt_tokens + W.output_tokens
    rows = []
    for tp in system_design.TP_DEGREES:
        room = tp * GPU.memory_bytes * (1 - system_design.MEMORY_RESERVE) - system_design.weight_bytes(M)
        rows.append([tp, fmt(system_design.weight_bytes(M) / tp / GB, 1), fmt(max(room, 0) / GB, 1),
                     count(system_design.max_batch_from_memory(M, GPU, tp, full))])
    return (f"Weights: 70e9 parameters × 2 bytes = {fmt(system_design.weight_bytes(M) / GB, 0)} GB. "
            f"KV cache: 2 × {M.n_layers} layers × {M.n_kv_heads} KV heads × {M.head_dim} × "
            f"2 bytes = {count(per_token)} bytes a token; a request of {count(full)} tokens "
            f"holds {fmt(full * per_token / GB, 2)} GB.\n\n"
            + table(["TP", "weights/GPU GB", "KV room GB", "full requests that fit"], rows)
            + f"\n\nKV room = TP × 80 GB × {1 - system_design.MEMORY_RESERVE:.0%} − 140 GB (a tenth of "
              "each GPU is kept for activations and the runtime). One GPU cannot even hold the "
              "weights; two hold them with room for only a handful of requests.")


@example("design.replicas", "Replicas needed for 10 requests/s: TPOT ≤ 50 ms, TTFT ≤ 1 s")
def _replicas() -> str:
    rows = []
    first = system_design.design(M, GPU, W, 4, 1)
    chosen = _chosen()
    options = [first] + system_design.cheapest(M, GPU, W)
    for d in options:
        rows.append([f"{d.tp} × {d.replicas}", fmt(d.prefill_share, 2), fmt(d.batch, 1),
                     fmt(d.step_s * 1e3, 1), fmt(d.tpot_s * 1e3, 1), fmt(d.ttft_s * 1e3, 0),
                     "yes" if d.meets(W) else "no"])
    return (table(["TP × copies", "prefill u", "batch", "step ms", "TPOT ms", "TTFT ms",
                   "meets?"], rows)
            + "\n\nPer replica: a prefill takes 2 × 70e9 × 1,000 FLOPs at "
              f"{system_design.PREFILL_MFU:.0%} of {fmt(GPU.flops_per_s / 1e12, 0)} TFLOP/s a GPU; its "
              "share u of the replica's time is requests/s × prefill time. A decode step "
              f"reads the weights and the caches at {system_design.BANDWIDTH_EFFICIENCY:.0%} of "
              f"{fmt(GPU.bytes_per_s / 1e12, 2)} TB/s a GPU, and decoding gets only the 1 − u "
              "prefills leave, so TPOT = step / (1 − u). The batch is the requests in flight "
              "(Little's law), TTFT a prefill plus its mean wait in the queue. One replica of "
              f"four GPUs fails: prefills take {first.prefill_share:.0%} of its time. Chosen: "
              f"{chosen.replicas} × TP {chosen.tp}, {chosen.gpus} GPUs.")


@example("design.roofline", "The chosen design's decode step: memory time against compute time")
def _roofline() -> str:
    d = _chosen()
    mean_context = W.prompt_tokens + W.output_tokens / 2
    weights = system_design.decode_step_s(M, GPU, d.tp, 0, mean_context)
    rows = [["read the weights", fmt(weights * 1e3, 2)],
            ["read the KV caches", fmt((d.step_s - weights) * 1e3, 2)],
            ["arithmetic at peak", fmt(system_design.decode_compute_s(M, GPU, d.tp, round(d.batch)) * 1e3, 2)]]
    return (table([f"TP {d.tp}, batch {fmt(d.batch, 1)}", "ms per step"], rows)
            + "\n\nThe reads take several times longer than the arithmetic: decoding is "
              "memory-bound, so the step time, and with it the per-token latency, is set by "
              "bytes moved, not FLOPs. A larger batch shares the weight reads, which is "
              "where the throughput comes from.")


@example("design.cost", "What the design costs, and how it grows with the load")
def _cost() -> str:
    prompt, output = system_design.gpu_seconds_per_token(_chosen(), W)
    rows = []
    for qps in (10, 20, 40):
        w = replace(W, requests_per_s=qps)
        d = min(system_design.cheapest(M, GPU, w), key=lambda x: (x.gpus, x.tp))
        out = qps * w.output_tokens
        total = qps * (w.prompt_tokens + w.output_tokens)
        rows.append([qps, f"{d.tp} × {d.replicas}", d.gpus,
                     fmt(system_design.dollars_per_million_tokens(d.gpus, GPU, out), 2),
                     fmt(system_design.dollars_per_million_tokens(d.gpus, GPU, total), 3)])
    return (table(["requests/s", "TP × replicas", "GPUs", "$/M output", "$/M all tokens"],
                  rows)
            + f"\n\nAt an assumed ${fmt(GPU.dollars_per_hour, 2)} per GPU-hour, with "
              f"{count(W.prompt_tokens)} prompt and {W.output_tokens} output tokens a request. "
              "Twice the load fits on the same eight GPUs as one replica of eight: the "
              "bigger batch shares each weight read among more sequences.\n\n"
              + table(["in the 10 requests/s design", "GPU-ms per token"],
                      [["a prompt token (prefill)", fmt(prompt * 1e3, 3)],
                       ["an output token (decode)", fmt(output * 1e3, 3)]])
              + f"\n\nAn output token takes {fmt(output / prompt, 1)} times the GPU time of "
                "a prompt token: prefill does its arithmetic on many tokens per weight read, "
                "decode on one token per sequence. This is why output tokens are priced "
                "several times higher.")
