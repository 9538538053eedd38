"""How much arithmetic a training step does, and what share of the device's peak that is (MFU).

Training a Transformer costs about 6 FLOPs per parameter per token (2 for the forward
multiply-adds, 4 for the backward), plus attention's own matrix products, which grow with the
context: 12 · n_layers · d_model · T per token (QKᵀ and A·V, forward and backward), counting every
position of a causal block as the PaLM paper's appendix does. Embedding tables do a lookup, not a
product, so their parameters are left out of N (a tied head is a real product and stays in).
"""

from __future__ import annotations

from dataclasses import dataclass

# Dense peak throughput in TFLOP/s by device name fragment and dtype (vendors' data sheets,
# without sparsity). The first fragment found in the device's name wins.
PEAK_TFLOPS: list[tuple[str, dict[str, float]]] = [
    ("H200", {"bfloat16": 989.0, "float16": 989.0, "tf32": 494.0, "float32": 67.0}),
    ("H100", {"bfloat16": 989.0, "float16": 989.0, "tf32": 494.0, "float32": 67.0}),
    ("A100", {"bfloat16": 312.0, "float16": 312.0, "tf32": 156.0, "float32": 19.5}),
    ("L4", {"bfloat16": 121.0, "float16": 121.0, "tf32": 60.0, "float32": 30.3}),
    ("RTX 4090", {"bfloat16": 165.2, "float16": 165.2, "tf32": 82.6, "float32": 82.6}),
    ("A10", {"bfloat16": 125.0, "float16": 125.0, "tf32": 62.5, "float32": 31.2}),
    ("T4", {"float16": 65.0, "float32": 8.1}),
]


@dataclass(frozen=True)
class StepCost:
    params_counted: int  # N: parameters that take part in matrix products
    flops_per_token: float  # 6N + 12·L·d·T

    def model_flops(self, tokens_per_s: float) -> float:
        return tokens_per_s * self.flops_per_token


def attention_forward_flops(n_layers: int, attended: int, d_model: int) -> int:
    """Forward FLOPs of attention's own products for one query that attends to ``attended``
    positions: q·Kᵀ (2·T·d) plus the weighted sum of values (2·T·d), in each layer: 4·L·T·d.

    The one formula for both training (here, times 3 for the backward pass) and inference
    (``minigpt.teaching.inference_cost``). Kaplan et al.'s table writes 2·L·T·d because it
    averages over a causal context, where a position attends to about T/2 others.
    """
    return 4 * n_layers * attended * d_model


def gpt_step_cost(n_params: int, embedding_params: int, n_layers: int, d_model: int, context: int) -> StepCost:
    n = n_params - embedding_params
    # Forward plus backward (twice the forward) is 3× the forward: 6N and 12·L·d·T.
    return StepCost(n, 3.0 * (2 * n + attention_forward_flops(n_layers, context, d_model)))


def cost_of(model) -> StepCost:
    """The cost per token of a MiniGPT as built (its embeddings known from its modules)."""
    cfg = model.config
    embedding = model.tok_emb.weight.numel() if not cfg.tie_weights else 0
    if hasattr(model, "pos_emb"):
        embedding += model.pos_emb.weight.numel()
    n_params = sum(p.numel() for p in model.parameters())
    return gpt_step_cost(n_params, embedding, cfg.n_layers, cfg.d_model, cfg.block_size)


def peak_flops(device_name: str, dtype: str) -> float | None:
    """The data-sheet peak in FLOP/s for this device and dtype, or None when unknown."""
    for fragment, table in PEAK_TFLOPS:
        if fragment.lower() in device_name.lower():
            value = table.get(dtype)
            return None if value is None else value * 1e12
    return None


def mfu(tokens_per_s: float, cost: StepCost, peak: float | None) -> float | None:
    """Model FLOPs utilisation: the model's arithmetic per second over the device's peak."""
    if not peak:
        return None
    return cost.model_flops(tokens_per_s) / peak
