"""Worked examples for "Quantization, LoRA and activation checkpointing"."""

from __future__ import annotations

import torch

from minigpt.errors import RunError
from minigpt.models.quantize import QuantConfig, dequantize, quantize
from minigpt.runs.lab import JOBS, job_dir, read_result
from minigpt.teaching import compression
from minigpt.teaching.examples.registry import count, example, fmt, table

# Two rows of a weight matrix; the first holds one outlier (4.0), the second none.
OUTLIER_W = ((0.1, -0.3, 0.25, 4.0), (0.2, -0.16, 0.05, 0.3))


def outlier_rows() -> dict[str, torch.Tensor]:
    """OUTLIER_W at int4, one scale for the whole matrix against one per row."""
    w = torch.tensor(OUTLIER_W)
    return {g: dequantize(quantize(w, QuantConfig(4, g))) for g in ("tensor", "channel")}


@example("quantization.outlier", "One outlier and a per-tensor int4 scale")
def _outlier() -> str:
    w = torch.tensor(OUTLIER_W)
    tensor_q, channel_q = quantize(w, QuantConfig(4, "tensor")), quantize(w, QuantConfig(4, "channel"))
    rows = outlier_rows()
    cells = []
    for i, label in enumerate(("row 1 (outlier)", "row 2")):
        cells.append([label + " as is", *[fmt(v, 3) for v in w[i].tolist()]])
        cells.append(["per tensor", *[fmt(v, 3) for v in rows["tensor"][i].tolist()]])
        cells.append(["per row", *[fmt(v, 3) for v in rows["channel"][i].tolist()]])
    s_t = tensor_q.scale.flatten()[0].item()
    s1, s2 = channel_q.scale.flatten().tolist()
    err2 = (rows["tensor"][1] - w[1]).abs().max().item()
    return (table(["weights", "w1", "w2", "w3", "w4"], cells)
            + f"\n\nint4 keeps whole numbers from −7 to 7. One scale for the matrix is "
              f"4.0 / 7 = {fmt(s_t, 4)}: every weight below half of it ({fmt(s_t / 2, 3)}) rounds "
              f"to 0, and row 2, which never held a large value, loses up to {fmt(err2, 3)}. With "
              f"a scale per row, row 1 keeps {fmt(s1, 4)} and row 2 gets 0.3 / 7 = {fmt(s2, 4)}: "
              f"its error is at most half of that, {fmt(s2 / 2, 4)}.")


@example("quantization.shipped", "The shipped MiniGPT quantized: bytes and test loss")
def _shipped() -> str:
    rows = compression.quantization_table()
    base = rows[0]
    cells = [["float32", f"{base_bytes(rows) / 1024:.0f} KiB", "1.0×", fmt(base.test_loss, 4), "—"]]
    for r in rows[1:]:
        cells.append([r.config.label, f"{r.bytes.quant_bytes / 1024:.0f} KiB", f"{r.bytes.ratio:.1f}×",
                      fmt(r.test_loss, 4), f"{r.test_loss - base.test_loss:+.4f}"])
    worst = max(rows[1:], key=lambda r: r.test_loss)
    return (table(["weights", "stored", "smaller", "test loss", "change"], cells)
            + f"\n\nLoss on the first {compression.QUANT_TEST_NAMES:,} test names. "
              f"Every matrix (embeddings, attention, feed-forward, head) is rounded; biases "
              f"and norms stay float32, and each scale costs 4 bytes. int8 barely moves the "
              f"loss. At int4 one scale per matrix hurts most ({worst.config.label}: "
              f"{worst.test_loss - base.test_loss:+.3f}); smaller blocks cost a few more scales "
              "and lose less.")


def base_bytes(rows) -> int:
    return rows[1].bytes.float_bytes


