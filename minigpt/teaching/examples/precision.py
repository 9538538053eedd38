"""Worked examples for "Precision and memory for training"."""

from __future__ import annotations

import torch

from minigpt.teaching import precision
from minigpt.teaching.examples.registry import count, example, fmt, table

VALUES = (0.1, 1 / 3, 1.947, 1000.7, 70000.0, 1e-8)


@example("precision.formats", "float32, bfloat16 and float16 as torch.finfo reports them")
def _formats() -> str:
    rows = []
    for name in precision.DTYPES:
        f = precision.format_info(name)
        s, e, m = f.bits
        rows.append([name, f"{s}+{e}+{m}", f"{f.largest:.3g}", f"{f.smallest_normal:.3g}",
                     f"{f.epsilon:.3g}"])
    return (table(["format", "sign+exp+mantissa", "largest", "smallest normal", "epsilon"], rows)
            + "\n\nThe exponent bits set the range, the mantissa bits the precision (epsilon: "
              "the gap just above 1). bfloat16 keeps float32's range with far less precision; "
              f"float16 is more precise but overflows past {precision.format_info('float16').largest:,.0f}.")


@example("precision.values", "What each format really stores")
def _values() -> str:
    rows = []
    for v in VALUES:
        shown = f"{v:.6g}"
        rows.append([shown] + [f"{precision.stored_as(v, name):.7g}" for name in precision.DTYPES])
    return (table(["value", "float32", "bfloat16", "float16"], rows)
            + f"\n\nbfloat16 keeps 2 to 3 significant digits (1000.7 becomes "
              f"{precision.stored_as(1000.7, 'bfloat16'):g}); float16 turns 70,000 into "
              f"{precision.stored_as(70000.0, 'float16')} and 1e-8 into {precision.stored_as(1e-8, 'float16'):g}.")


@example("precision.loss_in_fp32", "Why the loss and its sums stay in float32")
def _loss_fp32() -> str:
    rows = [[name, f"{precision.running_sum(0.01, 1000, name):g}"] for name in precision.DTYPES]
    a, b = 1.947, 1.949  # one bfloat16 step apart is 2⁻⁷ ≈ 0.0078 here: both round to 1.9453125
    return (table(["format", "0.01 added 1,000 times"], rows)
            + f"\n\nThe exact answer is 10. In bfloat16 the sum gets stuck once 0.01 is less "
              f"than half the gap between neighbours. Two losses, {a} and {b}, stored in "
              f"bfloat16 become {precision.stored_as(a, 'bfloat16'):g} and {precision.stored_as(b, 'bfloat16'):g}: "
              "the difference that tells a better run from a worse one is gone. So autocast "
              "runs matrix multiplies in bfloat16 but keeps softmax, the loss and reductions "
              "in float32.")


@example("precision.loss_scaling", "Loss scaling saves a tiny float16 gradient")
def _loss_scaling() -> str:
    rows = []
    for g in (1e-5, 1e-7, 1e-8):
        plain, scaled = precision.scaled_gradient(g, 2.0 ** 16)
        rows.append([f"{g:g}", f"{plain:.3g}", f"{g * 2 ** 16:.3g}", f"{scaled:.3g}"])
    return (table(["true gradient", "float16 as is", "× 65,536", "scaled, then ÷ 65,536"], rows)
            + "\n\nMultiplying the loss by 2^16 multiplies every gradient by the same factor, "
              f"lifting small ones out of the range where float16 rounds them to 0 (below "
              f"{precision.FLOAT16_ZERO_BELOW:.2g}); the optimizer divides it back out in float32. "
              "bfloat16 has float32's range and needs no scaling.")


@example("precision.grad_accumulation", "Gradient accumulation: 4 pieces of 8 rows vs one batch of 32")
def _accumulation() -> str:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).double()
    x, y = torch.randn(32, 6, dtype=torch.float64), torch.randint(0, 3, (32,))

    def loss_fn(out, target):
        return torch.nn.functional.cross_entropy(out, target)

    whole = precision.accumulated_gradients(model, loss_fn, x, y, 1)
    pieces = precision.accumulated_gradients(model, loss_fn, x, y, 4)
    diff = max((a - b).abs().max().item() for a, b in zip(whole, pieces))
    norm = torch.sqrt(sum((g ** 2).sum() for g in whole)).item()
    return (f"Gradient norm of the whole batch: {fmt(norm, 6)}. Largest difference between any "
            f"gradient entry of the two ways: {diff:.1e} (float64 rounding). Each piece's mean "
            "loss is weighted by 8/32 before backward, and .grad adds the pieces up.")


@example("precision.optimizer_memory", "Memory to train with AdamW (weights, gradients, optimizer state)")
def _optimizer_memory() -> str:
    from minigpt.teaching import params
    from minigpt.teaching.kv_memory import human_bytes
    from minigpt.teaching.shipped import shipped_model

    models = (("our MiniGPT", params.gpt_total(shipped_model().config)),
              ("LLaMA-2 7B", params.llama2_7b_params()["total"]))
    rows = []
    for name, n in models:
        for recipe in precision.TRAINING_BYTES:
            parts = precision.training_bytes(n, recipe)
            adam = parts["adam m"] + parts["adam v"]
            rows.append([name, recipe, human_bytes(parts["weights"]), human_bytes(adam),
                         human_bytes(sum(parts.values()))])
    return (table(["model", "recipe", "weights", "Adam m + v", "total"], rows)
            + f"\n\nAdamW keeps two extra numbers per parameter, each in float32. Mixed precision "
              f"adds a float32 master copy, so both recipes cost 16 bytes per parameter before "
              f"any activation: {count(params.llama2_7b_params()['total'])} parameters need more "
              "than one 80 GB accelerator holds.")
