"""Worked examples for "Long context at scale: ring attention, sparse layers, hybrid models"."""

from __future__ import annotations

import torch

from minigpt.teaching import long_context_scale, parallelism
from minigpt.teaching.examples.registry import count, example, fmt, table

FLOPS, LINK = 1e15, 50e9   # a datacentre GPU and a 400 Gb/s link between GPUs


@example("long_scale.ring", "Ring attention over c GPUs: 128K tokens, d = 8,192 (70B-like)")
def _ring() -> str:
    seq, d, kv = 131072, 8192, 1024   # 8 key/value heads of 128: GQA
    rows = []
    for c in (4, 8, 16, 64):
        compute, send = long_context_scale.ring_round(seq, c, d, kv, FLOPS, LINK)
        total = parallelism.ring_kv_bytes_received(seq, kv, c)
        rows.append([c, count(seq // c), f"{compute * 1e3:.2f}", f"{send * 1e3:.3f}",
                     f"{total / 2**20:,.0f}", "yes" if compute >= send else "no"])
    mha = long_context_scale.min_block_for_overlap(d, d, FLOPS, LINK)
    gqa = long_context_scale.min_block_for_overlap(d, kv, FLOPS, LINK)
    return (table(["c", "tokens/GPU", "round ms", "send ms", "KV in, MiB", "hidden"], rows)
            + f"\n\nPer layer, forward. Each round attends a block while the next block "
              f"travels; the send hides when the block is long enough: at least "
              f"{count(round(mha))} tokens a GPU with full multi-head keys (F/B, the paper's "
              f"rule), {count(round(gqa))} with GQA's eight times smaller keys and values.")


@example("long_scale.interleave", "Sliding-window layers between global ones: the KV cache")
def _interleave() -> str:
    rows = []
    for name, window, k in (("Gemma 2 (1:1, window 4,096)", 4096, 1),
                            ("Gemma 3 (5:1, window 1,024)", 1024, 5)):
        rows.append([name] + [f"{long_context_scale.interleaved_cache_share(t, window, k):.1%}"
                              for t in (8192, 32768, 131072)])
    return (table(["layers", "8K", "32K", "128K"], rows)
            + "\n\nThe cache as a share of an all-global model of the same size. Local layers "
              "keep only their window, so at long context the global layers' cache is "
              "nearly all that is left: 1/(k + 1) of the full cache.")


@example("long_scale.nsa", "Native sparse attention: keys a decoding query reads")
def _nsa() -> str:
    rows = []
    for s in (8192, 16384, 32768, 65536):
        n = long_context_scale.nsa_tokens(s)
        rows.append([count(s), count(s // long_context_scale.NSA["stride"]),
                     count(long_context_scale.NSA["selected"] * long_context_scale.NSA["block"]), count(long_context_scale.NSA["window"]),
                     count(n), f"{s / n:.1f}×"])
    return (table(["context", "compressed", "selected", "window", "total", "fewer"], rows)
            + "\n\nOne summary every 16 tokens, 16 chosen blocks of 64 tokens and the last "
              "512 tokens. Decoding is bound by memory reads, so reading fewer keys is the "
              "speed-up (Yuan et al. 2025 report the same counts).")


@example("long_scale.state", "A fixed state against a growing cache: 48 layers at 128K")
def _state() -> str:
    ctx, layers, kv_heads, hd = 131072, 48, 8, 128
    d = 4096
    mamba, delta = long_context_scale.mamba2_state(d), long_context_scale.deltanet_state(32, 128, 128)
    full = layers * long_context_scale.kv_numbers(ctx, kv_heads, hd)
    rows = [["attention only (GQA 8 × 128)", f"{full * 2 / 2**30:.2f}"]]
    for name, st in (("Mamba-2, 1 attention in 4", mamba), ("gated DeltaNet, 1 in 4", delta)):
        n = long_context_scale.hybrid_cache_numbers(ctx, layers, 4, kv_heads, hd, st)
        rows.append([name, f"{n * 2 / 2**30:.2f}"])
    even = delta // (2 * kv_heads * hd)
    return (table(["48 layers, d = 4,096, 16-bit", "GiB a sequence"], rows)
            + f"\n\nOne Mamba-2 layer's state (expand 2, N = 128): {count(mamba)} numbers; "
              f"one gated DeltaNet layer's (32 heads of 128 × 128): {count(delta)}; an "
              f"attention layer caches as much as the DeltaNet state after {count(even)} "
              "tokens, then keeps growing. A hybrid's cache is its attention layers'.")


@example("long_scale.duality", "SSD: the recurrence and the masked matrix give the same outputs")
def _duality() -> str:
    g = torch.Generator().manual_seed(0)
    steps, n = 5, 3
    a = 0.5 + 0.5 * torch.rand(steps, generator=g, dtype=torch.float64)
    b = torch.randn(steps, n, generator=g, dtype=torch.float64)
    c = torch.randn(steps, n, generator=g, dtype=torch.float64)
    x = torch.randn(steps, generator=g, dtype=torch.float64)
    rec, mat = long_context_scale.ssd_recurrent(a, b, c, x), long_context_scale.ssd_matrix(a, b, c) @ x
    lin, delta = long_context_scale.recall_after_overwrite()
    return (table(["t", "recurrence", "matrix"],
                  [[t, fmt(r), fmt(m)] for t, (r, m) in enumerate(zip(rec.tolist(),
                                                                     mat.tolist()))])
            + f"\n\nLargest difference: {(rec - mat).abs().max().item():.1e}. Writing two "
              f"values under one key and reading it back: linear attention returns "
              f"{[fmt(v, 1) for v in lin]}, the sum; the delta rule returns "
              f"{[fmt(v, 1) for v in delta]}, the newer value.")