@example("lora.counts", "LoRA's trainable parameters on the shipped MiniGPT")
def _lora_counts() -> str:
    total, per_rank = compression.lora_counts()
    cells = [["full fine-tune", count(total), "100%"]]
    for r, n in per_rank.items():
        cells.append([f"LoRA r = {r}", count(n), f"{100 * n / total:.1f}%"])
    return (table(["method", "trainable", "share"], cells)
            + "\n\nAdapters on the four linear layers of each block: QKV (64 → 192), the output "
              "projection (64 → 64), the feed-forward's up (64 → 256) and down (256 → 64). Each "
              "adds r·(in + out): (256 + 128 + 320 + 320)·r = 1,024·r per block, 4,096·r for the "
              "four blocks.")


@example("lora.merge", "Merging an adapter gives the same logits")
def _lora_merge() -> str:
    change, diff = compression.merge_check()
    return (f"A rank-4 adapter with random A and B moves the shipped model's logits by up to "
            f"{fmt(change, 3)}. After W ← W + (α/r)·B·A the merged model, an ordinary MiniGPT "
            f"again, differs from the adapted one by at most {diff:.1e}: float32 rounding, "
            "not a different model.")


def lab_result(job: str) -> dict | None:
    try:
        return read_result(job_dir(job))
    except RunError:
        return None


NOT_RUN = ("Not run yet. Press **x** in this lesson to start it in the background (about a "
           "minute on a laptop), or run `minigpt lab run {job}` in a terminal; the result "
           "appears here when it is done.")


@example(JOBS["lora"].example, "Your LoRA run: full fine-tune against adapters")
def _lora_lab() -> str:
    result = lab_result("lora")
    if result is None:
        return NOT_RUN.format(job="lora")
    s = result["settings"]
    cells = [[r["method"], count(r["trainable"]), fmt(r["letter_loss"], 4), fmt(r["all_loss"], 4),
              f"{r['seconds']:.0f} s"] for r in result["rows"]]
    merge = result.get("merge") or {}
    return (table(["method", "trainable", f"{s['letter'].upper()} names", "all names", "time"], cells)
            + f"\n\n{result['n_train']} training names start with {s['letter'].upper()}; "
              f"{s['steps']} steps of {s['batch_size']} names each, α = {s['alpha']:g}. Losses "
              f"are on test names never trained on. The merged rank-{merge.get('rank', '?')} "
              f"model's logits differ from the adapter's by {merge.get('max_logit_difference', 0):.1e}. "
              f"Measured at load average {result['load_average']:.1f}.")


@example(JOBS["checkpointing"].example, "Your checkpointing run: a 16-layer MiniGPT's training step")
def _checkpointing_lab() -> str:
    result = lab_result("checkpointing")
    if result is None:
        return NOT_RUN.format(job="checkpointing")
    c, peak = result["config"], result["peak_bytes"]
    sec = result.get("fastest_seconds") or result["median_seconds"]
    cells = [["off", f"{peak['off'] / 2**20:.1f} MiB", f"{sec['off'] * 1000:.0f} ms"],
             ["on", f"{peak['on'] / 2**20:.1f} MiB", f"{sec['on'] * 1000:.0f} ms"]]
    return (table(["checkpointing", "peak tensor memory", f"best of {c['repeats']} steps"], cells)
            + f"\n\n{c['n_layers']} layers of width {c['d_model']}, {c['batch_size']} rows of "
              f"{c['block_size']} tokens, {count(result['parameters'])} parameters. Memory "
              f"{peak['off'] / peak['on']:.1f}× smaller, the step {sec['on'] / sec['off']:.2f}× "
              f"as long. Gradients differ by at most {result['max_gradient_difference']:.1e}. "
              f"Load average {result['load_average']:.1f}.")


# --- beyond round-to-nearest: QLoRA, GPTQ, SmoothQuant, a quantized KV cache ---------------------


