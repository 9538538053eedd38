"""Parameter counting, component by component, for MiniGPT-shaped models.

``gpt_breakdown`` is the arithmetic a learner would do by hand; the tests check that it equals
``sum(p.numel())`` of the real ``MiniGPT`` for a grid of shapes, and the lessons compare it with
the 12·L·d² rule of thumb (which keeps only the attention and FFN matrices).
"""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.models.config import GPTConfig


@dataclass
class Component:
    name: str
    formula: str
    count: int


def gpt_breakdown(cfg: GPTConfig) -> list[Component]:
    d, L, V, T = cfg.d_model, cfg.n_layers, cfg.vocab_size, cfg.block_size
    b = 1 if cfg.bias else 0
    nb = b if cfg.norm == "layernorm" else 0  # RMSNorm has a scale only
    parts = [Component("token embedding", "V·d", V * d)]
    if cfg.pos_encoding == "learned":
        parts.append(Component("position embedding", "T·d", T * d))
    kv = cfg.kv_dim  # = d unless heads share keys and values (grouped-query attention)
    attn = 2 * d * d + 2 * d * kv + (2 * d + 2 * kv) * b  # W_Q, W_O: d×d; W_K, W_V: d×kv
    if cfg.qk_norm:
        attn += 2 * cfg.head_dim  # the query and key RMSNorm gains, shared by the heads
    if cfg.ffn == "swiglu":  # d→2h (gate and value) and h→d, h = 8d/3
        h = cfg.ffn_hidden
        ffn, ffn_formula = 3 * d * h + (2 * h + d) * b, f"L·(3d·h{' + 2h + d' if b else ''}), h = {h}"
    else:
        ffn, ffn_formula = 8 * d * d + 5 * d * b, f"L·(8d²{' + 5d' if b else ''})"  # d→4d, 4d→d (+ biases)
    norms = 2 * (d + d * nb)  # two norms: scale (+ shift)
    parts.append(Component("attention (all layers)", _attention_formula(cfg), L * attn))
    if cfg.attention_only:  # no feed-forward and its norm: one norm per block
        parts.append(Component("layer norms in blocks", f"L·{'2d' if nb else 'd'}", L * norms // 2))
    else:
        parts += [Component("feed-forward (all layers)", ffn_formula, L * ffn),
                  Component("layer norms in blocks", f"L·{'4d' if nb else '2d'}", L * norms)]
    parts.append(Component("final layer norm", "2d" if nb else "d", d + d * nb))
    if not cfg.tie_weights:
        parts.append(Component("output head", "d·V", d * V))
    return parts


def _attention_formula(cfg: GPTConfig) -> str:
    qk = " + 2·hd" if cfg.qk_norm else ""
    if cfg.kv_dim == cfg.d_model:
        return f"L·(4d²{' + 4d' if cfg.bias else ''}{qk})"
    return f"L·(2d² + 2d·kv{' + 2d + 2kv' if cfg.bias else ''}{qk})"


def gpt_total(cfg: GPTConfig) -> int:
    return sum(c.count for c in gpt_breakdown(cfg))


def rule_of_thumb(n_layers: int, d_model: int) -> int:
    """12·L·d²: attention (4d²) plus a 4× FFN (8d²) per layer, nothing else."""
    return 12 * n_layers * d_model**2


def block_params(d: int, bias: bool = True) -> int:
    """One pre-norm block with a 4× FFN: 12d² + 13d with biases, 12d² + 2d without."""
    return 12 * d * d + (13 * d if bias else 2 * d)


GPT2_SMALL = GPTConfig(vocab_size=50257, block_size=1024, d_model=768, n_heads=12, n_layers=12,
                       bias=True, tie_weights=True)


def llama2_7b_params() -> dict[str, int]:
    """LLaMA-2 7B counted exactly: SwiGLU FFN (three d×11008 matrices), RMSNorm, RoPE (no
    position parameters), no biases, untied 32,000-token embedding and head."""
    d, L, V, ff = 4096, 32, 32000, 11008
    per_layer = 4 * d * d + 3 * d * ff + 2 * d
    total = V * d + L * per_layer + d + d * V
    return {"d_model": d, "n_layers": L, "vocab": V, "ffn_hidden": ff,
            "per_layer": per_layer, "total": total, "rule_of_thumb": rule_of_thumb(L, d)}


@dataclass(frozen=True)
class MoEShape:
    """A LLaMA-style decoder (RMSNorm, RoPE, SwiGLU experts, grouped-query attention, no biases,
    untied embedding and head) whose feed-forward layer is a mixture of experts."""

    name: str
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    ffn_hidden: int
    n_experts: int
    top_k: int
    vocab: int


MIXTRAL_LIKE = MoEShape("Mixtral-like 8×7B", 4096, 32, 32, 8, 14336, 8, 2, 32000)


def moe_params(s: MoEShape) -> dict[str, int]:
    """Total parameters, and those one token actually uses (its top-k experts only)."""
    d, kv = s.d_model, s.n_kv_heads * (s.d_model // s.n_heads)
    attention = 2 * d * d + 2 * d * kv  # W_Q, W_O; W_K, W_V narrower by the grouping
    expert = 3 * d * s.ffn_hidden  # SwiGLU: gate, up and down matrices
    router = d * s.n_experts
    norms = 2 * d
    shared = s.n_layers * (attention + router + norms) + 2 * s.vocab * d + d
    total = shared + s.n_layers * s.n_experts * expert
    active = shared + s.n_layers * s.top_k * expert
    return {"attention per layer": attention, "one expert": expert, "router per layer": router,
            "total": total, "active": active}