@example("quantization.qlora", "QLoRA: a 7B base model's weights in NF4")
def _qlora() -> str:
    from minigpt.teaching import ptq

    n = 7e9
    rows = [[label, fmt(bits, 3), f"{n * bits / 8 / 1e9:.2f}"]
            for label, bits in (("16-bit", 16.0),
                                (f"NF4, float32 absmax per {ptq.NF4_BLOCK}",
                                 ptq.qlora_bits_per_weight(double_quant=False)),
                                ("NF4, double-quantized absmax", ptq.qlora_bits_per_weight()))]
    return (table(["storage", "bits per weight", "GB for 7B"], rows)
            + "\n\nThe frozen base is stored in 4 bits and dequantized to 16 bits block by block "
              "as each layer runs; only the LoRA adapters, in 16 bits, get gradients and Adam "
              "state. Paged optimizers move that state to CPU memory when a long batch would "
              "otherwise run the GPU out of memory.")


def gptq_example():
    """A row of four weights whose inputs move together (one shared signal plus a little noise
    each), rounded to a grid of 0.5 by plain rounding and by GPTQ."""
    from minigpt.teaching import ptq

    g = torch.Generator().manual_seed(0)
    shared = torch.randn(256, 1, generator=g, dtype=torch.float64)
    x = torch.cat([shared + 0.1 * torch.randn(256, 1, generator=g, dtype=torch.float64)
                   for _ in range(4)], dim=1)
    w = torch.tensor([0.3, 0.3, -0.2, 0.45], dtype=torch.float64)
    return w, x, ptq.round_to_grid(w, 0.5), ptq.gptq_row(w, x, 0.5)


@example("quantization.gptq_smoothquant", "Error feedback (GPTQ) and scale migration (SmoothQuant)")
def _gptq_smoothquant() -> str:
    from minigpt.teaching import ptq

    w, x, rtn, gptq = gptq_example()
    rows = [[label, ", ".join(fmt(v, 2) for v in q.tolist()), f"{ptq.output_error(w, q, x):.3f}"]
            for label, q in (("weights", w), ("round to nearest", rtn), ("GPTQ", gptq))]
    act, weight = 60.0, 0.5
    s = ptq.smoothquant_scale(act, weight)
    return (table(["row (grid 0.5)", "values", "output error"], rows)
            + "\n\nThe four inputs move together, so what matters is the sum of the weights: "
              "rounding each one alone overshoots it, while GPTQ rounds the first and moves its "
              "error onto the ones still to come. SmoothQuant, α = 0.5: an input channel whose "
              f"activations reach {fmt(act, 0)} and whose weights reach {fmt(weight, 1)} gets "
              f"s = √({fmt(act, 0)}/{fmt(weight, 1)}) = {fmt(s, 2)}; after dividing the "
              f"activations and multiplying the weights by s both reach {fmt(act / s, 2)}, and "
              f"the activations' int8 step falls from {fmt(act / 127, 3)} to "
              f"{fmt(act / s / 127, 3)}.")


@example("quantization.kv_cache", "A quantized KV cache: LLaMA-2 7B, 40 GiB for the cache")
def _kv_cache() -> str:
    from minigpt.teaching import kv_memory, ptq

    shape = next(s for s in kv_memory.MODELS if s.name == "LLaMA-2 7B")
    per_token_16 = kv_memory.shape_bytes_per_token(shape)
    budget = 40 * 2**30
    rows = []
    for label, bits in (("16-bit", ptq.kv_bits_per_value(16)), ("int8 / fp8", ptq.kv_bits_per_value(8)),
                        ("int4, a 16-bit scale per 64", ptq.kv_bits_per_value(4, 64))):
        per_token = per_token_16 * bits / 16
        rows.append([label, fmt(bits, 2), kv_memory.human_bytes(per_token), count(int(budget // per_token))])
    return (table(["cache values", "bits", "per token", "tokens in 40 GiB"], rows)
            + "\n\nKeys and values are activations, so their scales are set as they are written; "
              "halving the bits doubles the tokens (users, or context) the same memory holds, "
              "and halves what each decode step reads.")
